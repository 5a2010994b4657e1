"""`bingo plugin add|list|remove` through the binary (INTERFACE.md §12, issue 30): a package
from a directory and from a local git repository, shown before it is installed, refused
without --yes where nobody can answer, pinned to its bytes, removed with its data."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from ._bingo import EXAMPLES, Sandbox, no_traceback

MARK = "wordcount-started"


def _package(root: Path) -> Path:
    """wordcount, which says on stderr (its log) that it started: the evidence it ran."""
    package = root / "src" / "wordcount"
    shutil.copytree(EXAMPLES / "wordcount", package)
    main = package / "main.py"
    text = main.read_text(encoding="utf-8")
    main.write_text(text.replace("import traceback\n", f"import traceback\nsys.stderr.write('{MARK}\\n')\n", 1))
    return package


def _git(*args: str, cwd: Path) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t", "GIT_COMMITTER_EMAIL": "t@t"}
    import os

    done = subprocess.run(
        ["git", *args], cwd=cwd, env={**os.environ, **env}, capture_output=True, text=True, check=True, timeout=30
    )
    return done.stdout.strip()


def _started(box: Sandbox) -> bool:
    log = box.logs / "plugin-wordcount.log"
    return log.is_file() and MARK in log.read_text(encoding="utf-8")


def test_add_from_a_directory_is_shown_pinned_and_tampering_stops_it(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    package = _package(tmp_path)
    (box.project / "notes.txt").write_text("one two three\n", encoding="utf-8")
    installed = box.bingo_home / "plugins" / "wordcount"

    refused = box.run("plugin", "add", str(package))
    assert refused.returncode == 2, refused.stderr
    assert "--yes" in refused.stderr and no_traceback(refused)
    assert "python3" in refused.stdout and "main.py" in refused.stdout  # shown: the command it runs
    assert not installed.exists()  # nothing installed

    added = box.run("plugin", "add", str(package), "--yes")
    assert added.returncode == 0, added.stderr
    assert (installed / "main.py").is_file()
    listed = box.run("plugin", "list")
    assert "wordcount" in listed.stdout and "as pinned" in listed.stdout

    ran = box.run("-p", "/wordcount notes.txt", cwd=box.project)
    assert ran.returncode == 0, ran.stderr
    assert _started(box)
    (box.logs / "plugin-wordcount.log").unlink()

    with (installed / "main.py").open("a", encoding="utf-8") as file:
        file.write("\n# one more line\n")
    tampered = box.run("-p", "/wordcount notes.txt", cwd=box.project)
    assert not _started(box)  # the changed plugin never ran
    said = tampered.stdout + tampered.stderr
    assert said.count("changed since `bingo plugin add`") == 1 and "plugin add" in said
    assert "CHANGED" in box.run("plugin", "list").stdout

    again = box.run("plugin", "add", str(package), "--yes")  # added again: pinned anew
    assert again.returncode == 0, again.stderr
    assert box.run("-p", "/wordcount notes.txt", cwd=box.project).returncode == 0
    assert _started(box)

    data = box.bingo_home / "data" / "plugins" / "wordcount"
    data.mkdir(parents=True, exist_ok=True)
    removed = box.run("plugin", "remove", "wordcount")
    assert removed.returncode == 0, removed.stderr
    assert not installed.exists() and not data.exists()
    record = json.loads((box.bingo_home / "plugins" / ".packages.json").read_text(encoding="utf-8"))
    assert "wordcount" not in record


def test_add_from_a_local_git_repository_at_a_ref(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    repository = _package(tmp_path)
    _git("init", "-q", cwd=repository)
    _git("add", ".", cwd=repository)
    _git("commit", "-q", "-m", "first", cwd=repository)
    first = _git("rev-parse", "HEAD", cwd=repository)
    (repository / "NEWS").write_text("second\n", encoding="utf-8")
    _git("add", ".", cwd=repository)
    _git("commit", "-q", "-m", "second", cwd=repository)

    added = box.run("plugin", "add", f"file://{repository}#{first}", "--yes")
    assert added.returncode == 0, added.stderr
    installed = box.bingo_home / "plugins" / "wordcount"
    assert (installed / "main.py").is_file() and not (installed / "NEWS").exists()  # the ref's files
    assert not (installed / ".git").exists()
    listed = box.run("plugin", "list").stdout
    assert first[:12] in listed and "as pinned" in listed

    missing = box.run("plugin", "add", str(tmp_path / "nowhere"), "--yes")
    assert missing.returncode == 2 and no_traceback(missing)
    assert "is not a directory, a git repository" in missing.stderr
    assert sorted(p.name for p in (box.bingo_home / "plugins").iterdir()) == [".packages.json", "wordcount"]


_GUARD = """\
import json, os, sys
event = json.load(sys.stdin)
with open(os.path.join(os.environ["CLAUDE_PLUGIN_DATA"], "seen"), "a") as seen:
    seen.write(event["tool_name"] + "\\n")
