"""The gate with the sandbox in force (INTERFACE.md §3, §9): bash runs without a rule unless
a deny or ask rule matches; write and edit still ask; outsideSandbox always asks."""

from __future__ import annotations

from bingo.kernel.gate import Decision, Gate, Verdict
from bingo.kernel.settings import Permissions
from bingo.wire import ToolTraits

BASH = ToolTraits(interrupt="cancel")
WRITER = ToolTraits(trusted=True)


def _decide(
    gate: Gate, name: str, input: dict[str, object], traits: ToolTraits = BASH, hook_asks: bool = False
) -> Decision:
    return gate.decide(name, traits, input=input, cwd="/tmp", hook_asks=hook_asks)  # pyright: ignore[reportArgumentType]


def test_sandboxed_bash_runs_without_a_rule() -> None:
    gate = Gate(Permissions(), project="/tmp", sandboxed=True)
    assert _decide(gate, "bash", {"command": "rm -rf build"}) == Decision(Verdict.ALLOW, None)


def test_without_the_sandbox_bash_is_asked() -> None:
    gate = Gate(Permissions(), project="/tmp", sandboxed=False)
    assert _decide(gate, "bash", {"command": "ls"}).verdict is Verdict.ASK


def test_deny_and_ask_rules_still_hold_for_sandboxed_bash() -> None:
    gate = Gate(Permissions(deny=("bash(rm*)",), ask=("bash(git push*)",)), project="/tmp", sandboxed=True)
    assert _decide(gate, "bash", {"command": "rm -rf /"}).verdict is Verdict.DENY
    assert _decide(gate, "bash", {"command": "git push origin"}) == Decision(Verdict.ASK, "bash(git push*)")
    assert _decide(gate, "bash", {"command": "ls"}, hook_asks=True).verdict is Verdict.ASK


def test_write_and_edit_still_ask() -> None:
    gate = Gate(Permissions(), project="/tmp", sandboxed=True)
    assert _decide(gate, "write", {"path": "a", "content": ""}, WRITER).verdict is Verdict.ASK
    assert _decide(gate, "edit", {"path": "a"}, WRITER).verdict is Verdict.ASK


def test_outside_the_sandbox_is_always_asked_and_no_rule_allows_it() -> None:
    gate = Gate(
        Permissions(
            allow=(
                "bash",
                "bash(curl*)",
                "*",
            )
        ),
        project="/tmp",
        sandboxed=True,
    )
    call = {"command": "curl https://example.org", "outsideSandbox": True, "reason": "it needs the network"}
    assert _decide(gate, "bash", call) == Decision(Verdict.ASK, None, outside=True)
    gate.allow("bash(curl https://example.org)")
    assert _decide(gate, "bash", call).outside
    assert (
        Gate(Permissions(deny=("bash(curl*)",)), project="/tmp", sandboxed=True)
        .decide("bash", BASH, input=call, cwd="/tmp")
        .verdict
        is Verdict.DENY
    )


def test_outside_means_nothing_without_the_sandbox() -> None:
    gate = Gate(Permissions(allow=("bash",)), project="/tmp", sandboxed=False)
    assert _decide(gate, "bash", {"command": "ls", "outsideSandbox": True}) == Decision(Verdict.ALLOW, "bash")
