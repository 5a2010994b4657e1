"""Deep JSON is a bad input like any other (issue 12, item 2; INTERFACE.md §8). JSON nested
100 000 deep made msgspec and the stdlib's json raise RecursionError: on the wire it killed
the read loop (every call then failed as closed by the host), in an untrusted project's
plugin.json it made every command fail with an internal error, and in a settings file it
printed a traceback. Now, through the real binary:

  - a line nested too deeply is a bad line: logged, one notice, the connection goes on;
  - an answer whose result is nested too deeply fails that call as a bad answer, once;
  - a manifest nested too deeply refuses its plugin, with the reason in `/plugins`, and
    `/help` and `--trust` work, trusted or not;
  - a settings file nested too deeply is exit 2 and one line naming the file.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.e2e._bingo import EXAMPLES, Sandbox, no_traceback
from tests.e2e._zoo import (
    COUNTED,
    call,
    data_dir,
    fault,
    no_leftovers,
    plugin_notices,
    tool_results,
    zoo,
    zoo_turn,
)

DEPTH = 100_000
NESTED = "[" * DEPTH + "]" * DEPTH
"""What the issue saw crash bingo: 100 000 nested arrays (200 kB)."""
TOO_DEEP = "nested too deeply (more than 128 levels)"
STRAY = "plugin {name} printed something that is not part of the protocol on its output; bingo ignored it (see {log})"


def _log(box: Sandbox, name: str) -> Path:
    return box.logs / f"plugin-{name}.log"


def _started(box: Sandbox, name: str) -> int:
    """How many processes of the zoo plugin `name` were started."""
    return len((data_dir(box, name) / "pids.txt").read_text(encoding="utf-8").split())


def test_a_line_nested_100_000_deep_is_a_bad_line_with_one_notice_and_the_connection_goes_on(tmp_path: Path) -> None:
    steps = [call("z1", "plugin__deep-line__poke"), call("z2", "plugin__deep-line__poke")]
    box = zoo(tmp_path, "deep-line", steps=steps)
    with fault("deep-line"):
        notices, results = zoo_turn(box, "deep-line")
        assert notices == ["deep-line: " + STRAY.format(name="deep-line", log=_log(box, "deep-line"))]
        # Both calls answered by the one process: its connection outlived the line.
        assert results["z1"] == "poked" and results["z2"] == "poked"
        assert _started(box, "deep-line") == 1
        log = _log(box, "deep-line").read_text(encoding="utf-8", errors="replace")
        assert f"stdout line that is not JSON-RPC ({TOO_DEEP})" in log


def test_a_result_nested_100_000_deep_fails_that_call_as_a_bad_answer_once(tmp_path: Path) -> None:
    steps = [call("z1", "plugin__deep-answer__poke"), call("z2", "plugin__deep-answer__poke")]
    box = zoo(tmp_path, "deep-answer", steps=steps)
    with fault("deep-answer"):
        notices, results = zoo_turn(box, "deep-answer")
        said = f"plugin deep-answer answered tool/call with a result {TOO_DEEP}"
        assert notices == [f"deep-answer: tool poke: {said}: log: {_log(box, 'deep-answer')}"]
        assert said in results["z1"]
        assert results["z2"] == "poked"
        assert _started(box, "deep-answer") == 1


def _deep_project_plugin(tmp_path: Path) -> tuple[Sandbox, Path]:
    box = Sandbox(tmp_path)
    box.install(EXAMPLES / "wordcount")
    manifest = box.project / ".bingo" / "plugins" / "deep" / "plugin.json"
    manifest.parent.mkdir(parents=True)
    manifest.write_text(
        '{"name": "deep", "version": "0.1.0", "entry": {"command": "python3"}, "config": ' + NESTED + "}",
        encoding="utf-8",
    )
    return box, manifest


def test_a_manifest_nested_100_000_deep_in_an_untrusted_project_breaks_nothing(tmp_path: Path) -> None:
    box, manifest = _deep_project_plugin(tmp_path)
    untrusted = box.run("-p", "/help")
    assert untrusted.returncode == 0, untrusted.stderr
    assert no_traceback(untrusted) and "internal error" not in untrusted.stderr
    assert "/wordcount" in untrusted.stdout
    # Untrusted, it is left out before anyone reads it: the one line naming it is trust's.
    [notice] = [line for line in untrusted.stderr.splitlines() if "deep" in line]
    assert notice.startswith(
        f"bingo: {box.project} is not a trusted project, so bingo left out what it brings: plugins deep;"
    )

    trusted = box.run("--trust")
    assert trusted.returncode == 0, trusted.stderr
    assert trusted.stdout == f"trusted {box.project} as it is now: plugin deep\n"

    refused = f"deep: refused: {manifest} is {TOO_DEEP}: see docs/plugins.md, section 'The manifest'"
    again = box.run("-p", "/help")
    assert again.returncode == 0, again.stderr
    assert "/wordcount" in again.stdout
    assert [line for line in again.stderr.splitlines() if "deep" in line] == [refused]
    plugins = box.run("-p", "/plugins")
    assert plugins.returncode == 0, plugins.stderr
    [row] = [line for line in plugins.stdout.splitlines() if line.startswith("deep ")]
    assert f"refused: {manifest} is {TOO_DEEP}" in row
    assert no_traceback(again) and no_traceback(plugins)


@pytest.mark.parametrize("layer", ["user", "project"])
def test_a_settings_file_nested_100_000_deep_is_exit_2_and_one_line_naming_it(tmp_path: Path, layer: str) -> None:
    box = Sandbox(tmp_path)
    path = box.bingo_home / "settings.json" if layer == "user" else box.project / ".bingo" / "settings.json"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text('{"plugins": {"x": ' + NESTED + "}}", encoding="utf-8")
    result = box.run("-p", "/help")
    assert result.returncode == 2
    assert result.stderr == f"bingo: {path} is {TOO_DEEP}: fix the file or remove it\n"
    assert result.stdout == ""


def test_a_handshake_nested_too_deeply_refuses_that_plugin_and_the_rest_works(tmp_path: Path) -> None:
    box = zoo(tmp_path, "deep-handshake")
    with fault("deep-handshake"):
        result = box.run("-p", "go")
        assert result.returncode == 0, result.stderr
        assert no_traceback(result)
        assert result.stdout.endswith("\ndone.\n")
        assert tool_results(box)["wc"] == COUNTED
        [notice] = plugin_notices(result.stderr, "deep-handshake")
        assert TOO_DEEP in notice
        no_leftovers(box)
