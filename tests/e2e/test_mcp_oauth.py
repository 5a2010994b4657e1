"""Remote MCP servers that need a sign-in (INTERFACE.md §14), against a real OAuth-protected
server built from the MCP Python SDK's own server auth (tests/plugins/mcp-oauth), on
127.0.0.1, with the person's browser played by a script (`BROWSER`). The evidence is the
server's: what it was asked (registrations, authorizations, grants, the PKCE it checked).
"""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
import urllib.request
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.e2e._bingo import TEST_PLUGINS, Sandbox, no_traceback
from tests.e2e._mcp import mcp_plugin
from tests.e2e._scripted import model_requests, notices, result_text, text, tool, tool_results, use_scripted_model

SERVER = TEST_PLUGINS / "mcp-oauth"
LOGIN_HINT = "run `bingo mcp login remote`"


class Server:
    """The running server: its URL and what it was asked since a mark."""

    def __init__(self, port: int) -> None:
        self.base = f"http://127.0.0.1:{port}"
        self.url = f"{self.base}/mcp"

    def events(self, since: int = 0) -> list[dict[str, Any]]:
        with urllib.request.urlopen(f"{self.base}/admin/events", timeout=5) as answer:
            return json.loads(answer.read())[since:]

    def mark(self) -> int:
        return len(self.events())

    def admin(self, what: str) -> None:
        request = urllib.request.Request(f"{self.base}/admin/{what}", method="POST", data=b"")
        with urllib.request.urlopen(request, timeout=5) as answer:
            answer.read()


