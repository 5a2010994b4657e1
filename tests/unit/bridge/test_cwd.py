"""`bridge._cwd`: what a person's plugin is kept from finding in the project it runs in."""

from __future__ import annotations

from pathlib import Path

import pytest

from bingo.bridge._cwd import not_from_the_project


@pytest.mark.parametrize(
    ("argv", "expected"),
    [
        (["npx", "-y", "pkg"], ["npx", "--prefix=EMPTY", "-y", "pkg"]),
        (["/usr/bin/npx", "pkg", "--flag"], ["/usr/bin/npx", "--prefix=EMPTY", "pkg", "--flag"]),
        (["npm", "exec", "--", "pkg"], ["npm", "--prefix=EMPTY", "exec", "--", "pkg"]),
        (["npm", "--yes", "x", "pkg"], ["npm", "--prefix=EMPTY", "--yes", "x", "pkg"]),
        (["npm", "start"], ["npm", "start"]),  # not a package runner
        (["node", "server.js"], ["node", "server.js"]),
        (["uvx", "mcp-server-time"], ["uvx", "mcp-server-time"]),  # uv reads no project settings for it
    ],
)
def test_npms_runners_look_for_packages_and_settings_in_an_empty_directory(
    tmp_path: Path, argv: list[str], expected: list[str]
) -> None:
    empty = tmp_path / "empty"
    got, env = not_from_the_project(argv, {"PATH": "/usr/bin"}, empty)
    assert got == [word.replace("EMPTY", str(empty)) for word in expected]
    assert env == {"PATH": "/usr/bin"}
    assert empty.is_dir() == (got != argv)
    if empty.is_dir():
        assert list(empty.iterdir()) == []


@pytest.mark.parametrize(
    ("argv", "safe"),
    [
        (["python3", "-m", "server"], True),
        (["python3", "-mserver"], True),
        (["python3.12", "-Bm", "server"], True),
        (["/usr/bin/python", "-X", "importtime", "-m", "server"], True),
        (["python3", "-c", "import server"], True),
        (["python3", "-"], True),  # a program on standard input
        (["python3"], True),
        (["python3", "server.py"], False),  # the script's own directory first, as it needs
        (["python3", "-u", "-W", "ignore", "/opt/s/server.py"], False),
        (["python3", "-Ximporttime", "server.py"], False),
        (["python3", "--", "server.py"], False),
        (["pythonista", "-m", "x"], False),  # not Python
        (["node", "-m"], False),
    ],
)
def test_python_is_kept_from_putting_the_working_directory_first_unless_it_runs_a_script(
    tmp_path: Path, argv: list[str], safe: bool
) -> None:
    got, env = not_from_the_project(argv, {}, tmp_path / "empty")
    assert got == argv
    assert env == ({"PYTHONSAFEPATH": "1"} if safe else {})


@pytest.mark.parametrize(
    ("argv", "own_config", "expected"),
    [
        (["uv", "run", "server.py"], False, {"UV_NO_PROJECT": "1", "UV_NO_CONFIG": "1"}),
        (["/usr/bin/uv", "run", "--with", "x", "x"], True, {"UV_NO_PROJECT": "1", "UV_CONFIG_FILE": "OWN"}),
        (["uv", "run", "--directory", "/srv/mcp", "server.py"], True, {}),  # their own project
        (["uv", "--project=/srv/mcp", "run", "server.py"], True, {}),
        (["uv", "run", "--no-project", "x"], False, {"UV_NO_CONFIG": "1"}),
        (["uv", "run", "--config-file", "/etc/mine.toml", "x"], False, {"UV_NO_PROJECT": "1"}),
        (["uv", "tool", "run", "x"], False, {}),  # uvx: reads no project's settings
        (["uv", "pip", "list"], False, {}),
    ],
)
def test_uv_run_is_kept_from_the_projects_environment_and_uv_toml_unless_it_names_its_own(
    tmp_path: Path, argv: list[str], own_config: bool, expected: dict[str, str]
) -> None:
    home = tmp_path / "home"
    own = home / ".config" / "uv" / "uv.toml"
    if own_config:
        own.parent.mkdir(parents=True)
        own.write_text("")
    got, env = not_from_the_project(argv, {"HOME": str(home)}, tmp_path / "empty")
    assert got == argv
    assert env == {"HOME": str(home), **{k: v.replace("OWN", str(own)) for k, v in expected.items()}}
