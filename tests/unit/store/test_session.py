from __future__ import annotations

import asyncio
import inspect
import itertools
import os
import re
import sqlite3
import sys
import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from bingo.kernel.errors import SessionError
from bingo.kernel.frames import (
    AssistantFrame,
    CompactionFrame,
    Frame,
    NoticeFrame,
    PromptFrame,
    ToolCallFrame,
    ToolResultFrame,
)
from bingo.store import SessionStore, new_session_id
from bingo.wire import (
    Compaction,
    ImageBlock,
    Message,
    Notice,
    TableView,
    TextBlock,
    TextPart,
    ToolOutput,
    ToolUseBlock,
)

PROJECT = "/home/someone/project"
TIMEOUT = 5.0


def _ids(*values: str) -> Callable[[], str]:
    it = iter(values)
    return lambda: next(it)


def _clock() -> Callable[[], float]:
    ticks = itertools.count(1_700_000_000)
    return lambda: float(next(ticks))


@pytest.fixture
def db(tmp_path: Path) -> Path:
    return tmp_path / "data" / "sessions.db"


@pytest.fixture
def store(db: Path) -> Iterator[SessionStore]:
    with SessionStore(db, clock=_clock()) as opened:
        yield opened


def _every_kind() -> list[Frame]:
    return [
        PromptFrame(text="count the words in notes.txt\nplease", turn=1),
        AssistantFrame(
            message=Message(
                role="assistant",
                content=[
                    TextBlock(text="Let me count."),
                    ToolUseBlock(id="call-1", name="count", input={"path": "notes.txt"}),
                ],
            ),
            turn=1,
        ),
        ToolCallFrame(call_id="call-1", name="count", input={"path": "notes.txt"}, turn=1),
        ToolResultFrame(
            call_id="call-1",
            output=ToolOutput(
                parts=[TextPart(text="12 words")],
                display=TableView(columns=["words"], rows=[[12]]),
            ),
            turn=1,
        ),
        NoticeFrame(notice=Notice(source="wordcount", message="slow disk", level="warning"), turn=1),
        CompactionFrame(
            compaction=Compaction(messages=[Message(role="user", content=[TextBlock(text="so far")])]),
            turn=2,
        ),
    ]


# --- frames ----------------------------------------------------------------------------


def test_every_frame_kind_reads_back_in_order(store: SessionStore) -> None:
    session = store.create(PROJECT)
    frames = _every_kind()
    for frame in frames:
        store.append(session, frame)
    assert store.frames(session) == frames


def test_frames_survive_closing_and_reopening_the_file(db: Path) -> None:
    with SessionStore(db) as first:
        session = first.create(PROJECT)
        for frame in _every_kind():
            first.append(session, frame)
    with SessionStore(db) as second:
        assert second.frames(session) == _every_kind()


def test_frames_of_two_sessions_do_not_mix(store: SessionStore) -> None:
    one, two = store.create(PROJECT), store.create(PROJECT)
    store.append(one, PromptFrame(text="one", turn=1))
    store.append(two, PromptFrame(text="two", turn=1))
    store.append(one, PromptFrame(text="one again", turn=2))
    assert store.frames(one) == [
        PromptFrame(text="one", turn=1),
        PromptFrame(text="one again", turn=2),
    ]
    assert store.frames(two) == [PromptFrame(text="two", turn=1)]


def test_a_new_session_has_no_frames(store: SessionStore) -> None:
    assert store.frames(store.create(PROJECT)) == []


def test_append_to_an_unknown_session_is_a_session_error(store: SessionStore) -> None:
    with pytest.raises(SessionError) as caught:
        store.append("nope", PromptFrame(text="hi", turn=1))
    assert caught.value.line() == "no session nope: list this project's sessions with bingo -p /sessions"


def test_frames_of_an_unknown_session_is_a_session_error(store: SessionStore) -> None:
    with pytest.raises(SessionError):
        store.frames("nope")


def test_frames_are_kept_as_encoded_blobs_with_kind_and_sequence(store: SessionStore, db: Path) -> None:
    session = store.create(PROJECT)
    for frame in _every_kind():
        store.append(session, frame)
    with sqlite3.connect(db) as raw:
        rows = raw.execute("SELECT seq, kind, typeof(data) FROM frames ORDER BY seq").fetchall()
    kinds = ["prompt", "assistant", "toolCall", "toolResult", "notice", "compaction"]
    assert rows == [(seq, kind, "blob") for seq, kind in enumerate(kinds)]