if "rm -rf" in event.get("tool_input", {}).get("command", ""):
    print("Blocked by guardkit", file=sys.stderr)
    sys.exit(2)
"""


def _claude_plugin(root: Path) -> Path:
    """A Claude Code plugin in its documented layout: a skill, a command, an agent, a
    PreToolUse hook and an MCP server, both run through ${CLAUDE_PLUGIN_ROOT}."""
    from ._bingo import TEST_PLUGINS

    package = root / "guardkit"
    (package / ".claude-plugin").mkdir(parents=True)
    python = sys.executable
    manifest = {
        "name": "guardkit",
        "version": "1.2.0",
        "description": "Guards and helpers.",
        "mcpServers": {"calc": {"command": python, "args": ["${CLAUDE_PLUGIN_ROOT}/server.py"]}},
    }
    (package / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest), encoding="utf-8")
    shutil.copy(TEST_PLUGINS / "mcp-sdk" / "server.py", package / "server.py")
    (package / "skills" / "tidy").mkdir(parents=True)
    (package / "skills" / "tidy" / "SKILL.md").write_text(
        "---\nname: tidy\ndescription: Tidies a repository.\n---\nRemove what is not needed.\n", encoding="utf-8"
    )
    (package / "commands").mkdir()
    (package / "commands" / "hello.md").write_text("Say hello to $ARGUMENTS\n", encoding="utf-8")
    (package / "agents").mkdir()
    (package / "agents" / "reviewer.md").write_text(
        "---\nname: reviewer\ndescription: Reviews a change.\n---\nReview.\n", encoding="utf-8"
    )
    (package / "hooks").mkdir()
    (package / "hooks" / "guard.py").write_text(_GUARD, encoding="utf-8")
    hook = {"type": "command", "command": f"{python} ${{CLAUDE_PLUGIN_ROOT}}/hooks/guard.py"}
    hooks = {"hooks": {"PreToolUse": [{"matcher": "Bash", "hooks": [hook]}]}}
    (package / "hooks" / "hooks.json").write_text(json.dumps(hooks), encoding="utf-8")
    return package


def test_a_claude_code_plugins_parts_each_work_as_their_kind(tmp_path: Path) -> None:
    from ._scripted import model_requests, result_text, text, tool, tool_results, use_scripted_model

    box = Sandbox(tmp_path)
    package = _claude_plugin(tmp_path)
    victim = box.project / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("precious\n", encoding="utf-8")
    use_scripted_model(
        box,
        [
            [tool("c1", "plugin__calc__add", {"a": 2, "b": 3})],
            [tool("b1", "bash", {"command": f"rm -rf {victim}"})],
            [text("done")],
        ],
    )
    added = box.run("plugin", "add", str(package), "--yes")
    assert added.returncode == 0, added.stderr
    installed = box.bingo_home / "plugins" / "guardkit"
    shown = added.stdout
    assert f"MCP server calc: {sys.executable} {installed}/server.py" in shown
    assert "skill tidy" in shown and "command /hello" in shown
    assert "agent reviewer" in shown and "not loaded" not in shown
    assert "hook PreToolUse [Bash]: " in shown and f"{installed}/hooks/guard.py" in shown

    skills = box.run("-p", "/skills", cwd=box.project)
    assert "tidy" in skills.stdout, skills.stderr

    ran = box.run("-p", "/hello world", "--allow", "bash", "--allow", "plugin__calc__add", cwd=box.project)
    assert ran.returncode == 0, ran.stderr
    requests = model_requests(box)
    assert "Say hello to world" in json.dumps(requests[0])  # the command's body was the prompt
    assert "- reviewer: Reviews a change." in requests[0]["request"]["system"]  # its agent is listed
    [added_up] = tool_results(requests[1])
    assert "2 + 3 = 5" in result_text(added_up)  # the MCP server's tool ran
    [refused] = [block for block in tool_results(requests[2]) if block["toolUseId"] == "b1"]
    assert refused["isError"] and "Blocked by guardkit" in result_text(refused)  # the hook blocked
    assert (victim / "keep.txt").read_text(encoding="utf-8") == "precious\n"
    seen = box.bingo_home / "data" / "plugins" / "guardkit" / "seen"
    assert seen.read_text(encoding="utf-8") == "Bash\n"  # the hook wrote its ${CLAUDE_PLUGIN_DATA}


def test_add_into_the_project_runs_only_under_the_projects_trust(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    package = _package(tmp_path)
    (box.project / "notes.txt").write_text("one two\n", encoding="utf-8")
    added = box.run("plugin", "add", str(package), "--project", "--yes", cwd=box.project)
    assert added.returncode == 0, added.stderr
    assert (box.project / ".bingo" / "plugins" / "wordcount" / "main.py").is_file()
    assert not (box.bingo_home / "plugins" / "wordcount").exists()
    box.run("-p", "/wordcount notes.txt", cwd=box.project)
    assert not _started(box)  # an untrusted project's plugin is not started
    assert box.run("--trust", cwd=box.project).returncode == 0
    assert box.run("-p", "/wordcount notes.txt", cwd=box.project).returncode == 0
    assert _started(box)
    assert "(project)" in box.run("plugin", "list", cwd=box.project).stdout


_SEES = """\
import json, os, runpy, sys
names = ("CLAUDE_PLUGIN_ROOT", "PLUGIN_ROOT", "CLAUDE_PLUGIN_DATA", "PLUGIN_DATA")
seen = {name: os.environ.get(name) for name in names}
with open(os.path.join(os.environ["CLAUDE_PLUGIN_DATA"], "seen.json"), "w") as out:
    json.dump(seen, out)
