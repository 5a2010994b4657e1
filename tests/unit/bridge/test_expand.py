"""`${VAR}` in an MCP server's declaration: what it reads, and what a project's may expand
(ADR-0028)."""

from __future__ import annotations

from bingo.bridge._expand import expand_server, expansion_problem, variables_read
from bingo.bridge.manifest import McpServer

SERVER = McpServer(
    command="${HOME}/bin/srv",
    args=["--token=${TOKEN}", "${PLUGIN_ROOT}/x", "${MODE:-fast}"],
    env={"A": "${TOKEN}"},
    headers={"Authorization": "Bearer ${KEY}"},
)


def test_every_variable_read_is_named_once_in_order_and_plugin_root_is_none() -> None:
    assert variables_read(SERVER) == ["HOME", "TOKEN", "MODE", "KEY"]


def test_listed_variables_are_expanded_and_a_default_stands_for_an_unset_one() -> None:
    expanded = expand_server(
        SERVER, {"HOME": "/h", "TOKEN": "t", "KEY": "k"}, {"HOME", "TOKEN", "MODE", "KEY"}, settings="s.json"
    )
    assert isinstance(expanded, McpServer)
    assert expanded.command == "/h/bin/srv"
    assert expanded.args == ["--token=t", "${PLUGIN_ROOT}/x", "fast"]
    assert expanded.env == {"A": "t"}
    assert expanded.headers == {"Authorization": "Bearer k"}


def test_a_variable_not_listed_leaves_the_server_out_naming_it_and_the_setting() -> None:
    said = expand_server(SERVER, {"HOME": "/h", "TOKEN": "t", "KEY": "k"}, {"HOME", "TOKEN", "MODE"}, settings="s.json")
    assert (
        said
        == 'it reads ${KEY}, which your settings do not let a project\'s MCP server read: add "KEY" to mcpVariables in s.json to let it'
    )


def test_a_user_plugin_reads_any_variable() -> None:
    assert isinstance(
        expand_server(SERVER, {"HOME": "/h", "TOKEN": "t", "KEY": "k"}, None, settings="s.json"), McpServer
    )


def test_an_unset_variable_without_a_default_leaves_the_server_out() -> None:
    said = expand_server(SERVER, {"HOME": "/h"}, None, settings="s.json")
    assert said == "it reads ${TOKEN} and ${KEY}, which are not set: set them, or give a default (${TOKEN:-...})"


def test_the_problem_is_what_was_wrong_and_its_fix_apart_as_the_refusal_joins_them() -> None:
    environ = {"HOME": "/h", "KEY": "k"}
    unlisted = expansion_problem(SERVER, environ, {"HOME"}, settings="s.json")
    assert unlisted == (
        "it reads ${TOKEN}, ${MODE} and ${KEY}, which your settings do not let a project's MCP server read",
        'add "TOKEN", "MODE", "KEY" to mcpVariables in s.json to let it',
    )
    assert unlisted is not None
    assert expand_server(SERVER, environ, {"HOME"}, settings="s.json") == ": ".join(unlisted)
    unset = expansion_problem(SERVER, environ, None, settings="s.json")
    assert unset == ("it reads ${TOKEN}, which is not set", "set it, or give a default (${TOKEN:-...})")
    assert expansion_problem(SERVER, {**environ, "TOKEN": ""}, None, settings="s.json") is None  # empty is set
