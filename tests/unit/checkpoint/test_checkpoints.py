"""Checkpoints' logic through `Checkpoints` on a real temporary project: what is recorded,
what a plan says, what a restore puts back (the binary's tests are tests/e2e/test_rewind.py)."""

from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import threading
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from bingo.checkpoint import MAX_BYTES, MAX_FILE_BYTES, Checkpoints, Journal, Point, Scan, _find, _scan
from bingo.checkpoint._scan import Entry


@pytest.fixture(autouse=True)
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A temporary HOME as git reads it (no system settings, no XDG_CONFIG_HOME), for every
    test: git's excludes file is read from there, never from the real one."""
    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME", raising=False)
    monkeypatch.setenv("GIT_CONFIG_NOSYSTEM", "1")
    for name in ("GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_DIR", "GIT_WORK_TREE"):
        monkeypatch.delenv(name, raising=False)
    return home


def _world(
    tmp_path: Path, *, max_bytes: int = MAX_BYTES, max_file_bytes: int = MAX_FILE_BYTES
) -> tuple[Path, Checkpoints, list[str]]:
    project = tmp_path / "project"
    project.mkdir()
    said: list[str] = []
    checkpoints = Checkpoints(
        tmp_path / "checkpoints", project, said.append, max_bytes=max_bytes, max_file_bytes=max_file_bytes
    )
    return project, checkpoints, said


def _point(checkpoints: Checkpoints, session: str = "s1", label: str = "p") -> tuple[Point, Scan]:
    looked = checkpoints.look()
    assert looked.scan is not None, looked.failed
    point = checkpoints.record(looked.scan, session=session, seq=0, turn=1, kind="prompt", label=label)
    assert point is not None
    return point, looked.scan


def _rewind(checkpoints: Checkpoints, point: Point) -> list[tuple[str, str]]:
    now = checkpoints.look().scan
    assert now is not None
    return checkpoints.restore(checkpoints.plan(now, point))


def test_a_restore_puts_back_bytes_and_modes_removes_what_was_created_and_brings_back_what_was_removed(
    tmp_path: Path,
) -> None:
    project, checkpoints, _ = _world(tmp_path)
    (project / "src").mkdir()
    (project / "src" / "a.py").write_bytes(b"print(1)\n")
    (project / "run.sh").write_bytes(b"#!/bin/sh\n")
    (project / "run.sh").chmod(0o755)
    (project / "gone.txt").write_bytes(b"\x00\xffbinary")
    point, _ = _point(checkpoints)

    (project / "src" / "a.py").write_bytes(b"print(2)\n")
    (project / "run.sh").chmod(0o600)
    (project / "gone.txt").unlink()
    (project / "new").mkdir()
    (project / "new" / "b.txt").write_text("new")

    now = checkpoints.look().scan
    assert now is not None
    plan = checkpoints.plan(now, point)
    assert (plan.create, plan.change, plan.remove) == (["gone.txt"], ["run.sh", "src/a.py"], ["new/b.txt"])
    assert checkpoints.restore(plan) == []
    assert (project / "src" / "a.py").read_bytes() == b"print(1)\n"
    assert (project / "run.sh").stat().st_mode & 0o777 == 0o755
    assert (project / "gone.txt").read_bytes() == b"\x00\xffbinary"
    assert not (project / "new").exists()


def test_ignored_files_nested_gitignores_and_git_are_not_recorded_nor_touched(tmp_path: Path) -> None:
    project, checkpoints, _ = _world(tmp_path)
    (project / ".gitignore").write_text("*.log\nbuild/\n")
    (project / "sub").mkdir()
    (project / "sub" / ".gitignore").write_text("!keep.log\n")
    (project / "sub" / "keep.log").write_text("kept")
    (project / "x.log").write_text("one")
    (project / "build").mkdir()
    (project / "build" / "out").write_text("o")
    (project / ".git").mkdir()
    (project / ".git" / "HEAD").write_text("ref")
    point, scan = _point(checkpoints)
    assert sorted(scan.entries) == [".gitignore", "sub/.gitignore", "sub/keep.log"]
    assert sorted(scan.ignored) == ["build/", "x.log"]

    (project / "x.log").write_text("two")
    (project / "build" / "out").unlink()
    assert _rewind(checkpoints, point) == []
    assert (project / "x.log").read_text() == "two"
    assert not (project / "build" / "out").exists()
    assert (project / ".git" / "HEAD").read_text() == "ref"


def test_a_file_that_became_a_directory_and_a_directory_that_became_a_file_are_put_back(tmp_path: Path) -> None:
    project, checkpoints, _ = _world(tmp_path)
    (project / "was_file").write_text("file")
    (project / "was_dir").mkdir()
    (project / "was_dir" / "inner").write_text("inner")
    point, _ = _point(checkpoints)

    (project / "was_file").unlink()
    (project / "was_file").mkdir()
    (project / "was_file" / "x").write_text("x")
    (project / "was_dir" / "inner").unlink()
    (project / "was_dir").rmdir()
    (project / "was_dir").write_text("now a file")

    assert _rewind(checkpoints, point) == []
    assert (project / "was_file").read_text() == "file"
    assert (project / "was_dir" / "inner").read_text() == "inner"


