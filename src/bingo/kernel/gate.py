"""The gate: whether a tool call runs, is asked about, or is refused.

Owns the permission grammar of INTERFACE.md §3 and ADR-0018: a rule is a tool name in which
`*` matches any run of characters (every other character, `?`, `[` and `.` included, stands
for itself), optionally narrowed to calls whose main argument matches a pattern,
`TOOL(PATTERN)` (the same `*`; in a pattern `\\*` is a `*` character and `\\\\` one backslash,
so an exact rule can hold a star: `exact`). The main argument is `command` for `bash` and the
path for `read`, `write`, `edit`, `glob` and `grep`; a bridged tool has none, so only its
bare name matches it. Paths are made absolute (a call's against its working directory, a
pattern's against the project root), `.` and `..` folded and links resolved before they are
matched; a bash command is read by `_shell.py`, and in an allow pattern for it a `*` glued to
a word stands for the rest of the command after a blank, never for more of that word. A
path inside a `.git` directory is allowed to `write` and `edit` only by a rule that names
`.git`. It also owns the precedence `deny` > `ask` > `allow`,
the trusted-and-read-only exemption, the narrow rule a "yes, always" adds (`always_rule`),
the one line the model is told when a call is refused for want of a rule, and the lines
naming rules that are malformed or can match no tool this run (`rule_problems`).

It does not ask anyone (the turn loop does) and does not run hooks (a hook's `ask` arrives
here as `hook_asks`). The verdict plane stays in-process: nothing here crosses the wire.
"""

from __future__ import annotations

import difflib
import enum
import functools
import os
import re
from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass

import msgspec

from ..wire import Json, ToolTraits, is_object
from ._shell import Part, pieces, simple_commands
from .settings import Permissions, PlacedRule

__all__ = [
    "MAIN_ARGUMENTS",
    "Decision",
    "Gate",
    "Rule",
    "Verdict",
    "always_rule",
    "exact",
    "matches",
    "outside_sandbox",
    "parse_rule",
    "refusal",
    "rule_problems",
]

# Compiled rules are kept: the same few rules are matched against every call of a run.
_RULE_CACHE_SIZE = 1024

MAIN_ARGUMENTS: Mapping[str, str] = {
    "bash": "command",
    "read": "path",
    "write": "path",
    "edit": "path",
    "glob": "path",
    "grep": "path",
}
"""The tools a `TOOL(PATTERN)` rule can narrow, and the input key of each one's main argument."""
_SEARCHES = frozenset({"glob", "grep"})
"""Tools whose path is a tree searched, not one file: a rule allows them only when it
allows every path below."""
_GLOB_WILDCARDS = frozenset("*?[{")
"""The characters that end the literal leading directories of a glob pattern (tools/_glob.py
walks from those directories, so they are part of where a glob looks)."""
_SUBCOMMAND = re.compile(r"[A-Za-z][A-Za-z0-9_:-]*")
"""A second word kept in a narrow bash rule (`git status`), not a flag or a path."""
_PLAIN_WORD = re.compile(r"[^\s'\"\\$*`=]+")
_SHOWN_SUGGESTIONS = 3
_BLANK = frozenset(" \t")
_GIT_DIRECTORY = ".git"
_GIT_GUARDED = frozenset({"write", "edit"})
"""Tools that never reach into a `.git` directory (its `config` and `hooks/` run code) by a
rule that does not name `.git`: a bare `write`, `edit(*)` and `write(src/*)` do not."""


class Verdict(enum.Enum):
    """What the gate says about one call."""

    ALLOW = "allow"
    ASK = "ask"
    DENY = "deny"


class Decision(msgspec.Struct, frozen=True):
    """A verdict and the rule that decided it; `rule` is None when no rule did (the
    trusted-and-read-only exemption, an untrusted tool with no rule, or a hook's `ask`).
    `near` holds, for an ASK no rule decided, the allow rules that name the tool with a
    pattern this call's argument does not match, so the refusal can say so."""

    verdict: Verdict
    rule: str | None
    near: tuple[str, ...] = ()
    outside: bool = False
    """A `bash` call asking to run outside the sandbox in force (`"outsideSandbox": true`):
    always asked, with a question that says so; never allowed by a rule (INTERFACE.md §9)."""


