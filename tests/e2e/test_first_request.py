"""What `bingo -p PROMPT` does before its first model request (issue 27 item 2, ADR-0043),
through the real binary against a local model server: httpx's command-line client (and the
click, rich and pygments it imports where they are installed) is never imported; the answer
and the session are what they were, whichever API the run speaks."""

from __future__ import annotations

import socket
import sqlite3
import threading
import time
from pathlib import Path

import pytest

from tests.e2e._bingo import Sandbox, no_traceback
from tests.support.model_server import ModelServer


def _env(provider: str, server: ModelServer) -> dict[str, str]:
    if provider == "anthropic":
        return {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.url}
    return {"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": server.url + "/v1"}


@pytest.mark.parametrize("provider", ["anthropic", "openai"])
def test_a_prompt_imports_no_command_line_client_and_keeps_its_session(tmp_path: Path, provider: str) -> None:
    box = Sandbox(tmp_path)
    with ModelServer([[("text", "hello there")]], keep_alive=True) as server:
        result = box.run("-p", "hi", env={**_env(provider, server), "PYTHONPROFILEIMPORTTIME": "1"})
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello there\n"
    assert no_traceback(result)
    imported = {
        line.rpartition("|")[2].strip() for line in result.stderr.splitlines() if line.startswith("import time:")
    }
    assert "httpx" in imported
    assert not {name for name in imported if name.split(".")[0] in ("click", "rich", "pygments")}
    with sqlite3.connect(box.bingo_home / "data" / "sessions.db") as db:
        kinds = [kind for (kind,) in db.execute("SELECT kind FROM frames ORDER BY seq")]
    assert kinds == ["prompt", "assistant"]


NOT_ON_THE_WAY = (
    # the tools' own modules: their specs are data (bingo.tools._specs)
    "bingo.tools._read",
    "bingo.tools._glob",
    "bingo.tools._grep",
    "bingo.tools._bash",
    "bingo.tools._write",
    "bingo.tools._edit",
    "bingo.tools._common",  # their helpers; the agent tool's schema is data too
    # a plugin's process, transports and declaration cache: there is no plugin
    "bingo.bridge._plugin",
    "bingo.bridge._transport",
    "bingo.bridge.process",
    "bingo.bridge._cache",
    "bingo.bridge._mcp_http",
    "bingo.bridge._mcp",
    # the janitor's client: the sandbox's probe starts no process
    "bingo.sandbox.janitor._client",
)
"""What a `-p` prompt with no plugin does not need before its first request (ADR-0043)."""


