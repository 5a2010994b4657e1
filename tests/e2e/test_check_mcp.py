"""`bingo --check-plugin` for MCP servers and `.mcp.json` (issue 25, items 5 and 6), through
the real binary: an MCP server is started as bingo starts it, its handshake completed and its
tools and prompts listed; one that exits, prints junk or misses its deadline is ✗ naming what
happened and its log; `--check-plugin .mcp.json` checks each server, a `${VAR}` that is not
listed or not set is ✗ naming it; `--call` calls only the tools a server says only read, and
no check changes the person's data (a throw-away dataDir). The evidence of what ran is the
servers' own record, and of what changed, the person's files."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

from tests.e2e._bingo import Sandbox, no_traceback
from tests.e2e._scripted import model_requests, result_text, text, tool, tool_results, use_scripted_model

SERVER = r"""
import json, os, sys

BEHAVIOUR = sys.argv[1] if len(sys.argv) > 1 else "good"
RECORD = os.environ.get("SRV_RECORD")


def note(what):
    if RECORD:
        with open(RECORD, "a", encoding="utf-8") as file:
            file.write(what + "\n")


def send(message):
    sys.stdout.write(json.dumps(dict(message, jsonrpc="2.0")) + "\n")
    sys.stdout.flush()


note("started " + " ".join(sys.argv[1:]))
if BEHAVIOUR == "exits":
    sys.stderr.write("srv: cannot open its database\n")
    sys.exit(3)
if BEHAVIOUR == "banner":
    print("Server v1 ready on stdio", flush=True)
TOOLS = [
    {"name": "look", "description": "Reads.", "annotations": {"readOnlyHint": True},
     "inputSchema": {"type": "object", "properties": {"what": {"type": "string"}}, "required": ["what"]}},
    {"name": "change", "description": "Writes.", "annotations": {"destructiveHint": True}, "inputSchema": {"type": "object"}},
]
if BEHAVIOUR == "bad-tools":
    TOOLS = [
        {"name": "look", "inputSchema": {"type": "object", "properties": {"n": {"type": "count"}}}},
        {"name": "look", "inputSchema": {"type": "object"}},
        {"name": "read", "inputSchema": {"type": "object"}},
        {"name": "fetch.page", "inputSchema": {"type": "object"}},
    ]
for line in sys.stdin:
    message = json.loads(line)
    method, request_id = message.get("method"), message.get("id")
    if request_id is None:
        continue
    params = message.get("params") or {}
    if method == "initialize":
        if BEHAVIOUR == "silent":
            continue
        send({"id": request_id, "result": {"protocolVersion": params["protocolVersion"], "capabilities": {"tools": {}, "prompts": {}}, "serverInfo": {"name": "srv", "version": "1.2.3"}}})
    elif method == "tools/list":
        send({"id": request_id, "result": {"tools": TOOLS}})
    elif method == "prompts/list":
        send({"id": request_id, "result": {"prompts": [{"name": "greet", "description": "Says hello."}]}})
    elif method == "tools/call":
        note("called " + params["name"])
        said = {"argv": sys.argv[2:], "WHO": os.environ.get("WHO"), "GREETING": os.environ.get("GREETING")}
        send({"id": request_id, "result": {"content": [{"type": "text", "text": json.dumps(said)}]}})
    else:
        send({"id": request_id, "error": {"code": -32601, "message": "no " + str(method)}})
"""
"""An MCP server in the standard library; its first argument names how it behaves, and it
records in `$SRV_RECORD` that it started and each tool it was called for."""

DATA_PLUGIN = r"""
import json, os, sys