def test_a_directory_holding_ignored_files_is_not_removed_to_make_way(tmp_path: Path) -> None:
    project, checkpoints, _ = _world(tmp_path)
    (project / ".gitignore").write_text("*.tmp\n")
    (project / "f").write_text("file")
    point, _ = _point(checkpoints)
    (project / "f").unlink()
    (project / "f").mkdir()
    (project / "f" / "cache.tmp").write_text("ignored")
    failed = _rewind(checkpoints, point)
    assert [path for path, _ in failed] == ["f"]
    assert (project / "f" / "cache.tmp").read_text() == "ignored"


def test_links_are_recorded_and_restored_as_links_never_followed_out_of_the_project(tmp_path: Path) -> None:
    project, checkpoints, _ = _world(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret").write_text("outside")
    (project / "out").symlink_to(outside)
    (project / "ln").symlink_to("target.txt")
    (project / "target.txt").write_text("t")
    point, scan = _point(checkpoints)
    assert "out/secret" not in scan.entries  # the link is not entered
    assert (scan.entries["out"].kind, scan.entries["out"].ref) == ("link", str(outside))

    (project / "ln").unlink()
    (project / "ln").write_text("a file now")
    (project / "out").unlink()
    (project / "out").mkdir()
    (project / "out" / "secret").write_text("inside now")
    assert _rewind(checkpoints, point) == []
    assert os.readlink(project / "ln") == "target.txt"
    assert os.readlink(project / "out") == str(outside)
    assert (outside / "secret").read_text() == "outside"


def test_a_restore_never_writes_through_a_link_a_turn_made_of_an_ignored_directory(tmp_path: Path) -> None:
    project, checkpoints, _ = _world(tmp_path)
    outside = tmp_path / "outside"
    outside.mkdir()
    (project / ".gitignore").write_text("d\n")
    (project / "keep").mkdir()
    (project / "keep" / "f").write_text("mine")
    point, _ = _point(checkpoints)
    (project / "keep" / "f").unlink()
    (project / "keep").rmdir()
    (project / "keep").symlink_to(outside)  # recorded as a link now: removed, then the directory made
    assert _rewind(checkpoints, point) == []
    assert (project / "keep" / "f").read_text() == "mine"
    assert list(outside.iterdir()) == []


def test_a_file_over_max_file_bytes_is_named_once_not_recorded_and_left_alone(tmp_path: Path) -> None:
    project, checkpoints, said = _world(tmp_path, max_file_bytes=10)
    (project / "big.bin").write_bytes(b"x" * 11)
    point, _ = _point(checkpoints)
    _point(checkpoints)
    assert said == [
        "not recorded in checkpoints: big.bin (over checkpoints.maxFileBytes, 10 bytes); a rewind leaves them as they are"
    ]
    (project / "big.bin").write_bytes(b"y" * 20)
    now = checkpoints.look().scan
    assert now is not None
    plan = checkpoints.plan(now, point)
    assert plan.empty() and plan.left == [("big.bin", "over checkpoints.maxFileBytes")]
    assert checkpoints.restore(plan) == []
    assert (project / "big.bin").read_bytes() == b"y" * 20


def test_an_unchanged_file_is_not_read_again_and_content_is_kept_once(tmp_path: Path) -> None:
    project, checkpoints, _ = _world(tmp_path)
    for n in range(20):
        (project / f"f{n}").write_text("same")
    old = 1_000_000_000
    for n in range(20):
        os.utime(project / f"f{n}", ns=(old, old))
    _, first = _point(checkpoints)
    assert first.read == 20
    (project / "f3").write_text("changed")
    second = checkpoints.look().scan
    assert second is not None
    assert second.read == 1
    objects = [p for p in (tmp_path / "checkpoints" / "objects").rglob("*") if p.is_file()]
    assert len(objects) == 4  # "same", "changed", and the first checkpoint's list: its one directory and its root


def test_past_max_bytes_the_oldest_sessions_go_first_with_one_line(tmp_path: Path) -> None:
    project, checkpoints, said = _world(tmp_path, max_bytes=3000)
    (project / "f").write_bytes(os.urandom(1000))
    _point(checkpoints, "old")
    (project / "f").write_bytes(os.urandom(1000))
    _point(checkpoints, "middle")
    (project / "f").write_bytes(os.urandom(1000))
    _point(checkpoints, "new")
    assert checkpoints.points("old") == []
    assert checkpoints.points("new") != []
    assert said == [
        "checkpoints passed checkpoints.maxBytes (2.93 KiB): the checkpoints of 1 older session were removed"
    ]
    assert checkpoints.store.size() <= 3000


def test_a_file_that_cannot_be_kept_is_named_and_no_checkpoint_is_taken(tmp_path: Path) -> None:
    project, checkpoints, said = _world(tmp_path)
    (project / "f").write_text("x")
    objects = tmp_path / "checkpoints" / "objects"
    objects.mkdir(parents=True)
    (objects / "2d").write_text("in the way")  # sha256("x") starts 2d: its directory cannot be made
    checkpoints.take(session="s", seq=0, turn=1, label="p")
    assert len(said) == 1 and said[0].startswith("no checkpoint was taken before this prompt: f could not be kept: ")
    assert checkpoints.points("s") == []


def test_without_google_re2_no_checkpoint_is_taken_and_that_is_one_line_saying_what_to_do(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The .gitignore rules are matched by RE2 only (ADR-0044): never by a backtracking engine.
    import pathspec

    def missing(*_: object, **__: object) -> None:
        raise ModuleNotFoundError("No module named 're2'")

    monkeypatch.setattr(pathspec.GitIgnoreSpec, "from_lines", missing)
    project, checkpoints, said = _world(tmp_path)
    (project / ".gitignore").write_text("*.log\n")
    checkpoints.take(session="s", seq=0, turn=1, label="p")
    assert said == [
        "no checkpoint was taken before this prompt: a module it needs is missing (No module named 're2');"
        " reinstall bingo with its dependencies; the turn goes on"
    ]
    assert checkpoints.points("s") == []


def test_a_gitignore_line_re2_cannot_match_is_left_out_said_once_and_the_rest_apply(tmp_path: Path) -> None:
    project, checkpoints, said = _world(tmp_path)
    (project / ".gitignore").write_text("*.log\n[[:alpha:]x\n!keep.log\nbuild/\n")
    for name in ("a.log", "keep.log", "main.py"):
        (project / name).write_text(name)
    (project / "build").mkdir()
    (project / "build" / "out").write_text("o")
    for _ in range(2):
        _, looked = _point(checkpoints)
        assert sorted(looked.entries) == [".gitignore", "keep.log", "main.py"]
        assert sorted(looked.ignored) == ["a.log", "build/"]
    assert said == [
        ".gitignore: line 2 cannot be matched (a bracket holding [:) and is left out of what checkpoints ignore"
    ]


def test_the_persons_home_is_not_checkpointed_and_that_is_said_once(tmp_path: Path) -> None:
    said: list[str] = []
    home = tmp_path / "home"
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id").write_text("secret")
    checkpoints = Checkpoints(tmp_path / "checkpoints", home, said.append, home=home)
    checkpoints.take(session="s", seq=0, turn=1, label="p")
    checkpoints.take(session="s", seq=0, turn=2, label="p")
    assert said == [f"{home} is not checkpointed: run bingo in a project (a directory holding .git or .bingo)"]
    assert checkpoints.points("s") == []
    assert not list((tmp_path / "checkpoints" / "objects").rglob("*"))


def test_bingo_home_inside_the_project_is_never_entered(tmp_path: Path) -> None:
    project = tmp_path / "project"
    (project / "dot-bingo" / "data").mkdir(parents=True)
    (project / "dot-bingo" / "data" / "x").write_text("bingo's own")
    (project / "f").write_text("mine")
    checkpoints = Checkpoints(
        project / "dot-bingo" / "data" / "checkpoints", project, print, skip=(project / "dot-bingo",)
    )
    _, scan = _point(checkpoints)
    assert sorted(scan.entries) == ["f"]


def test_a_restore_cut_short_is_said_by_the_next_process_once_and_each_file_is_before_or_after(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, checkpoints, _ = _world(tmp_path)
    for name in ("a", "b", "c"):
        (project / name).write_text(f"{name} before")
    point, _ = _point(checkpoints)
    for name in ("a", "b", "c"):
        (project / name).write_text(f"{name} after")
    now = checkpoints.look().scan
    assert now is not None
    plan = checkpoints.plan(now, point)
    store = type(checkpoints.store)
    real = store.get
    calls: list[str] = []

    def killed_at_the_second(self: object, digest: str) -> bytes:
        calls.append(digest)
        if len(calls) == 2:
            raise KeyboardInterrupt  # as SIGKILL would stop it: between two files
        return real(checkpoints.store, digest)

    monkeypatch.setattr(store, "get", killed_at_the_second)
    with pytest.raises(KeyboardInterrupt):
        checkpoints.restore(plan, Journal(session="s1", target="«p»", undo="the rewind /rewind 1"))
    monkeypatch.undo()
    assert sorted((project / n).read_text() for n in ("a", "b", "c")) == ["a before", "b after", "c after"]

    said: list[str] = []
    later = Checkpoints(tmp_path / "checkpoints", project, said.append)
    later.take(session="s2", seq=0, turn=1, label="next")
    later.take(session="s2", seq=0, turn=2, label="next")
    assert said == [
        "a rewind to before «p» was cut short (bingo was stopped during it): each file is as it was or as the"
        " rewind would have it; /rewind finishes it (choose «p» again) or undoes it (choose the rewind /rewind 1)"
    ]


def test_a_file_a_process_still_holds_open_for_writing_is_restored_as_a_new_file_its_writes_do_not_reach(
    tmp_path: Path,
) -> None:
    project, checkpoints, _ = _world(tmp_path)
    (project / "log.txt").write_text("before\n")
    point, _ = _point(checkpoints)
    with open(project / "log.txt", "a") as writer:  # a background process the turn left running
        writer.write("during\n")
        writer.flush()
        assert _rewind(checkpoints, point) == []
        writer.write("after the rewind\n")
        writer.flush()
    assert (project / "log.txt").read_text() == "before\n"


def test_a_look_stopped_for_time_keeps_what_it_read_so_the_next_reads_only_the_rest(tmp_path: Path) -> None:
    project, checkpoints, said = _world(tmp_path)
    for name in ("a", "b", "c"):
        (project / name).mkdir()
        (project / name / "f").write_text(name)
        os.utime(project / name / "f", ns=(1_000_000_000, 1_000_000_000))
    checks: list[None] = []

    def stop() -> bool:
        checks.append(None)
        return len(checks) == 3  # the root and one directory looked at, then time is up

    checkpoints.take(session="s", seq=0, turn=1, label="p", stop=stop)
    assert said == [
        "no checkpoint was taken before this prompt: it took too long (what it read is not read again next time);"
        " the turn goes on"
    ]
    assert checkpoints.points("s") == []
    looked = checkpoints.look().scan
    assert looked is not None
    assert (len(looked.entries), looked.read) == (3, 2)


def _settled_tree(project: Path) -> None:
    """Two directories of files and a link, all written long ago (as a project's files are)."""
    for directory in ("a", "b"):
        (project / directory).mkdir()
        for n in range(3):
            (project / directory / f"f{n}").write_text(f"{directory}{n}")
    (project / "a" / "link").symlink_to("f0")
    old = 1_000_000_123
    for path in [*project.rglob("*"), project]:
        os.utime(path, ns=(old, old), follow_symlinks=False)


def test_an_unchanged_directory_is_confirmed_in_bulk_and_no_edit_mode_or_link_change_is_missed(
    tmp_path: Path,
) -> None:
    project, checkpoints, _ = _world(tmp_path)
    _settled_tree(project)
    _point(checkpoints)
    looked = checkpoints.look().scan
    assert looked is not None
    assert (looked.confirmed, looked.read) == (3, 0)  # the root, a and b: nothing looked at name by name
    before = dict(looked.entries)

    # A same-size edit whose mtime is put back as it was: its ctime still moves.
    (project / "a" / "f1").write_text("XX")
    os.utime(project / "a" / "f1", ns=(1_000_000_123, 1_000_000_123))
    # A mode change alone.
    (project / "b" / "f2").chmod(0o700)
    # A link pointing elsewhere, its directory's mtime put back as it was.
    (project / "a" / "link").unlink()
    (project / "a" / "link").symlink_to("f2")
    os.utime(project / "a", ns=(1_000_000_123, 1_000_000_123))
    looked = checkpoints.look().scan
    assert looked is not None
    assert looked.confirmed == 1  # only the root, whose names did not change
    # a/f1 and b/f2 are read again (a chmod moves the ctime too), nothing else
    assert looked.entries["a/f1"].ref != before["a/f1"].ref and looked.read == 2
    assert looked.entries["b/f2"].mode == 0o700 and before["b/f2"].mode != 0o700
    assert looked.entries["a/link"].ref == "f2"
    made = checkpoints.plan(looked, checkpoints.points("s1")[0])
    assert sorted(made.change) == ["a/f1", "a/link", "b/f2"]


def test_a_file_and_a_link_target_whose_bytes_are_not_utf8_are_recorded_and_restored(tmp_path: Path) -> None:
    project, checkpoints, said = _world(tmp_path)
    (project / "d").mkdir()
    odd = os.fsencode(project / "d") + b"/caf\xe9.txt"  # Latin-1, as an old archive leaves it
    with open(odd, "wb") as file:
        file.write(b"latin")
    os.symlink(b"caf\xe9.txt", os.fsencode(project / "d") + b"/link")
    (project / "plain").write_text("p")
    point, looked = _point(checkpoints)
    assert os.fsdecode(odd)[len(str(project)) + 1 :] in looked.entries
    os.remove(odd)
    os.remove(os.fsencode(project / "d") + b"/link")
    (project / "plain").write_text("changed")
    failed = _rewind(checkpoints, point)
    assert failed == []
    with open(odd, "rb") as file:
        assert file.read() == b"latin"
    assert os.readlink(os.fsencode(project / "d") + b"/link") == b"caf\xe9.txt"
    assert (project / "plain").read_text() == "p"
    # A new process reads the stat cache and the list back as they were kept.
    again = Checkpoints(tmp_path / "checkpoints", project, said.append)
    looked_again = again.look().scan
    assert looked_again is not None
    assert again.plan(looked_again, point).empty()


_GNU_FIND = pytest.mark.skipif(_find.gnu_find() is None, reason="GNU find (its -newerct) is not installed")


def _aged() -> None:
    """Wait out the margin a look allows the kernel's clock tick: what was written before
    this is older than the next look's start by more than it."""
    time.sleep(_scan._RACY_NS / 1e9 + 0.02)  # pyright: ignore[reportPrivateUsage]


def _find_world(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Checkpoints]:
    """A project and its checkpoints, GNU `find` asked whatever the project's size (as on a
    project big enough for it to pay)."""
    monkeypatch.setattr(_find, "_MIN_NAMES", 0)
    project, checkpoints, _ = _world(tmp_path)
    return project, checkpoints


def _fresh(tmp_path: Path, project: Path) -> dict[str, Entry]:
    """The entries a process's first look gives, which confirms nothing in bulk."""
    fresh = Checkpoints(tmp_path / "other", project, lambda _: None).look().scan
    assert fresh is not None
    return fresh.entries


def _by_find(project: Path, checkpoints: Checkpoints) -> None:
    """`find` engages from the second look of a process, on a project whose files are older
    than the first look by more than the margin (as a project's are)."""
    for path in [*project.rglob("*"), project]:
        os.utime(path, ns=(1_000_000_123, 1_000_000_123), follow_symlinks=False)
    _aged()
    _point(checkpoints)


@_GNU_FIND
def test_with_gnu_find_an_unchanged_project_is_confirmed_without_one_lstat_from_python(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, checkpoints = _find_world(tmp_path, monkeypatch)
    _settled_tree(project)
    (project / "a" / "sub").mkdir()
    (project / "a" / "sub" / "deep").write_text("d")
    _by_find(project, checkpoints)
    calls: list[object] = []
    real = os.lstat

    def counted(*args: object, **kwargs: object) -> os.stat_result:
        calls.append(args)
        return real(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "lstat", counted)
    for _ in range(2):
        looked = checkpoints.look().scan
        assert looked is not None
        assert (looked.confirmed, looked.by_find, looked.read) == (4, 4, 0)  # the root, a, a/sub and b
        assert calls == []
        assert sorted(looked.entries) == ["a/f0", "a/f1", "a/f2", "a/link", "a/sub/deep", "b/f0", "b/f1", "b/f2"]


@_GNU_FIND
def test_with_gnu_find_no_edit_mode_link_name_or_kind_change_is_missed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, checkpoints = _find_world(tmp_path, monkeypatch)
    _settled_tree(project)
    (project / "c").mkdir()
    (project / "c" / "g").write_text("g")
    _by_find(project, checkpoints)

    def look() -> Scan:
        looked = checkpoints.look().scan
        assert looked is not None
        return looked

    before = look()
    assert before.by_find == 4
    # A same-size edit whose mtime is put back as it was: its ctime still moves.
    (project / "a" / "f1").write_text("XX")
    os.utime(project / "a" / "f1", ns=(1_000_000_123, 1_000_000_123))
    looked = look()
    assert looked.entries["a/f1"].ref != before.entries["a/f1"].ref and looked.read == 1
    assert looked.by_find == 3  # the root, b and c
    # A mode change alone.
    (project / "b" / "f2").chmod(0o700)
    assert look().entries["b/f2"].mode == 0o700
    # A link pointing elsewhere, its directory's mtime put back as it was.
    (project / "a" / "link").unlink()
    (project / "a" / "link").symlink_to("f2")
    os.utime(project / "a", ns=(1_000_000_123, 1_000_000_123))
    assert look().entries["a/link"].ref == "f2"
    # A name added and one removed, the directory's mtime put back; then a directory that
    # became a file, and a file that became a directory.
    (project / "b" / "new").write_text("n")
    (project / "b" / "f0").unlink()
    os.utime(project / "b", ns=(1_000_000_123, 1_000_000_123))
    looked = look()
    assert "b/new" in looked.entries and "b/f0" not in looked.entries
    shutil.rmtree(project / "c")
    (project / "c").write_text("now a file")
    (project / "a" / "f0").unlink()
    (project / "a" / "f0").mkdir()
    (project / "a" / "f0" / "inner").write_text("i")
    looked = look()
    assert looked.entries["c"].kind == "file" and "c/g" not in looked.entries
    assert "a/f0/inner" in looked.entries and "a/f0" not in looked.entries
    # Whatever changed, the entries are those of a look that confirms nothing in bulk.
    assert look().entries == _fresh(tmp_path, project)


@_GNU_FIND
def test_with_gnu_find_a_tree_moved_in_with_its_old_times_is_looked_at_and_not_taken_for_the_one_it_replaced(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Only the moved directory and the one it lands in get a new ctime: what is inside keeps
    # its own, older than the last look, at the very paths the last look knew.
    project, checkpoints = _find_world(tmp_path, monkeypatch)
    elsewhere = tmp_path / "elsewhere"
    for tree, text in ((project / "a", "old"), (elsewhere / "a", "new")):
        (tree / "sub" / "deeper").mkdir(parents=True)
        (tree / "sub" / "f").write_text(text)
        (tree / "sub" / "deeper" / "g").write_text(text)
    for path in elsewhere.rglob("*"):
        os.utime(path, ns=(1_000_000_123, 1_000_000_123))
    _by_find(project, checkpoints)
    assert checkpoints.look().scan is not None
    shutil.rmtree(project / "a")
    (elsewhere / "a").rename(project / "a")
    looked = checkpoints.look().scan
    assert looked is not None
    assert looked.entries == _fresh(tmp_path, project)
    assert looked.entries["a/sub/f"].size == looked.entries["a/sub/deeper/g"].size == len("new")


@_GNU_FIND
def test_with_gnu_find_names_with_spaces_newlines_dashes_and_bytes_not_utf8_are_confirmed_and_watched(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    project, checkpoints = _find_world(tmp_path, monkeypatch)
    (project / "d").mkdir()
    for name in ("a b", "new\nline", "-rf", "(", "x\\0y"):
        (project / "d" / name).write_text(name)
    os.close(os.open(os.fsencode(project / "d") + b"/\xff\xfe", os.O_CREAT | os.O_WRONLY, 0o644))
    (project / "-rf (").mkdir()  # a directory `find` is given by name
    (project / "-rf (" / "f").write_text("f")
    _by_find(project, checkpoints)
    looked = checkpoints.look().scan
    assert looked is not None
    assert (looked.by_find, looked.read, len(looked.entries)) == (3, 0, 7)
    (project / "d" / "new\nline").write_text("new\nline")  # the same bytes again: its ctime moves
    os.utime(project / "d" / "new\nline", ns=(1_000_000_123, 1_000_000_123))
    (project / "-rf (" / "f").chmod(0o600)
    looked = checkpoints.look().scan
    assert looked is not None
    assert (looked.by_find, looked.read) == (1, 2)  # the root by find; d and `-rf (` looked at again
    assert looked.entries["-rf (/f"].mode == 0o600


def test_find_names_the_directories_that_are_or_hold_anything_changed_since_and_fails_on_a_surprise(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    if _find.gnu_find() is None:
        pytest.skip("GNU find (its -newerct) is not installed")
    monkeypatch.setattr(_find, "_MIN_NAMES", 0)
    dirs = [tmp_path / name for name in ("quiet", "written", "added", "itself")]
    for directory in dirs:
        (directory / "sub").mkdir(parents=True)
        (directory / "f").write_text("f")
    _aged()
    since = time.time_ns()
    paths = [str(d) for d in dirs]
    assert _find.changed(paths, 4, since) == set()
    (dirs[1] / "f").write_text("g")
    (dirs[2] / "sub" / "new").write_text("n")  # what is below `sub` is `sub`'s own look's
    dirs[3].chmod(0o700)
    assert _find.changed(paths, 4, since) == {1, 2, 3}
    assert _find.changed(paths, 4, time.time_ns()) == set()
    (dirs[0] / "sub").rmdir()
    (dirs[0] / "sub").symlink_to(tmp_path)  # a directory that became a link: not followed
    assert _find.changed([*paths, str(dirs[0] / "sub")], 4, since) == {0, 1, 2, 3, 4}
    shutil.rmtree(dirs[1])
    assert _find.changed(paths, 4, since) is None  # a directory gone
    assert _find.changed(["relative"], 4, since) is None
    assert _find.changed(paths[2:], 1 << 40, since) == {0, 1}
    monkeypatch.setattr(_find, "_MIN_NAMES", 100)
    assert _find.changed(paths[2:], 99, since) is None  # too little to gain


def test_local_devices_are_those_of_file_systems_stamped_by_this_machines_clock(tmp_path: Path) -> None:
    mountinfo = tmp_path / "mountinfo"
    mountinfo.write_text(
        "22 27 0:21 / /proc rw,relatime - proc proc rw\n"
        "27 1 254:0 / / rw,relatime - ext4 /dev/vda rw\n"
        "30 27 0:40 / /tmp rw - tmpfs tmpfs rw\n"
        "31 27 0:41 /export /home/me/net rw shared:7 master:2 - nfs4 server:/export rw\n"
        "32 27 0:42 / /home/me/fuse rw - fuse.sshfs me@host:/ rw\n"
        "33 27 0:43 / /mnt/host rw - 9p hostshare rw\n"
        "bad line\n"
    )
    assert _find.local_devices(str(mountinfo)) == {os.makedev(254, 0), os.makedev(0, 40)}
    assert _find.local_devices(str(tmp_path / "missing")) == frozenset()
    # This machine's own: the project's temporary directory is on a local file system here.
    assert os.stat(tmp_path).st_dev in _find.local_devices()


@_GNU_FIND
def test_where_finds_answer_cannot_stand_or_be_had_the_look_confirms_by_its_own_lstats(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Where a ctime can be older than the change that set it (a network file system, the
    # clock put back, whole-second timestamps), `find`'s answer cannot stand; without GNU
    # find, or past its command lines' bound, there is none.
    project, checkpoints = _find_world(tmp_path, monkeypatch)
    _settled_tree(project)
    _by_find(project, checkpoints)
    looked = checkpoints.look().scan
    assert looked is not None and looked.by_find == 3
    cache = checkpoints._cache  # pyright: ignore[reportPrivateUsage]
    assert cache is not None and cache.since is not None
    since = cache.since
    for name, value in (
        ("local_devices", lambda: frozenset()),
        ("time", SimpleNamespace(time_ns=lambda: since - 1)),
        ("_MAX_ARGS", 10),
        ("gnu_find", lambda: None),
    ):
        with monkeypatch.context() as patch:
            patch.setattr(_scan if name == "time" else _find, name, value)
            (project / "b" / "f1").write_text("changed")
            os.utime(project / "b" / "f1", ns=(1_000_000_123, 1_000_000_123))
            looked = checkpoints.look().scan
            assert looked is not None
            assert (looked.by_find, looked.confirmed, looked.read) == (0, 2, 1), name  # the root and a, by lstat
            assert looked.entries["b/f1"].size == len("changed")
            (project / "b" / "f1").write_text("b1")
    # A whole-second ctime anywhere in a directory: that directory is confirmed by lstat.
    os.utime(project / "b" / "f1", ns=(1_000_000_123, 1_000_000_123))
    _aged()
    checkpoints.look()  # b, written last, settled again
    cache.dirs["a/"].coarse = True
    looked = checkpoints.look().scan
    assert looked is not None and (looked.by_find, looked.confirmed) == (2, 3)
    fields = {"st_mtime_ns": 5_000_000_000, "st_ctime_ns": 5_000_000_000}  # 5 s since 1970, whole
    for stats, coarse in (([os.lstat(project / "a" / "f0")], False), ([os.stat_result((0,) * 10, fields)], True)):
        made = _scan._Dir((0, 0, ()), {}, False)  # pyright: ignore[reportPrivateUsage]
        made.stats, made.names = stats, ["f0"]
        made.seal(True, os.lstat(project))
        assert made.coarse is coarse


def test_a_file_written_in_the_same_second_as_a_look_is_read_again_by_the_next(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A file system that keeps whole seconds (ext4 with small inodes, FAT, some NFS) leaves a
    # second write in the same second with the same mtime and ctime: a file stamped within
    # the last two whole seconds is not trusted by its stat, nor is its directory in bulk.
    project, checkpoints, _ = _world(tmp_path)
    _settled_tree(project)
    stamped = 1_700_000_000 * 1_000_000_000
    os.utime(project / "b" / "f0", ns=(stamped, stamped))
    # Every look starts 1.5 s after that whole second: past a fine timestamp's 50 ms.
    monkeypatch.setattr(_scan, "time", SimpleNamespace(time_ns=lambda: stamped + 1_500_000_000))
    _point(checkpoints)
    for _ in range(2):
        looked = checkpoints.look().scan
        assert looked is not None
        assert looked.read == 1  # b/f0, every time until its second is well past
        assert looked.confirmed == 2  # the root and a; b is looked at name by name


def test_gits_default_excludes_file_is_read_below_the_projects_own_rules(tmp_path: Path, home: Path) -> None:
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "ignore").write_text("*.secret\n.idea/\n")
    project, checkpoints, _ = _world(tmp_path)
    (project / "a.secret").write_text("s")
    (project / "keep.secret").write_text("k")
    (project / ".idea").mkdir()
    (project / ".idea" / "workspace.xml").write_text("w")
    (project / ".gitignore").write_text("!keep.secret\n")  # the project's own rules come first
    _, looked = _point(checkpoints)
    assert sorted(looked.entries) == [".gitignore", "keep.secret"]
    assert sorted(looked.ignored) == [".idea/", "a.secret"]


def test_xdg_config_home_moves_gits_default_excludes_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    config = tmp_path / "config"
    (config / "git").mkdir(parents=True)
    (config / "git" / "ignore").write_text("*.log\n")
    monkeypatch.setenv("XDG_CONFIG_HOME", str(config))
    project, checkpoints, _ = _world(tmp_path)
    (project / "build.log").write_text("l")
    (project / "main.py").write_text("m")
    _, looked = _point(checkpoints)
    assert sorted(looked.entries) == ["main.py"]


@pytest.mark.skipif(shutil.which("git") is None, reason="core.excludesFile is git's setting: read through git")
def test_core_excludes_file_set_in_gitconfig_is_read_instead_of_the_default(tmp_path: Path, home: Path) -> None:
    (home / ".gitconfig").write_text("[core]\n\texcludesFile = ~/my-excludes\n")
    (home / "my-excludes").write_text("*.tmp\n")
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "ignore").write_text("*.py\n")  # not read: the setting names another
    project, checkpoints, _ = _world(tmp_path)
    (project / "scratch.tmp").write_text("t")
    (project / "main.py").write_text("m")
    _, looked = _point(checkpoints)
    assert sorted(looked.entries) == ["main.py"]
    assert looked.ignored == ["scratch.tmp"]


@pytest.mark.skipif(shutil.which("git") is None, reason="core.excludesFile is git's setting: read through git")
def test_the_global_core_excludes_file_is_read_when_git_refuses_the_projects_own_config(
    tmp_path: Path, home: Path
) -> None:
    (home / ".gitconfig").write_text("[core]\n\texcludesFile = ~/my-excludes\n")
    (home / "my-excludes").write_text("*.tmp\n")
    (home / ".config" / "git").mkdir(parents=True)
    (home / ".config" / "git" / "ignore").write_text("*.py\n")  # not read: the setting names another
    project, checkpoints, _ = _world(tmp_path)
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    (project / ".git" / "config").write_text("[core\n")  # git refuses every command here
    (project / "scratch.tmp").write_text("t")
    (project / "main.py").write_text("m")
    _, looked = _point(checkpoints)
    assert sorted(looked.entries) == ["main.py"]
    assert looked.ignored == ["scratch.tmp"]


def _two_processes(tmp_path: Path) -> tuple[Path, Checkpoints, Path, Checkpoints]:
    """Two bingo processes' checkpoints in one store: `b`'s project holds one file kept
    nowhere else; `a`'s project is big enough that its checkpoint passes the bound."""
    store = tmp_path / "checkpoints"
    project_b = tmp_path / "b"
    (project_b / "d").mkdir(parents=True)
    (project_b / "d" / "f").write_bytes(b"only b has this")
    os.utime(project_b / "d" / "f", ns=(1_000_000_123, 1_000_000_123))
    project_a = tmp_path / "a"
    project_a.mkdir()
    b = Checkpoints(store, project_b, lambda _: None, max_bytes=3000)
    a = Checkpoints(store, project_a, lambda _: None, max_bytes=3000)
    return project_a, a, project_b, b


def _whole(checkpoints: Checkpoints, point: Point) -> None:
    """Every copy `point` names is there and is what it was."""
    for entry in checkpoints.store.manifest(point.manifest).values():
        if entry.kind == "file":
            checkpoints.store.get(entry.ref)


def test_a_prune_by_another_process_between_two_looks_leaves_no_checkpoint_naming_a_removed_object(
    tmp_path: Path,
) -> None:
    project_a, a, _, b = _two_processes(tmp_path)
    b.take(session="old", seq=0, turn=1, label="p")  # b's process remembers d/f's digest
    (project_a / "big").write_bytes(os.urandom(4000))
    a.take(session="new", seq=0, turn=1, label="p")  # past the bound: "old" goes, and d/f's copy with it
    assert b.points("old") == []
    b.take(session="old", seq=1, turn=2, label="q")
    [point] = b.points("old")
    _whole(b, point)


def test_no_prune_removes_what_another_process_is_looking_at_it_prunes_at_its_next_record(tmp_path: Path) -> None:
    project_a, a, _, b = _two_processes(tmp_path)
    b.take(session="old", seq=0, turn=1, label="p")
    (project_a / "big").write_bytes(os.urandom(4000))
    pruned: list[bool] = []

    def meanwhile() -> bool:
        # b is in the middle of its look when a's checkpoint passes the bound.
        if not pruned:
            a.take(session="new", seq=0, turn=1, label="p")
            pruned.append(b.points("old") == [])
        return False

    b.take(session="old", seq=1, turn=2, label="q", stop=meanwhile)
    assert pruned == [False]  # put off while b looked
    for point in b.points("old"):
        _whole(b, point)
    (project_a / "more").write_bytes(os.urandom(10))
    a.take(session="new", seq=1, turn=2, label="p")
    assert b.points("old") == []  # the prune put off is done at a's next record


def test_a_look_waits_for_another_bingos_prune_only_until_its_time_is_up(tmp_path: Path) -> None:
    project, checkpoints, said = _world(tmp_path)
    (project / "f").write_text("x")
    lock = tmp_path / "checkpoints" / "store.lock"
    lock.parent.mkdir(parents=True, exist_ok=True)
    fd = os.open(lock, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_EX)  # as another bingo's prune holds it
    try:
        done = threading.Thread(
            target=lambda: checkpoints.take(session="s", seq=0, turn=1, label="p", stop=lambda: True)
        )
        done.start()
        done.join(10)
        assert not done.is_alive()
    finally:
        os.close(fd)
    assert said == [
        "no checkpoint was taken before this prompt: another bingo held the checkpoints (removing old ones)"
        " for too long; the turn goes on"
    ]
    assert checkpoints.points("s") == []
