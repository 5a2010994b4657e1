"""The notices a plugin can raise are bounded (issue 12, item 3; INTERFACE.md §8): past a
burst and a rate, a plugin's notices go to bingo's log only, and one line at the end of the
turn says how many; the session keeps no more of them than were shown. 20 000 `bingo.host
notice` calls in one tool call were 20 000 stderr lines and 20 000 frames (_zoo.py)."""

from __future__ import annotations

import math
import re
import time
from pathlib import Path

from bingo.kernel.frames import NoticeFrame
from bingo.kernel.notices import NOTICE_BURST, NOTICES_PER_SECOND
from bingo.store import SessionStore
from tests.e2e._zoo import COUNTED, call, fault, no_leftovers, plugin_notices, reads_back, tool_results, zoo
from tests.support import summary

SENT = 20_001
"""Notices the zoo's notice-flood raises in its call: 20 000, then the one it waits on."""


def test_twenty_thousand_notices_are_a_burst_a_trickle_and_one_line_saying_how_many_more(tmp_path: Path) -> None:
    box = zoo(tmp_path, "notice-flood", steps=[call("z1", "plugin__notice-flood__poke")])
    log = box.logs / "bingo.log"
    with fault("notice-flood"):
        began = time.monotonic()
        result = box.run("-p", "go")
        took = time.monotonic() - began
        assert result.returncode == 0, result.stderr
        results = tool_results(box)
        assert results["z1"] == "poked" and results["wc"] == COUNTED

        *shown, last = plugin_notices(result.stderr, "notice-flood")
        said = re.fullmatch(r"notice-flood: (\d+) more notices were left out here; they are in (.+)", last)
        assert said is not None and said[2] == str(log), last
        left_out = int(said[1])
        summary.record("zoo", "notices shown of 20 001 raised in one call", len(shown))
        # A burst, then at most the rate over the whole run (which the flood is part of).
        assert len(shown) <= NOTICE_BURST + math.ceil(NOTICES_PER_SECOND * took)
        assert shown[:NOTICE_BURST] == [f"notice-flood: zoo: notice {n}" for n in range(NOTICE_BURST)]
        assert len(shown) + left_out == SENT
        # What was left out is in the log, the latest kept (a flood this size rotates it).
        logged = [
            line.partition("notice left out: ")[2]
            for path in (log.with_name("bingo.log.1"), log)
            if path.exists()
            for line in path.read_text(encoding="utf-8").splitlines()
            if "notice left out: notice-flood: " in line
        ]
        assert 0 < len(logged) <= left_out
        assert "notice-flood: zoo: the last notice" in (shown[-1], logged[-1])

        with SessionStore(box.bingo_home / "data" / "sessions.db") as store:
            latest = store.latest(str(box.project))
            assert latest is not None
            kept = [
                f.notice
                for f in store.frames(latest)
                if isinstance(f, NoticeFrame) and f.notice.source == "notice-flood"
            ]
        summary.record("zoo", "notice frames kept of 20 001 raised in one call", len(kept))
        assert [f"notice-flood: {notice.message}" for notice in kept] == [*shown, last]
        reads_back(box)
        no_leftovers(box)
