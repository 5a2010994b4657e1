"""Compaction when it is needed, through the real binary: a long scripted session with a
small `contextWindow` compacts itself before the request that would pass 80 % of it — the
model is asked for a summary, its later requests carry the summary and not the old turns,
the notice is on stderr and the session's frames record it; `/compact` by hand says what it
did, and that there is nothing to compact in an empty session."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

from tests.e2e._bingo import Sandbox, no_traceback
from tests.e2e._scripted import model_requests, notices, text, use_scripted_model

_WINDOW = 6_000
"""Tokens: each prompt below is a quarter of it, so the third or fourth turn passes 80 %."""

_SUMMARY = "SUMMARY-{}: the person sent marked prompts; nothing is left to do."
"""What the model answers when asked for a summary (numbered by run: a run that is not asked
answers it to the turn instead, and it must not be mistaken for the summary)."""
_ASKED = "Write that summary now"


def _prompt(n: int) -> str:
    return f"marker-{n} " + "word " * (_WINDOW // 5 * 4 // 5)  # about a quarter of the window


def _texts(request: dict[str, Any]) -> str:
    return json.dumps(request["request"]["messages"])


def _frames(box: Sandbox, kind: str) -> list[dict[str, Any]]:
    db = sqlite3.connect(box.bingo_home / "data" / "sessions.db")
    return [json.loads(data) for (data,) in db.execute("SELECT data FROM frames WHERE kind = ? ORDER BY seq", (kind,))]


def test_a_long_session_compacts_itself_before_the_request_that_would_not_fit(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    compacted_in: int | None = None
    stderr = ""
    for n in range(1, 8):
        # Each run's model answers a summary request first if one comes, then the turn.
        use_scripted_model(box, [[text(_SUMMARY.format(n))], [text(f"answer {n}")]], contextWindow=_WINDOW)
        result = box.run("-p", *(["-c"] if n > 1 else []), _prompt(n))
        assert result.returncode == 0, result.stderr
        assert no_traceback(result)
        if "compacted by" in result.stderr:
            compacted_in, stderr = n, result.stderr
            break
    assert compacted_in is not None and compacted_in >= 2, "the session never compacted itself"
    summary = _SUMMARY.format(compacted_in)

    [line] = [line for line in notices(stderr, "bingo") if "compacted by" in line]
    assert line.startswith("bingo: the conversation (about ")
    assert (
        f"passed its budget of {_WINDOW * 8 // 10} tokens (80% of the model's {_WINDOW}-token window): compacted by summary to about "
        in line
    )

    requests = model_requests(box)
    summary_request, turn_request = requests[-2], requests[-1]
    # The model was asked for the summary with the old turns in front of it...
    asked = _texts(summary_request)
    assert _ASKED in asked and "marker-1 " in asked
    assert summary_request["request"]["system"] == turn_request["request"]["system"]
    # ...and the turn's request carries the summary, then the latest exchange verbatim.
    sent = turn_request["request"]["messages"]
    assert summary in sent[0]["content"][0]["text"]
    for old in range(1, compacted_in):
        assert f"marker-{old} " not in _texts(turn_request)
    assert sent[-1]["content"][0]["text"] == _prompt(compacted_in)

    [frame] = _frames(box, "compaction")
    assert frame["reason"] == "overflow" and frame["by"] == "summary"
    assert summary in json.dumps(frame["compaction"])

    # The next run continues from the compacted history, not from the old turns.
    use_scripted_model(box, [[text("later")]], contextWindow=_WINDOW)
    later = box.run("-p", "-c", "and now?")
    assert later.returncode == 0, later.stderr
    carried = _texts(model_requests(box)[-1])
    assert summary in carried and "marker-1 " not in carried


def test_compact_by_hand_summarises_and_an_empty_session_has_nothing_to_compact(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    empty = box.run("-p", "/compact")
    assert empty.returncode == 0, empty.stderr
    assert empty.stdout.strip() == "nothing to compact: this session has no history yet"

    use_scripted_model(box, [[text("one")]])
    assert box.run("-p", "first").returncode == 0
    only = box.run("-p", "-c", "/compact")
    assert only.stdout.strip() == "nothing to compact: the history is only the latest exchange"
    use_scripted_model(box, [[text("two")]])
    assert box.run("-p", "-c", "second").returncode == 0

    use_scripted_model(box, [[text(_SUMMARY.format(0))]])
    manual = box.run("-p", "-c", "/compact")
    assert manual.returncode == 0, manual.stderr
    assert manual.stdout.startswith("history compacted by summary: about ")
    assert _ASKED in _texts(model_requests(box)[-1])
    [frame] = _frames(box, "compaction")
    assert frame["reason"] == "manual" and frame["by"] == "summary"


def test_trim_compacts_when_the_settings_name_it_and_asks_no_model(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    for n in range(1, 6):
        use_scripted_model(box, [[text(f"answer {n}")]], contextWindow=_WINDOW, compactor="trim")
        result = box.run("-p", *(["-c"] if n > 1 else []), _prompt(n))
        assert result.returncode == 0, result.stderr
        if "compacted by" in result.stderr:
            assert "compacted by trim to about" in result.stderr
            break
    else:
        raise AssertionError("the session never compacted itself")
    assert not any(_ASKED in _texts(r) for r in model_requests(box))
    assert [f["by"] for f in _frames(box, "compaction")] == ["trim"]
