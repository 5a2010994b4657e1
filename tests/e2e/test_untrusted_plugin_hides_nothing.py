"""An untrusted project plugin hides nothing, through the real binary: a repository that
ships `.bingo/plugins/<name>/` (even an empty directory) cannot switch off the person's own
plugin of that name. The user's plugin runs, one notice says the project's was not started
and why, and `/plugins` lists both. Once the project is trusted, its plugin wins the name."""

from __future__ import annotations

from pathlib import Path

from tests.e2e._bingo import TEST_PLUGINS, Sandbox, no_traceback
from tests.e2e._scripted import text, tool, use_scripted_model

MARKER = "ran.txt"


def _guarded(box: Sandbox) -> None:
    """The person's own guard denies bash; the model asks for bash to write MARKER."""
    box.install(TEST_PLUGINS / "zguard")
    # Without a sandbox (where --allow bash runs it): only the guard stands in its way.
    use_scripted_model(
        box, [[tool("b1", "bash", {"command": f"echo ran > {MARKER}"})], [text("done")]], sandbox={"mode": "off"}
    )


def _guard_starts(box: Sandbox) -> list[str]:
    path = box.bingo_home / "data" / "plugins" / "zguard" / "starts.txt"
    return path.read_text(encoding="utf-8").split() if path.exists() else []


def test_an_empty_project_directory_of_the_guards_name_does_not_switch_the_guard_off(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    _guarded(box)
    (box.project / ".bingo" / "plugins" / "zguard").mkdir(parents=True)
    result = box.run("-p", "--allow", "bash", "do it")
    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    assert not (box.project / MARKER).exists()
    assert _guard_starts(box) == ["zguard"]
    [line] = [line for line in result.stderr.splitlines() if "left out" in line]
    assert ": plugins zguard (your own zguard runs instead); run bingo --trust in " in line


def test_a_project_plugin_of_the_guards_name_does_not_run_and_the_guard_does(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    _guarded(box)
    # A "guard" of the same name that lets everything through: it must not start.
    box.install(TEST_PLUGINS / "renamable", layer="project", name="zguard")
    manifest = box.project / ".bingo" / "plugins" / "zguard" / "plugin.json"
    manifest.write_text(manifest.read_text(encoding="utf-8").replace('"renamable"', '"zguard"'), encoding="utf-8")
    result = box.run("-p", "--allow", "bash", "do it")
    assert result.returncode == 0, result.stderr
    assert not (box.project / MARKER).exists()
    assert _guard_starts(box) == ["zguard"]


def test_plugins_lists_both_and_says_why_the_projects_did_not_start(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "zguard")
    (box.project / ".bingo" / "plugins" / "zguard").mkdir(parents=True)
    result = box.run("-p", "/plugins")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert (
        lines[0]
        == f"project {box.project.resolve()}: not trusted (plugin zguard never trusted), so its plugins do not run and its settings only tighten; run bingo --trust"
    )
    rows = [line for line in lines if line.startswith("zguard ")]
    assert len(rows) == 2, result.stdout
    [user] = [row for row in rows if " user " in row]
    [project] = [row for row in rows if " project " in row]
    assert "hook guard (tool: before)" in user
    assert "not started: the project is not trusted: run bingo --trust to trust it" in project


def test_once_trusted_the_projects_plugin_wins_the_name(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "renamable")
    box.install(TEST_PLUGINS / "renamable", layer="project")
    (box.project / ".bingo" / "plugins" / "renamable" / "main.py").write_text(
        (TEST_PLUGINS / "renamable" / "main.py")
        .read_text(encoding="utf-8")
        .replace('"hello from "', '"project hello from "'),
        encoding="utf-8",
    )
    assert box.run("-p", "/hello").stdout == "hello from renamable\n"
    assert box.run("--trust").returncode == 0
    assert box.run("-p", "/hello").stdout == "project hello from renamable\n"
    listing = box.run("-p", "/plugins").stdout
    assert "not started: hidden by the project's plugin of that name" in listing
