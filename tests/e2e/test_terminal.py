"""The terminal surface through the real binary in a real pseudo-terminal (pexpect): streamed
text, slash completion, a table drawn with borders, the gate's questions with "yes, always"
saved, a command hook's question, and Ctrl-C interrupting a slow bridged tool. Plus: `--print` never imports the
terminal's libraries.

The screen is what a terminal emulator (pyte) shows, with what scrolled off above it: a
test reads what a person would see, however bingo's writes were split (ADR-0041).
"""

from __future__ import annotations

import bisect
import hashlib
import json
import re
import threading
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pexpect
import pytest

from tests.e2e._bingo import BINGO, EXAMPLES, TEST_PLUGINS, Sandbox
from tests.e2e._declares import install_declaring
from tests.support.model_server import ModelServer, Reply
from tests.support.vt import Terminal

WAIT = 10.0
"""The longest any one expectation waits."""


class Screen:
    """What a person sees in a pseudo-terminal: its output rendered by a terminal emulator
    (tests/support/vt.py), the rows that scrolled off kept above the screen's. `expect` waits
    for a pattern in that text, and the next looks from the start of the line it ended on:
    what bingo redraws in place there (the live area, the prompt as it is typed and accepted)
    is read again as it is redrawn, as a person reads it, never as the pieces the raw stream
    wrote. Lines above it stay where they were drawn."""

    def __init__(self, child: pexpect.spawn, *, cpr: bool = False) -> None:
        self.child = child
        self.raw = ""
        """Every character bingo wrote, escapes and all."""
        rows, columns = child.getwinsize()
        self._terminal = Terminal(columns, rows)
        self._from = 0
        """The row (counted from the first of the scrollback) whose line the next `expect`
        looks from."""
        self.cpr = cpr
        """Answer cursor-position requests, as a terminal does (prompt_toolkit draws its
        bottom toolbar only once it knows the rows below the cursor)."""
        self._answered = 0

    def text(self) -> str:
        return self._terminal.text()

    def expect(self, pattern: str, timeout: float = WAIT) -> re.Match[str]:
        rx = re.compile(pattern)
        deadline = time.monotonic() + timeout
        ended = False
        while True:
            shown, starts, lines = self._terminal.view()
            touched = self._terminal.touched()
            if touched is not None:
                self._from = min(self._from, touched)
            found = rx.search(shown, lines[self._from] if self._from < len(lines) else len(shown))
            if found:
                # The next expectation looks from the row this one ended on, or from higher up
                # if bingo redraws rows above it before then.
                self._from = bisect.bisect_right(starts, found.end()) - 1
                return found
            if ended:
                raise AssertionError(f"bingo exited before {pattern!r}; the screen ends with {shown[-1200:]!r}")
            left = deadline - time.monotonic()
            if left <= 0:
                raise AssertionError(f"{pattern!r} was not shown; the screen ends with {shown[-1200:]!r}")
            try:
                self.read(min(left, 0.2))
            except pexpect.EOF:
                ended = True

    def read(self, timeout: float) -> None:
        """What bingo writes within `timeout` s, onto the screen (EOF once it has exited)."""
        self._answer_cpr()
        try:
            written = self.child.read_nonblocking(65536, timeout=timeout)
        except pexpect.TIMEOUT:
            return
        self.raw += written
        self._terminal.feed(written)

    def _answer_cpr(self) -> None:
        while self.cpr and self._answered < self.raw.count("\x1b[6n"):
            self._answered += 1
            self.child.send("\x1b[1;1R")  # row 1: the whole screen is below the cursor

    def shown(self, pattern: str) -> re.Match[str]:
        """`pattern` is on the screen, anywhere from its start (as what was drawn before the
        first prompt, which `terminal()` waits for)."""
        found = re.search(pattern, self.text())
        assert found is not None, f"{pattern!r} was not shown; the screen is {self.text()[-1200:]!r}"
        return found

    def prompt(self) -> None:
        """Wait for the prompt to be drawn again after what was last seen. A key sent while
        output is being written may meet the terminal in cooked mode (prompt_toolkit prints
        above the prompt that way), where Ctrl-D is the line discipline's, not bingo's."""
        self.expect(">")

    def exits(self) -> int:
        """Wait for bingo to exit, reading what it writes until then; its exit status."""
        deadline = time.monotonic() + WAIT
        while True:
            left = deadline - time.monotonic()
            assert left > 0, f"bingo did not exit; the screen ends with {self.text()[-1200:]!r}"
            try:
                self.read(min(left, 0.2))
            except pexpect.EOF:
                break
        self.child.close()
        assert "Traceback" not in self.text()
        status = self.child.exitstatus
        assert status is not None
        return status


