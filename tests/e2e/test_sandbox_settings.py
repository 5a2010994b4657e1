"""The sandbox's settings through the real binary (INTERFACE.md §9; ADR-0031): bad input, who may
widen, and what `/sandbox` and `/plugins` show."""

from __future__ import annotations

from pathlib import Path

from tests.e2e._bingo import EXAMPLES, Sandbox, no_traceback


def test_a_malformed_sandbox_setting_is_exit_2_naming_the_file_and_key(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.settings({"sandbox": {"network": {"allow": ["pypi.org", 7]}}})
    result = box.run("-p", "/sandbox")
    assert result.returncode == 2
    assert f"sandbox.network.allow[1] in {box.bingo_home / 'settings.json'} (line 1) is the number 7" in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1 and no_traceback(result)


def test_a_malformed_plugin_sandbox_in_a_project_file_is_exit_2_too(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.settings({"plugins": {"wc": {"sandbox": {"mode": "of"}}}}, layer="project")
    result = box.run("-p", "/sandbox")
    assert result.returncode == 2
    assert f"plugins.wc.sandbox.mode in {box.project / '.bingo' / 'settings.json'} (line 1)" in result.stderr
    assert 'expected "off" (or "on")' in result.stderr


def test_a_missing_path_and_a_host_that_is_no_host_are_one_notice_each_and_the_run_goes_on(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.settings(
        {
            "sandbox": {
                "write": [str(tmp_path / "nowhere")],
                "network": {"allow": ["https://pypi.org/simple", "pypi.org"]},
            }
        }
    )
    result = box.run("-p", "/sandbox")
    assert result.returncode == 0, result.stderr
    lines = [line for line in result.stderr.splitlines() if "sandbox." in line and "ignored" in line]
    assert len(lines) == 2, result.stderr
    assert any(f"sandbox.write '{tmp_path / 'nowhere'}' does not exist" in line for line in lines)
    assert any(
        "sandbox.network.allow holds 'https://pypi.org/simple', which is a URL, not a host" in line for line in lines
    )
    assert "pypi.org" in result.stdout and "https://pypi.org/simple" not in result.stdout


def test_sandbox_shows_each_grant_and_where_it_came_from(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    (tmp_path / "cache").mkdir()
    box.settings(
        {
            "sandbox": {
                "network": {"allow": ["*.npmjs.org"]},
                "write": [str(tmp_path / "cache")],
                "env": {"keep": ["GH_TOKEN"]},
            },
            "plugins": {"wordcount": {"sandbox": {"network": ["api.example.com"]}}},
        }
    )
    box.install(EXAMPLES / "wordcount")
    result = box.run("-p", "/sandbox")
    assert result.returncode == 0, result.stderr
    user = str(box.bingo_home / "settings.json")
    rows = [" ".join(line.split()) for line in result.stdout.splitlines()]
    assert f"network *.npmjs.org {user}" in rows
    assert f"write {(tmp_path / 'cache').resolve()} {user}" in rows
    assert f"env.keep GH_TOKEN {user}" in rows
    assert f"plugin wordcount network api.example.com {user}" in rows
    plugins = box.run("-p", "/plugins")
    assert "api.example.com" in plugins.stdout, plugins.stdout


def test_a_trusted_project_cannot_widen_and_each_attempt_is_named(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (box.project / "build").mkdir()
    project_file = box.project / ".bingo" / "settings.json"
    box.settings(
        {
            "sandbox": {
                "mode": "off",
                "write": [str(outside), "build"],
                "env": {"keep": ["GH_TOKEN"]},
                "network": {"allow": ["pypi.org"]},
            },
            "plugins": {"wordcount": {"sandbox": {"mode": "off"}}},
        },
        layer="project",
    )
    assert box.run("--trust").returncode == 0
    result = box.run("-p", "/sandbox")
    assert result.returncode == 0, result.stderr
    said = result.stderr
    for key in ('sandbox.mode "off"', "sandbox.env.keep", 'plugins.wordcount.sandbox.mode "off"'):
        assert f"{project_file}: {key} widens the sandbox" in said, said
    assert f"sandbox.write '{outside}' is outside the project" in said
    rows = [" ".join(line.split()) for line in result.stdout.splitlines()]
    assert "mode on default" in rows
    assert f"network pypi.org {project_file}" in rows
    assert f"write {(box.project / 'build').resolve()} {project_file}" in rows
    assert not any(str(outside) in row or "GH_TOKEN" in row for row in rows)


def test_an_untrusted_project_gives_no_grant(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.settings({"sandbox": {"network": {"allow": ["pypi.org"]}}}, layer="project")
    result = box.run("-p", "/sandbox")
    assert result.returncode == 0
    assert "pypi.org" not in result.stdout
    assert "sandbox" in result.stderr and "bingo --trust" in result.stderr


def test_no_sandbox_and_the_users_mode_off_say_so(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    result = box.run("-p", "--no-sandbox", "/sandbox")
    assert result.returncode == 0
    assert 'sandbox: off (sandbox.mode "off" from --no-sandbox)' in result.stdout
    box.settings({"sandbox": {"mode": "off"}})
    result = box.run("-p", "/sandbox")
    assert f'sandbox: off (sandbox.mode "off" from {box.bingo_home / "settings.json"})' in result.stdout
    assert "not in force" not in result.stderr


def test_help_lists_no_sandbox(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    result = box.run("--help")
    assert "--no-sandbox" in result.stdout
