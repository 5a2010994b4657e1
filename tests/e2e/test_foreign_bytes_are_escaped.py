"""Issue 12, item 1 (INTERFACE.md §8): no byte a plugin, a model or a file name sends can draw
on the person's terminal. The zoo's `escapes` plugin puts one hostile string (window titles
ended by BEL and by ST, an OSC 52 clipboard write, a screen clear, a right-to-left override)
after a label into each thing bingo shows; the scripted model puts it into its text and into
a tool's input; a project directory is named with it. Each output path is run through the real
binary, under `-p` (a pipe) and in a real pseudo-terminal, and the hostile string must arrive
escaped (`\\x1b]0;pwned...`) under its label, and never raw.

On the pipe no ESC, BEL or override byte may appear at all. On the terminal bingo itself draws
with ESC, so what is checked there is that the hostile payload's own sequences (`ESC]0;pwned`,
`ESC]52;c;`, `ESC]0;x`), BEL and the override never arrive, and that each label's escaped
form is on the screen.
"""

from __future__ import annotations

import ast
import re
import time
from pathlib import Path

import pexpect
import pytest

from tests.e2e._bingo import BINGO, TEST_PLUGINS, Sandbox, no_traceback
from tests.e2e._scripted import text, tool, use_scripted_model
from tests.e2e._zoo import call, fault, plugin_notices, zoo

HOSTILE = "\x1b]0;pwned\x07\x1b]52;c;cHduZWQ=\x07\x1b[2J\x1b]0;x\x1b\\\u202eevil"
"""What the zoo's `escapes` member says after each label (its `HOSTILE`)."""
SHOWN = r"\x1b]0;pwned\x07\x1b]52;c;cHduZWQ=\x07\x1b[2J\x1b]0;x\x1b\<U+202E>evil"
"""HOSTILE as the person must see it."""
MARKDOWN_SHOWN = r"\x1b]0;pwned\x1b]52;c;cHduZWQ=\x1b[2J\x1b]0;x\x1b\<U+202E>evil <U+202E>"
"""HOSTILE and `&#x202e;` in a markdown View, as the terminal draws it: rich drops BEL from
text (so it is not shown at all) and markdown decodes the reference into the override."""
MODEL_SHOWN = r"\x1b]0;pwned\x07\x1b]52;c;cHduZWQ=\x07\x1b[2J\x1b]0;x\x1b<U+202E>evil"
"""HOSTILE as the model's text on a terminal: escaped, then read as markdown (ADR-0017), where
the payload's own backslash before `<` is markdown's escape of it."""
RAW = ("\x1b]0;pwned", "\x1b]52;c;", "\x1b]0;x", "\u202e")
"""The hostile payload's own sequences: none may reach a terminal live."""
DIRECTORY = "x\x1b]0;pwned\x1b\\\x1b[2J"
"""A project plugin's directory name, seen before anything of the project is trusted."""
DIRECTORY_SHOWN = r"x\x1b]0;pwned\x1b\\x1b[2J"

WAIT = 20.0
"""The longest a terminal run waits for one thing it expects (a loaded machine starts slowly)."""
_ANSI = re.compile(r"\x1b(\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b]*(\x07|\x1b\\)|[()][0-9A-Za-z]|[=>78])")
"""bingo's own drawing (CSI, OSC, charset, keypad), stripped to read the screen as text."""

TURN = [
    [text(f"model-text {HOSTILE}\n"), tool("t1", "plugin__escapes__poke", {"what": f"model-input {HOSTILE}"})],
    [tool("t2", "plugin__escapes__fail", {})],
    [text("done.")],
]
"""A model turn: hostile text (streamed in pieces), a hostile input chosen for a tool whose
result shows a hostile View, then a tool that fails with a hostile error."""

# (what is run, its exit status, the labels on stdout, the labels on stderr)
PATHS = [
    pytest.param("/shout", 0, ["command-text"], [], id="command-text"),
    pytest.param("/shout error", 1, [], ["command-error"], id="command-error"),
    pytest.param("/shout view", 0, ["view-title", "view-column", "view-cell"], [], id="command-view"),
    pytest.param("/shout notice", 0, [], ["escapes: host-notice"], id="host-notice"),
    pytest.param("/help", 0, ["command-family", "/shout args-hint", "command-hint", "/command-name"], [], id="help"),
    pytest.param("/tools", 0, ["plugin__escapes__tool-name"], [], id="tools"),
    pytest.param(
        "/plugins",
        0,
        ["handshake-version", "tool plugin__escapes__tool-name", "command /command-name"],
        [],
        id="plugins",
    ),
    pytest.param(
        "go",
        0,
        ["model-text", "display-title", "display-column", "display-cell", "display-markdown", "display-code"],
        [],
        id="model-turn",
    ),
]


