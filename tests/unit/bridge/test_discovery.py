from __future__ import annotations

import json
from pathlib import Path

import pytest

from bingo.bridge.discovery import PluginSource, discover, entry_command
from bingo.bridge.manifest import Entry, Manifest


def _install(layer: Path, name: str, *, manifest_name: str | None = None) -> Path:
    directory = layer / name
    directory.mkdir(parents=True)
    body = {
        "name": manifest_name or name,
        "version": "1.0.0",
        "entry": {"command": "python3", "args": ["${PLUGIN_ROOT}/main.py"]},
    }
    (directory / "plugin.json").write_text(json.dumps(body))
    return directory


@pytest.fixture
def layers(tmp_path: Path) -> tuple[Path, Path]:
    home = tmp_path / "home" / ".bingo"
    project = tmp_path / "repo"
    (home / "plugins").mkdir(parents=True)
    (project / ".bingo" / "plugins").mkdir(parents=True)
    return home, project


def _names(sources: list[PluginSource]) -> list[tuple[str, str]]:
    return [(s.name, s.layer) for s in sources]


def test_both_layers_are_found_sorted_by_name(layers: tuple[Path, Path]) -> None:
    home, project = layers
    _install(home / "plugins", "zeta")
    _install(project / ".bingo" / "plugins", "alpha")
    _install(home / "plugins", "mid")
    sources = discover(home=home, project=project)
    assert _names(sources) == [("alpha", "project"), ("mid", "user"), ("zeta", "user")]
    assert all(s.problem is None and s.manifest is not None for s in sources)


def test_a_good_plugin_has_its_absolute_root_and_manifest(layers: tuple[Path, Path]) -> None:
    home, project = layers
    directory = _install(home / "plugins", "wordcount")
    [source] = discover(home=home, project=project)
    assert source.root == directory.absolute()
    assert source.root.is_absolute()
    assert source.manifest is not None and source.manifest.version == "1.0.0"
    assert source.overrides is None


def test_the_project_layer_wins_the_name_and_says_what_it_hides(
    layers: tuple[Path, Path],
) -> None:
    home, project = layers
    user = _install(home / "plugins", "wordcount")
    mine = _install(project / ".bingo" / "plugins", "wordcount")
    [source] = discover(home=home, project=project)
    assert (source.layer, source.root) == ("project", mine.absolute())
    assert source.overrides is not None
    assert (source.overrides.layer, source.overrides.root) == ("user", user.absolute())


def test_a_broken_project_plugin_still_wins_the_name(layers: tuple[Path, Path]) -> None:
    home, project = layers
    _install(home / "plugins", "wordcount")
    broken = project / ".bingo" / "plugins" / "wordcount"
    broken.mkdir()
    (broken / "plugin.json").write_text("{")
    [source] = discover(home=home, project=project)
    assert source.layer == "project"
    assert source.manifest is None
    assert source.problem is not None and "is not JSON at line 1" in source.problem


def test_a_directory_named_otherwise_is_refused_naming_both(layers: tuple[Path, Path]) -> None:
    home, project = layers
    _install(home / "plugins", "wc", manifest_name="wordcount")
    [source] = discover(home=home, project=project)
    assert source.name == "wc"
    assert source.manifest is None
    assert source.problem is not None
    assert "the directory is named 'wc' but the manifest's name is 'wordcount'" in source.problem


def test_a_directory_without_a_manifest_is_refused(layers: tuple[Path, Path]) -> None:
    home, project = layers
    (home / "plugins" / "empty").mkdir()
    [source] = discover(home=home, project=project)
    assert source.manifest is None
    assert source.problem is not None and source.problem.startswith("no plugin.json in ")


def test_files_and_dot_directories_are_ignored(layers: tuple[Path, Path]) -> None:
    home, project = layers
    (home / "plugins" / "README.md").write_text("not a plugin")
    _install(home / "plugins", ".hidden", manifest_name="hidden")
    _install(home / "plugins", "wordcount")
    assert _names(discover(home=home, project=project)) == [("wordcount", "user")]


def test_missing_layers_hold_no_plugins(tmp_path: Path) -> None:
    assert discover(home=tmp_path / "nohome", project=tmp_path / "noproject") == []


def test_a_project_whose_bingo_is_the_user_layer_lists_each_plugin_once(tmp_path: Path) -> None:
    home = tmp_path / ".bingo"
    _install(home / "plugins", "wordcount")
    sources = discover(home=home, project=tmp_path)
    assert _names(sources) == [("wordcount", "user")]


def test_the_same_layer_through_a_symlink_is_listed_once(tmp_path: Path) -> None:
    real = tmp_path / "real" / ".bingo"
    _install(real / "plugins", "wordcount")
    (tmp_path / "link").symlink_to(tmp_path / "real")
    sources = discover(home=real, project=tmp_path / "link")
    assert _names(sources) == [("wordcount", "user")]


def _manifest(entry: Entry) -> Manifest:
    return Manifest(name="wordcount", version="0.1.0", entry=entry)


def test_plugin_root_is_expanded_in_command_args_and_env(tmp_path: Path) -> None:
    entry = Entry(
        command="${PLUGIN_ROOT}/bin/run",
        args=["${PLUGIN_ROOT}/main.py", "--data=${PLUGIN_ROOT}/d", "plain"],
        env={"LIB": "${PLUGIN_ROOT}/lib:${PLUGIN_ROOT}/vendor"},
    )
    root = tmp_path / "wordcount"
    argv, env = entry_command(_manifest(entry), root, {})
    assert argv == [f"{root}/bin/run", f"{root}/main.py", f"--data={root}/d", "plain"]
    assert env == {"LIB": f"{root}/lib:{root}/vendor"}


def test_a_relative_root_is_made_absolute(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    argv, _ = entry_command(
        _manifest(Entry(command="python3", args=["${PLUGIN_ROOT}/m.py"])), Path("plugins/wordcount"), {}
    )
    assert argv == ["python3", f"{tmp_path}/plugins/wordcount/m.py"]


def test_entry_env_adds_to_the_host_environment(tmp_path: Path) -> None:
    host = {"PATH": "/usr/bin:/bin", "HOME": "/home/me", "MODE": "host"}
    entry = Entry(command="node", env={"MODE": "plugin", "EXTRA": "1"})
    argv, env = entry_command(_manifest(entry), tmp_path, host)
    assert argv == ["node"]
    assert env == {"PATH": "/usr/bin:/bin", "HOME": "/home/me", "MODE": "plugin", "EXTRA": "1"}
    assert host["MODE"] == "host"


def test_only_plugin_root_is_expanded(tmp_path: Path) -> None:
    entry = Entry(command="python3", args=["$HOME", "${PATH}", "~/x"], env={"P": "${PATH}"})
    argv, env = entry_command(_manifest(entry), tmp_path, {"PATH": "/bin"})
    assert argv == ["python3", "$HOME", "${PATH}", "~/x"]
    assert env["P"] == "${PATH}"
