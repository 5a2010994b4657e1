"""`bingo plugin update`, marketplaces and `npm:` through the binary (INTERFACE.md §12, issue
30): git sources are local repositories made in the test; the npm package is packed here with
`npm pack` and installed from its tarball, so no test depends on a registry's contents."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from ._bingo import Sandbox, no_traceback
from .test_plugin_add import _claude_plugin, _git, _package


def test_update_from_a_new_commit_shows_what_changed_and_asks(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    repository = _package(tmp_path)
    _git("init", "-q", cwd=repository)
    _git("add", ".", cwd=repository)
    _git("commit", "-q", "-m", "first", cwd=repository)
    assert box.run("plugin", "add", f"file://{repository}", "--yes").returncode == 0
    installed = box.bingo_home / "plugins" / "wordcount"

    same = box.run("plugin", "update", "wordcount")
    assert same.returncode == 0 and "up to date" in same.stdout, same.stderr

    with (repository / "main.py").open("a", encoding="utf-8") as file:
        file.write("\n# second version\n")
    _git("commit", "-q", "-am", "second", cwd=repository)
    refused = box.run("plugin", "update", "wordcount")
    assert refused.returncode == 2 and no_traceback(refused)
    assert "changed ./main.py" in refused.stdout
    assert "second version" not in (installed / "main.py").read_text(encoding="utf-8")  # nothing replaced

    updated = box.run("plugin", "update", "--yes")
    assert updated.returncode == 0, updated.stderr
    assert "second version" in (installed / "main.py").read_text(encoding="utf-8")
    assert "as pinned" in box.run("plugin", "list").stdout  # update pins the new bytes


def test_a_marketplace_lists_its_plugins_and_source_hash_name_adds_one(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    market = tmp_path / "market"
    (market / "plugins").mkdir(parents=True)
    shutil.move(_claude_plugin(tmp_path), market / "plugins" / "guardkit")
    (market / ".claude-plugin").mkdir()
    listing = {"name": "m", "plugins": [{"name": "guardkit", "source": "./plugins/guardkit", "description": "Guards."}]}
    (market / ".claude-plugin" / "marketplace.json").write_text(json.dumps(listing), encoding="utf-8")
    _git("init", "-q", cwd=market)
    _git("add", ".", cwd=market)
    _git("commit", "-q", "-m", "market", cwd=market)

    listed = box.run("plugin", "add", str(market))
    assert listed.returncode == 0, listed.stderr
    assert "guardkit  Guards." in listed.stdout
    assert not (box.bingo_home / "plugins" / "guardkit").exists()

    missing = box.run("plugin", "add", f"{market}#nothing", "--yes")
    assert missing.returncode == 2 and "has no plugin 'nothing'" in missing.stderr and no_traceback(missing)

    added = box.run("plugin", "add", f"{market}#guardkit", "--yes")
    assert added.returncode == 0, added.stderr
    assert (box.bingo_home / "plugins" / "guardkit" / ".claude-plugin" / "plugin.json").is_file()


def test_an_npm_package_in_the_agent_plugins_format_is_installed_by_npm(tmp_path: Path) -> None:
    npm = shutil.which("npm")
    if npm is None:
        pytest.skip("npm is not installed")
    box = Sandbox(tmp_path)
    source = tmp_path / "tiny"
    (source / "skills" / "hi").mkdir(parents=True)
    (source / "package.json").write_text(
        json.dumps({"name": "tiny-agent-plugin", "version": "1.0.0", "files": ["plugin.json", "skills"]}),
        encoding="utf-8",
    )
    (source / "plugin.json").write_text(json.dumps({"name": "tiny", "version": "1.0.0"}), encoding="utf-8")
    (source / "skills" / "hi" / "SKILL.md").write_text(
        "---\nname: hi\ndescription: Says hi.\n---\nHi.\n", encoding="utf-8"
    )
    subprocess.run(
        [npm, "pack", "--loglevel=error"], cwd=source, env=box.env, check=True, capture_output=True, timeout=60
    )
    tarball = source / "tiny-agent-plugin-1.0.0.tgz"

    added = box.run("plugin", "add", f"npm:{tarball}", "--yes")
    assert added.returncode == 0, added.stderr
    assert "Agent Plugins package" in added.stdout and "skill hi" in added.stdout
    assert (box.bingo_home / "plugins" / "tiny" / "skills" / "hi" / "SKILL.md").is_file()
    assert "hi" in box.run("-p", "/skills", cwd=box.project).stdout
