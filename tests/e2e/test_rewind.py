"""`/rewind` through the real binary (issue 28, INTERFACE.md §10, ADR-0044): a scripted turn
changes files with `edit`, `write` and `bash` (`rm`, `mv`, `chmod`), and `/rewind` puts every
recorded file back byte-exact with its mode, leaves ignored files alone and names them, sets
the conversation's later frames aside so `-c` goes on from before the prompt, and can itself
be rewound. The evidence is the file system and the model's next request. The edge cases
(links, a file become a directory and back, the bound) are tests/unit/checkpoint's."""

from __future__ import annotations

import fcntl
import os
import re
import subprocess
import threading
import time
from pathlib import Path
from typing import Any

import pytest

from tests.e2e._bingo import TIMEOUT, Sandbox, no_traceback
from tests.e2e._scripted import model_requests, text, tool, use_scripted_model
from tests.e2e.test_terminal import terminal
from tests.support.model_server import Reply

ALLOW = ("--allow", "edit", "--allow", "write", "--allow", "bash")


def _bingo(box: Sandbox, replies: list[list[dict[str, Any]]], *args: str) -> subprocess.CompletedProcess[str]:
    use_scripted_model(box, replies, sandbox={"mode": "off"}, checkpoints={"maxFileBytes": 1000})
    result = box.run(*ALLOW, *args)
    assert no_traceback(result), result.stderr
    return result


def _prompts(box: Sandbox) -> list[str]:
    """The person's words in the model's latest request."""
    request = model_requests(box)[-1]["request"]
    return [
        block["text"]
        for message in request["messages"]
        if message["role"] == "user"
        for block in message["content"]
        if block.get("type") == "text"
    ]


def _project(box: Sandbox) -> Path:
    p = box.project
    (p / ".gitignore").write_text("*.log\n")
    (p / "app.py").write_text("x = 1\n")
    (p / "app.py").chmod(0o640)
    (p / "run.sh").write_text("#!/bin/sh\necho run\n")
    (p / "run.sh").chmod(0o755)
    (p / "old.txt").write_bytes(b"old\x00bytes")
    (p / "notes").mkdir()
    (p / "notes" / "a.md").write_text("# a\n")
    (p / "debug.log").write_text("before\n")
    (p / "big.bin").write_bytes(b"b" * 2000)
    return p


TURN = [
    [tool("r1", "read", {"path": "app.py"})],
    [
        tool("e1", "edit", {"path": "app.py", "oldString": "x = 1", "newString": "x = 2"}),
        tool("w1", "write", {"path": "new.txt", "content": "created\n"}),
        tool(
            "b1",
            "bash",
            {"command": "rm old.txt && mv notes moved && chmod 600 run.sh && echo during >> debug.log"},
        ),
    ],
    [text("done")],
]


def _as_before(p: Path) -> None:
    assert (p / "app.py").read_text() == "x = 1\n"
    assert (p / "app.py").stat().st_mode & 0o777 == 0o640
    assert (p / "run.sh").stat().st_mode & 0o777 == 0o755
    assert (p / "old.txt").read_bytes() == b"old\x00bytes"
    assert (p / "notes" / "a.md").read_text() == "# a\n"
    assert not (p / "new.txt").exists()
    assert not (p / "moved").exists()


def _as_after(p: Path) -> None:
    assert (p / "app.py").read_text() == "x = 2\n"
    assert (p / "run.sh").stat().st_mode & 0o777 == 0o600
    assert (p / "new.txt").read_text() == "created\n"
    assert (p / "moved" / "a.md").read_text() == "# a\n"
    assert not (p / "old.txt").exists()
    assert not (p / "notes").exists()