@pytest.fixture(scope="module")
def server() -> Iterator[Server]:
    # One server for the module: each test registers its own client and reads the events
    # from its own mark on, so what another test left changes nothing here.
    proc = subprocess.Popen(
        [sys.executable, str(SERVER / "server.py")], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()  # printed once it is bound and about to serve
        assert line.startswith("PORT "), line
        served = Server(int(line.split()[1]))
        for _ in range(200):  # bounded: uvicorn accepts within moments of printing
            try:
                served.events()
                break
            except OSError:
                os.sched_yield()
        yield served
    finally:
        proc.terminate()
        proc.wait(timeout=10)
        if proc.stdout is not None:
            proc.stdout.close()


def _box(tmp_path: Path, server: Server, replies: list[list[dict[str, Any]]], **settings: Any) -> Sandbox:
    box = Sandbox(tmp_path, env={"BROWSER": f"{sys.executable} {SERVER / 'browse.py'} %s"})
    mcp_plugin(box, "remote", {"url": server.url})
    use_scripted_model(box, replies, permissions={"allow": ["plugin__remote__*", "bash"]}, **settings)
    return box


def _whoami(call: str = "w1") -> list[dict[str, Any]]:
    return [tool(call, "plugin__remote__whoami", {})]


def _login(box: Sandbox) -> subprocess.CompletedProcess[str]:
    result = box.run("mcp", "login", "remote")
    assert result.returncode == 0, result.stderr
    return result


def _answered(box: Sandbox) -> str:
    """What `whoami` answered in the last run (the scripted model starts its replies over
    each run: its last request holds that run's tool results)."""
    return result_text(tool_results(model_requests(box)[-1])[0])


def _token(box: Sandbox) -> dict[str, Any]:
    return json.loads((box.bingo_home / "data" / "oauth" / "remote.json").read_text(encoding="utf-8"))["tokens"]


def test_login_calls_the_signed_in_server_and_the_token_is_nowhere_else(tmp_path: Path, server: Server) -> None:
    box = _box(tmp_path, server, [[*_whoami(), tool("b1", "bash", {"command": "env"})], [text("done")]])
    mark = server.mark()
    # Not signed in, nobody to ask: one notice naming the command; no token was asked for.
    before = box.run("-p", "who")
    assert no_traceback(before)
    [line] = [n for n in notices(before.stderr, "remote") if LOGIN_HINT in n]
    assert len(notices(before.stderr, "remote")) == 1, before.stderr
    assert not [e for e in server.events(mark) if e["kind"] == "token"]

    mark = server.mark()
    login = _login(box)
    assert f"{server.base}/authorize?" in login.stdout
    asked = server.events(mark)
    [registered] = [e for e in asked if e["kind"] == "register"]
    [authorized] = [e for e in asked if e["kind"] == "authorize"]
    [granted] = [e for e in asked if e["kind"] == "token"]
    assert authorized["client"] == registered["client"] == granted["client"]
    assert authorized["resource"] == server.url
    assert authorized["challenge"] and granted == {**granted, "grant": "authorization_code", "pkce": "verified"}
    kept = box.bingo_home / "data" / "oauth" / "remote.json"
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600
    assert stat.S_IMODE(kept.parent.stat().st_mode) == 0o700

    result = box.run("-p", "who")
    assert result.returncode == 0, result.stderr
    whoami, env = tool_results(model_requests(box)[-1])
    assert result_text(whoami) == f"signed in as {registered['client']}"
    tokens = _token(box)
    secrets_ = [tokens["access_token"], tokens["refresh_token"]]
    # Nowhere it must not be: bingo's output, its log and session files, a sandboxed process's environment.
    for secret in secrets_:
        assert secret not in login.stdout + login.stderr + result.stdout + result.stderr
        assert secret not in result_text(env)
        for path in box.bingo_home.rglob("*"):
            if path.is_file() and path != kept:
                assert secret.encode() not in path.read_bytes(), path

    out = box.run("mcp", "logout", "remote")
    assert out.returncode == 0 and not kept.exists()
    after = box.run("-p", "who")
    assert [n for n in notices(after.stderr, "remote") if LOGIN_HINT in n]


def test_a_token_is_refreshed_before_it_expires_and_once_on_a_401(tmp_path: Path, server: Server) -> None:
    box = _box(tmp_path, server, [_whoami(), [text("done")]])
    server.admin("lifetime?seconds=20")  # inside bingo's refresh margin: the next run refreshes first
    try:
        _login(box)
    finally:
        server.admin("lifetime?seconds=3600")
    first = _token(box)["access_token"]
    mark = server.mark()
    result = box.run("-p", "who")
    assert result.returncode == 0, result.stderr
    asked = server.events(mark)
    assert [e["grant"] for e in asked if e["kind"] == "token"] == ["refresh_token"]
    assert not [e for e in asked if e["kind"] == "mcp" and e["status"] == 401]
    assert _answered(box).startswith("signed in as ")
    assert _token(box)["access_token"] != first

    server.admin("expire")  # the server refuses the token it issued: a 401, one refresh, the call goes on
    mark = server.mark()
    result = box.run("-p", "who")
    assert result.returncode == 0, result.stderr
    asked = server.events(mark)
    assert [e["status"] for e in asked if e["kind"] == "mcp"][0] == 401
    assert [e["grant"] for e in asked if e["kind"] == "token"] == ["refresh_token"]
    assert _answered(box).startswith("signed in as ")


def test_a_revoked_sign_in_is_the_login_notice(tmp_path: Path, server: Server) -> None:
    box = _box(tmp_path, server, [_whoami(), [text("done")]])
    _login(box)
    server.admin("revoke")
    result = box.run("-p", "who")
    assert no_traceback(result)
    said = notices(result.stderr, "remote")
    assert len(said) == 1 and LOGIN_HINT in said[0], result.stderr
    assert tool_results(model_requests(box)[1])[0]["isError"] is True


def test_a_forgotten_registration_is_made_again(tmp_path: Path, server: Server) -> None:
    box = _box(tmp_path, server, [_whoami(), [text("done")]])
    _login(box)
    server.admin("forget-clients")  # the server purged its registrations (and their tokens)
    mark = server.mark()
    result = box.run("-p", "who")
    assert no_traceback(result)
    assert [e["kind"] for e in server.events(mark) if e["kind"] == "register"] == ["register"]
    assert [n for n in notices(result.stderr, "remote") if LOGIN_HINT in n]
    # The new registration is the one the next sign-in uses: none more.
    mark = server.mark()
    _login(box)
    assert not [e for e in server.events(mark) if e["kind"] == "register"]
    result = box.run("-p", "who")
    assert result.returncode == 0, result.stderr
    assert _answered(box).startswith("signed in as ")


def test_a_configured_client_id_signs_in_without_registering(tmp_path: Path, server: Server) -> None:
    server.admin("client?id=by-hand")
    box = _box(tmp_path, server, [_whoami(), [text("done")]], plugins={"remote": {"oauth": {"clientId": "by-hand"}}})
    mark = server.mark()
    _login(box)
    result = box.run("-p", "who")
    assert result.returncode == 0, result.stderr
    asked = server.events(mark)
    assert not [e for e in asked if e["kind"] == "register"]
    assert {e["client"] for e in asked if e["kind"] in ("authorize", "token")} == {"by-hand"}
    assert _answered(box) == "signed in as by-hand"


def test_on_a_terminal_a_server_that_needs_a_sign_in_asks_first(tmp_path: Path, server: Server) -> None:
    import pexpect

    from tests.e2e.test_trust import WAIT, _Screen, _terminal

    box = _box(tmp_path, server, [[text("done")]])
    mark = server.mark()
    child = _terminal(box)
    screen = _Screen(child)
    try:
        screen.shown(
            r"remote \(the MCP server at http://127\.0\.0\.1:\d+/mcp\) needs a sign-in: sign in now in your browser\?"
        )
        child.send("y")
        screen.shown(r"signed in: its tools work from the next call")
        screen.shown(">")  # the prompt, drawn again below the notice: Ctrl-D reaches it
        child.sendcontrol("d")
        child.expect(pexpect.EOF, timeout=WAIT)
    finally:
        child.close(force=True)
    asked = server.events(mark)
    assert [e["grant"] for e in asked if e["kind"] == "token"] == ["authorization_code"]
    assert _token(box)["access_token"] not in screen.raw
