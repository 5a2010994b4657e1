"""A project's `.mcp.json` server runs in the project's root, wherever in the project bingo is
started: its `.` and relative paths mean what they meant where the file was written (as in the
other hosts that read the file), and trust, given from a subdirectory, pins what the server
will run there (issue 25: a project trusted from its root read as changed when bingo started in
a subdirectory, and a relative script was not found)."""

from __future__ import annotations

import json
import sys
from pathlib import Path

from tests.e2e._bingo import Sandbox, no_traceback
from tests.e2e._scripted import model_requests, result_text, text, tool, tool_results, use_scripted_model

# Answers one tool, `where`, with its working directory and what its `--repository` argument
# resolves to: the server's own word on where it runs.
SERVER = r"""
import json, os, sys
repository = sys.argv[sys.argv.index("--repository") + 1]
for line in sys.stdin:
    message = json.loads(line)
    method, request_id = message.get("method"), message.get("id")
    if request_id is None:
        continue
    params = message.get("params") or {}
    if method == "initialize":
        result = {"protocolVersion": params["protocolVersion"], "capabilities": {"tools": {}}, "serverInfo": {"name": "where", "version": "1"}}
    elif method == "tools/list":
        result = {"tools": [{"name": "where", "inputSchema": {"type": "object"}}]}
    elif method == "tools/call":
        said = {"cwd": os.getcwd(), "repository": os.path.realpath(repository)}
        result = {"content": [{"type": "text", "text": json.dumps(said)}]}
    else:
        sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "no"}}) + "\n")
        sys.stdout.flush()
        continue
    sys.stdout.write(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}) + "\n")
    sys.stdout.flush()
"""


def test_a_mcp_json_server_runs_in_the_project_root_and_stays_trusted_from_a_subdirectory(tmp_path: Path) -> None:
    box = Sandbox(tmp_path / "box")
    (box.project / "srv").mkdir()
    (box.project / "srv" / "where.py").write_text(SERVER, encoding="utf-8")
    sub = box.project / "src" / "deep"
    sub.mkdir(parents=True)
    servers = {"here": {"command": sys.executable, "args": ["srv/where.py", "--repository", "."]}}
    (box.project / ".mcp.json").write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    use_scripted_model(
        box, [[tool("h1", "plugin__here__where", {})], [text("done")]], permissions={"allow": ["plugin__here__*"]}
    )

    assert box.run("--trust", cwd=sub).returncode == 0
    result = box.run("-p", "where are you?", cwd=sub)
    assert no_traceback(result)
    assert result.returncode == 0, result.stderr
    assert "trust" not in result.stderr, result.stderr
    said = json.loads(result_text(tool_results(model_requests(box)[-1])[0]))
    root = str(box.project.resolve())
    assert said == {"cwd": root, "repository": root}

    # Trusted from the subdirectory, the project is trusted from its root too: one pin.
    use_scripted_model(
        box, [[tool("h2", "plugin__here__where", {})], [text("done")]], permissions={"allow": ["plugin__here__*"]}
    )
    again = box.run("-p", "and now?", cwd=box.project)
    assert again.returncode == 0, again.stderr
    assert "trust" not in again.stderr, again.stderr
