"""A plugin that dies in the middle of a call is said once on stderr (issue 26): the notice
that it stopped quotes its last words, and the failed call's line says how it ended without
quoting them again. Through the real binary, with the scripted model calling the fault zoo's
`node-crash`, which writes a Node crash to stderr (its error line distinctive) and exits 1 on
`tool/call`; and with the zoo's `dies-streaming` as the model, which exits in the middle of
`provider/stream`."""

from __future__ import annotations

from pathlib import Path

from tests.e2e._bingo import no_traceback
from tests.e2e._zoo import call, fault, no_leftovers, plugin_notices, reads_back, zoo

WORDS = "Error: Cannot find module 'left-pad'"
"""node-crash's distinctive stderr line: the one the notice quotes."""


def test_a_plugin_that_dies_mid_call_has_its_last_words_said_once(tmp_path: Path) -> None:
    box = zoo(tmp_path, "node-crash", steps=[call("z1", "plugin__node-crash__poke")])
    with fault("node-crash"):
        result = box.run("-p", "go")
        assert result.returncode == 0 and no_traceback(result), result.stderr
        assert result.stderr.count(WORDS) == 1, result.stderr
        [notice] = plugin_notices(result.stderr, "node-crash")
        assert WORDS in notice, notice
        [failed] = [line for line in result.stderr.splitlines() if line.startswith("✗ plugin__node-crash__poke")]
        assert "plugin node-crash exited with code 1" in failed, failed
        reads_back(box)
        no_leftovers(box)


LAST = "zoo: the model process fell over"
"""dies-streaming's last stderr line, written as it exits in the middle of `provider/stream`."""


def test_a_provider_plugin_that_dies_mid_stream_has_its_last_words_said_once(tmp_path: Path) -> None:
    box = zoo(tmp_path, "dies-streaming", provider="plugin__dies-streaming__model")
    with fault("dies-streaming"):
        result = box.run("-p", "go")
        assert result.returncode == 1 and no_traceback(result), result.stderr
        assert result.stderr.count(LAST) == 1, result.stderr
        [notice] = plugin_notices(result.stderr, "dies-streaming")
        assert LAST in notice, notice
        failed = result.stderr.splitlines()[-1]  # the turn's failure: how the model call ended
        assert failed.startswith("bingo: plugin dies-streaming exited with code 5"), result.stderr
        reads_back(box)
        no_leftovers(box)
