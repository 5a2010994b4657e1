"""Settings: the layers, the merge, the project rule and the one-line errors."""

from __future__ import annotations

import json
import tempfile
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from bingo.kernel.errors import SettingsError
from bingo.kernel.settings import (
    DEFAULT_DEADLINES,
    Permissions,
    Settings,
    bingo_home,
    find_project,
    layer_problem,
    load_settings,
    unsafe_layers,
)
from bingo.wire import Json
from tests.support.examples import examples


@pytest.fixture
def home(tmp_path: Path) -> Path:
    path = tmp_path / "user" / ".bingo"
    path.mkdir(parents=True)
    return path


@pytest.fixture
def project(tmp_path: Path) -> Path:
    path = tmp_path / "repo"
    (path / ".bingo").mkdir(parents=True)
    return path


def write(path: Path, document: Json) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(document, indent=2), encoding="utf-8")
    return path


def user_file(home: Path) -> Path:
    return home / "settings.json"


def project_file(project: Path) -> Path:
    return project / ".bingo" / "settings.json"


def local_file(project: Path) -> Path:
    return project / ".bingo" / "settings.local.json"


def load_error(home: Path, project: Path, overrides: dict[str, Json] | None = None) -> str:
    with pytest.raises(SettingsError) as caught:
        load_settings(project_trusted=True, home=home, project=project, overrides=overrides)
    assert caught.value.exit_code == 2
    return caught.value.line()


# --- an untrusted project ------------------------------------------------------------


def test_an_untrusted_project_gives_only_deny_and_ask(home: Path, project: Path) -> None:
    write(user_file(home), {"permissions": {"allow": ["read"]}, "model": "mine"})
    write(
        project_file(project),
        {"permissions": {"allow": ["*"], "deny": ["bash"]}, "model": "theirs", "deadlines": {"hook/decide": 1e-9}},
    )
    write(local_file(project), {"permissions": {"ask": ["glob"]}, "plugins": {"x": {"a": 1}}})

    loaded = load_settings(project_trusted=False, home=home, project=project)

    assert loaded.permissions == Permissions(allow=("read",), ask=("glob",), deny=("bash",))
    assert loaded.model == "mine"
    assert loaded.deadline("hook/decide") == DEFAULT_DEADLINES["hook/decide"]
    assert dict(loaded.plugins) == {}
    assert dict(loaded.left_out) == {
        "settings.json": ("permissions.allow", "model", "deadlines"),
        "settings.local.json": ("plugins",),
    }


def test_a_trusted_project_gives_everything_and_still_says_what_trust_decided(home: Path, project: Path) -> None:
    write(project_file(project), {"permissions": {"allow": ["*"]}, "model": "theirs"})

    loaded = load_settings(project_trusted=True, home=home, project=project)

    assert loaded.permissions.allow == ("*",) and loaded.model == "theirs"
    assert dict(loaded.left_out) == {"settings.json": ("permissions.allow", "model")}


def test_an_untrusted_projects_bad_file_is_still_an_error(home: Path, project: Path) -> None:
    write(project_file(project), {"model": 5})
    with pytest.raises(SettingsError):
        load_settings(project_trusted=False, home=home, project=project)


def test_a_layer_writable_by_everyone_is_refused_and_passed_over(tmp_path: Path) -> None:
    shared = tmp_path / "shared"
    (shared / ".bingo").mkdir(parents=True)
    write(shared / ".bingo" / "settings.json", {"permissions": {"deny": ["read"]}})
    work = shared / "work"
    work.mkdir()
    assert layer_problem(shared) is None
    assert find_project(work, tmp_path / "me") == shared.resolve()

    (shared / ".bingo").chmod(0o777)

    assert layer_problem(shared) == f"{shared / '.bingo'} is writable by every user"
    assert find_project(work, tmp_path / "me") != shared.resolve()
    assert unsafe_layers(work, tmp_path / "me") == [f"{(shared / '.bingo').resolve()} is writable by every user"]
    home = tmp_path / "me" / ".bingo"
    assert load_settings(project_trusted=True, home=home, project=shared).permissions == Permissions()


# --- layers and merge ----------------------------------------------------------------


def test_no_files_give_the_defaults(home: Path, project: Path) -> None:
    loaded = load_settings(project_trusted=True, home=home, project=project)

    assert loaded == Settings()
    assert dict(loaded.deadlines) == {**DEFAULT_DEADLINES, "packageInstall": 300.0}
    assert loaded.max_tokens == 4096
    assert loaded.context_budget is None and loaded.context_window is None and loaded.tool_result_budget is None


