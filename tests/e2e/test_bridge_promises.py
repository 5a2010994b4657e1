"""One black-box test per promise of the seed's sections "Handshake", "Nothing a process says
about itself is believed", "A process is allowed to die" and "Asking the host for something",
each against real plugin processes (some in Node.js) through the real binary."""

from __future__ import annotations

import signal
import sqlite3
import time
from pathlib import Path

from tests.e2e._bingo import EXAMPLES, TEST_PLUGINS, Sandbox, no_traceback
from tests.e2e._scripted import gone, model_requests, notices, result_text, text, tool, tool_results, use_scripted_model

# --- Handshake ---------------------------------------------------------------------


def test_every_kind_is_optional_and_what_is_declared_is_registered(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(EXAMPLES / "wordcount")
    box.install(TEST_PLUGINS / "echo-node")
    result = box.run("-p", "/plugins")
    assert result.returncode == 0, result.stderr
    rows = {line.split()[0]: line for line in result.stdout.splitlines()[3:]}
    assert "tool plugin__wordcount__count, command /wordcount" in rows["wordcount"]
    assert "running" in rows["echo-node"]
    for part in (
        "tool plugin__echo-node__echo",
        "command /shout",
        "contributor clock",
        "hook guard (tool: before)",
        "service echo.svc",
    ):
        assert part in rows["echo-node"]


def test_a_protocol_the_host_does_not_speak_is_refused_with_a_notice_naming_both(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "badproto")
    box.install(EXAMPLES / "wordcount")
    result = box.run("-p", "/plugins")
    assert notices(result.stderr, "badproto") == [
        "badproto: refused: it speaks protocol 4, but this host speaks only protocol 5"
    ]
    assert "refused: it speaks protocol 4" in result.stdout
    assert "wordcount" in result.stdout and result.returncode == 0


def test_a_handshake_name_that_differs_from_the_manifest_is_refused(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "wrongname")
    result = box.run("-p", "/tools")
    assert notices(result.stderr, "wrongname") == [
        "wrongname: refused: its handshake says it is 'othername', but its manifest says 'wrongname'"
    ]
    assert "wrongname" not in result.stdout


def test_a_directory_named_unlike_its_manifest_is_refused_and_not_started(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(EXAMPLES / "wordcount", name="wc")
    result = box.run("-p", "/plugins")
    [line] = notices(result.stderr, "wc")
    assert "'wc'" in line and "'wordcount'" in line
    assert "plugin__wordcount__count" not in result.stdout


def test_the_project_layer_wins_the_name(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(EXAMPLES / "wordcount")
    project_copy = box.install(EXAMPLES / "wordcount", layer="project")
    assert box.run("--trust").returncode == 0  # project plugins are code that came with a repository
    result = box.run("-p", "/plugins")
    [running] = [
        line
        for line in result.stdout.splitlines()
        if line.startswith("wordcount") and (" running" in line or " idle" in line)
    ]
    assert " project " in running and str(project_copy) in running
    [hidden] = [
        line
        for line in result.stdout.splitlines()
        if line.startswith("wordcount") and "hidden by the project's plugin" in line
    ]
    assert " user " in hidden


def test_config_reaches_the_process_and_a_stray_stdout_line_costs_one_notice(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "chatty")
    use_scripted_model(
        box,
        [[tool("p1", "plugin__chatty__ping", {})], [text("pinged")]],
        permissions={"allow": ["plugin__chatty__ping"]},
    )
    result = box.run("-p", "ping it")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "pinged\n"  # the script came from plugins.scripted-model, as initialize.config
    [line] = notices(result.stderr, "chatty")
    assert (
        line
        == f"chatty: plugin chatty printed something that is not part of the protocol on its output; bingo ignored it (see {box.logs / 'plugin-chatty.log'})"
    )
    assert "hello there" in (box.logs / "plugin-chatty.log").read_text()
    [answer] = tool_results(model_requests(box)[1])
    assert result_text(answer) == "pong"


# --- Nothing a process says about itself is believed -------------------------------


def test_claimed_traits_are_ignored_and_the_gate_asks(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "echo-node")  # its echo tool claims to be trusted and read-only
    listing = box.run("-p", "/tools")
    [row] = [line for line in listing.stdout.splitlines() if line.startswith("plugin__echo-node__echo")]
    assert "untrusted, writes, serial, interrupt block" in row and row.endswith("asks")
    use_scripted_model(box, [[tool("e1", "plugin__echo-node__echo", {"text": "hi"})], [text("refused")]])
    box.run("-p", "echo hi")
    [refused] = tool_results(model_requests(box)[1])
    assert (
        result_text(refused)
        == "plugin__echo-node__echo is not allowed here: add it to permissions.allow or pass --allow"
    )


def test_rewritten_names_are_what_the_permission_grammar_addresses(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "echo-node")
    use_scripted_model(
        box,
        [[tool("e1", "plugin__echo-node__echo", {"text": "hi there"})], [text("done")]],
        permissions={"allow": ["plugin__echo-node__*"]},
    )
    result = box.run("-p", "echo")
    assert result.returncode == 0, result.stderr
    [answer] = tool_results(model_requests(box)[1])
    assert result_text(answer) == "hi there"


def test_a_contributor_past_its_deadline_is_dropped_and_the_turn_goes_on(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "slow")  # its contributor `late` never answers
    box.install(TEST_PLUGINS / "echo-node")  # its contributor `clock` answers at once
    use_scripted_model(box, [[text("answered")]], deadlines={"context/contribute": 0.5})
    result = box.run("-p", "what time is it?")
    assert result.returncode == 0, result.stderr
    assert result.stdout == "answered\n"
    assert [line for line in result.stderr.splitlines() if "late" in line] == [
        "slow: contributor late gave no answer within 0.5 s (deadlines.context/contribute in settings) and was dropped from this turn"
    ]
    prompt = model_requests(box)[0]["request"]["messages"][-1]["content"][0]["text"]
    # The query crossed as its projection: the contributor saw the turn and the prompt.
    assert 'clock: turn 1, prompt "what time is it?"' in prompt


def test_a_contributor_is_told_its_budget_and_what_passes_it_is_cut(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "echo-node")  # its contributor `clock` floods for a prompt "flood…"
    use_scripted_model(box, [[text("one")], [text("two")]], contextBudget=20_000)
    first = box.run("-p", "what time is it?")
    assert first.returncode == 0, first.stderr
    assert "budget" not in first.stderr
    flood = box.run("-p", "flood please")
    assert flood.returncode == 0, flood.stderr

    # A tenth of contextBudget, split among the run's one contributor: 2000 tokens.
    told = model_requests(box)[0]["request"]["messages"][-1]["content"][0]["text"]
    assert 'prompt "what time is it?", budget 2000' in told
    assert [line for line in flood.stderr.splitlines() if "budget" in line] == [
        "echo-node: contributor clock gave more than its budget of 2000 tokens (8000 characters); the rest was cut"
    ]
    sent = model_requests(box)[1]["request"]["messages"][-1]["content"][0]["text"]
    said = 'clock: turn 1, prompt "flood please", budget 2000 '
    assert said + "x" * (8000 - len(said)) + "\n</context>" in sent


def test_a_hook_that_misses_its_deadline_decides_nothing(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "slow")  # its hook `sleepy` never answers
    use_scripted_model(
        box, [[tool("r1", "read", {"path": "a.txt"})], [text("read it")]], deadlines={"hook/decide": 0.5}
    )
    (box.project / "a.txt").write_text("contents\n")
    result = box.run("-p", "read a.txt")
    assert result.returncode == 0, result.stderr
    [answer] = tool_results(model_requests(box)[1])
    assert "contents" in result_text(answer)
    assert any("sleepy" in line and "decides nothing" in line for line in result.stderr.splitlines())


def test_a_hook_can_deny_a_call(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "echo-node")
    use_scripted_model(
        box,
        [[tool("e1", "plugin__echo-node__echo", {"text": "forbidden words"})], [text("denied")]],
        permissions={"allow": ["plugin__echo-node__echo"]},
    )
    result = box.run("-p", "say it")
    assert result.returncode == 0
    [answer] = tool_results(model_requests(box)[1])
    assert answer["isError"] is True
    assert "echo-node's guard refuses anything forbidden" in result_text(answer)


# --- A process is allowed to die ---------------------------------------------------


def test_a_dead_plugin_costs_its_call_and_one_notice_then_respawns(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "crashy")
    box.install(EXAMPLES / "wordcount")
    (box.project / "n.txt").write_text("a b\n")
    use_scripted_model(
        box,
        [
            [tool("b1", "plugin__crashy__boom", {})],
            [tool("w1", "plugin__wordcount__count", {"path": "n.txt"})],
            # Past the first backoff (1 s), the next read of crashy's tool respawns it.
            [{"sleep": 1.5}, tool("o1", "plugin__crashy__ok", {})],
            [text("carried on")],
        ],
        permissions={"allow": ["plugin__*"]},
    )
    result = box.run("-p", "crash it")
    assert result.returncode == 0, result.stderr
    assert result.stdout.endswith("carried on\n")
    [line] = notices(result.stderr, "crashy")
    assert "exited with code 3" in line and "about to die" in line and "plugin-crashy.log" in line
    requests = model_requests(box)
    [died] = tool_results(requests[1])
    assert died["isError"] is True and "crashy exited with code 3" in result_text(died)
    other = tool_results(requests[2])[-1]
    assert result_text(other) == "n.txt: 2 words, 1 lines, 4 characters"  # the other plugin never noticed
    respawned = tool_results(requests[3])[-1]
    assert result_text(respawned) == "still here"
    assert len((box.bingo_home / "data" / "plugins" / "crashy" / "starts.txt").read_text().split()) == 2


def test_no_plugin_process_outlives_bingo(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "crashy")
    box.run("-p", "/plugins")
    starts = (box.bingo_home / "data" / "plugins" / "crashy" / "starts.txt").read_text().split()
    assert starts and all(gone(int(pid)) for pid in starts)


def test_an_interrupted_turn_sends_tool_cancel_and_waits_for_the_answer(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "slow")
    use_scripted_model(
        box, [[tool("w1", "plugin__slow__wait", {})], [text("after")]], permissions={"allow": ["plugin__slow__wait"]}
    )
    with box.popen("-p", "wait for it") as proc:
        db = box.bingo_home / "data" / "sessions.db"
        deadline = time.monotonic() + 20
        while time.monotonic() < deadline:  # wait until the tool call is under way
            if db.exists():
                with sqlite3.connect(db) as conn:
                    try:
                        if conn.execute("SELECT count(*) FROM frames WHERE kind = 'toolCall'").fetchone()[0]:
                            break
                    except sqlite3.OperationalError:  # the store is still creating its tables
                        pass
            time.sleep(0.02)  # polling another process's file: no spinning on the cores bingo needs
        else:
            raise AssertionError("the tool call never started")
        proc.send_signal(signal.SIGINT)
        out, err = proc.communicate(timeout=20)
    assert "got tool/cancel" in (box.logs / "plugin-slow.log").read_text()
    assert "Traceback" not in err
    with sqlite3.connect(box.bingo_home / "data" / "sessions.db") as conn:
        kinds = [k for (k,) in conn.execute("SELECT kind FROM frames ORDER BY seq")]
    assert kinds.count("toolResult") == 1  # the cancelled call's answer was waited for and kept


# --- Asking the host for something -------------------------------------------------


def test_ask_with_nobody_to_ask_is_refused_in_words(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "asker-node")
    use_scripted_model(
        box,
        [[tool("a1", "plugin__asker-node__confirm", {})], [text("ok")]],
        permissions={"allow": ["plugin__asker-node__*"]},
    )
    result = box.run("-p", "confirm")
    assert result.returncode == 0, result.stderr
    [answer] = tool_results(model_requests(box)[1])
    assert result_text(answer) == "no person to ask"


def test_ask_on_a_call_that_is_not_yours_is_refused_in_words(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "asker-node")
    use_scripted_model(
        box,
        [[tool("a1", "plugin__asker-node__stale", {})], [text("ok")]],
        permissions={"allow": ["plugin__asker-node__*"]},
    )
    box.run("-p", "stale")
    [answer] = tool_results(model_requests(box)[1])
    assert result_text(answer) == "refused (-32002): call nope is not a call you are running"


def test_a_plugin_notice_is_one_line_under_its_name(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "asker-node")
    use_scripted_model(
        box,
        [[tool("a1", "plugin__asker-node__notify", {})], [text("ok")]],
        permissions={"allow": ["plugin__asker-node__*"]},
    )
    result = box.run("-p", "notify")
    assert notices(result.stderr, "asker-node") == ["asker-node: hello from asker"]
    assert result.stdout == "ok\n"
    assert no_traceback(result)