def test_rewind_puts_back_what_a_turn_did_with_edit_write_and_bash_and_can_itself_be_rewound(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    p = _project(box)
    turn = _bingo(box, TURN, "-p", "change the files")
    assert turn.returncode == 0, turn.stderr
    assert "not recorded in checkpoints: big.bin (over checkpoints.maxFileBytes" in turn.stderr
    _as_after(p)

    listed = _bingo(box, [], "-c", "-p", "/rewind")
    assert listed.returncode == 0, listed.stderr
    assert "\n1. «change the files» · " in listed.stdout
    assert "· 6 files changed since" in listed.stdout  # app, run.sh, new, old, notes/a.md, moved/a.md: not the log
    _as_after(p)  # a list restores nothing

    rewound = _bingo(box, [], "-c", "-p", "/rewind 1")
    assert rewound.returncode == 0, rewound.stderr
    _as_before(p)
    assert (p / "debug.log").read_text() == "before\nduring\n"  # ignored: untouched
    out = rewound.stdout
    assert "creates notes/a.md, old.txt" in out
    assert "changes app.py, run.sh" in out
    assert "removes moved/a.md, new.txt" in out
    assert "ignored by .gitignore: debug.log" in out
    assert "big.bin (over checkpoints.maxFileBytes)" in out

    after = _bingo(box, [[text("fine")]], "-c", "-p", "after the rewind")
    assert after.returncode == 0, after.stderr
    assert _prompts(box) == ["after the rewind"]

    # The rewind is the second newest point: rewinding to it undoes it, files and conversation.
    undone = _bingo(box, [], "-c", "-p", "/rewind 2")
    assert undone.returncode == 0, undone.stderr
    assert "the rewind /rewind 1" in undone.stdout
    _as_after(p)
    again = _bingo(box, [[text("fine")]], "-c", "-p", "and again")
    assert again.returncode == 0, again.stderr
    assert _prompts(box) == ["change the files", "and again"]


def test_rewind_files_or_conversation_restores_only_that(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    p = _project(box)
    assert _bingo(box, TURN, "-p", "change the files").returncode == 0

    only_talk = _bingo(box, [], "-c", "-p", "/rewind 1 --conversation")
    assert only_talk.returncode == 0, only_talk.stderr
    _as_after(p)
    assert _bingo(box, [[text("ok")]], "-c", "-p", "next").returncode == 0
    assert _prompts(box) == ["next"]

    # newest first: "next", the rewind, "change the files"
    only_files = _bingo(box, [], "-c", "-p", "/rewind 3 --files")
    assert only_files.returncode == 0, only_files.stderr
    _as_before(p)
    assert _bingo(box, [[text("ok")]], "-c", "-p", "last").returncode == 0
    assert _prompts(box) == ["next", "last"]


def test_rewind_says_what_is_wrong_with_its_arguments(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    result = box.run("-p", "/rewind soon")
    assert result.returncode == 1
    assert "/rewind does not take soon: /rewind [N] [--files | --conversation]" in result.stdout + result.stderr
    assert no_traceback(result)


def test_on_a_terminal_rewind_lists_the_prompts_newest_first_and_asks_before_it_restores(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.settings({"sandbox": {"mode": "off"}})
    replies: list[Reply] = [
        [("tool", "w1", "write", {"path": "b.txt", "content": "two\n"})],
        [("text", "Written.")],
        [("text", "Nothing to do.")],
    ]
    with terminal(box, replies, "--allow", "write") as screen:
        screen.expect(">")
        screen.child.send("write two\r")
        screen.expect(r"Written\.")
        screen.prompt()
        screen.child.send("just talk\r")
        screen.expect(r"Nothing to do\.")
        screen.prompt()
        screen.child.send("/rewind\r")
        screen.expect(r"rewind to before which prompt\?\n")
        screen.expect(
            r"❯ 1\) +«just talk» · [-0-9: ]+ · 0 files changed since\n +2\) +«write two» · [-0-9: ]+ · 1 file changed since"
        )
        screen.child.send("2")
        screen.expect(r"removes b\.txt")
        screen.expect(r"rewind\?")
        screen.child.send("n")
        screen.expect(r"nothing rewound")
        assert (box.project / "b.txt").read_text() == "two\n"
        screen.prompt()
        screen.child.send("/rewind 2\r")
        screen.expect(r"removes b\.txt")
        screen.expect(r"rewind\?")
        assert (box.project / "b.txt").read_text() == "two\n"  # nothing before the answer
        screen.child.send("y")
        screen.expect(r"put back 1 file")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
    assert not (box.project / "b.txt").exists()


def test_a_rewind_while_another_bingo_runs_a_turn_in_the_project_is_refused_and_changes_nothing(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    first = _bingo(box, [[tool("w1", "write", {"path": "b.txt", "content": "mine\n"})], [text("ok")]], "-p", "write b")
    assert first.returncode == 0, first.stderr
    session = first_session(box)
    gate = tmp_path / "gate"
    os.mkfifo(gate)
    use_scripted_model(
        box, [[tool("b1", "bash", {"command": f"cat {gate} > /dev/null"})], [text("done")]], sandbox={"mode": "off"}
    )
    other = box.popen(*ALLOW, "-p", "wait at the gate")
    opened: list[int] = []
    # Opening the FIFO to write returns once the other turn's bash reads it: its turn is running.
    opener = threading.Thread(target=lambda: opened.append(os.open(gate, os.O_WRONLY)), daemon=True)
    opener.start()
    opener.join(TIMEOUT)
    try:
        assert opened, "the other bingo's turn never reached its bash command"
        refused = box.run("--resume", session, "-p", "/rewind 1")
        assert refused.returncode == 1
        assert (
            "nothing rewound: another bingo is running a turn in this project; rewind when it has ended"
            in refused.stdout + refused.stderr
        )
        assert (box.project / "b.txt").read_text() == "mine\n"
    finally:
        for fd in opened:
            os.close(fd)
        out, err = other.communicate(timeout=TIMEOUT)
    assert other.returncode == 0, err
    done = box.run("--resume", session, "-p", "/rewind 1")
    assert done.returncode == 0, done.stderr
    assert not (box.project / "b.txt").exists()


def first_session(box: Sandbox) -> str:
    """The id of the project's only session so far."""
    listed = box.run("-p", "/sessions")
    found = re.findall(r"\d{8}-\d{6}-[0-9a-f]{4}", listed.stdout)
    assert len(found) == 1, listed.stdout
    return found[0]


def test_bingo_sigkilled_in_the_middle_of_a_restore_leaves_each_file_before_or_after_and_the_next_run_finishes_it(
    tmp_path: Path,
) -> None:
    box = Sandbox(tmp_path)
    files = box.project / "data"
    files.mkdir()
    count = 2000

    def before(i: int) -> bytes:
        return f"before {i}\n".encode() * 200

    for i in range(count):
        (files / f"f{i:05}").write_bytes(before(i))
    change = [tool("b1", "bash", {"command": "for f in data/*; do echo after >> $f; done"})]
    use_scripted_model(box, [change, [text("done")]], sandbox={"mode": "off"})
    assert box.run("--allow", "bash", "-p", "go").returncode == 0
    # Killed (SIGKILL, no handler runs) once the restore has put back its first file.
    proc = box.popen("-p", "-c", "/rewind 1")
    try:
        first = files / "f00000"
        while proc.poll() is None and first.read_bytes() != before(0):
            pass
        proc.kill()
        proc.communicate(timeout=TIMEOUT)
    finally:
        proc.kill()
    states = [(files / f"f{i:05}").read_bytes() for i in range(count)]
    put_back = sum(state == before(i) for i, state in enumerate(states))
    assert all(state in (before(i), before(i) + b"after\n") for i, state in enumerate(states))
    assert 0 < put_back < count, f"the kill came after the whole restore ({put_back} files put back)"
    # The next run says the restore was cut short and how to finish or undo it; finishing it
    # (the prompt's point again: the cut rewind's own checkpoint is the newest) puts back all.
    listed = box.run("-p", "-c", "/rewind")
    assert no_traceback(listed)
    [said] = [line for line in listed.stderr.splitlines() if "was cut short" in line]
    assert "a rewind to before «go» was cut short" in said and "/rewind finishes it" in said
    assert "was cut short" not in box.run("-p", "-c", "/rewind").stderr  # said once
    finished = box.run("-p", "-c", "/rewind 2")
    assert finished.returncode == 0, finished.stderr
    assert all((files / f"f{i:05}").read_bytes() == before(i) for i in range(count))


def _until(what: str, found: Any, proc: subprocess.Popen[str]) -> None:
    """Until `found()` is true (bounded; fails at once if `proc` ended first)."""
    deadline = time.monotonic() + TIMEOUT
    while not found():
        assert proc.poll() is None, f"bingo ended before {what}: {proc.communicate()}"
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.05)


def test_the_model_is_asked_while_a_slow_first_checkpoint_is_taken_and_no_tool_runs_before_it_ends(
    tmp_path: Path,
) -> None:
    # A big project's first checkpoint takes up to 30 s; it is taken while the model is
    # asked, and the turn's tools wait for it. Here the checkpoint is held up for as long
    # as the test holds the checkpoint store alone (as a prune in another bingo would).
    box = Sandbox(tmp_path)
    (box.project / "kept.txt").write_text("before\n")
    use_scripted_model(
        box,
        [[tool("w1", "write", {"path": "made.txt", "content": "by the turn\n"})], [text("done")]],
        sandbox={"mode": "off"},
    )
    lock = box.bingo_home / "data" / "checkpoints" / "store.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)
    proc = box.popen(*ALLOW, "-p", "make a file")
    try:
        _until("the model's first request", lambda: model_requests(box), proc)
        assert not (box.project / "made.txt").exists()
    finally:
        os.close(fd)  # the checkpoint goes on: then, and only then, the write runs
        out, err = proc.communicate(timeout=TIMEOUT)
    assert proc.returncode == 0, err
    assert no_traceback(subprocess.CompletedProcess([], 0, out, err)), err
    assert (box.project / "made.txt").read_text() == "by the turn\n"
    assert len(model_requests(box)) == 2
    # The checkpoint holds the project as it was before the write: rewinding removes it.
    rewound = box.run("-c", "-p", "/rewind 1 --files")
    assert rewound.returncode == 0, rewound.stderr
    assert not (box.project / "made.txt").exists()
    assert (box.project / "kept.txt").read_text() == "before\n"


def test_a_rewind_right_after_a_turn_whose_checkpoint_is_still_taken_waits_for_it_and_lists_it(
    tmp_path: Path,
) -> None:
    # The turn (no tool) ends before its checkpoint does; /rewind then says it waits, and
    # lists that prompt once the checkpoint has ended (it was "nothing to rewind").
    box = Sandbox(tmp_path)
    box.settings({"sandbox": {"mode": "off"}})
    (box.project / "kept.txt").write_text("before\n")
    lock = box.bingo_home / "data" / "checkpoints" / "store.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)  # as another bingo's prune holds it
    held = True
    try:
        with terminal(box, [[("text", "Nothing to do.")]]) as screen:
            screen.expect(">")
            screen.child.send("just talk\r")
            screen.expect(r"Nothing to do\.")
            screen.prompt()
            screen.child.send("/rewind\r")
            screen.expect(r"waiting for the last prompt's checkpoint to end")
            os.close(fd)
            held = False
            screen.expect(r"rewind to before which prompt\?\n")
            screen.expect(r"❯ 1\) +«just talk» · [-0-9: ]+ · 0 files changed since")
            screen.child.sendcontrol("c")
            screen.prompt()
            screen.child.sendcontrol("d")
            assert screen.exits() == 0
    finally:
        if held:
            os.close(fd)


def test_in_one_session_a_change_gnu_find_is_asked_about_is_recorded_and_rewound_byte_exact(tmp_path: Path) -> None:
    # From a session's second checkpoint on, a project of 2,000 names or more is confirmed by
    # GNU find asking what changed since the last one (ADR-0044). A same-size write whose
    # mtime is put back is what only its ctime tells: the second checkpoint must hold it.
    box = Sandbox(tmp_path)
    box.settings({"sandbox": {"mode": "off"}})
    p = box.project
    for n in range(2100):
        directory = p / f"d{n // 100:02d}"
        directory.mkdir(exist_ok=True)
        (directory / f"f{n:04d}.txt").write_text(f"file {n:04d}\n")
    for path in [*p.rglob("*"), p]:
        os.utime(path, ns=(1_000_000_000_000_000_000, 1_000_000_000_000_000_000))
    # `find` as bingo finds it on PATH, logging each time it is asked (the real one answers).
    real = subprocess.run(["sh", "-c", "command -v find"], capture_output=True, text=True).stdout.strip()
    if not real or b"GNU findutils" not in subprocess.run([real, "--version"], capture_output=True).stdout:
        pytest.skip("GNU find is not installed")
    tools = tmp_path / "bin"
    tools.mkdir()
    asked = tmp_path / "find-asked"
    (tools / "find").write_text(f'#!/bin/sh\ncase "$*" in *-newerct*) echo asked >> {asked};; esac\nexec {real} "$@"\n')
    (tools / "find").chmod(0o755)
    box.env["PATH"] = f"{tools}:{box.env['PATH']}"
    same_size = "printf 'FILE 0042\\n' > d00/f0042.txt && touch -d @1000000000 d00/f0042.txt"
    replies: list[Reply] = [
        [("tool", "b1", "bash", {"command": same_size})],
        [("text", "Changed.")],
        [("text", "Nothing to do.")],
    ]
    with terminal(box, replies, "--allow", "bash") as screen:
        screen.expect(">")
        screen.child.send("change a file\r")
        screen.expect(r"Changed\.")
        screen.prompt()
        screen.child.send("just talk\r")
        screen.expect(r"Nothing to do\.")
        screen.prompt()
        # To before "just talk": its checkpoint holds the file as the bash left it, so nothing
        # is put back (had it kept the first checkpoint's bytes, they would be).
        screen.child.send("/rewind 1\r")
        screen.expect(r"none to create, change or remove")
        screen.expect(r"rewind\?")
        screen.child.send("y")
        screen.expect(r"put back 0 files")
        screen.prompt()
        assert (p / "d00" / "f0042.txt").read_text() == "FILE 0042\n"
        screen.child.send("/rewind 3\r")  # past that rewind's own point, to before "change a file"
        screen.expect(r"changes d00/f0042\.txt")
        screen.expect(r"rewind\?")
        screen.child.send("y")
        screen.expect(r"put back 1 file")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
    assert (p / "d00" / "f0042.txt").read_text() == "file 0042\n"
    assert asked.read_text().count("asked") >= 2  # both halves, at the second checkpoint at least


def test_a_gitignore_pattern_made_to_backtrack_neither_holds_the_turn_nor_bingos_exit(tmp_path: Path) -> None:
    # Python's backtracking `re` took two minutes to match this pattern against 40 `a`s, and
    # each one more multiplies it by 1.5: with 60, the checkpoint's thread would outlive the
    # test, the turn's first tool waiting for it and the run's exit after it (ADR-0044).
    box = Sandbox(tmp_path)
    p = box.project
    long = "a" * 60
    (p / ".gitignore").write_text("*a*a*a*a*a*a*a*a*a*a*a*a*b\n*.log\n")
    (p / long).write_text("kept\n")
    (p / "x.log").write_text("log\n")
    turn = _bingo(box, [[tool("b1", "bash", {"command": f"rm {long} x.log"})], [text("done")]], "-p", "clean up")
    assert turn.returncode == 0, turn.stderr
    assert not (p / long).exists()
    rewound = _bingo(box, [], "-c", "-p", "/rewind 1")
    assert rewound.returncode == 0, rewound.stderr
    assert (p / long).read_text() == "kept\n"  # not ignored: git's answer too, the pattern ends in b
    assert not (p / "x.log").exists()  # ignored: not recorded, so not brought back