def test_missing_directories_are_fine(tmp_path: Path) -> None:
    loaded = load_settings(project_trusted=True, home=tmp_path / "nowhere", project=tmp_path / "nothing")

    assert loaded == Settings()


def test_every_known_key_is_read(home: Path, project: Path) -> None:
    write(
        user_file(home),
        {
            "provider": "openai",
            "model": "gpt-x",
            "maxTokens": 100,
            "contextBudget": 2000,
            "compactor": "plugin__squash__squash",
            "permissions": {"allow": ["read"], "ask": ["bash"], "deny": ["plugin__*__rm"]},
            "deadlines": {"tool/call": 5},
            "plugins": {"wordcount": {"verbose": True}},
        },
    )

    loaded = load_settings(project_trusted=True, home=home, project=project)

    assert loaded.provider == "openai"
    assert loaded.model == "gpt-x"
    assert loaded.max_tokens == 100
    assert loaded.context_budget == 2000
    assert loaded.compactor == "plugin__squash__squash"
    assert loaded.permissions == Permissions(allow=("read",), ask=("bash",), deny=("plugin__*__rm",))
    assert loaded.deadline("tool/call") == 5.0
    assert dict(loaded.plugins) == {"wordcount": {"verbose": True}}


def test_later_layers_win_for_scalars(home: Path, project: Path) -> None:
    write(user_file(home), {"provider": "anthropic", "model": "a", "maxTokens": 1})
    write(project_file(project), {"provider": "openai", "model": "b"})
    write(local_file(project), {"model": "c"})

    loaded = load_settings(project_trusted=True, home=home, project=project, overrides={"maxTokens": 7})

    assert (loaded.provider, loaded.model, loaded.max_tokens) == ("openai", "c", 7)


def test_a_later_layer_can_clear_a_choice_with_null(home: Path, project: Path) -> None:
    write(user_file(home), {"provider": "anthropic"})
    write(local_file(project), {"provider": None})

    assert load_settings(project_trusted=True, home=home, project=project).provider is None


def test_objects_merge_key_by_key_across_layers(home: Path, project: Path) -> None:
    write(user_file(home), {"plugins": {"wc": {"a": 1, "deep": {"x": 1}}, "other": {"k": 0}}})
    write(project_file(project), {"plugins": {"wc": {"b": 2, "deep": {"y": 2}}}})
    write(local_file(project), {"plugins": {"wc": {"a": 3, "list": [1]}}})

    loaded = load_settings(
        project_trusted=True, home=home, project=project, overrides={"plugins": {"wc": {"list": [2]}}}
    )

    assert dict(loaded.plugins) == {
        "wc": {"a": 3, "b": 2, "deep": {"x": 1, "y": 2}, "list": [2]},
        "other": {"k": 0},
    }


def test_permission_lists_are_concatenated_in_layer_order(home: Path, project: Path) -> None:
    write(user_file(home), {"permissions": {"allow": ["u"], "deny": ["ud"]}})
    write(project_file(project), {"permissions": {"allow": ["p"], "ask": ["pa"]}})
    write(local_file(project), {"permissions": {"allow": ["l"]}})

    loaded = load_settings(
        project_trusted=True, home=home, project=project, overrides={"permissions": {"allow": ["flag"]}}
    )

    assert loaded.permissions == Permissions(allow=("u", "p", "l", "flag"), ask=("pa",), deny=("ud",))


@settings(derandomize=True, deadline=None, max_examples=examples(30))
@given(layers=st.lists(st.lists(st.text(max_size=8), max_size=3), min_size=4, max_size=4))
def test_allow_rules_keep_every_layer_in_order(layers: list[list[str]]) -> None:
    # Hypothesis and tmp_path do not mix (one directory per test, many examples).
    with tempfile.TemporaryDirectory() as scratch:
        home, project = Path(scratch) / "home", Path(scratch) / "repo"
        for path, rules in zip((user_file(home), project_file(project), local_file(project)), layers):
            write(path, {"permissions": {"allow": rules}})
        loaded = load_settings(
            project_trusted=True, home=home, project=project, overrides={"permissions": {"allow": layers[3]}}
        )

    assert loaded.permissions.allow == tuple(rule for layer in layers for rule in layer)