@dataclass(frozen=True, slots=True)
class Rule:
    """One rule as written (`text`) and as read: the tool-name pattern, the argument
    pattern (None for a bare name), and, for a malformed rule, what is wrong and how to
    write it (`problem`); then `tool` is what precedes the parenthesis, the wider reading a
    deny or ask rule takes until it is fixed."""

    text: str
    tool: str
    pattern: str | None
    problem: str | None = None


@functools.lru_cache(maxsize=_RULE_CACHE_SIZE)
def parse_rule(text: str) -> Rule:
    """Read one rule: `NAME` or `NAME(PATTERN)`, the pattern running from the first `(` to
    the `)` that ends the rule (so it may hold parentheses itself)."""
    opening, closing = text.find("("), text.find(")")
    if opening < 0 and closing < 0:
        problem = "it is empty; write a tool name, e.g. bash or plugin__wordcount__count" if not text else None
        return Rule(text, text, None, problem)
    if opening < 0:
        name = text[:closing]
        return Rule(text, name, None, f"it has a ')' with no '(' before it; write {name or 'TOOL'}(PATTERN)")
    name, inner = text[:opening], text[opening + 1 :]
    if not name:
        return Rule(text, name, None, "it names no tool before its '('; write TOOL(PATTERN), e.g. bash(git status*)")
    if not inner.endswith(")"):
        return Rule(
            text,
            name,
            None,
            f"its '(' is not closed by a ')' at its end; write {name}(PATTERN), e.g. bash(git status*)",
        )
    pattern = inner[:-1]
    if not pattern:
        return Rule(text, name, None, f"its pattern is empty; write {name} for every call, or {name}(PATTERN)")
    return Rule(text, name, pattern)


def _bare_match(text: str, name: str) -> bool:
    """A rule naming, whole, a tool whose own name holds a parenthesis (a plugin may call a
    tool `f(x)`): it is that tool's bare name, not a name and a pattern."""
    return ("(" in name or ")" in name) and matches(text, name)


@functools.lru_cache(maxsize=_RULE_CACHE_SIZE)
def _pattern(rule: str) -> re.Pattern[str]:
    literal_parts = (re.escape(part) for part in rule.split("*"))
    return re.compile(".*".join(literal_parts), re.DOTALL)


def matches(rule: str, name: str) -> bool:
    """Whether the `*` pattern `rule` matches all of `name`: `*` matches any run of
    characters (none included); everything else must be equal."""
    return _pattern(rule).fullmatch(name) is not None


# --- argument patterns: `*` a wildcard, `\*` a star, `\\` a backslash -------------------

_Units = tuple[str | None, ...]
"""A pattern read: each unit a character to match, or None for a wildcard `*`."""


@functools.lru_cache(maxsize=_RULE_CACHE_SIZE)
def _units(pattern: str) -> _Units:
    """The units of an argument pattern: `\\*` is a `*` character and `\\\\` one backslash;
    any other backslash stands for itself, and every unescaped `*` is a wildcard."""
    units: list[str | None] = []
    at = 0
    while at < len(pattern):
        char = pattern[at]
        if char == "\\" and pattern[at + 1 : at + 2] in ("*", "\\"):
            units.append(pattern[at + 1])
            at += 2
            continue
        units.append(None if char == "*" else char)
        at += 1
    return tuple(units)


def exact(text: str) -> str:
    """The argument pattern that matches `text` alone: each `*` escaped, and a backslash
    doubled where it precedes a `*` or a backslash (`rm build/*` gives `rm build/\\*`)."""
    return re.sub(r"\\(?=[\\*])|\*", lambda found: "\\" + found.group(), text)


