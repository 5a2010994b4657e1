"""Names the model APIs accept, through the real binary: a plugin with a 60-character name and
a tool named `fetch.page` is offered to the model under a fitted name, the model's call under
that name reaches the plugin, and permissions, /tools and the store keep the canonical name."""

from __future__ import annotations

import json
import re
import sqlite3
from pathlib import Path
from typing import Any

import pytest

from bingo.kernel.frames import AssistantFrame, ToolCallFrame
from bingo.store import SessionStore
from bingo.wire import ToolUseBlock
from tests.e2e._bingo import TEST_PLUGINS, Sandbox, no_traceback
from tests.support.model_server import ModelServer

PROVIDERS = ["anthropic", "openai"]
PLUGIN = "fetcher-" + "x" * 52
CANONICAL = f"plugin__{PLUGIN}__fetch.page"
_API = re.compile(r"^[A-Za-z0-9_-]{1,64}$")


def _env(provider: str, server: ModelServer) -> dict[str, str]:
    if provider == "anthropic":
        return {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.url}
    return {"OPENAI_API_KEY": "test-key", "OPENAI_BASE_URL": server.url + "/v1"}


def _install_long_named(box: Sandbox) -> None:
    """The renamable test plugin, copied into the user layer under a 60-character name."""
    assert len(PLUGIN) == 60
    target = box.install(TEST_PLUGINS / "renamable", name=PLUGIN)
    manifest = json.loads((target / "plugin.json").read_text(encoding="utf-8"))
    manifest["name"] = PLUGIN
    (target / "plugin.json").write_text(json.dumps(manifest), encoding="utf-8")


def _tool_names(provider: str, body: dict[str, Any]) -> list[str]:
    if provider == "anthropic":
        return [tool["name"] for tool in body["tools"]]
    return [tool["function"]["name"] for tool in body["tools"]]


def _fitted(names: list[str]) -> str:
    """Our plugin's tool among the names the model was offered."""
    [name] = [n for n in names if n.startswith("plugin__fetcher-")]
    return name


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_long_plugin_name_and_a_dotted_tool_name_reach_the_model_fitted_and_come_back_canonical(
    tmp_path: Path, provider: str
) -> None:
    box = Sandbox(tmp_path)
    _install_long_named(box)
    # First run: learn the name the model is offered, as a model would.
    with ModelServer([[("text", "Nothing to do.")]]) as server:
        first = box.run("-p", "what can you do?", env=_env(provider, server))
        [offered] = server.bodies
    assert first.returncode == 0, first.stderr
    names = _tool_names(provider, offered)
    assert all(_API.fullmatch(name) for name in names), names
    fitted = _fitted(names)
    assert fitted != CANONICAL and len(fitted) <= 64

    # Second run: the model calls the fitted name; the rule allows the canonical one.
    replies = [[("tool", "t1", fitted, {"url": "https://example.com/a"})], [("text", "Fetched it.")]]
    with ModelServer(replies) as server:
        result = box.run("-p", "--allow", CANONICAL, "fetch the page", env=_env(provider, server))
        bodies = server.bodies
    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    assert "Fetched it." in result.stdout
    assert len(bodies) == 2
    # The same fitted name every request, and in the history sent back.
    assert _fitted(_tool_names(provider, bodies[0])) == fitted
    sent_back = json.dumps(bodies[1]["messages"])
    assert f"fetched https://example.com/a by {PLUGIN}" in sent_back
    assert fitted in sent_back and CANONICAL not in sent_back

    # The store keeps the canonical name.
    db = box.bingo_home / "data" / "sessions.db"
    [session] = [row[0] for row in sqlite3.connect(db).execute("SELECT id FROM sessions ORDER BY created")][1:]
    with SessionStore(db) as store:
        frames = store.frames(session)
    calls = [f.name for f in frames if isinstance(f, ToolCallFrame)]
    uses = [
        b.name
        for f in frames
        if isinstance(f, AssistantFrame)
        for b in f.message.content
        if isinstance(b, ToolUseBlock)
    ]
    assert calls == [CANONICAL] and uses == [CANONICAL]


def test_tools_lists_the_canonical_name(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    _install_long_named(box)
    result = box.run("-p", "/tools")
    assert result.returncode == 0, result.stderr
    assert CANONICAL in result.stdout


def test_a_deny_rule_on_the_canonical_name_refuses_the_fitted_call(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    _install_long_named(box)
    with ModelServer([[("text", "ok")]]) as server:
        box.run("-p", "hi", env=_env("anthropic", server))
        fitted = _fitted(_tool_names("anthropic", server.bodies[0]))
    box.settings({"permissions": {"allow": [CANONICAL], "deny": ["plugin__fetcher-*__fetch.page"]}})
    replies = [[("tool", "t1", fitted, {"url": "https://example.com/b"})], [("text", "Refused.")]]
    with ModelServer(replies) as server:
        result = box.run("-p", "fetch", env=_env("anthropic", server))
        bodies = server.bodies
    assert result.returncode == 0, result.stderr
    sent_back = json.dumps(bodies[1]["messages"])
    assert "fetched https://example.com/b" not in sent_back
    assert f"{CANONICAL} is denied by the rule 'plugin__fetcher-*__fetch.page' in permissions.deny" in sent_back