def test_deadlines_merge_over_the_defaults(home: Path, project: Path) -> None:
    write(user_file(home), {"deadlines": {"tool/call": 30, "hook/decide": 1.5}})
    write(project_file(project), {"deadlines": {"tool/call": 45}})

    loaded = load_settings(project_trusted=True, home=home, project=project)

    assert loaded.deadline("tool/call") == 45.0
    assert loaded.deadline("hook/decide") == 1.5
    assert loaded.deadline("initialize") == DEFAULT_DEADLINES["initialize"]
    assert isinstance(loaded.deadline("tool/call"), float)


def test_a_method_without_any_deadline_still_gets_a_bounded_one() -> None:
    deadline = Settings().deadline("something/new")

    assert 0 < deadline < float("inf")


def test_unknown_keys_are_ignored(home: Path, project: Path) -> None:
    write(
        user_file(home),
        {"futureKey": {"x": [1]}, "permissions": {"allow": ["read"], "defaultMode": 3}},
    )

    loaded = load_settings(project_trusted=True, home=home, project=project)

    assert loaded.permissions.allow == ("read",)


def test_the_user_layer_is_read_once_when_it_is_also_the_projects(tmp_path: Path) -> None:
    user_home = tmp_path / "me"
    write(user_home / ".bingo" / "settings.json", {"permissions": {"allow": ["read"]}})

    loaded = load_settings(project_trusted=True, home=user_home / ".bingo", project=user_home)

    assert loaded.permissions.allow == ("read",)


def test_a_byte_order_mark_is_tolerated(home: Path, project: Path) -> None:
    user_file(home).write_bytes(b'\xef\xbb\xbf{"model": "m"}')

    assert load_settings(project_trusted=True, home=home, project=project).model == "m"


# --- errors --------------------------------------------------------------------------


@pytest.mark.parametrize("layer", ["user", "project", "local"])
@pytest.mark.parametrize("depth", [129, 100_000])
def test_a_file_nested_too_deeply_is_named_in_one_line(home: Path, project: Path, layer: str, depth: int) -> None:
    # 100 000 levels made json.loads raise RecursionError: a traceback, and exit 1.
    path = {"user": user_file(home), "project": project_file(project), "local": local_file(project)}[layer]
    path.write_text('{"plugins": {"x": {"deep": ' + "[" * depth + "]" * depth + "}}}", encoding="utf-8")

    line = load_error(home, project)

    assert line == f"{path} is nested too deeply (more than 128 levels): fix the file or remove it"


def test_a_file_that_is_not_json_names_the_file_and_line(home: Path, project: Path) -> None:
    path = project_file(project)
    path.write_text('{\n  "model": "m",\n  "provider": \n}\n', encoding="utf-8")

    line = load_error(home, project)

    assert line == (f"{path} is not valid JSON (line 4, column 1: Expecting value): fix the file or remove it")


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (
            '{\n  "model": "m",\n  "maxTokens": true\n}',
            "maxTokens in {file} (line 3) is true: expected a positive whole number",
        ),
        (
            '{"contextBudget": 0}',
            "contextBudget in {file} (line 1) is the number 0: expected a positive whole number",
        ),
        (
            '{\n  "provider": 3\n}',
            "provider in {file} (line 2) is the number 3: expected a string (a provider id)",
        ),
        (
            '{\n  "permissions": {\n    "allow": "read"\n  }\n}',
            'permissions.allow in {file} (line 3) is the string "read": expected a list of tool rules (strings)',
        ),
        (
            '{\n  "permissions": {\n    "deny": [\n      "a",\n      7\n    ]\n  }\n}',
            "permissions.deny[1] in {file} (line 5) is the number 7: expected a tool rule (a string)",
        ),
        (
            '{"permissions": []}',
            "permissions in {file} (line 1) is a list: expected an object with allow, ask and deny lists",
        ),
        (
            '{\n  "deadlines": {\n    "initialize": 1,\n    "tool/call": -1\n  }\n}',
            "deadlines.tool/call in {file} (line 4) is the number -1: expected a positive number of seconds",
        ),
        (
            '{\n  "deadlines": {"hook/decide": "soon"}\n}',
            'deadlines.hook/decide in {file} (line 2) is the string "soon": expected a positive number of seconds',
        ),
        (
            '{\n  "plugins": {\n    "wordcount": "on"\n  }\n}',
            'plugins.wordcount in {file} (line 3) is the string "on": expected an object (the plugin\'s settings)',
        ),
        (
            '{\n  "hooks": {"failClosed": "zguard"}\n}',
            'hooks.failClosed in {file} (line 2) is the string "zguard": expected a list of plugin names (strings)',
        ),
        (
            '{\n  "hooks": {\n    "failClosed": [\n      1\n    ]\n  }\n}',
            "hooks.failClosed[0] in {file} (line 4) is the number 1: expected a plugin name (a string)",
        ),
        (
            '{"hooks": ["zguard"]}',
            "hooks in {file} (line 1) is a list: expected an object with a failClosed list",
        ),
        (
            '\n\n["read"]',
            "{file} (line 3) holds a list: expected a JSON object",
        ),
        (
            '{\n  "checkpoints": {\n    "maxBytes": 0\n  }\n}',
            "checkpoints.maxBytes in {file} (line 3) is the number 0: expected a positive whole number of bytes"
            " (what every checkpoint may keep)",
        ),
    ],
)
def test_a_key_of_the_wrong_type_names_the_file_line_and_key(
    home: Path, project: Path, text: str, expected: str
) -> None:
    path = local_file(project)
    path.write_text(text, encoding="utf-8")

    assert load_error(home, project) == expected.format(file=path)