@contextmanager
def terminal(
    box: Sandbox,
    replies: list[Reply] | None = None,
    *args: str,
    model: bool = True,
    server: list[ModelServer] | None = None,
    cpr: bool = False,
) -> Iterator[Screen]:
    """bingo in a 120x40 xterm, its model the local model server (none with `model=False`;
    the server is appended to `server` when given); with no `args`, once its prompt is up.
    With `cpr`, the screen answers cursor-position requests, as a real terminal does."""
    with ModelServer(replies or []) as serving:
        if server is not None:
            server.append(serving)
        model_env = {"ANTHROPIC_BASE_URL": serving.url, "ANTHROPIC_API_KEY": "test"} if model else {}
        env = {
            **box.env,
            **model_env,
            "TERM": "xterm",
            "LANG": "C.UTF-8",
            # Unless `cpr`, the test is a terminal that answers no cursor-position request;
            # without this prompt_toolkit spends its first seconds waiting to learn that.
            **({} if cpr else {"PROMPT_TOOLKIT_NO_CPR": "1"}),
        }
        child = pexpect.spawn(
            BINGO, list(args), cwd=str(box.project), env=env, dimensions=(40, 120), encoding="utf-8", timeout=WAIT
        )
        try:
            screen = Screen(child, cpr=cpr)
            if not args:
                screen.expect(">")
            yield screen
        finally:
            child.close(force=True)


