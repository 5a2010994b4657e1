"""A built-in provider keeps one HTTP client for the run (ADR-0040), through the real binary
against a local server that speaks each API over HTTP/1.1 and counts the connections it
accepts: a turn of five model steps (four `read` calls, then text) opens one connection;
a server that closes each connection after its answer, or closes a kept one as the next
request arrives, costs no retry and no notice; a stream interrupted mid-answer (Ctrl-C, in a
pty) leaves no broken connection for the next turns, which share a new one; and every ACP
session of one `bingo --acp` asks through the same provider, on one connection."""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Literal

import pytest

from tests.e2e._bingo import Sandbox, no_traceback
from tests.support.model_server import ModelServer, Reply

PROVIDERS = ["anthropic", "openai"]

STEPS = 5
"""Model steps in the turn: four tool calls, then the answer."""


def _env(provider: str, server: ModelServer) -> dict[str, str]:
    if provider == "anthropic":
        return {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.url}
    return {"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": server.url + "/v1"}


def _five_steps(box: Sandbox) -> list[Reply]:
    (box.project / "notes.txt").write_text("alpha beta gamma\n", encoding="utf-8")
    calls: list[Reply] = [[("tool", f"t{n}", "read", {"path": "notes.txt"})] for n in range(1, STEPS)]
    return [*calls, [("text", "Read it four times.")]]


def _five_step_turn(
    tmp_path: Path,
    provider: str,
    *,
    keep_alive: bool = False,
    closes: Literal["after-answer", "on-reuse"] | None = None,
) -> tuple[subprocess.CompletedProcess[str], ModelServer]:
    """`bingo -p` through the five steps against a server serving as asked: the run, which
    succeeded with the model's answer, and the server (stopped, its counts kept)."""
    box = Sandbox(tmp_path)
    with ModelServer(_five_steps(box), keep_alive=keep_alive, closes=closes) as server:
        result = box.run("-p", "read notes.txt four times", env=_env(provider, server))
    assert result.returncode == 0, result.stderr
    assert result.stdout.endswith("Read it four times.\n")
    assert no_traceback(result)
    return result, server


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_turn_of_five_model_steps_opens_one_connection(tmp_path: Path, provider: str) -> None:
    _, server = _five_step_turn(tmp_path, provider, keep_alive=True)
    assert len(server.requests) == STEPS
    assert server.connections == 1, f"{STEPS} requests came on {server.connections} connections"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_server_closing_each_connection_after_its_answer_costs_no_retry(tmp_path: Path, provider: str) -> None:
    result, server = _five_step_turn(tmp_path, provider, closes="after-answer")
    assert f"{provider}:" not in result.stderr, "no retry was said"
    assert (len(server.requests), server.connections) == (STEPS, STEPS)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_request_a_server_drops_on_a_kept_connection_is_sent_again_unsaid(tmp_path: Path, provider: str) -> None:
    result, server = _five_step_turn(tmp_path, provider, closes="on-reuse")
    assert f"{provider}:" not in result.stderr, "no retry was said"
    # Each request after the first went out on the kept connection, which the server closed
    # unanswered; each was sent again at once on a new one.
    assert (len(server.requests), server.dropped, server.connections) == (STEPS, STEPS - 1, STEPS)


def test_a_stream_interrupted_mid_answer_leaves_no_broken_connection_for_the_next_turns(tmp_path: Path) -> None:
    from tests.e2e.test_terminal import terminal

    box = Sandbox(tmp_path)
    replies: list[Reply] = [
        [("text", "First answer"), ("pause",), ("text", " never shown")],
        [("text", "Second answer.")],
        [("text", "Third answer.")],
    ]
    with ModelServer(replies, keep_alive=True) as server:
        box.env.update(_env("anthropic", server))
        with terminal(box, model=False) as screen:
            screen.child.send("first\r")
            screen.expect("First answer")
            assert server.paused.wait(10)
            screen.child.sendcontrol("c")
            screen.expect("the turn was interrupted")
            screen.prompt()
            screen.child.send("second\r")
            screen.expect("Second answer.")
            screen.prompt()
            screen.child.send("third\r")
            screen.expect("Third answer.")
            screen.prompt()
            screen.child.sendcontrol("d")
            assert screen.exits() == 0
        asked, connections = len(server.requests), server.connections
    assert "failed" not in screen.text()
    assert asked == 3
    # The interrupted answer's connection was closed, not kept: the next two turns shared one.
    assert connections == 2, f"3 requests came on {connections} connections"


def test_every_acp_session_of_a_run_shares_the_providers_connection(tmp_path: Path) -> None:
    import asyncio

    from tests.e2e._acp import Recorder, connected, text

    box = Sandbox(tmp_path)
    client = Recorder()
    replies: list[Reply] = [[("text", "One.")], [("text", "Two.")], [("text", "Three.")]]
    with ModelServer(replies, keep_alive=True) as server:
        box.env.update(_env("anthropic", server))

        async def go() -> list[str]:
            async with asyncio.timeout(60), connected(box, client) as conn:
                first = await conn.new_session(cwd=str(box.project))
                second = await conn.new_session(cwd=str(box.project))
                stops: list[str] = []
                for session in (first, second, first):
                    answer = await conn.prompt(session_id=session.session_id, prompt=[text("go on")])
                    stops.append(answer.stop_reason)
                return stops

        stops = asyncio.run(go())
        asked, connections = len(server.requests), server.connections
    assert stops == ["end_turn"] * 3
    assert all(words in client.agent_text() for words in ("One.", "Two.", "Three."))
    assert asked == 3
    assert connections == 1, f"3 requests from 2 sessions came on {connections} connections"
