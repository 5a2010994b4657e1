"""MCP servers over Streamable HTTP are plugins too (INTERFACE.md §6): a `plugin.json` whose
`mcp` has a `url`; the calls, the results and the death of a server that goes away are a
stdio server's. Against server-everything (npm) and the Python SDK's `MCPServer`."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.e2e._bingo import TEST_PLUGINS, Sandbox, no_traceback
from tests.e2e._mcp import mcp_plugin, npm_server
from tests.e2e._scripted import model_requests, notices, result_text, text, tool, tool_results, use_scripted_model
from tests.support.ports import listening_port


@contextmanager
def _serving(argv: list[str], env: dict[str, str] | None = None) -> Iterator[int]:
    """Run an HTTP server told to listen on port 0 until it does; its port. Stop it after."""
    server = subprocess.Popen(argv, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        yield listening_port(server)
    finally:
        server.terminate()
        server.wait(timeout=10)


def test_server_everything_over_streamable_http_lists_and_calls(tmp_path: Path) -> None:
    script = npm_server("@modelcontextprotocol/server-everything")
    with _serving(["node", str(script), "streamableHttp"], env={**os.environ, "PORT": "0"}) as port:
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
    box = Sandbox(tmp_path)
    with _serving([sys.executable, str(TEST_PLUGINS / "mcp-sdk" / "server.py"), "--http", "0"]) as port:
        mcp_plugin(box, "remote", {"url": f"http://127.0.0.1:{port}/mcp"})
        use_scripted_model(
            box,
            [
                [
                    tool("a1", "plugin__remote__add", {"a": 1, "b": 2}),
                    tool("s1", "plugin__remote__steps", {"count": 2}),
                ],
                [text("done")],
            ],
            permissions={"allow": ["plugin__remote__*"]},
        )
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
