"""The head start of a repeated slash command, black-box (issue 6, ADR-0014): the second
`bingo -p "/wordcount ..."` in a directory begins the plugin before bingo has imported
itself, and only while everything that decided it is unchanged; a project's plugin never
starts before its trust is checked; a begun plugin the run does not want ends with the run."""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable
from pathlib import Path

from tests.e2e._bingo import EXAMPLES, TEST_PLUGINS, Sandbox, no_traceback

EARLY = "(begun before bingo had started)"


def _starts(box: Sandbox, name: str) -> list[str]:
    """bingo's log lines for each start of plugin `name`, oldest first."""
    log = box.logs / f"plugin-{name}.log"
    if not log.exists():
        return []
    return [line for line in log.read_text(encoding="utf-8").splitlines() if "] starting " in line]


def _sandbox(tmp_path: Path) -> Sandbox:
    box = Sandbox(tmp_path)
    box.install(EXAMPLES / "wordcount")
    (box.project / "notes.txt").write_text("the quick brown fox\n", encoding="utf-8")
    return box


def _wordcount(box: Sandbox, env: dict[str, str] | None = None) -> str:
    """Run /wordcount; the log line of the start it made."""
    before = len(_starts(box, "wordcount"))
    result = box.run("-p", "/wordcount notes.txt", env=env)
    assert result.returncode == 0, result.stderr
    assert "words           4" in result.stdout and result.stderr == ""
    [line] = _starts(box, "wordcount")[before:]
    return line


def _living(matches: Callable[[list[str]], bool]) -> list[int]:
    """The living processes whose argv `matches`."""
    found: list[int] = []
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            argv = (Path("/proc") / entry / "cmdline").read_bytes().decode(errors="replace").split("\0")
            state = (Path("/proc") / entry / "stat").read_text().rsplit(")", 1)[-1].split()[0]
        except OSError:
            continue
        if matches(argv) and state != "Z":
            found.append(int(entry))
    return found


def _naming(marker: str) -> list[int]:
    """The living processes with `marker` in their argv."""
    return _living(lambda argv: any(marker in word for word in argv))


def _janitor_of(bingo: int) -> list[int]:
    """The janitor (and its wardens) of the bingo run with pid `bingo`."""
    return _living(lambda argv: any("import _janitor;" in word for word in argv) and str(bingo) in argv)


def test_a_janitor_is_known_by_its_command_line() -> None:
    # What `_janitor_of` looks for (so that "no janitor is left" below cannot pass by
    # looking for the wrong thing): one started the way bingo starts it, gone at EOF.
    from bingo.bridge import _early

    pid, sock = _early.spawn_janitor()
    try:
        assert pid in _janitor_of(os.getpid())  # (this test process may have its own already)
    finally:
        sock.close()
        os.waitpid(pid, 0)
    assert pid not in _janitor_of(os.getpid())


def test_the_second_run_of_a_command_begins_its_plugin_early(tmp_path: Path) -> None:
    box = _sandbox(tmp_path)
    assert EARLY not in _wordcount(box)
    assert EARLY in _wordcount(box)
    assert EARLY in _wordcount(box)
    assert (box.bingo_home / "data" / "launches.json").is_file()


def test_a_changed_settings_file_manifest_or_environment_means_no_head_start(tmp_path: Path) -> None:
    box = _sandbox(tmp_path)
    _wordcount(box)
    assert EARLY in _wordcount(box)
    box.settings({"plugins": {"wordcount": {}}})
    assert EARLY not in _wordcount(box)
    assert EARLY in _wordcount(box)
    manifest = box.bingo_home / "plugins" / "wordcount" / "plugin.json"
    time.sleep(0.01)  # a rewrite with the same bytes still changes its ctime
    manifest.write_bytes(manifest.read_bytes())
    assert EARLY not in _wordcount(box)
    assert EARLY in _wordcount(box)
    assert EARLY not in _wordcount(box, env={"SOMETHING_NEW": "1"})
    assert EARLY in _wordcount(box, env={"SOMETHING_NEW": "1"})