def test_a_repeated_key_is_reported_where_it_last_appears(home: Path, project: Path) -> None:
    path = user_file(home)
    path.write_text('{\n  "model": "a",\n  "model": 1\n}', encoding="utf-8")

    assert load_error(home, project) == (f"model in {path} (line 3) is the number 1: expected a string (a model name)")


def test_a_key_is_found_by_its_place_not_by_an_earlier_key_of_the_same_name(home: Path, project: Path) -> None:
    path = user_file(home)
    path.write_text(
        '{\n  "plugins": {"x": {"allow": 1}},\n  "permissions": {\n    "allow": 2\n  }\n}',
        encoding="utf-8",
    )

    assert load_error(home, project).startswith(f"permissions.allow in {path} (line 4) ")


def test_a_bad_earlier_layer_is_not_excused_by_a_later_one(home: Path, project: Path) -> None:
    write(user_file(home), {"maxTokens": "lots"})
    write(local_file(project), {"maxTokens": 10})

    assert load_error(home, project).startswith(f"maxTokens in {user_file(home)} (line 2)")


def test_a_bad_override_names_the_command_line(home: Path, project: Path) -> None:
    line = load_error(home, project, overrides={"permissions": {"allow": "read"}})

    assert line == (
        'permissions.allow from the command line is the string "read": expected a list of tool rules (strings)'
    )


def test_a_long_wrong_string_is_shortened(home: Path, project: Path) -> None:
    write(user_file(home), {"maxTokens": "x" * 100})

    assert '"' + "x" * 40 + '..."' in load_error(home, project)


def test_a_file_that_is_not_utf8_is_a_settings_error(home: Path, project: Path) -> None:
    user_file(home).write_bytes(b'{"model": "\xff"}')

    assert load_error(home, project) == (f"{user_file(home)} is not UTF-8 text: save it as UTF-8 JSON")


def test_an_unreadable_settings_path_is_a_settings_error(home: Path, project: Path) -> None:
    user_file(home).mkdir()

    assert load_error(home, project) == (
        f"{user_file(home)} is a directory, not a regular file: put a JSON file there, or remove it"
    )


# --- where things live ---------------------------------------------------------------


def test_bingo_home_prefers_the_environment_variable(tmp_path: Path) -> None:
    environ = {"BINGO_HOME": str(tmp_path / "bh"), "HOME": str(tmp_path / "h")}

    assert bingo_home(environ) == tmp_path / "bh"


def test_bingo_home_defaults_to_dot_bingo_in_home(tmp_path: Path) -> None:
    assert bingo_home({"HOME": str(tmp_path)}) == tmp_path / ".bingo"


def test_an_empty_bingo_home_variable_is_not_used(tmp_path: Path) -> None:
    assert bingo_home({"BINGO_HOME": "", "HOME": str(tmp_path)}) == tmp_path / ".bingo"


def test_the_project_is_the_nearest_directory_with_git(tmp_path: Path) -> None:
    (tmp_path / "outer" / ".git").mkdir(parents=True)
    (tmp_path / "outer" / "inner" / ".git").mkdir(parents=True)
    cwd = tmp_path / "outer" / "inner" / "src" / "deep"
    cwd.mkdir(parents=True)

    assert find_project(cwd, tmp_path / "me") == (tmp_path / "outer" / "inner").resolve()


def test_a_git_file_marks_a_project_as_a_worktree_does(tmp_path: Path) -> None:
    (tmp_path / "wt").mkdir()
    (tmp_path / "wt" / ".git").write_text("gitdir: elsewhere\n", encoding="utf-8")

    assert find_project(tmp_path / "wt", tmp_path / "me") == (tmp_path / "wt").resolve()


