"""A run that may call the model's tools starts the declared, trusted plugins and MCP servers
that have tools as it starts (issue 27 item 4, ADR-0043), so the model's first call does not
wait for a cold start; a slash command still starts only what it uses (ADR-0012)."""

from __future__ import annotations

from pathlib import Path

from tests.e2e._bingo import EXAMPLES, Sandbox
from tests.e2e._mcp import python_server
from tests.e2e._scripted import text, use_scripted_model


def _spawns(box: Sandbox, name: str) -> int:
    """How often bingo started plugin `name` (its log has a line for each start)."""
    log = box.logs / f"plugin-{name}.log"
    return log.read_text(encoding="utf-8").count("] starting ") if log.exists() else 0


def test_a_prompt_on_a_warm_cache_starts_the_tool_plugins_it_never_called(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(EXAMPLES / "wordcount")
    python_server(box, "mcp-sdk")
    logs = [box.logs / f"plugin-{name}.log" for name in ("wordcount", "mcp-sdk")]
    # The model answers once both plugins have started (a plugin's log begins with its start
    # line): a run that is over before a begun plugin spawned rightly never spawns it, so an
    # answer at once would leave the second start to the machine's load. A run that begins
    # neither leaves the model waiting its bound, then counts no start.
    use_scripted_model(box, [[{"until": str(log)} for log in logs] + [text("no tools needed")]])
    assert box.run("-p", "/help").returncode == 0  # the cache is warm from here on
    assert box.run("-p", "/help").returncode == 0
    assert (_spawns(box, "wordcount"), _spawns(box, "mcp-sdk")) == (1, 1)  # a command starts nothing else
    for log in logs:
        log.unlink()
    result = box.run("-p", "hi")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "no tools needed\n" and result.stderr == ""
    assert (_spawns(box, "wordcount"), _spawns(box, "mcp-sdk")) == (1, 1)
