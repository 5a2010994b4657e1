"""What the model and the person are told when a call does not run, and of rules that cannot work.

Owns the words of a refusal for want of a rule (`refusal`, with the allow rules that named the
tool and why this call missed them), of a call nobody could be asked about (`nobody_to_ask`,
`OUTSIDE_NOBODY`), the question for a `bash` call that asks to run outside the sandbox
(`outside_question`, its bytes on one line), and the lines naming rules that are malformed or
can match no tool this run (`rule_problems`, with a "did you mean"). It decides nothing: the gate
decides, and the turn loop says these.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Mapping, Sequence

from ..wire import Json, is_object
from ._rule import GIT_GUARDED, MAIN_ARGUMENTS, bare_match, matches, parse_rule
from .hooks import HookVerdict
from .interfaces import Hook
from .log import cut
from .settings import PlacedRule

__all__ = ["OUTSIDE_NOBODY", "hook_name", "nobody_to_ask", "outside_question", "refusal", "rule_problems"]

_SHOWN_SUGGESTIONS = 3


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
    elif name in GIT_GUARDED:
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
        if any(bare_match(text, tool) for tool in tools):
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


def hook_name(hook: Hook | None) -> str:
    """A hook as a line names it: its name and source."""
    return f"hook {hook.spec.name} ({hook.source})" if hook is not None else "a hook"


def nobody_to_ask(name: str, rule: str | None, verdict: HookVerdict, near: tuple[str, ...] = ()) -> str:
    """Why a call the gate would ask about did not run, with nobody to ask: the rule in
    permissions.ask, the hook that asked, or no rule allowing it."""
    if rule is not None:
        return f"{name} is asked about by the rule {rule!r} in permissions.ask, and there is no person to ask"
    if verdict.asked_by is not None:
        return f"{hook_name(verdict.asked_by)} asked to confirm {name}, and there is no person to ask"
    return refusal(name, near)


OUTSIDE_NOBODY = (
    "bash was not run: it asked to run outside the sandbox, which only the person can allow (no rule does), "
    "and there is no person to ask; run it without outsideSandbox, inside the sandbox"
)


def outside_question(input: Json) -> str:
    """The question for a `bash` call that asks to run outside the sandbox: it says so, with
    the model's reason and the command."""
    fields = input if is_object(input) else {}
    command, reason = fields.get("command"), fields.get("reason")
    why = reason if isinstance(reason, str) and reason.strip() else "no reason given"
    return (
        "bash wants to run OUTSIDE the sandbox, with everything you can reach (your files, keys and network)\n"
        f"  reason: {_one_line(cut(why, 300))}\n"
        f"  command: {_one_line(cut(command if isinstance(command, str) else '', 2000))}"
    )


def _one_line(text: str) -> str:
    """`text` on one line: its line breaks shown, so none of it passes for a line of bingo's."""
    return text.replace("\r", "\\r").replace("\n", "\\n")