def test_a_bingo_directory_marks_a_project(tmp_path: Path) -> None:
    (tmp_path / "repo" / ".bingo").mkdir(parents=True)
    (tmp_path / "repo" / "sub").mkdir()

    assert find_project(tmp_path / "repo" / "sub", tmp_path / "me") == (tmp_path / "repo").resolve()


def test_a_bingo_file_does_not_mark_a_project(tmp_path: Path) -> None:
    (tmp_path / "a" / ".git").mkdir(parents=True)
    (tmp_path / "a" / "b").mkdir()
    (tmp_path / "a" / "b" / ".bingo").write_text("", encoding="utf-8")

    assert find_project(tmp_path / "a" / "b", tmp_path / "me") == (tmp_path / "a").resolve()


def test_home_is_never_the_project(tmp_path: Path) -> None:
    user_home = tmp_path / "me"
    (user_home / ".bingo").mkdir(parents=True)
    (user_home / ".git").mkdir()
    cwd = user_home / "notes"
    cwd.mkdir()

    assert find_project(cwd, user_home) == cwd.resolve()


def test_above_home_still_counts(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    user_home = tmp_path / "me"
    (user_home / ".bingo").mkdir(parents=True)

    assert find_project(user_home, user_home) == tmp_path.resolve()


def test_without_a_marker_the_working_directory_is_the_project(tmp_path: Path) -> None:
    cwd = tmp_path / "loose"
    cwd.mkdir()

    if any((up / ".git").exists() or (up / ".bingo").is_dir() for up in cwd.resolve().parents):
        pytest.skip("a directory above the temporary directory marks a project")

    assert find_project(cwd, tmp_path / "me") == cwd.resolve()


def test_fail_closed_is_read_from_the_users_own_settings_only(home: Path, project: Path) -> None:
    write(user_file(home), {"hooks": {"failClosed": ["zguard", "zguard", "other"]}})
    write(project_file(project), {"hooks": {"failClosed": ["theirs"]}})
    write(local_file(project), {"hooks": {"failClosed": ["mine-here"]}})

    loaded = load_settings(
        project_trusted=True, home=home, project=project, overrides={"hooks": {"failClosed": ["flag"]}}
    )

    assert loaded.fail_closed == frozenset({"zguard", "other"})


def test_without_a_user_file_nothing_fails_closed(home: Path, project: Path) -> None:
    write(project_file(project), {"hooks": {"failClosed": ["theirs"]}})

    assert load_settings(project_trusted=True, home=home, project=project).fail_closed == frozenset()


# --- unknown keys are named ----------------------------------------------------------


def test_an_unknown_key_is_named_with_the_closest_known_one(home: Path, project: Path) -> None:
    write(user_file(home), {"permissions": {"dney": ["read"]}, "permisions": {}, "deadlines": {"tool/cal": 3}})

    loaded = load_settings(project_trusted=True, home=home, project=project)

    where = str(user_file(home))
    assert loaded.unknown == (
        f"{where}: unknown key permissions.dney (did you mean permissions.deny?)",
        f"{where}: unknown key permisions (did you mean permissions?)",
        f"{where}: unknown key deadlines.tool/cal (did you mean deadlines.tool/call?)",
    )
    assert loaded.permissions.deny == ()


def test_an_unknown_key_with_nothing_close_is_named_alone(home: Path, project: Path) -> None:
    write(user_file(home), {"futureKey": 1, "plugins": {"wordcount": {"anything": 1}}})

    loaded = load_settings(project_trusted=True, home=home, project=project)

    assert loaded.unknown == (f"{user_file(home)}: unknown key futureKey",)


def test_an_untrusted_projects_unknown_keys_are_named_too(home: Path, project: Path) -> None:
    write(project_file(project), {"permissions": {"dney": ["bash"]}})

    loaded = load_settings(project_trusted=False, home=home, project=project)

    assert loaded.unknown == (
        f"{project_file(project)}: unknown key permissions.dney (did you mean permissions.deny?)",
    )


def test_known_keys_are_not_named(home: Path, project: Path) -> None:
    write(
        user_file(home),
        {"model": "m", "permissions": {"deny": ["x"]}, "hooks": {"failClosed": []}, "deadlines": {"tool/call": 3}},
    )

    assert load_settings(project_trusted=True, home=home, project=project).unknown == ()
