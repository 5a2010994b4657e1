"""A server that prints a banner on its stdout (issue 25 item 11): the person running it gets
ONE notice written for them — what happened and where the log is — not advice meant for the
server's author, and the server goes on working. Its author gets the advice from
`bingo --check-plugin`."""

from __future__ import annotations

from pathlib import Path

from tests.e2e._bingo import TEST_PLUGINS, Sandbox, no_traceback
from tests.e2e._mcp import python_server
from tests.e2e._scripted import model_requests, notices, result_text, text, tool, tool_results, use_scripted_model


def test_an_mcp_servers_banner_is_one_notice_for_its_user_and_the_server_works(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    python_server(box, "mcp-banner")
    calls = [
        tool("e1", "plugin__mcp-banner__echo", {"text": "one"}),
        tool("e2", "plugin__mcp-banner__echo", {"text": "two"}),
    ]
    use_scripted_model(box, [calls, [text("done")]], permissions={"allow": ["plugin__mcp-banner__*"]})
    result = box.run("-p", "echo twice")
    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    log = box.logs / "plugin-mcp-banner.log"
    assert notices(result.stderr, "mcp-banner") == [
        "mcp-banner: server mcp-banner printed something that is not part of the protocol on its output; "
        f"bingo ignored it (see {log})"
    ]
    # The server's own answers, both calls: the connection went on.
    answers = [result_text(block) for block in tool_results(model_requests(box)[1])]
    assert answers == ["echo: one", "echo: two"]
    assert "Banner MCP Server v1.0 running on stdio" in log.read_text(encoding="utf-8")


def test_a_plugins_banner_is_the_same_notice_and_its_author_hears_how_to_fix_it_from_the_check(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    root = box.install(TEST_PLUGINS / "chatty")
    use_scripted_model(
        box,
        [[tool("p1", "plugin__chatty__ping", {})], [text("pinged")]],
        permissions={"allow": ["plugin__chatty__ping"]},
    )
    result = box.run("-p", "ping it")
    assert result.returncode == 0, result.stderr
    log = box.logs / "plugin-chatty.log"
    assert notices(result.stderr, "chatty") == [
        f"chatty: plugin chatty printed something that is not part of the protocol on its output; bingo ignored it (see {log})"
    ]
    assert result_text(tool_results(model_requests(box)[1])[0]) == "pong"
    check = box.run("--check-plugin", str(root))
    assert "diagnostics to stderr" in check.stdout or "goes to stderr" in check.stdout, check.stdout
