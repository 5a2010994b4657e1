"""Plugin and MCP server processes in the sandbox, through the real binary (INTERFACE.md §9;
issue 24): the zoo's hostile plugin and hostile MCP server try every way out when they start;
the evidence is the attacked side's (tests/e2e/_breakout.py)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.e2e._bingo import TEST_PLUGINS, Sandbox, no_traceback
from tests.e2e._breakout import SECRET_ENV, attempted, held, targets

ZOO = TEST_PLUGINS / "zoo"
HOSTILE = {
    "breaks-out": ("breakout-plugin.json", "written-in-the-manifest"),
    "breaks-out-mcp": ("breakout-mcp.json", "written-in-the-mcp-entry"),
}


def _install(box: Sandbox, name: str, targets_file: Path) -> None:
    installed = box.install(ZOO / name)
    shutil.copy(targets_file, installed / "targets.json")


@pytest.mark.parametrize("name", sorted(HOSTILE))
def test_a_hostile_plugin_reaches_only_what_it_was_granted(tmp_path: Path, name: str) -> None:
    report_name, own = HOSTILE[name]
    box = Sandbox(tmp_path, env=dict(SECRET_ENV))
    with targets(box) as found:
        _install(box, name, found.write(tmp_path / "targets.json"))
        box.settings({"plugins": {name: {"sandbox": {"network": ["localhost"]}}}})
        result = box.run("-p", "/plugins")  # starts it: it attacks before its handshake
        assert result.returncode == 0, result.stderr
        report = attempted(box, report_name)
        assert report, f"{name} did not start: {result.stderr}"
        assert held(found, report) == []
        assert report["env"].get("BREAKOUT_OWN_SECRET_KEY") == own  # its own env, as written, is kept
        assert found.granted is not None and found.granted.paths == ["/granted"]
        port = found.ports["ungranted"]
        refusal = [
            line for line in result.stderr.splitlines() if f"refused {name} a connection to 127.0.0.1:{port}" in line
        ]
        assert len(refusal) == 1 and f"plugins.{name}.sandbox.network" in refusal[0], result.stderr
        row = next(line for line in result.stdout.splitlines() if line.startswith(name + " "))
        assert "confined; granted network localhost" in row
        assert no_traceback(result)


def test_a_plugins_grant_is_its_own(tmp_path: Path) -> None:
    """A host granted to one plugin is not granted to another process."""
    box = Sandbox(tmp_path)
    with targets(box) as found:
        _install(box, "breaks-out", found.write(tmp_path / "targets.json"))
        box.settings({"plugins": {"someone-else": {"sandbox": {"network": ["localhost"]}}}})
        result = box.run("-p", "/plugins")
        assert result.returncode == 0, result.stderr
        assert attempted(box, "breakout-plugin.json")
        assert found.granted is not None and found.granted.paths == []


def test_the_users_mode_off_for_one_plugin_runs_it_as_before(tmp_path: Path) -> None:
    box = Sandbox(tmp_path, env=dict(SECRET_ENV))
    with targets(box) as found:
        _install(box, "breaks-out", found.write(tmp_path / "targets.json"))
        box.settings({"plugins": {"breaks-out": {"sandbox": {"mode": "off"}}}})
        result = box.run("-p", "/plugins")
        assert result.returncode == 0, result.stderr
        assert found.changed() and found.tcp_hits
        assert "GH_TOKEN" in attempted(box, "breakout-plugin.json")["env"]


def test_a_trusted_projects_plugin_cannot_turn_its_sandbox_off(tmp_path: Path) -> None:
    box = Sandbox(tmp_path, env=dict(SECRET_ENV))
    with targets(box) as found:
        targets_file = found.write(tmp_path / "targets.json")
        installed = box.install(ZOO / "breaks-out", layer="project")
        shutil.copy(targets_file, installed / "targets.json")
        box.settings(
            {
                "plugins": {"breaks-out": {"sandbox": {"mode": "off", "write": [str(found.outside)]}}},
                "sandbox": {"env": {"keep": ["GH_TOKEN"]}},
            },
            layer="project",
        )
        assert box.run("--trust").returncode == 0
        result = box.run("-p", "/plugins")
        assert result.returncode == 0, result.stderr
        report = attempted(box, "breakout-plugin.json")
        assert report and held(found, report) == []
        assert "widens the sandbox" in result.stderr


def test_an_npx_server_gets_its_package_managers_cache_and_registry_alone(tmp_path: Path) -> None:
    """An MCP server launched through `npx` writes npm's cache (`~/.npm`) under the defaults;
    another plugin does not, and /sandbox names the grant as the launcher's."""
    box = Sandbox(tmp_path)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    npx = bin_dir / "npx"
    # A stand-in for npx: it fills its cache as npx would, then serves as the zoo's MCP server.
    npx.write_text(
        "#!/bin/sh\n"
        'mkdir -p "$HOME/.npm/_cacache" && echo cached > "$HOME/.npm/_cacache/entry"\n'
        f"exec python3 {ZOO / '_breakout.py'} {ZOO / 'breaks-out' / 'targets.json'} unused mcp\n",
        encoding="utf-8",
    )
    npx.chmod(0o755)
    server = box.bingo_home / "plugins" / "npm-server"
    server.mkdir(parents=True)
    (server / "plugin.json").write_text(
        '{"name": "npm-server", "version": "1", "mcp": {"command": "npx", "args": ["-y", "@example/server"]}}',
        encoding="utf-8",
    )
    result = box.run("-p", "/sandbox", env={"PATH": f"{bin_dir}:{box.env['PATH']}"})
    assert result.returncode == 0, result.stderr
    assert (box.home / ".npm" / "_cacache" / "entry").read_text() == "cached\n"  # written from inside
    rows = [" ".join(line.split()) for line in result.stdout.splitlines()]
    assert "plugin npm-server network registry.npmjs.org its launcher (npx)" in rows, result.stdout
    assert any(row.startswith(f"plugin npm-server write {(box.home / '.npm').resolve()}") for row in rows)


def test_check_plugin_runs_the_plugin_confined_as_bingo_would(tmp_path: Path) -> None:
    box = Sandbox(tmp_path, env=dict(SECRET_ENV))
    with targets(box) as found:
        copy = tmp_path / "to-check" / "breaks-out"
        shutil.copytree(ZOO / "breaks-out", copy)
        found.write(copy / "targets.json")
        result = box.run("--check-plugin", str(copy))
        assert result.returncode == 0, result.stdout + result.stderr
        report = attempted(box, "breakout-plugin.json")
        assert report and held(found, report) == []
