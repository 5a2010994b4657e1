"""The sandbox's settings: who may widen, where each grant came from, and bad input."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bingo.kernel.errors import SettingsError
from bingo.kernel.settings import load_settings
from bingo.wire import Json


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "user" / ".bingo"
    path.mkdir(parents=True)
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    (path / ".bingo").mkdir(parents=True)
    (path / "build").mkdir()
    return path


def _write(path: Path, value: Json) -> None:
    path.write_text(json.dumps(value), encoding="utf-8")


def test_the_default_is_on_with_no_grants(home: Path, project: Path) -> None:
    grants = load_settings(home=home, project=project, project_trusted=True).sandbox
    assert (grants.mode, grants.mode_from, grants.hosts, grants.write, grants.keep, grants.problems) == (
        "on",
        None,
        (),
        (),
        (),
        (),
    )


def test_the_users_settings_widen_and_each_grant_remembers_where(home: Path, project: Path, tmp_path: Path) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    _write(
        home / "settings.json",
        {
            "sandbox": {
                "mode": "off",
                "network": {"allow": ["PyPI.org", "*.npmjs.org"]},
                "write": [str(outside)],
                "env": {"keep": ["GH_TOKEN"]},
            }
        },
    )
    grants = load_settings(home=home, project=project, project_trusted=True).sandbox
    where = str(home / "settings.json")
    assert (grants.mode, grants.mode_from) == ("off", where)
    assert [(g.value, g.where) for g in grants.hosts] == [("PyPI.org", where), ("*.npmjs.org", where)]
    assert [(g.value, g.where) for g in grants.write] == [(str(outside.resolve()), where)]
    assert [(g.value, g.where) for g in grants.keep] == [("GH_TOKEN", where)]
    assert grants.problems == ()


def test_a_trusted_project_narrows_adds_hosts_and_inside_paths_and_nothing_else(
    home: Path, project: Path, tmp_path: Path
) -> None:
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    _write(home / "settings.json", {"sandbox": {"mode": "on"}})
    _write(
        project / ".bingo" / "settings.json",
        {
            "sandbox": {
                "mode": "off",
                "network": {"allow": ["pypi.org"]},
                "write": ["build", str(outside)],
                "env": {"keep": ["GH_TOKEN"]},
                "deny": ["secrets"],
            },
            "plugins": {"wc": {"sandbox": {"mode": "off", "network": ["example.org"], "write": [str(outside)]}}},
        },
    )
    grants = load_settings(home=home, project=project, project_trusted=True).sandbox
    where = str(project / ".bingo" / "settings.json")
    assert grants.mode == "on" and grants.mode_from == str(home / "settings.json")
    assert [(g.value, g.where) for g in grants.hosts] == [("pypi.org", where)]
    assert [g.value for g in grants.write] == [str((project / "build").resolve())]
    assert grants.keep == ()
    assert [g.value for g in grants.deny] == [str((project / "secrets").resolve())]
    wc = grants.plugin("wc")
    assert wc.off is None and [g.value for g in wc.hosts] == ["example.org"] and wc.write == ()
    said = "\n".join(grants.problems)
    for key in ('sandbox.mode "off"', "sandbox.env.keep", 'plugins.wc.sandbox.mode "off"'):
        assert f"{where}: {key} widens the sandbox" in said
    assert said.count("is outside the project") == 2


def test_an_untrusted_project_gives_no_sandbox_grant(home: Path, project: Path) -> None:
    _write(project / ".bingo" / "settings.json", {"sandbox": {"network": {"allow": ["pypi.org"]}, "write": ["build"]}})
    settings = load_settings(home=home, project=project, project_trusted=False)
    assert settings.sandbox.hosts == () and settings.sandbox.write == ()
    assert "sandbox" in settings.left_out["settings.json"]


def test_a_project_may_make_it_required_but_not_loosen_required(home: Path, project: Path) -> None:
    _write(project / ".bingo" / "settings.json", {"sandbox": {"mode": "required"}})
    assert load_settings(home=home, project=project, project_trusted=True).sandbox.mode == "required"
    _write(home / "settings.json", {"sandbox": {"mode": "required"}})
    _write(project / ".bingo" / "settings.json", {"sandbox": {"mode": "on"}})
    grants = load_settings(home=home, project=project, project_trusted=True).sandbox
    assert grants.mode == "required" and len(grants.problems) == 1


def test_the_command_line_turns_it_off_whatever_the_project_says(home: Path, project: Path) -> None:
    _write(project / ".bingo" / "settings.json", {"sandbox": {"mode": "required"}})
    grants = load_settings(
        home=home, project=project, project_trusted=True, overrides={"sandbox": {"mode": "off"}}
    ).sandbox
    assert (grants.mode, grants.mode_from) == ("off", "--no-sandbox")


@pytest.mark.parametrize(
    ("value", "key"),
    [
        ({"sandbox": {"mode": "of"}}, "sandbox.mode"),
        ({"sandbox": {"mode": True}}, "sandbox.mode"),
        ({"sandbox": []}, "sandbox"),
        ({"sandbox": {"network": {"allow": "pypi.org"}}}, "sandbox.network.allow"),
        ({"sandbox": {"write": [1]}}, "sandbox.write[0]"),
        ({"sandbox": {"env": {"keep": [None]}}}, "sandbox.env.keep[0]"),
        ({"plugins": {"wc": {"sandbox": {"network": ["a", 3]}}}}, "plugins.wc.sandbox.network[1]"),
        ({"plugins": {"wc": {"sandbox": {"mode": "required"}}}}, "plugins.wc.sandbox.mode"),
        ({"plugins": {"wc": {"sandbox": "off"}}}, "plugins.wc.sandbox"),
    ],
)
def test_a_malformed_sandbox_setting_names_the_file_and_key(home: Path, project: Path, value: Json, key: str) -> None:
    _write(home / "settings.json", value)
    with pytest.raises(SettingsError) as caught:
        load_settings(home=home, project=project, project_trusted=True)
    line = caught.value.line()
    assert f"{key} in {home / 'settings.json'} (line 1)" in line
    assert "expected" in line


def test_a_missing_path_is_one_problem_and_hosts_are_kept_as_written(home: Path, project: Path) -> None:
    _write(
        home / "settings.json",
        {"sandbox": {"write": ["/no/such/dir"], "network": {"allow": ["https://pypi.org/simple", "pypi.org"]}}},
    )
    grants = load_settings(home=home, project=project, project_trusted=True).sandbox
    assert [(g.value, g.key) for g in grants.hosts] == [
        ("https://pypi.org/simple", "sandbox.network.allow"),
        ("pypi.org", "sandbox.network.allow"),
    ]
    assert grants.write == ()
    assert len(grants.problems) == 1 and "'/no/such/dir' does not exist" in grants.problems[0]


def test_an_unknown_key_in_a_plugins_sandbox_is_named(home: Path, project: Path) -> None:
    _write(home / "settings.json", {"plugins": {"wc": {"sandbox": {"netwrok": ["pypi.org"]}, "mine": 1}}})
    unknown = load_settings(home=home, project=project, project_trusted=True).unknown
    assert unknown == (
        f"{home / 'settings.json'}: unknown key plugins.wc.sandbox.netwrok (did you mean plugins.wc.sandbox.network?)",
    )