def _box(tmp_path: Path, **settings: object) -> Sandbox:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "zoo" / "escapes")
    use_scripted_model(box, TURN, **settings)
    return box


def _no_raw_bytes(stream: str) -> None:
    assert "\x1b" not in stream and "\x07" not in stream and "\u202e" not in stream, stream


# --- a pipe ---------------------------------------------------------------------------


@pytest.mark.parametrize(("prompt", "status", "out", "err"), PATHS)
def test_under_print_no_escape_reaches_the_pipe_and_each_is_shown_escaped(
    tmp_path: Path, prompt: str, status: int, out: list[str], err: list[str]
) -> None:
    box = _box(tmp_path, permissions={"allow": ["plugin__*"]})
    result = box.run("-p", prompt)
    assert result.returncode == status, result.stderr
    assert no_traceback(result)
    _no_raw_bytes(result.stdout)
    _no_raw_bytes(result.stderr)
    for label in out:
        assert f"{label} {SHOWN}" in result.stdout, label
    for label in err:
        assert f"{label} {SHOWN}" in result.stderr, label


def test_a_directory_named_with_escapes_is_shown_escaped_before_any_trust_and_by_trust(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "zoo" / "escapes", layer="project", name=DIRECTORY)
    listed = box.run("-p", "/plugins")
    assert listed.returncode == 0, listed.stderr
    for stream in (listed.stdout, listed.stderr):
        _no_raw_bytes(stream)
    assert f"plugins {DIRECTORY_SHOWN};" in listed.stderr  # the notice of what was left out
    assert f"plugin {DIRECTORY_SHOWN} never trusted" in listed.stdout  # /plugins' trust line
    assert f"{box.project}/.bingo/plugins/{DIRECTORY_SHOWN}" in listed.stdout  # and its table
    trusted = box.run("--trust")
    assert trusted.returncode == 0, trusted.stderr
    _no_raw_bytes(trusted.stdout + trusted.stderr)
    assert f"plugin {DIRECTORY_SHOWN}" in trusted.stdout


