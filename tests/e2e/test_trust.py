"""Trust, through the real binary: a project's own plugins start only once the project is
trusted (`bingo --trust`), and again only as they were trusted; without a terminal an
untrusted project's plugins are left out with one notice saying how to trust them; user
plugins never need trust. (Settings: test_trust_settings.py; the fingerprint's reach:
test_trust_fingerprint.py; names: test_untrusted_plugin_hides_nothing.py.)"""

from __future__ import annotations

import json
import re
import time
from pathlib import Path

import pexpect

from tests.e2e import _bingo
from tests.e2e._bingo import TEST_PLUGINS, Sandbox, no_traceback

PLUGIN = "renamable"

WAIT = 10.0
"""The longest one expectation on the terminal waits."""

_ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07]*\x07|[()][0-9A-Za-z]|[=>78])")


def _starts(box: Sandbox) -> list[str]:
    """The names the plugin wrote on each start (an absent file: it never started)."""
    path = box.bingo_home / "data" / "plugins" / PLUGIN / "starts.txt"
    return path.read_text(encoding="utf-8").split() if path.exists() else []


def _notice_lines(stderr: str) -> list[str]:
    return [line for line in stderr.splitlines() if "so bingo left out what it brings" in line]


def test_an_untrusted_projects_plugins_are_skipped_with_one_notice(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / PLUGIN, layer="project")
    result = box.run("-p", "/help")
    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    [line] = _notice_lines(result.stderr)
    project = box.project.resolve()
    assert line == (
        f"bingo: {project} is not a trusted project, so bingo left out what it brings: plugins renamable; "
        f"run bingo --trust in {project} to trust it as it is now"
    )
    assert len(result.stderr.splitlines()) == 1
    assert _starts(box) == []
    assert "/hello" not in result.stdout


def test_bingo_trust_records_the_project_and_its_plugins_then_start(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / PLUGIN, layer="project")
    trusted = box.run("--trust")
    assert trusted.returncode == 0, trusted.stderr
    assert trusted.stderr == ""
    [line] = trusted.stdout.splitlines()
    assert line == f"trusted {box.project.resolve()} as it is now: plugin renamable"
    assert _starts(box) == []  # trusting starts nothing
    record = json.loads((box.bingo_home / "data" / "trust.json").read_text(encoding="utf-8"))
    assert list(record["projects"]) == [str(box.project.resolve())]
    result = box.run("-p", "/hello")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello from renamable\n"
    assert _notice_lines(result.stderr) == []
    assert _starts(box) == [PLUGIN]


def test_trust_from_a_subdirectory_trusts_the_project(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / PLUGIN, layer="project")
    inner = box.project / "src" / "deep"
    inner.mkdir(parents=True)
    assert box.run("--trust", cwd=inner).returncode == 0
    assert box.run("-p", "/hello").stdout == "hello from renamable\n"