def _first_wildcard(pattern: str) -> int:
    """Where the first wildcard `*` of a pattern is in its text, or -1."""
    at = 0
    while at < len(pattern):
        if pattern[at] == "\\" and pattern[at + 1 : at + 2] in ("*", "\\"):
            at += 2
        elif pattern[at] == "*":
            return at
        else:
            at += 1
    return -1


def _literal(pattern: str) -> str | None:
    """What a pattern with no wildcard matches (its escapes resolved), or None."""
    units = _units(pattern)
    return None if None in units else "".join(unit for unit in units if unit is not None)


@functools.lru_cache(maxsize=_RULE_CACHE_SIZE)
def _compiled(units: _Units, words: bool) -> re.Pattern[str]:
    """The regex of `units`; with `words` (a bash allow pattern) a wildcard glued to the
    character before it (no blank between) matches nothing or a blank and the rest: it
    never extends the word it follows."""
    out: list[str] = []
    for at, unit in enumerate(units):
        if unit is not None:
            out.append(re.escape(unit))
        elif at == 0 or units[at - 1] is not None:
            glued = words and at > 0 and units[at - 1] not in _BLANK
            out.append("(?:[ \t].*)?" if glued else ".*")
    return re.compile("".join(out), re.DOTALL)


def _argument_matches(pattern: str, argument: str) -> bool:
    """Whether the argument pattern matches all of `argument`, `*` matching any run."""
    return _compiled(_units(pattern), False).fullmatch(argument) is not None


def _allows_part(pattern: str, part: Part) -> bool:
    """Whether a bash allow pattern allows one simple command: its words match with the
    pattern's glued stars bounded by words, and its command name is a path (or an expansion,
    `$X`, that may be one) only where the pattern's first word is a path
    (`bash(* --help)` does not run `./x --help` nor `$X --help`)."""
    wanted = pattern.strip()
    first = wanted.split()[0] if wanted.split() else ""
    if any(char in part.command for char in "/$") and "/" not in first:
        return False
    return _compiled(_units(wanted), True).fullmatch(part.text) is not None


def _covers(pattern: str, directory: str) -> bool:
    """Whether `pattern` matches every path below `directory`: it ends in `*` and what
    precedes that star matches the start of `directory/`."""
    units = _units(pattern)
    head = units
    while head and head[-1] is None:
        head = head[:-1]
    if head == units:
        return False
    below = directory if directory.endswith("/") else directory + "/"
    return _compiled(head, False).match(below) is not None


def _reaches(pattern: str, directory: str) -> bool:
    """Whether `pattern` matches `directory` or some path below it (a deny rule on a tree
    searched): the pattern is run over `directory/` as a prefix, star by star."""
    if _argument_matches(pattern, directory):
        return True
    units = _units(pattern)
    below = directory if directory.endswith("/") else directory + "/"

    def closure(states: set[int]) -> set[int]:
        out = set(states)
        for state in sorted(states):
            while state < len(units) and units[state] is None:
                state += 1
                out.add(state)
        return out

    states = closure({0})
    for char in below:
        states = closure(
            {i if units[i] is None else i + 1 for i in states if i < len(units) and units[i] in (None, char)}
        )
        if not states:
            return False
    return True


def _in_git(path: str) -> bool:
    """Whether an absolute path is a `.git` (a repository's directory, or the file naming
    one) or lies inside one."""
    return any(part.casefold() == _GIT_DIRECTORY for part in path.split("/"))


def _names_git(pattern: str) -> bool:
    """Whether a path pattern names a `.git` directory in its own words (`.git/config`,
    `*/.git/*`), as a rule must to let `write` or `edit` reach into one."""
    return _in_git(pattern)


def _reaches_git(call: _Call) -> bool:
    """Whether a call's path, as written or as really opened, is in a `.git` directory (a
    call with no path, or a NUL in it, reaches nothing: the tool refuses it)."""
    argument = call.argument()
    forms = _path_forms(argument, call.cwd) if argument is not None else None
    return forms is not None and any(_in_git(form) for form in forms)