def test_an_error_line_naming_a_path_with_escapes_is_shown_escaped(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    project = box.project / "x\x1b]0;pwned\x07"
    (project / ".bingo").mkdir(parents=True)
    (project / ".bingo" / "settings.json").write_text("{not json", encoding="utf-8")
    result = box.run("-p", "/help", cwd=project)
    assert result.returncode == 2
    _no_raw_bytes(result.stderr)
    assert result.stderr.startswith(f"bingo: {box.project}/x\\x1b]0;pwned\\x07/.bingo/settings.json is not valid JSON")


# --- a terminal -----------------------------------------------------------------------


class _Terminal:
    """bingo in a wide pseudo-terminal: every byte it wrote (`raw`), and the screen as text."""

    def __init__(self, box: Sandbox, *args: str) -> None:
        env = {**box.env, "TERM": "xterm", "LANG": "C.UTF-8", "PROMPT_TOOLKIT_NO_CPR": "1"}
        # Wide enough that no table cell here wraps: each label's escaped form stays on one line.
        self.child = pexpect.spawn(
            BINGO, list(args), cwd=str(box.project), env=env, dimensions=(50, 800), encoding="utf-8", timeout=WAIT
        )
        self.raw = ""
        self._pos = 0

    def text(self) -> str:
        return _ANSI.sub("", self.raw).replace("\r", "")

    def shown(self, what: str) -> None:
        """Read on until `what` is on the screen after what was last found; move past it."""
        deadline = time.monotonic() + WAIT
        while (found := self.text().find(what, self._pos)) < 0:
            left = deadline - time.monotonic()
            assert left > 0, f"{what!r} was not shown; the screen ends with {self.text()[-1500:]!r}"
            try:
                self.raw += self.child.read_nonblocking(65536, timeout=min(left, 0.2))
            except pexpect.TIMEOUT:
                continue
        self._pos = found + len(what)

    def ends(self) -> int:
        """Read to the end; bingo's exit status."""
        deadline = time.monotonic() + WAIT
        while True:
            assert time.monotonic() < deadline, f"bingo did not exit; the screen ends with {self.text()[-1500:]!r}"
            try:
                self.raw += self.child.read_nonblocking(65536, timeout=0.2)
            except pexpect.TIMEOUT:
                continue
            except pexpect.EOF:
                break
        self.child.close()
        status = self.child.exitstatus
        assert status is not None
        return status

    def close(self) -> None:
        self.child.close(force=True)


def _never_raw(screen: _Terminal) -> None:
    for sequence in RAW:
        assert sequence not in screen.raw, (sequence, screen.raw[-1500:])
    assert "\x07" not in screen.raw  # bingo's own drawing rings no bell
    assert "Traceback" not in screen.text()


@pytest.mark.parametrize(("prompt", "status", "out", "err"), PATHS)
def test_on_a_terminal_no_escape_of_a_plugin_or_a_model_arrives_and_each_is_shown_escaped(
    tmp_path: Path, prompt: str, status: int, out: list[str], err: list[str]
) -> None:
    box = _box(tmp_path, permissions={"allow": ["plugin__*"]})
    screen = _Terminal(box, prompt)
    try:
        assert screen.ends() == status
    finally:
        screen.close()
    _never_raw(screen)
    shown = screen.text()
    for label in out + err:
        expected = MARKDOWN_SHOWN if label == "display-markdown" else MODEL_SHOWN if label == "model-text" else SHOWN
        assert f"{label} {expected}" in shown, (label, shown[-3000:])


def test_on_a_terminal_a_model_chosen_input_and_a_failed_call_are_shown_escaped(tmp_path: Path) -> None:
    box = _box(tmp_path)  # no allow rule: the gate asks, showing the input the model chose
    screen = _Terminal(box, "go")
    try:
        for tool in ("poke", "fail"):
            # Each question by its own name: a redraw of the first question under load prints its
            # options again, and a key sent before the second question is asked never answers it.
            screen.shown(f"bingo wants to run plugin__escapes__{tool}")
            screen.shown("[y] yes, once")
            screen.child.send("y")
        assert screen.ends() == 0
    finally:
        screen.close()
    _never_raw(screen)
    shown = screen.text()
    assert (
        'bingo wants to run plugin__escapes__poke\n  {\n    "what": "model-input \\u001b]0;pwned\\u0007' in shown
    )  # JSON escapes it
    assert f"✓ plugin__escapes__poke model-input {SHOWN[:40]}" in shown  # the finished line
    assert re.search(rf"✗ plugin__escapes__fail: tool-error {re.escape(SHOWN)} · [0-9.]+ s", shown)


def test_on_a_terminal_the_trust_question_and_notice_show_a_directory_named_with_escapes_escaped(
    tmp_path: Path,
) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "zoo" / "escapes", layer="project", name=DIRECTORY)
    screen = _Terminal(box, "/plugins")
    try:
        screen.shown("Trust them and use them?")
        screen.child.send("n")
        assert screen.ends() == 0
    finally:
        screen.close()
    _never_raw(screen)
    assert "\x1b]0;pwned\x1b\\" not in screen.raw
    shown = screen.text()
    assert f"  plugin {DIRECTORY_SHOWN} (new)" in shown  # the question
    assert f"plugins {DIRECTORY_SHOWN};" in shown  # the notice of what was left out
    assert f"plugin {DIRECTORY_SHOWN} never trusted" in shown  # /plugins


def test_the_zoo_says_what_these_tests_expect() -> None:
    # The expectation above is written out by hand; the plugin's own constant must match it.
    source = (TEST_PLUGINS / "zoo" / "_zoo.py").read_text(encoding="utf-8")
    found = re.search(r'^HOSTILE = (".*")$', source, re.MULTILINE)
    assert found is not None
    assert ast.literal_eval(found.group(1)) == HOSTILE


def test_a_crashing_plugins_last_words_are_quoted_escaped(tmp_path: Path) -> None:
    box = zoo(tmp_path, "escape-crash", steps=[call("z1", "plugin__escape-crash__poke")])
    with fault("escape-crash"):
        result = box.run("-p", "go")
    assert result.returncode == 0, result.stderr
    assert "\x1b" not in result.stderr + result.stdout and "\x07" not in result.stderr + result.stdout
    [notice] = plugin_notices(result.stderr, "escape-crash")
    assert "exited with code 9" in notice
    assert "]0;pwned" in notice and "]52;c;" in notice  # quoted, escaped: readable, not live