def test_a_typed_prompt_streams_the_models_text_and_ctrl_d_exits_cleanly(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    released = threading.Event()
    with terminal(box, [[("text", "Hello from"), ("pause", released), ("text", " the local model.")]]) as screen:
        screen.child.send("say hello\r")
        screen.expect("Hello from")  # shown while the model is still answering
        released.set()
        screen.expect(r"Hello from the local model\.")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
    assert "say hello" in (box.bingo_home / "data" / "history").read_text(encoding="utf-8")


def test_slash_completion_finishes_the_command_then_a_file_name(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(EXAMPLES / "wordcount")
    (box.project / "notes.txt").write_text("alpha beta gamma\n", encoding="utf-8")
    with terminal(box) as screen:
        screen.child.send("/wo")
        screen.expect("count the words in a file")  # the menu: the command and its hint
        screen.child.send("\t")
        screen.child.send("n")
        screen.expect("notes.txt")  # the plugin's own completion, from command/complete
        screen.child.send("\t")
        screen.child.send("\r")
        screen.expect("> /wordcount notes.txt\n")  # the line as it was submitted
        screen.expect(r"words\s*│\s*3")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0


def test_a_command_view_is_drawn_as_a_table_with_borders(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(EXAMPLES / "wordcount")
    (box.project / "notes.txt").write_text("one two three four\nfive\n", encoding="utf-8")
    with terminal(box) as screen:
        screen.child.send("/wordcount notes.txt\r")
        screen.expect("notes.txt")
        screen.expect(r"╭─+┬─+╮\n│ what +│ count │\n├─+┼─+┤\n")
        screen.expect(r"│ words +│ +5 │\n│ lines +│ +2 │\n│ characters │ +24 │\n╰─+┴─+╯")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0


def test_the_gate_asks_and_yes_always_is_saved_in_settings_local_json(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    replies: list[Reply] = [
        [("tool", "t1", "bash", {"command": "echo one"})],
        [("tool", "t2", "bash", {"command": "echo two"})],
        [("text", "Both ran.")],
    ]
    box.settings({"permissions": {"allow": ["read"]}}, layer="local")
    box.settings({"sandbox": {"mode": "off"}})  # without a sandbox, bash is asked about
    assert box.run("--trust").returncode == 0  # the local file's allow is the project's: trust it
    with terminal(box, replies) as screen:
        screen.child.send("run two commands\r")
        screen.expect(
            r"bingo wants to run bash\n +echo one\n +\[y\] yes, once +\[a\] yes, always: \S.*? +\[n\] no \(Esc\)"
        )
        screen.child.send("y")
        screen.expect("allowed bash once")
        # "always" shows the rule it adds (what the kernel passes: the bash rule for this
        # command, INTERFACE.md §3) and then says what it wrote where.
        rule = screen.expect(
            r"bingo wants to run bash\n +echo two\n +\[y\] yes, once +\[a\] yes, always: (\S.*?) +\[n\] no"
        ).group(1)
        screen.child.send("a")
        local = box.project / ".bingo" / "settings.local.json"
        screen.expect(rf"bingo: allowed {re.escape(rule)} from now on: saved in {re.escape(str(local))}\n")
        screen.expect(r"✓ bash echo two")
        screen.expect(r"Both ran\.")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
    saved = json.loads((box.project / ".bingo" / "settings.local.json").read_text(encoding="utf-8"))
    assert saved == {"permissions": {"allow": ["read", rule]}}
    assert rule.startswith("bash")
    # bingo wrote the file itself: it stays trusted as written, so the next run asks nothing.
    record = json.loads((box.bingo_home / "data" / "trust.json").read_text(encoding="utf-8"))
    digest = hashlib.sha256((box.project / ".bingo" / "settings.local.json").read_bytes()).hexdigest()
    assert record["projects"][str(box.project.resolve())]["items"] == {"settings.local.json": digest}
    again = box.run("-p", "/help")
    assert "left out" not in again.stderr, again.stderr


def test_a_command_hooks_ask_is_put_to_the_person_and_yes_runs_the_command(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    install_declaring(box, "zguard")
    hook = {"name": "guard", "site": "command", "points": ["before"]}
    box.settings(
        {"plugins": {"zguard": {"hooks": [hook], "commands": ["deploy"], "answers": {"guard": {"outcome": "ask"}}}}}
    )
    with terminal(box) as screen:
        screen.child.send("/deploy now\r")
        screen.expect(r"\? hook guard \(zguard\) asks: run /deploy now\?\n +\[y\] yes +\[n\] no \(Esc\)")
        screen.child.send("y")
        screen.expect(r"zguard's own /deploy")
        screen.prompt()
        screen.child.send("/deploy again\r")
        screen.expect(r"asks: run /deploy again\?")
        screen.child.send("n")
        screen.expect(r"/deploy was refused: the person said no")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0


def test_ctrl_c_sends_tool_cancel_to_a_slow_bridged_tool_and_ends_the_turn(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "slow")
    # slow's contributor and hook never answer: short deadlines keep the turn quick.
    box.settings(
        {"permissions": {"allow": ["plugin__slow__wait"]}, "deadlines": {"hook/decide": 0.3, "context/contribute": 0.3}}
    )
    with terminal(box, [[("tool", "t1", "plugin__slow__wait", {})], [("text", "not reached")]]) as screen:
        screen.child.send("wait for me\r")
        screen.expect("contributor late gave no answer")  # notices, under their source's name
        screen.expect(r"⋯ plugin__slow__wait")
        screen.expect("waiting")  # its tool/progress line
        screen.child.sendcontrol("c")
        screen.expect("waiting for plugin__slow__wait to answer its cancel")
        screen.expect(r"✓ plugin__slow__wait")
        screen.expect("the turn was interrupted")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
    assert "got tool/cancel" in (box.logs / "plugin-slow.log").read_text(encoding="utf-8")


def test_a_prompt_on_the_command_line_draws_one_turn_and_exits_with_its_status(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(EXAMPLES / "wordcount")
    (box.project / "notes.txt").write_text("a b\n", encoding="utf-8")
    with terminal(box, None, "/wordcount notes.txt") as screen:
        screen.expect(r"│ words +│ +2 │")
        assert screen.exits() == 0


@pytest.mark.parametrize("library", ["rich", "prompt_toolkit"])
def test_print_mode_imports_no_terminal_library(tmp_path: Path, library: str) -> None:
    result = Sandbox(tmp_path).run("-p", "/help", env={"PYTHONPROFILEIMPORTTIME": "1"})
    assert result.returncode == 0, result.stderr
    imported = {
        line.rpartition("|")[2].strip() for line in result.stderr.splitlines() if line.startswith("import time:")
    }
    assert "bingo.cli" in imported
    assert not {name for name in imported if name.split(".")[0] == library}


@pytest.mark.parametrize("command", ["/exit", "/quit"])
def test_exit_and_quit_end_the_session_as_ctrl_d_does(tmp_path: Path, command: str) -> None:
    with terminal(Sandbox(tmp_path)) as screen:
        screen.child.send(command + "\r")
        assert screen.exits() == 0


def test_in_a_session_an_unknown_command_points_at_slash_help_and_sessions_lists(tmp_path: Path) -> None:
    with terminal(Sandbox(tmp_path)) as screen:
        screen.child.send("/nope\r")
        screen.expect(r"there is no command /nope: /help lists them")
        screen.prompt()
        screen.child.send("/sessions\r")
        screen.expect("no sessions in this project yet")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