def _normal(path: str) -> str:
    """`path` (absolute) with `.`, `..` and doubled slashes folded (POSIX keeps a leading
    `//`, which no rule writer means)."""
    folded = os.path.normpath(path)
    return "/" + folded.lstrip("/") if folded.startswith("//") else folded


def _absolute(path: str, base: str) -> str:
    """`path` as the tools take it: `~` expanded, a relative one under `base`."""
    expanded = os.path.expanduser(path) if path.startswith("~") else path
    return os.path.join(base, expanded)


def _path_forms(path: str, base: str) -> tuple[str, ...] | None:
    """The absolute forms of a call's path: folded as written, and with links resolved
    (what is really opened). None when it is no path at all (a NUL byte)."""
    try:
        whole = _absolute(path, base)
        lexical, real = _normal(whole), os.path.realpath(whole)
    except (OSError, ValueError):
        return None
    return (lexical,) if real == lexical else (lexical, real)


@functools.lru_cache(maxsize=_RULE_CACHE_SIZE)
def _pattern_forms(pattern: str, project: str) -> tuple[str, ...]:
    """The absolute forms of a path pattern: folded as written, and with the links of its
    literal directories (those before its first wildcard) resolved; escapes kept."""
    if pattern == "~" or pattern.startswith("~/"):
        pattern = exact(os.path.expanduser("~")) + pattern[1:]
    lexical = _normal(_absolute(pattern, project))
    star = _first_wildcard(lexical)
    try:
        if star < 0:
            real = exact(os.path.realpath(_literal(lexical) or "/"))
        else:
            cut = lexical.rfind("/", 0, star)  # no escape holds a `/`: the cut splits none
            real = os.path.join(exact(os.path.realpath(_literal(lexical[:cut]) or "/")), lexical[cut + 1 :])
    except (OSError, ValueError):
        return (lexical,)
    return (lexical,) if real == lexical else (lexical, real)


@dataclass(frozen=True, slots=True)
class _Call:
    """What a pattern judges of one call: its tool, input and working directory."""

    tool: str
    input: Json
    cwd: str

    def argument(self) -> str | None:
        """The main argument as the tool reads it (a glob's literal leading directories
        included, and the default path of a search), or None when it is not a string."""
        key = MAIN_ARGUMENTS.get(self.tool)
        fields = self.input if is_object(self.input) else {}
        value = fields.get(key, "" if self.tool in _SEARCHES else None) if key else None
        if not isinstance(value, str):
            return None
        if self.tool != "glob":
            return value
        pattern = fields.get("pattern")
        if not isinstance(pattern, str):
            return value
        base = value or "."
        if pattern.startswith("/"):
            base, pattern = "/", pattern.lstrip("/")
        segments = pattern.split("/")
        literal = 0
        while literal < len(segments) - 1 and not _GLOB_WILDCARDS & set(segments[literal]):
            literal += 1
        return os.path.join(base, *segments[:literal])


