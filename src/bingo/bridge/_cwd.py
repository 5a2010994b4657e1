"""What a plugin or server that is not the project's must not take from the project it runs in
(ADR-0050).

A plugin of the person's own layer, or of a package, runs in the project (its working
directory is bingo's), trusted or not. Some commands read what they run from their working
directory before the person's words: `npx NAME` and `npm exec` run the project's
`node_modules/.bin/NAME` when its `node_modules` has one, and read the project's `.npmrc`
(which can name another registry); `python -m NAME` and `python -c` put the working directory
first on `sys.path`, so a `NAME.py` of the project's is the one imported. A repository that
ships those would have its own code run in the person's server's place, before anybody
trusted it. So, for such a process only:
- npm's runners are given `--prefix` an empty directory of bingo's: npm looks there, not in
  the project, for `node_modules` and `.npmrc` (the command still runs in the project);
- `uv run` gets `UV_NO_PROJECT=1` (the project's `pyproject.toml` is neither synced nor run)
  and the person's own `uv.toml` as its only configuration (`UV_CONFIG_FILE`; `UV_NO_CONFIG`
  when they have none: uv reads the project's `uv.toml`, which can name another index, even
  with `--no-project`), unless its command names a directory or project of its own;
- Python gets `PYTHONSAFEPATH=1` unless it runs a script (with `-m`, `-c`, or reading
  standard input: 3.11 and later; an older one ignores it), never for a script, whose own
  directory it needs first.

A project's own plugins and `.mcp.json` servers are left as they are: they are the project's,
run once it is trusted, and may mean its `node_modules`. Not covered (named in the ADR):
`pnpm dlx`, `yarn dlx` and `bunx`, whose project settings are read from the working directory
by other means.
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

from ..sandbox import launcher

__all__ = ["not_from_the_project"]

_PYTHON = re.compile(r"python(\d+(\.\d+)?)?(\.exe)?\Z")


def not_from_the_project(argv: Sequence[str], env: Mapping[str, str], empty: Path) -> tuple[list[str], dict[str, str]]:
    """`argv` and `env` for a process that is not the project's, so that what it runs is not
    found in its working directory (the module); `empty` is a directory of bingo's that holds
    nothing, made here when missing."""
    argv, env = list(argv), dict(env)
    runner = launcher(argv)
    if runner is not None and runner.manager == "npm":
        empty.mkdir(parents=True, exist_ok=True)
        return [argv[0], f"--prefix={empty}", *argv[1:]], env
    if _PYTHON.match(os.path.basename(argv[0]) if argv else "") and not _runs_a_script(argv[1:]):
        env["PYTHONSAFEPATH"] = "1"
    if _uv_run(argv):
        _uv_off_the_project(argv, env)
    return argv, env


def _uv_off_the_project(argv: Sequence[str], env: dict[str, str]) -> None:
    """Keep `uv run` from the project's `pyproject.toml` (not synced nor run) and its `uv.toml`
    (the person's own is its only configuration), unless its command names a directory,
    project or configuration of its own."""
    given = {arg.split("=", 1)[0] for arg in argv[1:] if arg.startswith("--")}
    if not given & {"--directory", "--project", "--no-project"}:
        env["UV_NO_PROJECT"] = "1"
    own_configuration = given & {"--directory", "--project", "--config-file", "--no-config"}
    if own_configuration or "UV_CONFIG_FILE" in env or "UV_NO_CONFIG" in env:
        return
    own = _uv_config(env)
    if own is not None:
        env["UV_CONFIG_FILE"] = own
    else:
        env["UV_NO_CONFIG"] = "1"


def _uv_run(argv: Sequence[str]) -> bool:
    """Whether `argv` is `uv run` (not `uv tool run`, which reads no project's settings)."""
    if not argv or os.path.basename(argv[0]).removesuffix(".exe") != "uv" or "run" not in argv[1:]:
        return False
    return "tool" not in argv[1 : argv.index("run", 1)]


def _uv_config(env: Mapping[str, str]) -> str | None:
    """The person's own `uv.toml` (`$XDG_CONFIG_HOME/uv/uv.toml`, else `~/.config/uv/uv.toml`),
    if there is one."""
    base = env.get("XDG_CONFIG_HOME") or (os.path.join(env["HOME"], ".config") if env.get("HOME") else None)
    if base is None:
        return None
    path = os.path.join(base, "uv", "uv.toml")
    return path if os.path.isfile(path) else None


def _runs_a_script(args: Sequence[str]) -> bool:
    """Whether Python's arguments `args` name a script file (whose directory goes first on
    `sys.path`), rather than `-m`, `-c`, standard input or nothing (the working directory)."""
    words = iter(args)
    for arg in words:
        if arg in ("-X", "-W", "--check-hash-based-pycs"):
            next(words, None)  # its value
        elif arg == "-" or arg == "--":
            return False if arg == "-" else next(words, "-") != "-"
        elif not arg.startswith("-"):
            return True
        elif not arg.startswith("--"):
            for flag in arg[1:]:
                if flag in "cm":
                    return False  # the rest of the word, or the next one, is its value
                if flag in "XW":
                    if arg.endswith(flag):
                        next(words, None)
                    break
    return False