def test_a_prompt_with_no_plugin_imports_no_tool_module_plugin_process_or_janitor_client(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    with ModelServer([[("text", "hello there")]], keep_alive=True) as server:
        result = box.run("-p", "hi", env={**_env("anthropic", server), "PYTHONPROFILEIMPORTTIME": "1"})
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello there\n"
    imported = {
        line.rpartition("|")[2].strip() for line in result.stderr.splitlines() if line.startswith("import time:")
    }
    assert "bingo.tools._specs" in imported  # the specs were read: the request carried the tools
    assert sorted(imported & set(NOT_ON_THE_WAY)) == []


def test_a_prompts_checkpoint_begins_once_its_first_request_is_out(tmp_path: Path) -> None:
    # The checkpoint (its module, its store, git's excludes file, the gitignore matcher and
    # the walk) is begun once the first request is written, so it never competes with it for
    # the CPU (ADR-0043, third session); it is still taken, before any tool (ADR-0044).
    box = Sandbox(tmp_path)
    (box.project / ".gitignore").write_text("*.log\n")
    (box.project / "notes.txt").write_text("kept\n")
    with ModelServer([[("text", "hello there")]], keep_alive=True) as server:
        result = box.run("-p", "hi", env={**_env("anthropic", server), "PYTHONPROFILEIMPORTTIME": "1"})
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello there\n"
    # -X importtime prints each import as it ends, in the order they ended.
    order = [line.rpartition("|")[2].strip() for line in result.stderr.splitlines() if line.startswith("import time:")]
    connected = order.index("anyio._core._sockets")  # httpcore's connection for the request
    assert order.index("bingo.checkpoint") > connected
    assert order.index("pathspec") > connected  # the project's .gitignore was read, after it
    with sqlite3.connect(box.bingo_home / "data" / "checkpoints" / "checkpoints.db") as db:
        assert [label for (label,) in db.execute("SELECT label FROM checkpoints")] == ["hi"]


WAIT = 20.0
"""Seconds the model waits for the checkpoint before it answers all the same."""


def _checkpoints(box: Sandbox) -> list[str]:
    db = box.bingo_home / "data" / "checkpoints" / "checkpoints.db"
    if not db.exists():
        return []
    try:
        with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as conn:
            return [label for (label,) in conn.execute("SELECT label FROM checkpoints")]
    except sqlite3.OperationalError:
        return []  # not made yet


def test_a_prompts_checkpoint_is_taken_while_the_model_is_still_answering(tmp_path: Path) -> None:
    # Begun once the request is written (the provider says so), not once the answer comes:
    # a model that answers only after the checkpoint is there still answers (ADR-0044's
    # "taken while the model is asked", kept by ADR-0043's third session).
    box = Sandbox(tmp_path)
    (box.project / "notes.txt").write_text("kept\n")
    answer = threading.Event()
    seen: list[list[str]] = []

    def watch() -> None:  # polls a file another process writes: nothing to wait on
        until = time.monotonic() + WAIT
        while not (labels := _checkpoints(box)) and time.monotonic() < until:
            time.sleep(0.02)
        seen.append(labels)
        answer.set()

    with ModelServer([[("pause", answer), ("text", "hello there")]], keep_alive=True) as server:
        watcher = threading.Thread(target=watch, daemon=True)
        watcher.start()
        result = box.run("-p", "hi", env=_env("anthropic", server))
        watcher.join(WAIT)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello there\n"
    assert seen == [["hi"]]  # there while the model had not answered


def test_a_model_on_a_plain_http_endpoint_needs_no_ca_bundle(tmp_path: Path) -> None:
    # A local model's endpoint is plain HTTP: no CA bundle is read for it, beside start-up
    # or for its client (ADR-0043, third session). A CA file that is not there shows it:
    # bingo failed with an internal error before, reading it for nothing.
    box = Sandbox(tmp_path)
    missing = str(tmp_path / "no-such-ca.pem")
    unproxied = {
        name: "" for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
    }
    with ModelServer([[("text", "hello there")]], keep_alive=True) as server:
        result = box.run("-p", "hi", env={**_env("anthropic", server), **unproxied, "SSL_CERT_FILE": missing})
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello there\n"
    assert no_traceback(result)


def test_an_https_model_with_ca_certificates_that_cannot_be_read_is_one_line_and_never_contacted(
    tmp_path: Path,
) -> None:
    # SSL_CERT_FILE naming no file: bingo said "internal error (FileNotFoundError …)" before.
    box = Sandbox(tmp_path)
    missing = str(tmp_path / "no-such-ca.pem")
    unproxied = {
        name: "" for name in ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "http_proxy", "https_proxy", "all_proxy")
    }
    with socket.socket() as listener:
        listener.bind(("127.0.0.1", 0))
        listener.listen()
        listener.setblocking(False)
        url = f"https://127.0.0.1:{listener.getsockname()[1]}"
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": url, "SSL_CERT_FILE": missing, **unproxied}
        result = box.run("-p", "hi", env=env)
        with pytest.raises(BlockingIOError):
            listener.accept()  # nobody connected: the failure came before any request
    assert result.returncode == 1
    assert no_traceback(result) and "internal error" not in result.stderr
    (line,) = [line for line in result.stderr.splitlines() if "CA certificates" in line]
    assert "no-such-ca.pem" in line and "SSL_CERT_FILE" in line