class Gate:
    """Decides each tool call from the permission rules of this run. Relative path
    patterns are read against `project` (the working directory when not given)."""

    def __init__(self, permissions: Permissions, *, project: str | None = None, sandboxed: bool = False) -> None:
        self._allow = list(permissions.allow)
        self._ask = list(permissions.ask)
        self._deny = list(permissions.deny)
        self._project = project or os.getcwd()
        self.sandboxed = sandboxed
        """The sandbox is in force for `bash` (INTERFACE.md §9): it is its bound, so a call no
        deny or ask rule matches runs without asking."""

    def decide(
        self,
        name: str,
        traits: ToolTraits,
        *,
        input: Json = None,
        cwd: str | None = None,
        hook_asks: bool = False,
    ) -> Decision:
        """The verdict for a call of tool `name` with `input`, run in `cwd`. Without `cwd`
        it is the verdict for the tool in general (`/tools`): only bare rules apply.
        `deny` beats `ask` beats `allow`; a tool whose traits are trusted and read-only
        runs without a rule unless a rule says otherwise; an untrusted tool with no rule is
        asked about. `hook_asks` (a hook answered `ask`) turns an ALLOW into ASK: a hook can
        tighten, never widen. With the sandbox in force, `bash` runs without a rule, except a
        call asking to run outside it, which is always asked (`Decision.outside`)."""
        call = _Call(name, input, cwd) if cwd is not None else None
        rule = self._first_tightening(self._deny, name, call)
        if rule is not None:
            return Decision(Verdict.DENY, rule)
        outside = self.sandboxed and name == "bash" and call is not None and outside_sandbox(input)
        rule = self._first_tightening(self._ask, name, call)
        if rule is not None:
            return Decision(Verdict.ASK, rule, outside=outside)
        if hook_asks or outside:
            return Decision(Verdict.ASK, None, outside=outside)
        if self.sandboxed and name == "bash":
            return Decision(Verdict.ALLOW, None)  # the sandbox is its bound
        rule, near = self._allowing(name, call)
        if rule is not None:
            return Decision(Verdict.ALLOW, rule)
        if traits.trusted and traits.read_only:
            return Decision(Verdict.ALLOW, None)
        return Decision(Verdict.ASK, None, near)

    def allow(self, rule: str) -> None:
        """Add an allow rule for the rest of this run (the person's "yes, always"). It does
        not outrank a `deny` or an `ask` rule from settings."""
        if rule not in self._allow:
            self._allow.append(rule)

    def narrowed(self, name: str) -> list[tuple[Verdict, str]]:
        """The rules with a pattern that name tool `name`, deny first, then ask, then allow:
        what decides some of its calls and not others (`/tools` shows them)."""
        found: list[tuple[Verdict, str]] = []
        for verdict, rules in ((Verdict.DENY, self._deny), (Verdict.ASK, self._ask), (Verdict.ALLOW, self._allow)):
            for text in rules:
                rule = parse_rule(text)
                if rule.problem is None and rule.pattern is not None and matches(rule.tool, name):
                    found.append((verdict, text))
        return found

    def always_rule(self, name: str, input: Json, cwd: str) -> str:
        """The narrow rule a "yes, always" to this call adds (see `always_rule`)."""
        return always_rule(name, input, cwd=cwd, project=self._project)

    # --- deny and ask: a rule matches when any reading of the call matches ----------

    def _first_tightening(self, rules: list[str], name: str, call: _Call | None) -> str | None:
        for text in rules:
            if _bare_match(text, name):
                return text
            rule = parse_rule(text)
            if not rule.tool or not matches(rule.tool, name):
                continue
            if rule.pattern is None:
                return text  # a bare name, or a malformed rule read wide until it is fixed
            if call is not None and name in MAIN_ARGUMENTS and self._touches(rule.pattern, call):
                return text
        return None

    def _touches(self, pattern: str, call: _Call) -> bool:
        argument = call.argument()
        if argument is None:
            return True  # nothing to judge: a tightening rule takes the doubt
        if call.tool == "bash":
            # A tightening rule takes the wide reading: its `*` also extends a word.
            wanted = pattern.strip()
            return any(_argument_matches(wanted, piece) for piece in pieces(argument))
        forms = _path_forms(argument, call.cwd)
        if forms is None:
            return True
        patterns = _pattern_forms(pattern, self._project)
        tree = call.tool == "glob" or (call.tool == "grep" and os.path.isdir(forms[-1]))
        judge = _reaches if tree else _argument_matches
        return any(judge(p, form) for p in patterns for form in forms)

    # --- allow: every reading of the call must be allowed ---------------------------

    def _allowing(self, name: str, call: _Call | None) -> tuple[str | None, tuple[str, ...]]:
        """The allow rule (or, for a bash command in parts, the rules) that allow the call,
        and the patterned allow rules naming the tool that did not."""
        patterned: list[str] = []
        bare: list[str] = []
        guarded = call is not None and name in _GIT_GUARDED and _reaches_git(call)
        for text in self._allow:
            if _bare_match(text, name):
                return text, ()
            rule = parse_rule(text)
            if rule.problem is not None or not matches(rule.tool, name):
                continue
            if rule.pattern is None:
                if not guarded:
                    return text, ()
                bare.append(text)  # a bare `write` names no path, so not one in .git
                continue
            if call is None or name not in MAIN_ARGUMENTS:
                continue
            patterned.append(text)
        near = tuple(bare + patterned)
        if not patterned or call is None:
            return None, near
        argument = call.argument()
        if argument is None:
            return None, near
        if call.tool == "bash":
            return self._allowing_command(argument, patterned), near
        for text in patterned:
            pattern = parse_rule(text).pattern or ""
            if guarded and not _names_git(pattern):
                continue
            if self._allows_path(pattern, argument, call):
                return text, ()
        return None, near

    def _allowing_command(self, command: str, patterned: list[str]) -> str | None:
        wanted = command.strip()
        for text in patterned:
            if _literal((parse_rule(text).pattern or "").strip()) == wanted:
                return text  # exactly what the rule says, character for character
        parts = simple_commands(command)
        if not parts:
            return None
        used: list[str] = []
        for part in parts:
            rule = next((t for t in patterned if _allows_part(parse_rule(t).pattern or "", part)), None)
            if rule is None:
                return None
            if rule not in used:
                used.append(rule)
        return ", ".join(used)

    def _allows_path(self, pattern: str, argument: str, call: _Call) -> bool:
        forms = _path_forms(argument, call.cwd)
        if forms is None:
            return False
        patterns = _pattern_forms(pattern, self._project)
        tree = call.tool == "glob" or (call.tool == "grep" and os.path.isdir(forms[-1]))
        judge = _covers if tree else _argument_matches
        return all(any(judge(p, form) for p in patterns) for form in forms)


