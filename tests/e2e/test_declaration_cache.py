"""The handshake-declaration cache, black-box (issue 6): a run whose plugins' answers are
cached starts only the plugins it uses, `/plugins` says which are idle, and a declaration
that changed behind the cache's back is corrected at the plugin's first use, with one notice."""

from __future__ import annotations

import json
import textwrap
from pathlib import Path

from tests.e2e._bingo import EXAMPLES, TEST_PLUGINS, Sandbox, no_traceback
from tests.e2e._scripted import notices

# A plugin that records each start in its data directory and declares what its arguments
# and the environment say: a command named by $<NAME>_COMMAND (default `<name>-cmd`) and,
# by argument, a hook at one decision point.
_PLUGIN = textwrap.dedent(
    """
    import json, os, sys
    NAME, HOOK = sys.argv[1], sys.argv[2]
    def send(message):
        sys.stdout.write(json.dumps(dict(message, jsonrpc="2.0")) + "\\n")
        sys.stdout.flush()
    for line in sys.stdin:
        message = json.loads(line)
        method, params = message.get("method"), message.get("params")
        if method == "initialize":
            data_dir = params["env"]["dataDir"]
            os.makedirs(data_dir, exist_ok=True)
            with open(os.path.join(data_dir, "starts.txt"), "a") as starts:
                starts.write(str(os.getpid()) + "\\n")
            command = os.environ.get(NAME.upper() + "_COMMAND", NAME + "-cmd")
            result = {"protocol": 5, "name": NAME, "version": "1.0", "commands": [{"name": command}]}
            if HOOK != "none":
                site, point = HOOK.split(".")
                result["hooks"] = [{"name": "watch", "site": site, "points": [point]}]
            send({"id": message["id"], "result": result})
        elif method == "command/run":
            send({"id": message["id"], "result": {"outcome": {"kind": "text", "text": "ran " + params["name"]}}})
        elif method == "hook/decide":
            send({"id": message["id"], "result": {"outcome": "continue"}})
    """
)


def _plugin(box: Sandbox, name: str, hook: str = "none") -> None:
    root = box.bingo_home / "plugins" / name
    root.mkdir(parents=True)
    (root / "main.py").write_text(_PLUGIN, encoding="utf-8")
    manifest = {
        "name": name,
        "version": "1.0",
        "entry": {"command": "python3", "args": ["${PLUGIN_ROOT}/main.py", name, hook]},
    }
    (root / "plugin.json").write_text(json.dumps(manifest), encoding="utf-8")


def _starts(box: Sandbox, name: str) -> int:
    path = box.bingo_home / "data" / "plugins" / name / "starts.txt"
    return len(path.read_text().split()) if path.exists() else 0


def _spawns(box: Sandbox, name: str) -> int:
    """How often bingo started plugin `name` (its log has a line for each start)."""
    log = box.logs / f"plugin-{name}.log"
    return log.read_text(encoding="utf-8").count("] starting ") if log.exists() else 0


def _sandbox(tmp_path: Path) -> Sandbox:
    box = Sandbox(tmp_path)
    box.install(EXAMPLES / "wordcount")
    (box.project / "notes.txt").write_text("the quick brown fox\n", encoding="utf-8")
    return box


def test_on_a_warm_cache_help_and_tools_start_no_plugin(tmp_path: Path) -> None:
    box = _sandbox(tmp_path)
    box.install(TEST_PLUGINS / "renamable")
    cold = box.run("-p", "/help")
    assert cold.returncode == 0, cold.stderr
    assert (_spawns(box, "wordcount"), _starts(box, "renamable")) == (1, 1)
    warm = box.run("-p", "/help")
    assert warm.returncode == 0, warm.stderr
    assert warm.stdout == cold.stdout and warm.stderr == ""
    tools = box.run("-p", "/tools")
    assert "plugin__wordcount__count" in tools.stdout and "plugin__renamable__fetch.page" in tools.stdout, tools.stdout
    assert (_spawns(box, "wordcount"), _starts(box, "renamable")) == (1, 1)


def test_a_command_on_a_warm_cache_starts_its_plugin_and_the_command_hooks_only(tmp_path: Path) -> None:
    box = _sandbox(tmp_path)
    box.install(TEST_PLUGINS / "renamable")
    _plugin(box, "gate", "command.before")
    _plugin(box, "guard", "tool.before")
    _plugin(box, "prompter", "prompt.submit")
    assert box.run("-p", "/help").returncode == 0
    result = box.run("-p", "/wordcount notes.txt")
    assert result.returncode == 0, result.stderr
    assert "words           4" in result.stdout and result.stderr == ""
    assert _spawns(box, "wordcount") == 2
    starts = {name: _starts(box, name) for name in ("gate", "guard", "prompter", "renamable")}
    assert starts == {"gate": 2, "guard": 1, "prompter": 1, "renamable": 1}


def test_plugins_shows_a_plugin_declared_from_the_cache_as_idle(tmp_path: Path) -> None:
    box = _sandbox(tmp_path)
    cold = box.run("-p", "/plugins")
    assert "running" in cold.stdout
    warm = box.run("-p", "/plugins")
    assert warm.returncode == 0, warm.stderr
    [row] = [line for line in warm.stdout.splitlines() if line.startswith("wordcount ")]
    assert "idle: not started yet" in row
    assert "tool plugin__wordcount__count, command /wordcount" in row


def test_an_edited_plugin_is_started_and_asked_again(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    target = box.install(TEST_PLUGINS / "renamable")
    box.run("-p", "/help")
    box.run("-p", "/help")
    assert _starts(box, "renamable") == 1
    with (target / "main.py").open("a", encoding="utf-8") as script:
        script.write("# edited\n")
    box.run("-p", "/help")
    assert _starts(box, "renamable") == 2


def test_a_changed_settings_slice_asks_the_plugin_again(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "renamable")
    box.run("-p", "/help")
    box.settings({"plugins": {"renamable": {"mode": "new"}}})
    box.run("-p", "/help")
    assert _starts(box, "renamable") == 2


def test_a_declaration_changed_behind_the_caches_back_is_corrected_at_first_use(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    _plugin(box, "shifty")
    assert box.run("-p", "/help").returncode == 0
    # The environment is not part of the key: the cache still says /shifty-cmd.
    moved = {"SHIFTY_COMMAND": "moved"}
    result = box.run("-p", "/shifty-cmd", env=moved)
    assert result.returncode == 0, result.stderr
    assert result.stdout == "ran shifty-cmd\n"
    assert notices(result.stderr, "shifty") == [
        "shifty: declares other contributions than the ones registered for it; what it declares now is registered"
    ]
    assert no_traceback(result)
    # The cache now holds what the plugin said: the next run knows /moved without starting it.
    after = box.run("-p", "/help", env=moved)
    assert "/moved" in after.stdout and "/shifty-cmd" not in after.stdout
    assert after.stderr == ""
    assert _starts(box, "shifty") == 2
