"""A model turn through the real binary, against a local server speaking each built-in
provider's real streaming format: text streams, `read` runs without asking, `bash` is refused
in --print (and the refusal reaches the model) and runs with --allow."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from tests.e2e._bingo import Sandbox, no_traceback
from tests.support.model_server import ModelServer

PROVIDERS = ["anthropic", "openai"]


def _env(provider: str, server: ModelServer) -> dict[str, str]:
    if provider == "anthropic":
        return {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.url}
    return {"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": server.url + "/v1"}


def _tool_results(provider: str, body: dict[str, Any]) -> list[str]:
    """The text of every tool result the model was sent, in the provider's own shape."""
    out: list[str] = []
    for message in body["messages"]:
        if provider == "openai":
            if message["role"] == "tool":
                out.append(
                    message["content"] if isinstance(message["content"], str) else json.dumps(message["content"])
                )
            continue
        content = message["content"]
        if isinstance(content, list):
            for block in content:
                if block.get("type") == "tool_result":
                    out.append(json.dumps(block["content"]))
    return out


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_turn_streams_the_models_text(tmp_path: Path, provider: str) -> None:
    box = Sandbox(tmp_path)
    with ModelServer([[("text", "Hello from the local model.")]]) as server:
        result = box.run("-p", "say hello", env=_env(provider, server))
    assert result.returncode == 0, result.stderr
    assert result.stdout == "Hello from the local model.\n"
    assert no_traceback(result)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_read_runs_without_asking(tmp_path: Path, provider: str) -> None:
    box = Sandbox(tmp_path)
    (box.project / "notes.txt").write_text("alpha beta gamma\n", encoding="utf-8")
    replies = [[("tool", "t1", "read", {"path": "notes.txt"})], [("text", "It says alpha beta gamma.")]]
    with ModelServer(replies) as server:
        result = box.run("-p", "what is in notes.txt?", env=_env(provider, server))
        bodies = server.bodies
    assert result.returncode == 0, result.stderr
    assert "It says alpha beta gamma." in result.stdout
    [fed_back] = _tool_results(provider, bodies[1])
    assert "alpha beta gamma" in fed_back


@pytest.mark.parametrize("provider", PROVIDERS)
def test_bash_is_refused_in_print_mode_and_the_model_is_told_why(tmp_path: Path, provider: str) -> None:
    box = Sandbox(tmp_path)
    replies = [[("tool", "t1", "bash", {"command": "echo ran > proof.txt"})], [("text", "I could not run it.")]]
    with ModelServer(replies) as server:
        result = box.run(
            "-p", "--no-sandbox", "make proof.txt", env=_env(provider, server)
        )  # without a sandbox, bash is asked about
        bodies = server.bodies
    assert result.returncode == 0, result.stderr
    [fed_back] = _tool_results(provider, bodies[1])
    assert "bash is not allowed here: add it to permissions.allow or pass --allow" in fed_back
    assert "bingo: bash is not allowed here: add it to permissions.allow or pass --allow" in result.stderr.splitlines()
    assert not (box.project / "proof.txt").exists()


@pytest.mark.parametrize("provider", PROVIDERS)
def test_bash_runs_with_allow(tmp_path: Path, provider: str) -> None:
    box = Sandbox(tmp_path)
    replies = [[("tool", "t1", "bash", {"command": "echo ran > proof.txt; echo done-marker"})], [("text", "Done.")]]
    with ModelServer(replies) as server:
        result = box.run(
            "-p", "--no-sandbox", "--allow", "bash", "make proof.txt", env=_env(provider, server)
        )  # a rule lets it run
        bodies = server.bodies
    assert result.returncode == 0, result.stderr
    assert (box.project / "proof.txt").read_text() == "ran\n"
    [fed_back] = _tool_results(provider, bodies[1])
    assert "done-marker" in fed_back


def test_a_provider_error_fails_the_turn_with_one_line(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    from tests.support.model_server import ErrorReply

    with ModelServer(
        [ErrorReply(401, {"type": "error", "error": {"type": "authentication_error", "message": "invalid x-api-key"}})]
    ) as server:
        result = box.run("-p", "hi", env=_env("anthropic", server))
    assert result.returncode == 1
    assert (
        result.stderr.strip().splitlines()[-1]
        == "bingo: anthropic answered HTTP 401: invalid x-api-key: check ANTHROPIC_API_KEY"
    )
    assert no_traceback(result)


def test_a_prompt_with_no_model_configured_says_how_to_choose_one(tmp_path: Path) -> None:
    result = Sandbox(tmp_path).run("-p", "hello")
    assert result.returncode == 1
    assert (
        result.stderr
        == "bingo: no model provider is configured: set ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENAI_BASE_URL, or pass --provider\n"
    )