def test_a_changed_plugin_is_skipped_until_trusted_again(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    target = box.install(TEST_PLUGINS / PLUGIN, layer="project")
    assert box.run("--trust").returncode == 0
    with (target / "main.py").open("a", encoding="utf-8") as script:
        script.write("# a change that came with a pull\n")
    result = box.run("-p", "/help")
    assert result.returncode == 0, result.stderr
    [line] = _notice_lines(result.stderr)
    assert f"{box.project.resolve()} changed since you trusted it (.bingo/plugins/renamable/main.py), so" in line
    assert line.endswith(" to trust it as it is now")
    assert _starts(box) == []
    assert box.run("--trust").returncode == 0
    assert box.run("-p", "/hello").stdout == "hello from renamable\n"


def test_a_new_file_in_a_trusted_plugin_counts_as_a_change(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    target = box.install(TEST_PLUGINS / PLUGIN, layer="project")
    assert box.run("--trust").returncode == 0
    (target / "helper.py").write_text("print('new code')\n", encoding="utf-8")
    assert len(_notice_lines(box.run("-p", "/help").stderr)) == 1


def test_a_trusted_python_plugin_stays_trusted_after_it_runs(tmp_path: Path) -> None:
    """Compiled caches count (Python loads a .pyc without checking its source), so a project
    plugin is started with PYTHONDONTWRITEBYTECODE: running it leaves its directory as trusted."""
    box = Sandbox(tmp_path)
    target = box.install(TEST_PLUGINS / PLUGIN, layer="project")
    (target / "helper.py").write_text("WORD = 'hello'\n", encoding="utf-8")
    (target / "main.py").write_text(
        "import helper\n" + (target / "main.py").read_text(encoding="utf-8"), encoding="utf-8"
    )
    assert box.run("--trust").returncode == 0
    for _ in range(2):
        result = box.run("-p", "/hello")
        assert result.stdout == "hello from renamable\n", result.stderr
    assert not (target / "__pycache__").exists()


def test_user_plugins_need_no_trust(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / PLUGIN, layer="user")
    result = box.run("-p", "/hello")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "hello from renamable\n"
    assert result.stderr == ""


def test_a_projects_own_settings_cannot_trust_it(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / PLUGIN, layer="project")
    # Whatever a repository writes in its own settings, trust is not among them.
    (box.project / ".bingo" / "trust.json").write_text(
        json.dumps({"version": 1, "projects": {str(box.project.resolve()): {"plugins": {}}}}), encoding="utf-8"
    )
    result = box.run("-p", "/help")
    assert len(_notice_lines(result.stderr)) == 1
    assert _starts(box) == []


def test_trust_in_a_project_without_plugins_says_there_is_nothing_to_trust(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    result = box.run("--trust")
    assert result.returncode == 0, result.stderr
    assert (
        result.stdout
        == f"{box.project.resolve()} brings nothing that needs trust (no plugins, .mcp.json, or settings beyond deny and ask)\n"
    )
    assert not (box.bingo_home / "data" / "trust.json").exists()


def _terminal(box: Sandbox) -> pexpect.spawn:
    env = {**box.env, "TERM": "xterm", "LANG": "C.UTF-8", "PROMPT_TOOLKIT_NO_CPR": "1"}
    return pexpect.spawn(
        _bingo.BINGO, [], cwd=str(box.project), env=env, dimensions=(40, 120), encoding="utf-8", timeout=WAIT
    )


class _Screen:
    """What the terminal has shown, escapes stripped; `shown` moves past each match."""

    def __init__(self, child: pexpect.spawn) -> None:
        self.child = child
        self.raw = ""
        self.pos = 0

    def text(self) -> str:
        return _ANSI.sub("", self.raw).replace("\r", "")

    def shown(self, pattern: str) -> None:
        rx = re.compile(pattern)
        deadline = time.monotonic() + WAIT
        while (found := rx.search(self.text(), self.pos)) is None:
            left = deadline - time.monotonic()
            assert left > 0, f"{pattern!r} was not shown; the screen ends with {self.text()[-800:]!r}"
            try:
                self.raw += self.child.read_nonblocking(65536, timeout=min(left, 0.2))
            except pexpect.TIMEOUT:
                continue
        self.pos = found.end()


def test_on_a_terminal_the_person_is_asked_once_and_yes_is_remembered(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / PLUGIN, layer="project")
    box.settings({"permissions": {"allow": ["read"], "deny": ["bash"]}, "model": "theirs"}, layer="project")
    child = _terminal(box)
    screen = _Screen(child)
    try:
        # Everything the project brings, in one screen: plugins by name, settings by key.
        screen.shown(
            r"brings\s+code\s+and\s+settings\s+of\s+its\s+own:\n  plugin renamable \(new\)\n  \.bingo/settings\.json: permissions\.allow, model \(new\)\n"
        )
        screen.shown(r"Trust them and use them\?")
        child.send("y")
        screen.shown(">")
        child.send("/hello\r")
        screen.shown("hello from renamable")
        screen.shown(">")
        child.sendcontrol("d")
        child.expect(pexpect.EOF, timeout=WAIT)
    finally:
        child.close(force=True)
    assert "Traceback" not in screen.text()
    assert _starts(box) == [PLUGIN]
    # Remembered: the next run asks nothing and starts it.
    assert box.run("-p", "/hello").stdout == "hello from renamable\n"


def test_on_a_terminal_a_no_skips_the_plugins_with_the_notice(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / PLUGIN, layer="project")
    child = _terminal(box)
    screen = _Screen(child)
    try:
        screen.shown(r"Trust them and use them\?")
        child.send("n")
        screen.shown("so bingo left out what it brings: plugins renamable")
        screen.shown(">")
        child.sendcontrol("d")
        child.expect(pexpect.EOF, timeout=WAIT)
    finally:
        child.close(force=True)
    assert _starts(box) == []
    assert not (box.bingo_home / "data" / "trust.json").exists()