def test_another_directory_or_command_has_no_head_start(tmp_path: Path) -> None:
    box = _sandbox(tmp_path)
    _wordcount(box)
    elsewhere = box.project / "sub"
    elsewhere.mkdir()
    (elsewhere / "notes.txt").write_text("one two\n", encoding="utf-8")
    result = box.run("-p", "/wordcount notes.txt", cwd=elsewhere)
    assert result.returncode == 0, result.stderr
    assert EARLY not in _starts(box, "wordcount")[-1]
    assert box.run("-p", "/help").returncode == 0
    assert len(_starts(box, "wordcount")) == 2


def test_a_project_plugin_is_never_begun_before_its_trust_is_checked(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "renamable", layer="project")
    assert box.run("--trust").returncode == 0
    for _ in range(3):
        result = box.run("-p", "/hello")
        assert result.returncode == 0, result.stderr
        assert result.stdout == "hello from renamable\n"
    starts = _starts(box, "renamable")
    assert len(starts) == 3 and not any(EARLY in line for line in starts)
    launches = box.bingo_home / "data" / "launches.json"
    assert not launches.exists() or json.loads(launches.read_text(encoding="utf-8"))["records"] == {}


def test_a_begun_plugin_the_run_does_not_want_ends_with_the_run(tmp_path: Path) -> None:
    box = _sandbox(tmp_path)
    _wordcount(box)
    path = box.bingo_home / "data" / "launches.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    [record] = data["records"].values()
    marker = f"unwanted-{tmp_path.name}"
    record["spawn"][0]["argv"].append(marker)  # a start the host will not ask for
    path.write_text(json.dumps(data), encoding="utf-8")
    result = box.run("-p", "/wordcount notes.txt")
    assert result.returncode == 0, result.stderr
    assert "words           4" in result.stdout and result.stderr == ""
    assert no_traceback(result)
    assert EARLY not in _starts(box, "wordcount")[-1]
    deadline = time.monotonic() + 5
    while _naming(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _naming(marker) == []
    assert "a plugin begun early was not wanted" in (box.logs / "bingo.log").read_text(encoding="utf-8")
    # The run put the record right again: the next run has its head start.
    assert EARLY in _wordcount(box)


def test_a_broken_launch_record_is_no_head_start_and_is_rewritten(tmp_path: Path) -> None:
    box = _sandbox(tmp_path)
    path = box.bingo_home / "data" / "launches.json"
    path.parent.mkdir(parents=True)
    path.write_text("{not json", encoding="utf-8")
    assert EARLY not in _wordcount(box)
    assert EARLY in _wordcount(box)


def test_a_run_that_fails_before_taking_its_head_start_leaves_nothing_behind(tmp_path: Path) -> None:
    # The begun plugin reads EOF as its warden is told to end: the warden must not lose how
    # it ended and wait out its grace (it did, in one run in 5 to 25, for 3 s).
    box = _sandbox(tmp_path)
    _wordcount(box)
    for _ in range(20):
        run = box.popen("--resume", "nosuch", "-p", "/wordcount notes.txt")
        _out, err = run.communicate(timeout=60)
        assert run.returncode == 1 and err == "bingo: no session nosuch: list this project's sessions with /sessions\n"
        deadline = time.monotonic() + 2
        while _janitor_of(run.pid) and time.monotonic() < deadline:
            time.sleep(0.02)
        assert _janitor_of(run.pid) == []
    # Each of those runs had its head start: the record it began from still holds.
    records = json.loads((box.bingo_home / "data" / "launches.json").read_text(encoding="utf-8"))["records"]
    assert list(records) == [f"{box.project}\0wordcount"]
    assert EARLY in _wordcount(box)


def test_a_manifest_that_adds_to_the_environment_has_its_head_start_too(tmp_path: Path) -> None:
    box = _sandbox(tmp_path)
    manifest_path = box.bingo_home / "plugins" / "wordcount" / "plugin.json"
    manifest = json.loads(manifest_path.read_text(encoding="utf-8"))
    manifest["entry"]["env"] = {"WORDCOUNT_HOME": "${PLUGIN_ROOT}/home", "LANG": "C.UTF-8"}
    manifest_path.write_text(json.dumps(manifest), encoding="utf-8")
    assert EARLY not in _wordcount(box)
    assert EARLY in _wordcount(box)
    record = json.loads((box.bingo_home / "data" / "launches.json").read_text(encoding="utf-8"))
    [entry] = record["records"].values()
    assert entry["spawn"][0]["extra"]["WORDCOUNT_HOME"] == str(manifest_path.parent / "home")
