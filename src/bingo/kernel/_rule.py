"""The permission grammar: how a rule is read, and what its patterns match.

Owns the grammar of INTERFACE.md §3 and ADR-0018 that kernel.gate decides with: a rule is a
tool name in which `*` matches any run of characters, optionally narrowed to calls whose main
argument (`MAIN_ARGUMENTS`) matches a pattern, `TOOL(PATTERN)`, in which `\\*` is a `*`
character and `\\\\` one backslash (`exact`). It owns reading a rule (`parse_rule`), matching a
name (`matches`) and an argument (`argument_matches`; a bash allow pattern part by part,
`allows_part`; a tree searched, `covers` and `reaches`), the absolute forms of a call's path and
of a path pattern (folded, links resolved), and which calls reach into a `.git` directory. It
does not decide a call (kernel.gate does) nor word a refusal (`_refusal.py`).
"""

from __future__ import annotations

import functools
import os
import re
from collections.abc import Mapping
from dataclasses import dataclass

from ..wire import Json, is_object
from ._shell import Part
from .patterns import Regex, linear

__all__ = [
    "GIT_GUARDED",
    "GIT_WORKTREES",
    "MAIN_ARGUMENTS",
    "Call",
    "Rule",
    "allows_part",
    "argument_matches",
    "bare_match",
    "covers",
    "exact",
    "matches",
    "names_git",
    "parse_rule",
    "path_forms",
    "pattern_forms",
    "pattern_literal",
    "reaches",
    "reaches_git",
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
_BLANK = frozenset(" \t")
PATTERN_MAX = 64 << 10
"""Characters a rule's pattern may have."""
_GIT_DIRECTORY = ".git"
GIT_WORKTREES = "bingo-worktrees"
"""The directory of a repository's git directory that holds the worktrees bingo makes for
subagents (`run/_worktree.py`): its worktrees' files are no part of git's own."""
GIT_GUARDED = frozenset({"write", "edit"})
"""Tools that never reach into a `.git` directory (its `config` and `hooks/` run code) by a
rule that does not name `.git`: a bare `write`, `edit(*)` and `write(src/*)` do not."""


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
    if len(pattern) > PATTERN_MAX:
        # RE2 compiles no program past its memory bound (a pattern of a few MB), and no
        # person writes one: refused here, so the gate never meets one it cannot compile.
        return Rule(text, name, None, f"its pattern is longer than {PATTERN_MAX} characters; put * for what varies")
    return Rule(text, name, pattern)


def bare_match(text: str, name: str) -> bool:
    """A rule naming, whole, a tool whose own name holds a parenthesis (a plugin may call a
    tool `f(x)`): it is that tool's bare name, not a name and a pattern."""
    return ("(" in name or ")" in name) and matches(text, name)


def matches(rule: str, name: str) -> bool:
    """Whether the `*` pattern `rule` matches all of `name`: `*` matches any run of
    characters (none included); everything else must be equal. No regex: the pieces between
    the stars are found in order, each as early as it can be, in time linear in the name,
    whatever the rule's length."""
    if "*" not in rule:
        return rule == name
    first, *middle, last = rule.split("*")
    if len(first) + len(last) > len(name) or not name.startswith(first) or not name.endswith(last):
        return False
    at, end = len(first), len(name) - len(last)
    for piece in middle:
        found = name.find(piece, at, end)
        if found < 0:
            return False
        at = found + len(piece)
    return True


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


def pattern_literal(pattern: str) -> str | None:
    """What a pattern with no wildcard matches (its escapes resolved), or None."""
    units = _units(pattern)
    return None if None in units else "".join(unit for unit in units if unit is not None)


@functools.lru_cache(maxsize=_RULE_CACHE_SIZE)
def _compiled(units: _Units, words: bool) -> Regex:
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
    # RE2 (`kernel.patterns`): Python's `re` took 13.6 s for `git * b * b * b * y` against a
    # 1.6 kB command, on the event loop, and grows as the command's length to the wildcards'.
    return linear("".join(out), dot_nl=True)


def argument_matches(pattern: str, argument: str) -> bool:
    """Whether the argument pattern matches all of `argument`, `*` matching any run."""
    return _compiled(_units(pattern), False).fullmatch(argument) is not None


def allows_part(pattern: str, part: Part) -> bool:
    """Whether a bash allow pattern allows one simple command: its words match with the
    pattern's glued stars bounded by words, and its command name is a path (or an expansion,
    `$X`, that may be one) only where the pattern's first word is a path
    (`bash(* --help)` does not run `./x --help` nor `$X --help`)."""
    wanted = pattern.strip()
    first = wanted.split()[0] if wanted.split() else ""
    if any(char in part.command for char in "/$") and "/" not in first:
        return False
    return _compiled(_units(wanted), True).fullmatch(part.text) is not None


def covers(pattern: str, directory: str) -> bool:
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


def reaches(pattern: str, directory: str) -> bool:
    """Whether `pattern` matches `directory` or some path below it (a deny rule on a tree
    searched): the pattern is run over `directory/` as a prefix, star by star."""
    if argument_matches(pattern, directory):
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
    one) or lies inside one. A file of a worktree bingo made for a subagent
    (`.git/bingo-worktrees/<name>/…`, ADR-0049) is a working tree's, not git's own: git reads
    nothing there, so what is below `<name>` is judged as the rest of the path says."""
    parts = path.split("/")
    at = 0
    while at < len(parts):
        if parts[at].casefold() == _GIT_DIRECTORY:
            if at + 2 < len(parts) and parts[at + 1] == GIT_WORKTREES and parts[at + 2] not in ("", ".", ".."):
                at += 3
                continue
            return True
        at += 1
    return False


def names_git(pattern: str) -> bool:
    """Whether a path pattern names a `.git` directory in its own words (`.git/config`,
    `*/.git/*`), as a rule must to let `write` or `edit` reach into one."""
    return _in_git(pattern)


def reaches_git(call: Call) -> bool:
    """Whether a call's path, as written or as really opened, is in a `.git` directory (a
    call with no path, or a NUL in it, reaches nothing: the tool refuses it)."""
    argument = call.argument()
    forms = path_forms(argument, call.cwd) if argument is not None else None
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


def path_forms(path: str, base: str) -> tuple[str, ...] | None:
    """The absolute forms of a call's path: folded as written, and with links resolved
    (what is really opened). None when it is no path at all (a NUL byte)."""
    try:
        whole = _absolute(path, base)
        lexical, real = _normal(whole), os.path.realpath(whole)
    except (OSError, ValueError):
        return None
    return (lexical,) if real == lexical else (lexical, real)


@functools.lru_cache(maxsize=_RULE_CACHE_SIZE)
def pattern_forms(pattern: str, project: str) -> tuple[str, ...]:
    """The absolute forms of a path pattern: folded as written, and with the links of its
    literal directories (those before its first wildcard) resolved; escapes kept."""
    if pattern == "~" or pattern.startswith("~/"):
        pattern = exact(os.path.expanduser("~")) + pattern[1:]
    lexical = _normal(_absolute(pattern, project))
    star = _first_wildcard(lexical)
    try:
        if star < 0:
            real = exact(os.path.realpath(pattern_literal(lexical) or "/"))
        else:
            cut = lexical.rfind("/", 0, star)  # no escape holds a `/`: the cut splits none
            real = os.path.join(exact(os.path.realpath(pattern_literal(lexical[:cut]) or "/")), lexical[cut + 1 :])
    except (OSError, ValueError):
        return (lexical,)
    return (lexical,) if real == lexical else (lexical, real)


@dataclass(frozen=True, slots=True)
class Call:
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