runpy.run_path(os.path.join(os.path.dirname(os.path.abspath(__file__)), "server.py"), run_name="__main__")
"""


def test_a_packages_mcp_server_has_the_four_names_in_its_environment(tmp_path: Path) -> None:
    """As a package's hooks do (Claude Code gives both): the server sees its package's
    directory and data directory, and may write the latter under the sandbox."""
    from ._bingo import TEST_PLUGINS
    from ._scripted import model_requests, result_text, text, tool, tool_results, use_scripted_model

    box = Sandbox(tmp_path)
    package = tmp_path / "seer"
    (package / ".claude-plugin").mkdir(parents=True)
    server = {"command": sys.executable, "args": ["${CLAUDE_PLUGIN_ROOT}/sees.py"]}
    manifest = {"name": "seer", "version": "1.0.0", "mcpServers": {"look": server}}
    (package / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest), encoding="utf-8")
    shutil.copy(TEST_PLUGINS / "mcp-sdk" / "server.py", package / "server.py")
    (package / "sees.py").write_text(_SEES, encoding="utf-8")
    use_scripted_model(box, [[tool("c1", "plugin__look__add", {"a": 1, "b": 1})], [text("done")]])
    assert box.run("plugin", "add", str(package), "--yes").returncode == 0

    ran = box.run("-p", "add", "--allow", "plugin__look__add", cwd=box.project)
    assert ran.returncode == 0, ran.stderr
    [answer] = tool_results(model_requests(box)[1])
    assert "1 + 1 = 2" in result_text(answer)
    installed = str((box.bingo_home / "plugins" / "seer").absolute())
    data = box.bingo_home / "data" / "plugins" / "seer"
    seen = json.loads((data / "seen.json").read_text(encoding="utf-8"))  # written by the server, in its data dir
    assert seen == {
        "CLAUDE_PLUGIN_ROOT": installed,
        "PLUGIN_ROOT": installed,
        "CLAUDE_PLUGIN_DATA": str(data),
        "PLUGIN_DATA": str(data),
    }


def test_on_a_terminal_add_asks_and_installs_only_on_yes(tmp_path: Path) -> None:
    """The question itself, on a real terminal (a pty): what will run is shown, then
    `[y/N]`; "n" (or Ctrl-C) leaves nothing installed, "y" installs and pins."""
    import pexpect

    from . import _bingo
    from .test_trust import WAIT, _Screen

    box = Sandbox(tmp_path)
    package = _package(tmp_path)
    plugins = box.bingo_home / "plugins"
    env = {**box.env, "TERM": "xterm", "LANG": "C.UTF-8"}

    def add() -> tuple[pexpect.spawn, _Screen]:
        child = pexpect.spawn(
            _bingo.BINGO, ["plugin", "add", str(package)], cwd=str(box.project), env=env, encoding="utf-8", timeout=WAIT
        )
        screen = _Screen(child)
        screen.shown(r"wordcount .* from ")
        screen.shown(r"plugin process: \S*python\S* \S*/main\.py")
        screen.shown(r"Install wordcount\? \[y/N\] ")
        return child, screen

    for answer in ("n", None):
        child, screen = add()
        try:
            if answer is None:
                child.sendintr()
            else:
                child.sendline(answer)
            child.expect(pexpect.EOF, timeout=WAIT)
        finally:
            child.close(force=True)
        assert child.exitstatus == (1 if answer else 130), screen.text()
        assert sorted(p.name for p in plugins.iterdir()) == []  # nothing installed, no staging left
        assert "Traceback" not in screen.raw + str(child.before)

    child, screen = add()
    try:
        child.sendline("y")
        screen.shown(r"Installed wordcount into ")
        child.expect(pexpect.EOF, timeout=WAIT)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    assert (plugins / "wordcount" / "main.py").is_file() and (plugins / ".packages.json").is_file()
    assert "as pinned" in box.run("plugin", "list").stdout
