"""MCP servers over Streamable HTTP are plugins too (INTERFACE.md §6): a `plugin.json` whose
`mcp` has a `url`; the calls, the results and the death of a server that goes away are a
stdio server's. Against server-everything (npm) and the Python SDK's `MCPServer`."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.e2e._bingo import TEST_PLUGINS, Sandbox, no_traceback
from tests.e2e._mcp import mcp_plugin, npm_server
from tests.e2e._scripted import model_requests, notices, result_text, text, tool, tool_results, use_scripted_model


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextmanager
def _serving(argv: list[str], port: int, env: dict[str, str] | None = None) -> Iterator[subprocess.Popen[bytes]]:
    """Run an HTTP server until it accepts connections on `port`; stop it after."""
    server = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.05)
        else:
            raise AssertionError(f"{argv[0]} never listened on {port}")
        yield server
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_server_everything_over_streamable_http_lists_and_calls(tmp_path: Path) -> None:
    port = _free_port()
    script = npm_server("@modelcontextprotocol/server-everything")
    with _serving(["node", str(script), "streamableHttp"], port, env={**os.environ, "PORT": str(port)}):
        box = Sandbox(tmp_path)
        mcp_plugin(
            box, "remote", {"url": f"http://127.0.0.1:{port}/mcp", "headers": {"X-Test": "${BINGO_TEST_HEADER}"}}
        )
        use_scripted_model(
            box,
            [
                [
                    tool("e1", "plugin__remote__echo", {"message": "over http"}),
                    tool("i1", "plugin__remote__get-tiny-image", {}),
                ],
                [text("done")],
            ],
            permissions={"allow": ["plugin__remote__*"]},
        )
        result = box.run("-p", "echo")
        assert result.returncode == 0, result.stderr
        echoed, image = tool_results(model_requests(box)[1])
        assert result_text(echoed) == "Echo: over http"
        assert any(part["type"] == "image" for part in image["parts"])


def test_an_sdk_server_over_streamable_http_answers_and_a_gone_server_is_one_notice(tmp_path: Path) -> None:
    port = _free_port()
    box = Sandbox(tmp_path)
    mcp_plugin(box, "remote", {"url": f"http://127.0.0.1:{port}/mcp"})
    use_scripted_model(
        box,
        [
            [tool("a1", "plugin__remote__add", {"a": 1, "b": 2}), tool("s1", "plugin__remote__steps", {"count": 2})],
            [text("done")],
        ],
        permissions={"allow": ["plugin__remote__*"]},
    )
    with _serving([sys.executable, str(TEST_PLUGINS / "mcp-sdk" / "server.py"), "--http", str(port)], port):
        result = box.run("-p", "add")
        assert result.returncode == 0, result.stderr
        added, stepped = tool_results(model_requests(box)[1])
        assert result_text(added) == "1 + 2 = 3"
        assert result_text(stepped) == "took 2 steps"
    # The server is gone: its tools (from the declaration cache) answer with why, once.
    gone = box.run("-p", "add")
    assert no_traceback(gone)
    [line] = notices(gone.stderr, "remote")
    assert f"cannot be reached at http://127.0.0.1:{port}/mcp" in line
    added, _ = tool_results(model_requests(box)[-1])
    assert added["isError"] is True