def test_the_file_is_in_wal_mode(store: SessionStore, db: Path) -> None:
    with sqlite3.connect(db) as raw:
        assert raw.execute("PRAGMA journal_mode").fetchone() == ("wal",)


# --- sessions --------------------------------------------------------------------------


def test_session_info_counts_frames_and_takes_the_first_prompts_first_line_as_title(
    store: SessionStore,
) -> None:
    session = store.create(PROJECT)
    for frame in _every_kind():
        store.append(session, frame)
    store.append(session, PromptFrame(text="a later prompt", turn=3))
    [info] = store.sessions(PROJECT)
    assert (info.id, info.project, info.title, info.frames) == (
        session,
        PROJECT,
        "count the words in notes.txt",
        7,
    )
    assert info.created < info.updated
    assert info.created.tzinfo is not None


def test_a_prompts_images_read_back_and_an_image_only_first_prompt_is_titled_so(store: SessionStore) -> None:
    session = store.create(PROJECT)
    frame = PromptFrame(text="", turn=1, images=[ImageBlock(media_type="image/png", data="iVBORw0KGgo=")])
    store.append(session, frame)
    assert store.frames(session) == [frame]
    [info] = store.sessions(PROJECT)
    assert info.title == "[an image]"


def test_a_long_first_line_is_cut_to_sixty_characters(store: SessionStore) -> None:
    session = store.create(PROJECT)
    store.append(session, PromptFrame(text="x" * 200, turn=1))
    [info] = store.sessions(PROJECT)
    assert info.title == "x" * 59 + "…"


def test_sessions_lists_only_that_project_most_recent_first(store: SessionStore) -> None:
    old, other, new = store.create(PROJECT), store.create("/elsewhere"), store.create(PROJECT)
    store.append(old, PromptFrame(text="old", turn=1))
    assert [info.id for info in store.sessions(PROJECT)] == [old, new]
    assert [info.id for info in store.sessions("/elsewhere")] == [other]


def test_latest_is_the_most_recently_updated_session_of_that_project(store: SessionStore) -> None:
    first = store.create(PROJECT)
    second = store.create(PROJECT)
    store.create("/elsewhere")
    assert store.latest(PROJECT) == second
    store.append(first, PromptFrame(text="back to the first", turn=1))
    assert store.latest(PROJECT) == first


def test_latest_of_a_project_without_sessions_is_none(store: SessionStore) -> None:
    store.create("/elsewhere")
    assert store.latest(PROJECT) is None


def test_find_accepts_an_exact_id_or_a_unique_prefix(db: Path) -> None:
    ids = _ids("20250314-092653-a1f3", "20250314-092653-a1f30", "20250315-100000-0001")
    with SessionStore(db, id_factory=ids) as store:
        a, longer, b = store.create(PROJECT), store.create(PROJECT), store.create(PROJECT)
        assert store.find(a) == a
        assert store.find(longer) == longer
        assert store.find("20250315") == b
        assert store.find(b) == b


def test_find_of_no_match_says_so_and_how_to_list_sessions(store: SessionStore) -> None:
    store.create(PROJECT)
    with pytest.raises(SessionError) as caught:
        store.find("zzz")
    assert caught.value.line() == "no session zzz: list this project's sessions with bingo -p /sessions"


def test_find_of_an_ambiguous_prefix_says_so_and_how_to_list_sessions(db: Path) -> None:
    with SessionStore(db, id_factory=_ids("20250314-1", "20250314-2")) as store:
        store.create(PROJECT)
        store.create(PROJECT)
        with pytest.raises(SessionError) as caught:
            store.find("2025")
    assert caught.value.line() == (
        "more than one session starts with 2025: "
        "give more of the id; list this project's sessions with bingo -p /sessions"
    )


def test_find_of_an_empty_id_is_a_session_error(store: SessionStore) -> None:
    with pytest.raises(SessionError):
        store.find("")


