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
here as `hook_asks`). The verdict plane stays in-process: nothing here crosses the wire. The
grammar's reading and matching are `_rule.py`'s, and the wording of refusals and rule
problems `_refusal.py`'s; this module is their public face.
"""

from __future__ import annotations

import enum
import os
import re

import msgspec

from ..wire import Json, ToolTraits, is_object
from ._refusal import refusal, rule_problems
from ._rule import (
    GIT_GUARDED,
    GIT_WORKTREES,
    MAIN_ARGUMENTS,
    Call,
    Rule,
    allows_part,
    argument_matches,
    bare_match,
    covers,
    exact,
    matches,
    names_git,
    parse_rule,
    path_forms,
    pattern_forms,
    pattern_literal,
    reaches,
    reaches_git,
)
from ._shell import pieces, simple_commands
from .settings import Permissions

__all__ = [
    "GIT_WORKTREES",
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

_SUBCOMMAND = re.compile(r"[A-Za-z][A-Za-z0-9_:-]*")
"""A second word kept in a narrow bash rule (`git status`), not a flag or a path."""
_PLAIN_WORD = re.compile(r"[^\s'\"\\$*`=]+")


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
        call = Call(name, input, cwd) if cwd is not None else None
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

    def _first_tightening(self, rules: list[str], name: str, call: Call | None) -> str | None:
        for text in rules:
            if bare_match(text, name):
                return text
            rule = parse_rule(text)
            if not rule.tool or not matches(rule.tool, name):
                continue
            if rule.pattern is None:
                return text  # a bare name, or a malformed rule read wide until it is fixed
            if call is not None and name in MAIN_ARGUMENTS and self._touches(rule.pattern, call):
                return text
        return None

    def _touches(self, pattern: str, call: Call) -> bool:
        argument = call.argument()
        if argument is None:
            return True  # nothing to judge: a tightening rule takes the doubt
        if call.tool == "bash":
            # A tightening rule takes the wide reading: its `*` also extends a word.
            wanted = pattern.strip()
            return any(argument_matches(wanted, piece) for piece in pieces(argument))
        forms = path_forms(argument, call.cwd)
        if forms is None:
            return True
        patterns = pattern_forms(pattern, self._project)
        tree = call.tool == "glob" or (call.tool == "grep" and os.path.isdir(forms[-1]))
        judge = reaches if tree else argument_matches
        return any(judge(p, form) for p in patterns for form in forms)

    # --- allow: every reading of the call must be allowed ---------------------------

    def _allowing(self, name: str, call: Call | None) -> tuple[str | None, tuple[str, ...]]:
        """The allow rule (or, for a bash command in parts, the rules) that allow the call,
        and the patterned allow rules naming the tool that did not."""
        patterned: list[str] = []
        bare: list[str] = []
        guarded = call is not None and name in GIT_GUARDED and reaches_git(call)
        for text in self._allow:
            if bare_match(text, name):
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
            if guarded and not names_git(pattern):
                continue
            if self._allows_path(pattern, argument, call):
                return text, ()
        return None, near

    def _allowing_command(self, command: str, patterned: list[str]) -> str | None:
        wanted = command.strip()
        for text in patterned:
            if pattern_literal((parse_rule(text).pattern or "").strip()) == wanted:
                return text  # exactly what the rule says, character for character
        parts = simple_commands(command)
        if not parts:
            return None
        used: list[str] = []
        for part in parts:
            rule = next((t for t in patterned if allows_part(parse_rule(t).pattern or "", part)), None)
            if rule is None:
                return None
            if rule not in used:
                used.append(rule)
        return ", ".join(used)

    def _allows_path(self, pattern: str, argument: str, call: Call) -> bool:
        forms = path_forms(argument, call.cwd)
        if forms is None:
            return False
        patterns = pattern_forms(pattern, self._project)
        tree = call.tool == "glob" or (call.tool == "grep" and os.path.isdir(forms[-1]))
        judge = covers if tree else argument_matches
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
    argument = Call(name, input, cwd).argument() if name in MAIN_ARGUMENTS else None
    if argument is None:
        return name
    if name == "bash":
        return f"bash({_narrow_command(argument, cwd)})"
    forms = path_forms(argument, cwd)
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
