"""Which commands are package runners (sandbox/_launcher.py, ADR-0036): by the command's base
name, or a package manager's command with its subcommand."""

from __future__ import annotations

from pathlib import Path

import pytest

from bingo.sandbox import launcher, launcher_grants


@pytest.mark.parametrize(
    ("argv", "said", "manager"),
    [
        (["npx", "-y", "@modelcontextprotocol/server-memory"], "npx", "npm"),
        (["/usr/local/bin/npx", "x"], "npx", "npm"),
        (["npx.cmd", "x"], "npx", "npm"),
        (["npm", "exec", "--yes", "x"], "npm exec", "npm"),
        (["npm", "--yes", "x", "pkg"], "npm x", "npm"),
        (["pnpx", "x"], "pnpx", "pnpm"),
        (["pnpm", "dlx", "x"], "pnpm dlx", "pnpm"),
        (["yarn", "dlx", "x"], "yarn dlx", "yarn"),
        (["bunx", "x"], "bunx", "bun"),
        (["bun", "x", "pkg"], "bun x", "bun"),
        (["uvx", "mcp-server-time"], "uvx", "uv"),
        (["uv", "tool", "run", "mcp-server-time"], "uv tool run", "uv"),
        (["pipx", "run", "x"], "pipx run", "pipx"),
    ],
)
def test_a_package_runner_is_known_by_its_name_or_its_subcommand(argv: list[str], said: str, manager: str) -> None:
    found = launcher(argv)
    assert found is not None and (found.said, found.manager) == (said, manager)


@pytest.mark.parametrize(
    "argv",
    [
        [],
        ["node", "server.js"],
        ["npm", "install"],
        ["npm", "run", "serve"],
        ["yarn", "start"],
        ["uv", "run", "server.py"],
        ["pipx", "install", "x"],
        ["python3", "-m", "npx"],
    ],
)
def test_any_other_command_is_none(argv: list[str]) -> None:
    assert launcher(argv) is None


def test_yarn_dlx_gets_yarns_cache_and_registry(tmp_path: Path) -> None:
    grants = launcher_grants(["yarn", "dlx", "x"], {}, tmp_path)
    assert grants is not None and "repo.yarnpkg.com" in grants.hosts
    assert (tmp_path / ".yarn" / "berry").resolve() in grants.write
    assert launcher_grants(["npm", "install"], {}, tmp_path) is None