def test_a_generated_id_already_taken_is_replaced(db: Path) -> None:
    with SessionStore(db, id_factory=_ids("same", "same", "fresh")) as store:
        assert store.create(PROJECT) == "same"
        assert store.create(PROJECT) == "fresh"


def test_default_ids_are_short_and_sort_by_time() -> None:
    session = new_session_id()
    assert re.fullmatch(r"\d{8}-\d{6}-[0-9a-f]{4}", session)


# --- failures --------------------------------------------------------------------------


def test_a_file_that_is_not_a_database_is_a_session_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    path.write_bytes(b"this is not sqlite, just some text that is long enough " * 40)
    with pytest.raises(SessionError) as caught:
        SessionStore(path)
    assert caught.value.message == f"cannot open the session store {path}: file is not a database"
    assert "\n" not in caught.value.line()


def test_a_directory_that_cannot_be_made_is_a_session_error_naming_the_file(
    tmp_path: Path,
) -> None:
    (tmp_path / "data").write_text("a file where the directory should be")
    path = tmp_path / "data" / "sessions.db"
    with pytest.raises(SessionError) as caught:
        SessionStore(path)
    assert str(path) in caught.value.message


def _open_as(path: Path, uid: int | None) -> str:
    """The SessionError message of opening `path`, as `uid` when given (in a forked child:
    root reads anything, so the refusal is only seen as another user)."""
    if uid is None:
        with pytest.raises(SessionError) as caught:
            SessionStore(path)
        return caught.value.message
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: never returns into pytest
        os.close(read)
        message = "no error"
        try:
            os.setuid(uid)
            SessionStore(path)
        except SessionError as exc:
            message = exc.message
        except BaseException as exc:
            message = f"unexpected {type(exc).__name__}: {exc}"
        os.write(write, message.encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read, "rb") as pipe:
        said = pipe.read().decode()
    os.waitpid(pid, 0)
    return said


def test_a_file_without_permission_is_a_session_error_naming_it(tmp_path: Path) -> None:
    path = tmp_path / "sessions.db"
    SessionStore(path).close()
    path.chmod(0)
    try:
        message = _open_as(path, 65534 if os.geteuid() == 0 else None)
    finally:
        path.chmod(0o600)
    assert str(path) in message


def test_a_store_written_by_a_newer_bingo_is_refused(db: Path) -> None:
    SessionStore(db).close()
    with sqlite3.connect(db) as raw:
        raw.execute("PRAGMA user_version = 99")
    with pytest.raises(SessionError) as caught:
        SessionStore(db)
    assert caught.value.message == f"the session store {db} was written by a newer bingo"


def test_a_corrupt_frame_is_not_skipped_but_named(store: SessionStore, db: Path) -> None:
    session = store.create(PROJECT)
    for frame in _every_kind():
        store.append(session, frame)
    with sqlite3.connect(db) as raw:
        raw.execute("UPDATE frames SET data = ? WHERE seq = 3", (b'{"kind": "nonsense"}',))
    with pytest.raises(SessionError) as caught:
        store.frames(session)
    assert caught.value.message == f"session {session} is damaged at frame 3"


def test_a_frame_nested_too_deeply_to_decode_is_damaged_not_a_crash(store: SessionStore, db: Path) -> None:
    session = store.create(PROJECT)
    for frame in _every_kind():
        store.append(session, frame)
    deep = b'{"kind": "prompt", "text": "x", "turn": 1, "more": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    with sqlite3.connect(db) as raw:
        raw.execute("UPDATE frames SET data = ? WHERE seq = 2", (deep,))
    with pytest.raises(SessionError) as caught:
        store.frames(session)
    assert caught.value.message == f"session {session} is damaged at frame 2"


def test_a_missing_frame_is_not_skipped_but_named(store: SessionStore, db: Path) -> None:
    session = store.create(PROJECT)
    for frame in _every_kind():
        store.append(session, frame)
    with sqlite3.connect(db) as raw:
        raw.execute("DELETE FROM frames WHERE seq = 5")
    with pytest.raises(SessionError) as caught:
        store.frames(session)
    assert caught.value.message == f"session {session} is damaged at frame 5"


def test_using_a_closed_store_is_a_session_error(db: Path) -> None:
    store = SessionStore(db)
    session = store.create(PROJECT)
    store.close()
    with pytest.raises(SessionError):
        store.append(session, PromptFrame(text="late", turn=1))