def outside_sandbox(input: Json) -> bool:
    """Whether a `bash` call's input asks to run outside the sandbox (`"outsideSandbox": true`)."""
    return is_object(input) and input.get("outsideSandbox") is True


# --- the narrow "always" ---------------------------------------------------------------


def always_rule(name: str, input: Json, *, cwd: str, project: str) -> str:
    """The allow rule a "yes, always" to this call adds: for a simple bash command that is
    one word, or whose second word is a subcommand (no flag, no path that exists in `cwd`),
    those words and a `*` (`git status -s` gives `bash(git status*)`); for any other
    command (`rm -rf build`, parts, substitutions, redirections, quotes) the exact
    command, which allows that text alone; for a path tool
    the exact path (under the project, written relative to it), or for a search every path
    below the directory searched; for any other tool, or a call without a readable main
    argument, the bare name."""
    argument = _Call(name, input, cwd).argument() if name in MAIN_ARGUMENTS else None
    if argument is None:
        return name
    if name == "bash":
        return f"bash({_narrow_command(argument, cwd)})"
    forms = _path_forms(argument, cwd)
    if forms is None:
        return name
    path = forms[0]
    root = project.rstrip("/") + "/"
    if path.startswith(root) and not path[len(root) :].startswith("~"):
        path = path[len(root) :]
    if name == "glob" or (name == "grep" and os.path.isdir(forms[-1])):
        return f"{name}({exact(path.rstrip('/'))}/*)"
    return f"{name}({exact(path)})"


def _narrow_command(command: str, cwd: str) -> str:
    # A blank command's exact rule is `bash( )`: `bash()` is malformed (an empty pattern).
    whole = exact(command.strip()) or " "
    parts = simple_commands(command)
    if parts is None or len(parts) != 1:
        return whole
    words = parts[0].words
    if words[0] != parts[0].command or not _PLAIN_WORD.fullmatch(words[0]):
        return whole
    if len(words) == 1:
        return words[0] + "*"  # `ls*`: `ls` and `ls -la`, never `lsx` (a glued star)
    # A second word that is no flag and names nothing here is a subcommand (`git status`,
    # `npm test`); after anything else (`rm -rf build`, `cat notes`) a prefix would allow
    # the program with any arguments, so the exact command is offered.
    second = words[1]
    if _SUBCOMMAND.fullmatch(second) and not os.path.lexists(os.path.join(cwd, second)):
        return f"{words[0]} {second}*"
    return whole


