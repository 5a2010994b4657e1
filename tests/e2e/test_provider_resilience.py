"""The built-in providers in the real world, through the real binary against a local server
speaking each API's stream: a recorded 529 (and a 429) is waited out with one notice on
stderr and the answer printed; an answer that breaks mid-stream fails the turn naming the
cause, and what arrived stays in the session (the next turn's request carries it); Ctrl-C
during a wait ends the turn at once (through a pty); `/usage` shows what was spent."""

from __future__ import annotations

from pathlib import Path

from tests.e2e._bingo import Sandbox, no_traceback
from tests.support.model_server import ErrorReply, ModelServer, RawReply

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "providers"

OVERLOADED = {"type": "error", "error": {"type": "overloaded_error", "message": "Overloaded"}}
"""Anthropic's 529 body: the overloaded_error of its streaming page's "Error events"."""


def _anthropic(server: ModelServer) -> dict[str, str]:
    return {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.url}


def test_a_recorded_529_is_retried_with_a_notice_and_the_answer_is_printed(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    # retry-after 0: the server's own wait is honoured, so the test waits nothing.
    replies = [ErrorReply(529, OVERLOADED, headers={"retry-after": "0"}), [("text", "Hello after the wait.")]]
    with ModelServer(replies) as server:
        result = box.run("-p", "say hello", env=_anthropic(server))
        asked = len(server.requests)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Hello after the wait.\n"
    assert result.stderr.splitlines() == ["anthropic: overloaded (529); retrying in 0.0 s, attempt 2 of 4"]
    assert asked == 2
    assert no_traceback(result)


def test_openai_rate_limiting_is_retried_after_the_wait_it_asks_for(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    replies = [ErrorReply(429, headers={"retry-after-ms": "10"}), [("text", "ok")]]
    with ModelServer(replies) as server:
        result = box.run("-p", "hi", env={"OPENAI_API_KEY": "k", "OPENAI_BASE_URL": server.url + "/v1"})
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ok\n"
    assert result.stderr.splitlines() == ["openai: rate limited (429); retrying in 0.0 s, attempt 2 of 4"]


def test_model_attempts_1_turns_retries_off(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.settings({"modelAttempts": 1})
    with ModelServer([ErrorReply(529, OVERLOADED, headers={"retry-after": "0"}), [("text", "never")]]) as server:
        result = box.run("-p", "hi", env=_anthropic(server))
        asked = len(server.requests)
    assert result.returncode == 1
    assert result.stderr.splitlines()[-1].endswith(
        "anthropic answered HTTP 529: Overloaded: the service is overloaded: try again later"
    )
    assert asked == 1


def test_an_answer_broken_mid_stream_fails_naming_the_cause_and_what_arrived_is_kept(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    broken = RawReply((FIXTURES / "anthropic" / "error_mid_stream.sse").read_text())
    with ModelServer([broken, [("text", "Hello again.")]]) as server:
        first = box.run("-p", "say hello", env=_anthropic(server))
        second = box.run("-p", "-c", "go on", env=_anthropic(server))
        bodies = server.bodies
    assert first.returncode == 1
    assert first.stdout == "Hello\n"
    assert first.stderr.splitlines()[-1].endswith(
        "anthropic failed mid-answer: Overloaded (overloaded_error): try again later"
    )
    assert len(bodies) == 2, "an answer that broke after text was shown is never retried"
    assert no_traceback(first)
    assert second.returncode == 0, second.stderr
    kept = bodies[1]["messages"]
    assert [m["role"] for m in kept] == ["user", "assistant", "user"]
    assert kept[1]["content"] == [{"type": "text", "text": "Hello"}]


def test_usage_shows_what_this_run_and_the_session_spent(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    with ModelServer([[("text", "one")], [("text", "two")]]) as server:
        box.run("-p", "first", env=_anthropic(server))
        box.run("-p", "-c", "second", env=_anthropic(server))
        result = box.run("-p", "-c", "/usage", env=_anthropic(server))
    assert result.returncode == 0, result.stderr
    # The scripted model reports 11 input and 7 output tokens per answer; this run asked none.
    rows = [line.split() for line in result.stdout.splitlines()]
    assert ["this", "run", "0", "0", "0", "0"] in rows
    assert ["this", "session", "22", "0", "0", "14"] in rows


def test_ctrl_c_during_a_retry_wait_ends_the_turn_at_once(tmp_path: Path) -> None:
    from tests.e2e.test_terminal import WAIT, terminal

    assert WAIT < 30, "the wait below must outlast the test's patience"
    box = Sandbox(tmp_path)
    servers: list[ModelServer] = []
    replies = [ErrorReply(529, OVERLOADED, headers={"retry-after": "30"}), [("text", "not reached")]]
    with terminal(box, replies, server=servers) as screen:
        screen.child.send("say hello\r")
        screen.expect(r"anthropic: overloaded \(529\); retrying in 30\.0 s, attempt 2 of 4")
        screen.child.sendcontrol("c")
        screen.expect("the turn was interrupted")  # within WAIT, not after the 30 s
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
    assert len(servers[0].requests) == 1


def test_model_attempts_is_a_known_key_checked_like_the_rest(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.settings({"modelAttempts": 0})
    bad = box.run("-p", "/usage")
    box.settings({"modelAtempts": 2})
    typo = box.run("-p", "/usage")
    settings = box.bingo_home / "settings.json"
    assert (bad.returncode, bad.stderr.splitlines()) == (
        2,
        [
            f"bingo: modelAttempts in {settings} (line 1) is the number 0: expected a positive whole number (tries of one model request; 1: no retry)"
        ],
    )
    assert typo.returncode == 0
    assert typo.stderr.splitlines() == [f"bingo: {settings}: unknown key modelAtempts (did you mean modelAttempts?)"]