# --- two stores, and a killed process ----------------------------------------------------


def test_two_stores_on_one_file_see_each_others_appends(db: Path) -> None:
    with SessionStore(db) as one, SessionStore(db) as two:
        session = one.create(PROJECT)
        assert two.find(session) == session
        one.append(session, PromptFrame(text="from one", turn=1))
        two.append(session, PromptFrame(text="from two", turn=1))
        one.append(session, PromptFrame(text="one again", turn=2))
        expected = [
            PromptFrame(text="from one", turn=1),
            PromptFrame(text="from two", turn=1),
            PromptFrame(text="one again", turn=2),
        ]
        assert one.frames(session) == expected
        assert two.frames(session) == expected
        assert two.sessions(PROJECT)[0].frames == 3


def test_two_stores_appending_at_once_wait_for_each_other_and_lose_nothing(db: Path) -> None:
    count = 200
    with SessionStore(db) as one, SessionStore(db) as two:
        session = one.create(PROJECT)
        start = threading.Barrier(2, timeout=TIMEOUT)

        def hammer(store: SessionStore, name: str) -> None:
            start.wait()
            for i in range(count):
                notice = Notice(source=name, message=str(i))
                store.append(session, NoticeFrame(notice=notice, turn=i))

        with ThreadPoolExecutor(max_workers=2) as pool:
            futures = [pool.submit(hammer, one, "one"), pool.submit(hammer, two, "two")]
            for future in futures:
                future.result(timeout=TIMEOUT)
        frames = one.frames(session)
    assert len(frames) == 2 * count
    for name in ("one", "two"):
        mine = [f.notice.message for f in frames if isinstance(f, NoticeFrame) and f.notice.source == name]
        assert mine == [str(i) for i in range(count)]


def _crash_frame(i: int) -> Frame:
    # Realistic sizes: a ~1 kB assistant message, then a ~3 kB tool result.
    if i % 2 == 0:
        text = f"{i}:" + "a" * 1000
        message = Message(role="assistant", content=[TextBlock(text=text)])
        return AssistantFrame(message=message, turn=i)
    output = ToolOutput(parts=[TextPart(text="r" * 3000)])
    return ToolResultFrame(call_id=f"call-{i}", output=output, turn=i)


_APPENDER = f"""
import sys
from pathlib import Path
from bingo.kernel.frames import AssistantFrame, Frame, ToolResultFrame
from bingo.store import SessionStore
from bingo.wire import Message, TextBlock, TextPart, ToolOutput

{inspect.getsource(_crash_frame)}

store = SessionStore(Path(sys.argv[1]))
session = store.latest(sys.argv[2]) or store.create(sys.argv[2])
i = len(store.frames(session))
while True:
    store.append(session, _crash_frame(i))
    print(i, flush=True)
    i += 1
"""


async def _append_then_kill(db: Path, reports: int) -> int:
    """Run an appender, SIGKILL it once it has reported `reports` appends; the last index."""
    child = await asyncio.create_subprocess_exec(
        sys.executable,
        "-c",
        _APPENDER,
        str(db),
        PROJECT,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE,
    )
    assert child.stdout is not None and child.stderr is not None
    last = -1
    try:
        async with asyncio.timeout(TIMEOUT):
            for _ in range(reports):
                line = await child.stdout.readline()
                if not line:
                    await child.wait()
                    raise AssertionError((await child.stderr.read()).decode())
                last = int(line)
    finally:
        child.kill()
        async with asyncio.timeout(TIMEOUT):
            await child.wait()
    return last


def test_a_sigkilled_appender_loses_no_frame_it_reported_and_the_session_carries_on(
    db: Path,
) -> None:
    SessionStore(db).close()
    reported = 0
    for reports in (1, 40, 7, 150):
        last = asyncio.run(_append_then_kill(db, reports))
        assert last == reported + reports - 1  # each run carried on where the last one stopped
        with SessionStore(db) as store:
            session = store.latest(PROJECT)
            assert session is not None
            frames = store.frames(session)
            assert len(store.sessions(PROJECT)) == 1
        assert len(frames) > last
        assert frames == [_crash_frame(i) for i in range(len(frames))]
        reported = len(frames)