# --- what the person and the model are told ----------------------------------------


def refusal(name: str, near: Sequence[str] = ()) -> str:
    """The line the model (and the person) is told when `name` was refused for want of a
    rule and nobody could be asked; `near` are the allow rules naming the tool whose
    pattern this call does not match."""
    if not near:
        return f"{name} is not allowed here: add it to permissions.allow or pass --allow"
    shown = ", ".join(repr(rule) for rule in near)
    if name == "bash":
        why = (
            "a pattern allows a command only when each part between ;, &, |, && or || "
            "matches one, with no $( ), backticks, parentheses or redirections"
        )
    elif name in _GIT_GUARDED:
        why = (
            "a path is matched after it is made absolute and its .. and links are resolved, "
            "and one inside a .git directory only by a rule that names .git"
        )
    else:
        why = "a path is matched after it is made absolute and its .. and links are resolved"
    return f"{name} is not allowed here: this call does not match {shown} ({why}): add a rule to permissions.allow or pass --allow"


def _close(word: str, candidates: Collection[str]) -> list[str]:
    return difflib.get_close_matches(word, list(candidates), n=_SHOWN_SUGGESTIONS)


def _or(words: Sequence[str]) -> str:
    return words[0] if len(words) == 1 else ", ".join(words[:-1]) + " or " + words[-1]


def rule_problems(placed: Sequence[PlacedRule], tools: Mapping[str, str], plugins: Collection[str]) -> list[str]:
    """One line per rule in force that is malformed or can match no tool known this run
    (`tools`: each tool's name and source), with a "did you mean" where a name is close:
    a plugin's name in place of a tool's is told how its tools are named."""
    lines: list[str] = []
    seen: set[PlacedRule] = set()
    for placed_rule in placed:
        if placed_rule in seen:
            continue
        seen.add(placed_rule)
        where, kind, text = placed_rule
        if any(_bare_match(text, tool) for tool in tools):
            continue
        label = f"{where} {text!r}" if where.startswith("--") else f"{where}: permissions.{kind} rule {text!r}"
        rule = parse_rule(text)
        if rule.problem is not None:
            if kind == "allow" or not rule.tool:
                effect = (
                    "it allows nothing until it is fixed" if kind == "allow" else "it matches nothing until it is fixed"
                )
            else:
                verb = "denies" if kind == "deny" else "asks about"
                effect = f"until it is fixed it {verb} every call of {rule.tool}"
            lines.append(f"{label} is not a rule: {rule.problem} ({effect})")
            continue
        known = [tool for tool in tools if matches(rule.tool, tool)]
        suffix = f"({rule.pattern})" if rule.pattern is not None else ""
        if not known:
            line = f"{label} matches no tool"
            if rule.tool in plugins:
                own = sorted(tool for tool, source in tools.items() if source == rule.tool)
                line += f": {rule.tool} is a plugin, and a rule names one of its tools"
                line += (
                    f" (did you mean {_or([t + suffix for t in own[:_SHOWN_SUGGESTIONS]])}?)"
                    if own
                    else ", of which it declares none"
                )
            else:
                close = _close(rule.tool, tools)
                if close:
                    line += f" (did you mean {_or([t + suffix for t in close])}?)"
            lines.append(line)
        elif rule.pattern is not None and not any(tool in MAIN_ARGUMENTS for tool in known):
            lines.append(
                f"{label} can match no call: a pattern narrows only {_or(list(MAIN_ARGUMENTS))}, "
                f"and {_or(known[:_SHOWN_SUGGESTIONS])} has no main argument (write {rule.tool} to match every call)"
            )
    return lines
