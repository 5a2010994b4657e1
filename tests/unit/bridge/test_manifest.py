from __future__ import annotations

import json
from pathlib import Path

import pytest

from bingo.bridge.manifest import Entry, Manifest, check_name, read_manifest
from bingo.kernel.errors import PluginError

_GOOD = {
    "name": "wordcount",
    "version": "0.1.0",
    "entry": {"command": "python3", "args": ["${PLUGIN_ROOT}/main.py"]},
}


def _plugin(tmp_path: Path, body: object | str, name: str = "wordcount") -> Path:
    directory = tmp_path / name
    directory.mkdir()
    text = body if isinstance(body, str) else json.dumps(body, indent=2)
    (directory / "plugin.json").write_text(text, encoding="utf-8")
    return directory


def _problem(directory: Path) -> str:
    with pytest.raises(PluginError) as caught:
        read_manifest(directory)
    assert "\n" not in caught.value.line()
    return caught.value.message


def test_the_seed_manifest_reads_with_defaults(tmp_path: Path) -> None:
    manifest = read_manifest(_plugin(tmp_path, _GOOD))
    assert manifest == Manifest(
        name="wordcount",
        version="0.1.0",
        entry=Entry(command="python3", args=["${PLUGIN_ROOT}/main.py"]),
    )
    assert manifest.entry.env == {}
    assert manifest.config is None
    assert manifest.description == ""


def test_config_schema_and_description_are_kept_as_they_are(tmp_path: Path) -> None:
    schema = {"type": "object", "properties": {"depth": {"type": "integer"}}}
    body = {**_GOOD, "config": schema, "description": "counts words"}
    manifest = read_manifest(_plugin(tmp_path, body))
    assert manifest.config == schema
    assert manifest.description == "counts words"


def test_unknown_fields_are_ignored(tmp_path: Path) -> None:
    manifest = read_manifest(_plugin(tmp_path, {**_GOOD, "homepage": "https://example.org"}))
    assert manifest.name == "wordcount"


def test_entry_env_is_read(tmp_path: Path) -> None:
    body = {**_GOOD, "entry": {"command": "node", "env": {"DEBUG": "${PLUGIN_ROOT}/x"}}}
    assert read_manifest(_plugin(tmp_path, body)).entry.env == {"DEBUG": "${PLUGIN_ROOT}/x"}


def test_a_directory_without_plugin_json_says_so(tmp_path: Path) -> None:
    directory = tmp_path / "wordcount"
    directory.mkdir()
    assert _problem(directory) == f"no plugin.json in {directory}"


def test_invalid_json_names_its_line(tmp_path: Path) -> None:
    directory = _plugin(tmp_path, '{\n  "name": "wordcount",\n  "version": "0.1.0",,\n}')
    assert _problem(directory).startswith(f"{directory / 'plugin.json'} is not JSON at line 3,")


@pytest.mark.parametrize("depth", [129, 100_000])
def test_a_manifest_nested_too_deeply_is_refused_in_one_line(tmp_path: Path, depth: int) -> None:
    # 100 000 levels made json.loads raise RecursionError, which no caller expected.
    text = json.dumps(_GOOD)[:-1] + ', "config": ' + "[" * depth + "]" * depth + "}"
    directory = _plugin(tmp_path, text)
    assert _problem(directory) == f"{directory / 'plugin.json'} is nested too deeply (more than 128 levels)"


def test_a_file_that_is_not_utf8_says_so(tmp_path: Path) -> None:
    directory = tmp_path / "wordcount"
    directory.mkdir()
    (directory / "plugin.json").write_bytes(b'{\n"name": "\xff"}')
    assert _problem(directory).endswith("is not UTF-8 at line 2")


def test_a_missing_entry_command_is_named(tmp_path: Path) -> None:
    directory = _plugin(tmp_path, {**_GOOD, "entry": {"args": []}})
    assert _problem(directory).endswith(": `entry.command` is missing")


def test_a_missing_top_level_field_is_named(tmp_path: Path) -> None:
    body = {"name": "wordcount", "entry": {"command": "x"}}
    assert _problem(_plugin(tmp_path, body)).endswith(": `version` is missing")


def test_a_wrong_type_names_the_path(tmp_path: Path) -> None:
    directory = _plugin(tmp_path, {**_GOOD, "entry": {"command": "x", "args": "main.py"}})
    assert _problem(directory).endswith(": wrong type at `$.entry.args`: expected `array`, got `str`")


def test_a_wrong_type_inside_a_list_names_the_index(tmp_path: Path) -> None:
    directory = _plugin(tmp_path, {**_GOOD, "entry": {"command": "x", "args": ["a", 2]}})
    assert "wrong type at `$.entry.args[1]`" in _problem(directory)


def test_a_manifest_that_is_not_an_object_says_so(tmp_path: Path) -> None:
    assert "wrong type at `$`: expected `object`" in _problem(_plugin(tmp_path, "[1, 2]"))


def test_an_empty_command_is_refused(tmp_path: Path) -> None:
    directory = _plugin(tmp_path, {**_GOOD, "entry": {"command": "  "}})
    assert _problem(directory).endswith(": `entry.command` is empty")


def test_a_relative_command_path_is_refused_with_the_fix(tmp_path: Path) -> None:
    directory = _plugin(tmp_path, {**_GOOD, "entry": {"command": "./bin/run"}})
    assert _problem(directory).endswith(
        ": `entry.command` './bin/run' is a relative path: write ${PLUGIN_ROOT}/bin/run "
        "for a file in the plugin's directory"
    )


@pytest.mark.parametrize("command", ["/usr/bin/python3", "${PLUGIN_ROOT}/bin/run", "node"])
def test_absolute_root_relative_and_bare_commands_are_accepted(tmp_path: Path, command: str) -> None:
    directory = _plugin(tmp_path, {**_GOOD, "entry": {"command": command}})
    assert read_manifest(directory).entry.command == command


def test_a_directory_named_otherwise_than_the_manifest_is_refused(tmp_path: Path) -> None:
    directory = _plugin(tmp_path, _GOOD, name="wc")
    assert _problem(directory).endswith(": the directory is named 'wc' but the manifest's name is 'wordcount'")


def test_a_name_that_is_not_an_identifier_is_refused(tmp_path: Path) -> None:
    directory = _plugin(tmp_path, {**_GOOD, "name": "Word Count"}, name="Word Count")
    assert "name 'Word Count' is not a plugin name" in _problem(directory)


@pytest.mark.parametrize("name", ["wordcount", "echo-node", "scripted_model", "a", "x1-2_3", "9lives"])
def test_plugin_names_accept_lowercase_runs_joined_by_single_separators(name: str) -> None:
    assert check_name(name) is None


@pytest.mark.parametrize("name", ["", "Word", "a.b", "a__b", "-a", "a-", "a--b", "a b", "é", "a/b", "x" * 65])
def test_plugin_names_refuse_everything_else(name: str) -> None:
    assert check_name(name) is not None
