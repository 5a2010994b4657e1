"""The fault zoo, part one: plugins that go wrong before or during the handshake, or declare
what they may not. Each runs beside wordcount through the real binary: wordcount still
answers in the same turn, one notice names the plugin and the fault, the session reads back
and no process is left behind (tests/e2e/_zoo.py)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tests.e2e._bingo import no_traceback
from tests.e2e._zoo import COUNTED, fault, no_leftovers, plugin_notices, reads_back, tool_results, zoo

RESULTS: dict[str, str] = {}


def _survives(tmp_path: Path, name: str, **settings: Any) -> list[str]:
    """Run one turn beside zoo plugin `name`; the notices naming it, once every check passed
    (the model's last tool results are kept in RESULTS)."""
    box = zoo(tmp_path, name, **settings)
    result = box.run("-p", "count the words in notes.txt")
    assert result.returncode == 0, result.stderr
    assert result.stdout.endswith("\ndone.\n")
    assert no_traceback(result)
    RESULTS.clear()
    RESULTS.update(tool_results(box))
    assert RESULTS["wc"] == COUNTED
    reads_back(box)
    no_leftovers(box)
    return plugin_notices(result.stderr, name)


def test_a_plugin_that_exits_during_the_handshake_costs_one_notice_with_its_last_words(tmp_path: Path) -> None:
    with fault("exit-in-handshake"):
        [notice] = _survives(tmp_path, "exit-in-handshake")
        log = tmp_path / "home" / ".bingo" / "data" / "logs" / "plugin-exit-in-handshake.log"
        assert notice == (
            "exit-in-handshake: stopped: plugin exit-in-handshake exited with code 7: its last stderr "
            f"line: 'zoo: giving up in the middle of the handshake'; log: {log}"
        )


def test_a_plugin_that_never_answers_the_handshake_is_dropped_at_its_deadline(tmp_path: Path) -> None:
    with fault("silent-handshake"):
        [notice] = _survives(tmp_path, "silent-handshake", deadlines={"initialize": 1})
        assert notice.startswith(
            "silent-handshake: stopped: did not complete its handshake within 1 s: deadlines.initialize in "
            "settings sets how long to wait: its last stderr line: 'zoo: not answering the handshake'; log: "
        )
        assert notice.endswith("plugin-silent-handshake.log")


def test_a_protocol_the_host_does_not_speak_is_refused_and_the_turn_goes_on(tmp_path: Path) -> None:
    with fault("wrong-protocol"):
        assert _survives(tmp_path, "wrong-protocol") == [
            "wrong-protocol: refused: it speaks protocol 4, but this host speaks only protocol 5"
        ]


def test_a_handshake_under_another_name_is_refused_and_the_turn_goes_on(tmp_path: Path) -> None:
    with fault("wrong-name"):
        assert _survives(tmp_path, "wrong-name") == [
            "wrong-name: refused: its handshake says it is 'someone-else', but its manifest says 'wrong-name'"
        ]


def test_a_reserved_service_key_is_refused_with_one_notice(tmp_path: Path) -> None:
    with fault("reserved-service"):
        assert _survives(tmp_path, "reserved-service") == [
            "reserved-service: service 'bingo.files' refused: keys starting 'bingo.' are reserved for the host"
        ]


def test_tools_spelled_like_a_builtin_or_another_plugins_name_cannot_take_them(tmp_path: Path) -> None:
    # `read` and `plugin__wordcount__count` are rewritten under shadow's own name, so the model
    # still reaches the built-in read and wordcount's count; a name declared twice is refused.
    (tmp_path / "project").mkdir(parents=True)
    (tmp_path / "project" / "hello.txt").write_text("hello from the built-in read\n", encoding="utf-8")
    steps = [{"tool": {"id": "r1", "name": "read", "input": {"path": "hello.txt"}}}]
    with fault("shadow"):
        notices = _survives(tmp_path, "shadow", steps=steps)
        assert notices == ["shadow: tool 'plugin__shadow__count' is already provided by shadow; this one is not used"]
        assert "hello from the built-in read" in RESULTS["r1"]
