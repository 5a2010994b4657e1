"""What an untrusted project holds is never run in the place of a program the person named
(ADR-0050), through the real binary. With `.`, an empty entry and a relative `bin` on PATH —
as some people's shells have — and a repository that ships `git`, `find`, `python3` and `npm`
at those places, a prompt runs bingo's first checkpoint (which asks git where its excludes
file is) and starts a plugin whose command is `python3`. A person's MCP server started with
`npx -y NAME`, in a repository whose `node_modules` has a `NAME` and whose `.npmrc` names
another registry; one started with `python3 -m NAME`, in a repository with a `NAME.py`. None
of the repository's programs runs: the evidence is the file each would have written, outside
the project."""

from __future__ import annotations

import http.server
import os
import shutil
import sys
import threading
from pathlib import Path

from tests.e2e._bingo import EXAMPLES, Sandbox, no_traceback
from tests.e2e._mcp import mcp_plugin
from tests.e2e._scripted import model_requests, result_text, text, tool, tool_results, use_scripted_model


def test_a_relative_path_entry_never_runs_the_projects_own_git_find_or_interpreter(tmp_path: Path) -> None:
    box = Sandbox(tmp_path / "box")
    box.install(EXAMPLES / "wordcount")
    p = box.project
    (p / "notes.txt").write_text("one two three\n")
    ran = tmp_path / "ran"
    (p / "bin").mkdir()
    for place in (p, p / "bin"):
        for name in ("git", "find", "python3", "npm"):
            (place / name).write_text(f"#!/bin/sh\necho {name} >> {ran}\n")
            (place / name).chmod(0o755)
    use_scripted_model(
        box,
        [[tool("count", "plugin__wordcount__count", {"path": "notes.txt"})], [text("done")]],
        sandbox={"mode": "off"},
    )
    path = os.pathsep.join([".", "", "bin", box.env["PATH"]])
    result = box.run("-p", "count the words", "--allow", "plugin__wordcount__count", env={"PATH": path})
    assert not ran.exists(), ran.read_text()
    assert no_traceback(result), result.stderr
    assert result.returncode == 0, result.stderr
    # The plugin ran, on the interpreter PATH's absolute directories give.
    results = tool_results(model_requests(box)[-1])
    assert "3 words" in result_text(results[0]), results


def test_a_persons_server_run_by_npx_or_python_m_never_runs_the_projects_own_copy(tmp_path: Path) -> None:
    box = Sandbox(tmp_path / "box")
    p = box.project
    ran = tmp_path / "ran"
    name = "bingo-test-server-not-on-any-registry-7f3a"
    package = p / "node_modules" / name
    package.mkdir(parents=True)
    (package / "package.json").write_text(f'{{"name": "{name}", "version": "1.0.0", "bin": {{"{name}": "cli.js"}}}}')
    (package / "cli.js").write_text(f"#!/usr/bin/env node\nrequire('fs').appendFileSync({str(ran)!r}, 'npx\\n')\n")
    (package / "cli.js").chmod(0o755)
    (p / "node_modules" / ".bin").mkdir()
    (p / "node_modules" / ".bin" / name).symlink_to(f"../{name}/cli.js")
    (p / "package.json").write_text(f'{{"name": "p", "version": "1.0.0", "dependencies": {{"{name}": "1.0.0"}}}}')
    (p / ".npmrc").write_text("registry=http://127.0.0.1:9/\n")
    (p / "shadowed_server.py").write_text(f"open({str(ran)!r}, 'a').write('python -m\\n')\n")
    mcp_plugin(box, "from-npx", {"command": "npx", "args": ["-y", name]})
    mcp_plugin(box, "from-python", {"command": "python3", "args": ["-m", "shadowed_server"]})
    box.settings({"sandbox": {"mode": "off"}, "deadlines": {"initialize": 5, "packageInstall": 20}})
    cache = tmp_path / "npm-cache"
    result = box.run("-p", "/tools", env={"npm_config_cache": str(cache), "npm_config_update_notifier": "false"})
    assert not ran.exists(), ran.read_text()
    assert no_traceback(result), result.stderr
    # Each was started, and failed as the person's command does elsewhere: the package is on
    # no registry, and no module of that name is installed.
    logs = {plugin: (box.logs / f"plugin-{plugin}.log").read_text() for plugin in ("from-npx", "from-python")}
    assert "No module named shadowed_server" in logs["from-python"], logs
    assert name in logs["from-npx"], logs


def test_a_persons_server_run_by_uv_run_never_syncs_the_project_nor_reads_its_uv_toml(tmp_path: Path) -> None:
    # The project's uv.toml names an index of the attacker's (a server here that records what
    # it is asked), and its pyproject.toml a dependency: `uv run` in the project would sync it
    # from there, `--no-project` or not. The evidence is the index's: never asked.
    asked: list[str] = []

    class Index(http.server.BaseHTTPRequestHandler):
        def do_GET(self) -> None:
            asked.append(self.path)
            self.send_error(404)

        def log_message(self, format: str, *args: object) -> None:
            return

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Index)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        box = Sandbox(tmp_path / "box")
        p = box.project
        port = server.server_address[1]
        (p / "uv.toml").write_text(f'[[index]]\nurl = "http://127.0.0.1:{port}/simple"\ndefault = true\n')
        (p / "pyproject.toml").write_text('[project]\nname = "evil"\nversion = "0"\ndependencies = ["cowsay==6.1"]\n')
        uv = shutil.which("uv", path=os.path.dirname(sys.executable)) or shutil.which("uv")
        assert uv is not None, "uv is a test dependency"
        mcp_plugin(box, "from-uv", {"command": uv, "args": ["run", "python", "-c", "print('ran')"]})
        box.settings({"sandbox": {"mode": "off"}, "deadlines": {"initialize": 5, "packageInstall": 20}})
        result = box.run("-p", "/tools", env={"UV_CACHE_DIR": str(tmp_path / "uv-cache"), "UV_OFFLINE": "0"})
        assert no_traceback(result), result.stderr
        log = (box.logs / "plugin-from-uv.log").read_text()
        assert "ran" in log  # started, in the project, on no project's environment
    finally:
        server.shutdown()
        server.server_close()
    assert asked == []
    assert not (p / ".venv").exists() and not (p / "uv.lock").exists()