for line in sys.stdin:
    message = json.loads(line)
    method, request_id = message.get("method"), message.get("id")
    if method == "initialize":
        data = message["params"]["env"]["dataDir"]
        with open(os.environ["KEEPER_RECORD"], "a", encoding="utf-8") as file:
            file.write(data + "\n")
        with open(os.path.join(data, "state.db"), "w", encoding="utf-8") as file:
            file.write("written by the check\n")
        result = {"protocol": 5, "name": "keeper", "version": "1", "tools": [{"name": "touch", "description": "d", "inputSchema": {"type": "object"}}]}
        print(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": result}), flush=True)
    elif method == "tool/call":
        with open(os.path.join(data, "touched"), "w", encoding="utf-8") as file:
            file.write("touched\n")
        print(json.dumps({"jsonrpc": "2.0", "id": request_id, "result": {"output": {"parts": [{"type": "text", "text": "ok"}]}}}), flush=True)
    elif request_id is not None:
        print(json.dumps({"jsonrpc": "2.0", "id": request_id, "error": {"code": -32601, "message": "no"}}), flush=True)
"""
"""A bingo plugin that writes into its dataDir when it starts and when its tool is called,
and records which dataDir it was given."""

DATA_DIR_SAID = "  dataDir: a temporary directory, removed afterwards"


def _script(tmp_path: Path) -> Path:
    script = tmp_path / "srv.py"
    script.write_text(SERVER, encoding="utf-8")
    return script


def _server(box: Sandbox, tmp_path: Path, behaviour: str, name: str = "srv") -> Path:
    """MCP server `behaviour` as the plugin `name`, in a directory of its own (not installed)."""
    root = tmp_path / name
    root.mkdir()
    manifest = {
        "name": name,
        "version": "0",
        "mcp": {"command": sys.executable, "args": [str(_script(tmp_path)), behaviour]},
    }
    (root / "plugin.json").write_text(json.dumps(manifest), encoding="utf-8")
    box.env["SRV_RECORD"] = str(box.project / "record.txt")
    return root


def _record(box: Sandbox) -> list[str]:
    path = box.project / "record.txt"
    return path.read_text(encoding="utf-8").splitlines() if path.exists() else []


def _lines(stdout: str, mark: str) -> list[str]:
    return [line for line in stdout.splitlines() if line.startswith(mark)]


def test_an_mcp_server_that_exits_at_its_start_is_not_ready_and_names_its_log(tmp_path: Path) -> None:
    box = Sandbox(tmp_path / "box")
    result = box.run("--check-plugin", str(_server(box, tmp_path, "exits")))
    assert no_traceback(result)
    assert result.returncode == 1, result.stdout
    log = box.logs / "plugin-srv.log"
    [failed] = _lines(result.stdout, "✗ ")
    assert failed.startswith(
        "✗ start: it completes MCP's handshake and lists within its deadline: plugin srv exited with code 3"
    )
    assert "srv: cannot open its database" in failed and f"log: {log}" in failed
    assert failed.endswith(
        "; fix: run its command in a terminal to see why; if it only needs longer to start, raise deadlines.initialize in your settings"
    )
    assert result.stdout.splitlines()[-1].endswith(": not ready")
    assert _record(box) == ["started exits"]  # it was started, as bingo starts it


def test_an_mcp_server_that_prints_a_banner_on_stdout_is_a_failure_naming_the_log(tmp_path: Path) -> None:
    box = Sandbox(tmp_path / "box")
    result = box.run("--check-plugin", str(_server(box, tmp_path, "banner")))
    assert result.returncode == 1, result.stdout
    log = box.logs / "plugin-srv.log"
    assert _lines(result.stdout, "✗ ") == [
        "✗ behaviour: nothing but MCP messages on stdout: it wrote 1 line to stdout that is not JSON-RPC "
        "(the first not JSON: JSON is malformed: invalid character (byte 0): 'Server v1 ready on stdio'); "
        f"bingo writes such lines to its log ({log}) and goes on; fix: a server writes only MCP messages to "
        "stdout and its own words to stderr: if it is yours, move them there; if not, tell its author"
    ]
    # It still works in bingo: its handshake and lists are read.
    assert any(
        line.startswith("✓ declarations: it lists its tools (tools/list) (2: look, change)")
        for line in result.stdout.splitlines()
    )


def test_an_mcp_server_that_misses_its_deadline_is_not_ready(tmp_path: Path) -> None:
    box = Sandbox(tmp_path / "box")
    box.settings({"deadlines": {"initialize": 2}})
    result = box.run("--check-plugin", str(_server(box, tmp_path, "silent")), "--json")
    assert result.returncode == 1, result.stdout
    report: dict[str, Any] = json.loads(result.stdout)
    by_id = {check["id"]: check for check in report["checks"]}
    handshake = by_id["start.handshake"]
    assert handshake["status"] == "fail"
    assert "within 2 s" in handshake["detail"]  # the deadline's words are the run's own
    assert str(box.logs / "plugin-srv.log") in handshake["detail"]
    assert "deadlines.initialize" in handshake["fix"]
    assert report["ok"] is False


def test_a_server_started_through_npx_that_misses_its_first_start_names_the_install_deadline(tmp_path: Path) -> None:
    # A stand-in npx on PATH that never answers: its first start is under
    # deadlines.packageInstall (ADR-0036), and the fix names that, not initialize.
    box = Sandbox(tmp_path / "box")
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npx = bin_dir / "npx"
    npx.write_text(f"#!/bin/sh\nexec {sys.executable} {_script(tmp_path)} silent\n", encoding="utf-8")
    npx.chmod(0o755)
    box.env["PATH"] = f"{bin_dir}:{box.env.get('PATH', '')}"
    box.settings({"deadlines": {"initialize": 30, "packageInstall": 2}})
    root = tmp_path / "via-npx"
    root.mkdir()
    (root / "plugin.json").write_text(
        json.dumps({"name": "via-npx", "version": "0", "mcp": {"command": "npx", "args": ["-y", "some-server"]}}),
        encoding="utf-8",
    )
    result = box.run("--check-plugin", str(root), "--json")
    assert result.returncode == 1, result.stdout
    handshake = {check["id"]: check for check in json.loads(result.stdout)["checks"]}["start.handshake"]
    assert handshake["status"] == "fail"
    assert "within 2 s" in handshake["detail"]  # the first start's own deadline, not initialize's 30
    assert (
        handshake["fix"]
        == "run its command in a terminal to see why; if npx is still installing it, raise deadlines.packageInstall in your settings"
    )


def test_a_working_mcp_server_is_ready_with_its_tools_and_prompts_listed(tmp_path: Path) -> None:
    box = Sandbox(tmp_path / "box")
    result = box.run("--check-plugin", str(_server(box, tmp_path, "good")))
    assert result.returncode == 0, result.stdout
    lines = result.stdout.splitlines()
    assert not _lines(result.stdout, "✗ ")
    for expected in (
        "✓ declarations: it lists its tools (tools/list) (2: look, change)",
        "✓ declarations: its prompts are slash commands (prompts/list) (1: /srv:greet)",
        "✓ declarations: every inputSchema is a JSON Schema object (2 tool(s))",
        "✓ declarations: tool names are model-safe (all fit as they are)",
        "✓ behaviour: it stays up through the checks (running)",
        DATA_DIR_SAID,
        "  (no tool was called: pass --call to call each tool that says it only reads, with an input made from its schema)",
    ):
        assert expected in lines, result.stdout
    assert any(
        line.startswith(
            "✓ start: it completes MCP's handshake and lists within its deadline (MCP 2025-11-25, srv 1.2.3, in "
        )
        for line in lines
    )
    assert lines[-1].startswith("srv: ") and lines[-1].endswith(": ready")
    assert _record(box) == ["started good"]  # no tool was called without --call


def test_call_calls_only_the_tools_a_server_says_only_read(tmp_path: Path) -> None:
    box = Sandbox(tmp_path / "box")
    result = box.run("--check-plugin", str(_server(box, tmp_path, "good")), "--call")
    assert result.returncode == 0, result.stdout
    lines = result.stdout.splitlines()
    assert any(line.startswith('✓ call: tool look answers {"what":"bingo-check"} (1 part(s) in ') for line in lines), (
        result.stdout
    )
    assert (
        "- call: tools that may change something are not called (change: its annotations do not say readOnlyHint; "
        "an MCP server's tools act on your files and services, so --call calls only those that say they only read)"
    ) in lines
    # The attacked side: what the server was asked to do.
    assert _record(box) == ["started good", "called look"]


def test_what_bingo_renames_or_refuses_of_a_servers_tools_is_named(tmp_path: Path) -> None:
    box = Sandbox(tmp_path / "box")
    result = box.run("--check-plugin", str(_server(box, tmp_path, "bad-tools")), "--json")
    assert result.returncode == 1
    by_id = {check["id"]: check for check in json.loads(result.stdout)["checks"]}
    assert by_id["declarations.schemas"]["status"] == "fail"
    assert (
        "tool look's inputSchema has `properties.n.type` 'count', which is none of JSON Schema's types"
        in by_id["declarations.schemas"]["detail"]
    )
    assert by_id["declarations.names"]["status"] == "fail"
    assert "tool 'read' refused: read is bingo's own tool" in by_id["declarations.names"]["detail"]
    assert "tool 'look' is declared 2 times; only the first is used" in by_id["declarations.names"]["detail"]
    assert by_id["declarations.tool-names"]["status"] == "warn"
    assert "tool name 'fetch.page' becomes 'plugin__srv__fetch.page'" in by_id["declarations.tool-names"]["detail"]


def _mcp_json(box: Sandbox, servers: dict[str, Any]) -> Path:
    path = box.project / ".mcp.json"
    path.write_text(json.dumps({"mcpServers": servers}), encoding="utf-8")
    return path


def test_check_plugin_mcp_json_checks_each_server_in_a_block_and_names_each_variable(tmp_path: Path) -> None:
    box = Sandbox(tmp_path / "box")
    script = _script(tmp_path)
    box.settings({"mcpVariables": ["REC", "NOT_SET_HERE"]})
    env = {"REC": str(box.project / "record.txt"), "ANTHROPIC_API_KEY": "sk-the-persons-own"}
    path = _mcp_json(
        box,
        {
            "good": {"command": sys.executable, "args": [str(script), "good"], "env": {"SRV_RECORD": "${REC}"}},
            "leaky": {
                "command": sys.executable,
                "args": [str(script), "good", "${ANTHROPIC_API_KEY}"],
                "env": {"SRV_RECORD": "${REC}"},
            },
            "unset": {
                "command": sys.executable,
                "args": [str(script), "${NOT_SET_HERE}"],
                "env": {"SRV_RECORD": "${REC}"},
            },
            "rel": {"command": "./bin/server"},
        },
    )
    result = box.run("--check-plugin", ".mcp.json", env=env)
    assert no_traceback(result)
    assert result.returncode == 1, result.stdout
    blocks = result.stdout.split("\n\n")
    assert blocks[0] == "✓ file: it is a .mcp.json bingo reads (4 server(s))"
    assert [block.splitlines()[0] for block in blocks[1:-1]] == [
        "mcpServers.good:",
        "mcpServers.leaky:",
        "mcpServers.rel:",
        "mcpServers.unset:",
    ]
    assert blocks[-1] == f"{path}: 4 servers, 1 ready, 3 not ready in {blocks[-1].rsplit(' in ', 1)[1]}"
    assert blocks[-1].endswith(": not ready\n")
    settings = box.bingo_home / "settings.json"
    assert _lines(result.stdout, "✗ ") == [
        "✗ entry: every ${VAR} it reads is listed in your mcpVariables and set (or has a default): it reads ${ANTHROPIC_API_KEY}, "
        f'which your settings do not let a project\'s MCP server read; fix: add "ANTHROPIC_API_KEY" to mcpVariables in {settings} to let it',
        "✗ entry: its command can be run: `mcpServers.rel.command` './bin/server' is a relative path: write its absolute path, or a "
        "command found on PATH: a relative one would depend on the directory bingo is started in (a .mcp.json server has no directory of its own)",
        "✗ entry: every ${VAR} it reads is listed in your mcpVariables and set (or has a default): it reads ${NOT_SET_HERE}, "
        "which is not set; fix: set it, or give a default (${NOT_SET_HERE:-...})",
    ]
    assert "${PLUGIN_ROOT}" not in result.stdout
    good = blocks[1].splitlines()
    assert (
        "✓ entry: every ${VAR} it reads is listed in your mcpVariables and set (or has a default) (reads ${REC})"
        in good
    )
    assert good[-1].startswith("good: ") and good[-1].endswith(": ready")
    # The attacked side: only the good server was started, with the listed variable expanded,
    # and the person's key reached no process.
    assert _record(box) == ["started good"]


def test_check_plugin_takes_the_directory_that_holds_a_mcp_json_and_says_json(tmp_path: Path) -> None:
    box = Sandbox(tmp_path / "box")
    script = _script(tmp_path)
    _mcp_json(
        box,
        {
            "one": {"command": sys.executable, "args": [str(script), "good"]},
            "two": {"command": sys.executable, "args": [str(script), "exits"]},
        },
    )
    result = box.run("--check-plugin", str(box.project), "--json")
    assert result.returncode == 1, result.stdout
    document: dict[str, Any] = json.loads(result.stdout)
    assert document["file"] == str(box.project / ".mcp.json")
    assert document["ok"] is False
    assert [(server["plugin"], server["ok"]) for server in document["servers"]] == [("one", True), ("two", False)]
    two = {check["id"]: check for check in document["servers"][1]["checks"]}
    assert "exited with code 3" in two["start.handshake"]["detail"]
    # A Streamable HTTP server nothing answers at: its URL is named, and the check fails.
    nowhere = _mcp_json(box, {"remote": {"type": "http", "url": "http://127.0.0.1:9/mcp"}})
    remote = box.run("--check-plugin", str(nowhere))
    assert remote.returncode == 1
    assert (
        "✓ entry: its URL is one bingo speaks to (Streamable HTTP) (http://127.0.0.1:9/mcp)"
        in remote.stdout.splitlines()
    )
    assert any(
        line.startswith(
            "✗ start: it completes MCP's handshake and lists within its deadline: plugin remote cannot be reached at http://127.0.0.1:9/mcp"
        )
        for line in remote.stdout.splitlines()
    )
    broken = box.project / "broken.json"
    broken.write_text('{"mcpServers": [', encoding="utf-8")
    bad = box.run("--check-plugin", str(broken))
    assert bad.returncode == 1
    assert bad.stdout.startswith(f"✗ file: it is a .mcp.json bingo reads: {broken}: is not JSON at line 1")


def test_a_check_changes_none_of_the_persons_data(tmp_path: Path) -> None:
    box = Sandbox(tmp_path / "box")
    plugin = tmp_path / "keeper"
    plugin.mkdir()
    (plugin / "main.py").write_text(DATA_PLUGIN, encoding="utf-8")
    manifest = {
        "name": "keeper",
        "version": "1",
        "entry": {"command": sys.executable, "args": ["${PLUGIN_ROOT}/main.py"]},
    }
    (plugin / "plugin.json").write_text(json.dumps(manifest), encoding="utf-8")
    # The person's own data of a plugin of that name, and of an MCP server's.
    real = box.bingo_home / "data" / "plugins" / "keeper"
    real.mkdir(parents=True)
    (real / "state.db").write_text("the person's own state\n", encoding="utf-8")
    record = box.project / "keeper.txt"
    result = box.run("--check-plugin", str(plugin), "--call", env={"KEEPER_RECORD": str(record)})
    assert result.returncode == 0, result.stdout
    # The attacked side: the person's files as they were, nothing added beside them.
    assert (real / "state.db").read_text(encoding="utf-8") == "the person's own state\n"
    assert sorted(path.name for path in real.iterdir()) == ["state.db"]
    assert DATA_DIR_SAID in result.stdout.splitlines()
    # The plugin did write: into a directory outside bingo's home, gone once the check ended.
    [given] = record.read_text(encoding="utf-8").splitlines()
    assert not Path(given).is_relative_to(box.bingo_home)
    assert not Path(given).exists()
    # An MCP server alike: started and called, and no data directory of the person's made for it.
    served = box.run("--check-plugin", str(_server(box, tmp_path, "good")), "--call")
    assert served.returncode == 0, served.stdout
    assert DATA_DIR_SAID in served.stdout.splitlines()
    assert _record(box) == ["started good", "called look"]
    assert sorted(path.name for path in (box.bingo_home / "data" / "plugins").iterdir()) == ["keeper"]


def test_mcp_json_variables_expand_in_command_args_and_env_as_other_hosts_do(tmp_path: Path) -> None:
    """Item 5's steps replayed through a run: a listed variable expands in command, args and
    env; a default applies; an unset one without a default leaves its server out with one
    notice naming it; no fix says `${PLUGIN_ROOT}` for a `.mcp.json`."""
    box = Sandbox(tmp_path / "box")
    script = _script(tmp_path)
    _mcp_json(
        box,
        {
            "vars": {
                "command": "${PY}",
                "args": ["${SRV_SCRIPT}", "good", "${WHO}", "--mode=${MODE:-plain}"],
                "env": {"WHO": "${WHO}", "GREETING": "${GREETING:-hello}"},
            },
            "gone": {"command": "${PY}", "args": ["${SRV_SCRIPT}", "${NOT_SET_HERE}"]},
            "rel": {"command": "./bin/server", "args": []},
        },
    )
    use_scripted_model(
        box,
        [[tool("v1", "plugin__vars__look", {"what": "x"})], [text("done")]],
        permissions={"allow": ["plugin__vars__*"]},
        mcpVariables=["PY", "SRV_SCRIPT", "WHO", "MODE", "GREETING", "NOT_SET_HERE"],
    )
    env = {"PY": sys.executable, "SRV_SCRIPT": str(script), "WHO": "me"}
    assert box.run("--trust", env=env).returncode == 0
    result = box.run("-p", "go", env=env)
    assert no_traceback(result)
    assert result.returncode == 0, result.stderr
    [looked] = tool_results(model_requests(box)[1])
    assert json.loads(result_text(looked)) == {"argv": ["me", "--mode=plain"], "WHO": "me", "GREETING": "hello"}
    mcp_json = box.project / ".mcp.json"
    named = [line for line in result.stderr.splitlines() if "NOT_SET_HERE" in line]
    assert named == [
        f"gone: refused: {mcp_json}: `mcpServers.gone`: it reads ${{NOT_SET_HERE}}, which is not set: set it, or give a default (${{NOT_SET_HERE:-...}})"
    ]
    [rel] = [line for line in result.stderr.splitlines() if line.startswith("rel: ")]
    assert "${PLUGIN_ROOT}" not in result.stderr
    assert rel == (
        f"rel: refused: {mcp_json}: `mcpServers.rel.command` './bin/server' is a relative path: write its absolute path, or a command "
        "found on PATH: a relative one would depend on the directory bingo is started in (a .mcp.json server has no directory of its own)"
    )


def test_a_plugin_directorys_mcp_is_checked_for_what_bingo_does_not_expand(tmp_path: Path) -> None:
    box = Sandbox(tmp_path / "box")
    root = tmp_path / "srv"
    root.mkdir()
    (root / "server.py").write_text(SERVER, encoding="utf-8")
    manifest = {
        "name": "srv",
        "version": "0",
        "mcp": {"command": sys.executable, "args": ["${PLUGIN_ROOT}/server.py", "good", "$HOME"]},
    }
    (root / "plugin.json").write_text(json.dumps(manifest), encoding="utf-8")
    result = box.run("--check-plugin", str(root))
    assert result.returncode == 1
    assert _lines(result.stdout, "✗ ") == [
        "✗ manifest: only ${PLUGIN_ROOT} is used, for files that are there: `mcp.args[2]` holds '$HOME', which bingo does not expand; "
        "fix: bingo replaces only ${PLUGIN_ROOT} (braces, capitals) and runs no shell: put other values in its env (entry.env, or mcp.env), "
        "or read the variable in the plugin"
    ]
