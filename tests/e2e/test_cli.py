"""The command line's promises: built-in commands, exit codes and one-line errors."""

from __future__ import annotations

from pathlib import Path

from tests.e2e._bingo import Sandbox, no_traceback


def test_help_lists_the_built_in_commands_grouped_by_family(tmp_path: Path) -> None:
    result = Sandbox(tmp_path).run("-p", "/help")
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0] == "bingo"
    for command in ("/help", "/tools", "/compact", "/plugins"):
        assert any(line.startswith(command + " ") for line in lines), command


def test_tools_shows_traits_and_what_the_gate_does(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.settings({"permissions": {"deny": ["grep"]}})
    result = box.run("-p", "--no-sandbox", "--allow", "bash", "/tools")  # without a sandbox, a rule decides bash
    assert result.returncode == 0, result.stderr
    rows = {line.split()[0]: line for line in result.stdout.splitlines()[3:]}
    assert rows["read"].endswith("runs")
    assert "trusted, read-only, parallel, interrupt cancel" in rows["read"]
    assert rows["bash"].endswith("runs (bash)")
    assert "untrusted, writes, serial" in rows["bash"]
    assert rows["grep"].endswith("denied (grep)")


def test_tools_without_a_rule_asks_for_bash_without_a_sandbox(tmp_path: Path) -> None:
    result = Sandbox(tmp_path).run("-p", "--no-sandbox", "/tools")
    rows = {line.split()[0]: line for line in result.stdout.splitlines()[3:]}
    assert rows["bash"].endswith("asks")


def test_tools_says_bash_runs_in_the_sandbox(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    result = box.run("-p", "/tools")
    rows = {line.split()[0]: line for line in result.stdout.splitlines()[3:]}
    assert rows["bash"].endswith("runs (in the sandbox)")
    assert rows["write"].endswith("asks")  # write and edit are asked about as before
    box.settings({"permissions": {"ask": ["bash"]}})
    rows = {line.split()[0]: line for line in box.run("-p", "/tools").stdout.splitlines()[3:]}
    assert rows["bash"].endswith("asks (bash)")  # an ask rule still asks


def test_an_unknown_command_is_bad_usage(tmp_path: Path) -> None:
    result = Sandbox(tmp_path).run("-p", "/nope")
    assert result.returncode == 2
    assert result.stderr == "bingo: there is no command /nope: bingo -p /help lists them\n"


def test_settings_that_are_not_json_exit_2_naming_the_file_and_line(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    settings = box.project / ".bingo" / "settings.json"
    settings.parent.mkdir(parents=True)
    settings.write_text('{\n  "model": "x",\n  oops\n}\n', encoding="utf-8")
    result = box.run("-p", "/help")
    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert str(settings) in line and "line 3" in line
    assert no_traceback(result)


def test_a_settings_key_of_the_wrong_type_exits_2_naming_the_key(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.settings({"permissions": {"allow": "bash"}})
    result = box.run("-p", "/help")
    assert result.returncode == 2
    [line] = result.stderr.splitlines()
    assert "permissions.allow" in line and "settings.json" in line


def test_bad_flags_are_one_line_and_exit_2(tmp_path: Path) -> None:
    result = Sandbox(tmp_path).run("--no-such-flag")
    assert result.returncode == 2
    assert len(result.stderr.splitlines()) == 1
    assert result.stderr.startswith("bingo: ")


def test_a_mistyped_flag_names_the_flag_meant(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    for args, meant in (
        (("--alow", "read"), "--allow"),
        (("--prnt", "/help"), "--print"),
        (("--provder=openai", "hi"), "--provider"),
    ):
        result = box.run(*args)
        assert result.returncode == 2, args
        assert result.stderr.splitlines() == [
            f"bingo: unrecognized arguments: {args[0]} (did you mean {meant}?): see bingo --help"
        ], args
    far = box.run("--zzz")
    assert far.stderr == "bingo: unrecognized arguments: --zzz: see bingo --help\n"


def test_trust_with_a_prompt_is_bad_usage_rather_than_a_prompt_dropped(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    for args in (("--trust", "/help"), ("--trust", "-c"), ("--trust", "--resume", "x")):
        result = box.run(*args)
        assert result.returncode == 2, args
        assert result.stdout == "", args
        assert result.stderr.splitlines() == [
            'bingo: --trust takes no prompt, --continue, --resume or --channel: it trusts the project and exits: run bingo --trust first, then bingo "PROMPT"'
        ], args
    assert box.run("--trust").returncode == 0


def test_help_names_every_flag_of_the_interface(tmp_path: Path) -> None:
    result = Sandbox(tmp_path).run("--help")
    assert result.returncode == 0, result.stderr
    for flag in (
        "--print",
        "-p",
        "--continue",
        "-c",
        "--resume",
        "--provider",
        "--model",
        "--allow",
        "--trust",
        "--version",
        "--check-plugin",
        "--call",
        "--json",
        "--acp",
        "--channel",
    ):
        assert f" {flag}" in result.stdout, flag
    assert ".mcp.json" in result.stdout  # --trust trusts more than plugins
    # Read cold, it says how to get a model and where settings live.
    assert "ANTHROPIC_API_KEY" in result.stdout and "OPENAI_BASE_URL" in result.stdout
    assert "~/.bingo/settings.json" in result.stdout and "$BINGO_HOME" in result.stdout


def test_a_working_directory_removed_under_the_shell_is_one_line_and_exit_2(tmp_path: Path) -> None:
    import subprocess

    from tests.e2e._bingo import BINGO

    box = Sandbox(tmp_path)
    gone = tmp_path / "gone"
    gone.mkdir()
    # The shell stands in the directory, removes it, then runs bingo there (as a person whose
    # directory another terminal deleted).
    result = subprocess.run(
        ["sh", "-c", 'rmdir "$PWD" && exec "$0" -p /help', BINGO],
        cwd=gone,
        env=box.env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )
    assert result.returncode == 2
    assert (
        result.stderr
        == "bingo: the working directory no longer exists (it was removed while this shell was in it): cd to a directory that exists and run bingo again\n"
    )
    assert no_traceback(result)


def test_a_reader_of_stdout_that_goes_away_is_a_quiet_stop(tmp_path: Path) -> None:
    import os
    import subprocess

    from tests.e2e._bingo import BINGO

    box = Sandbox(tmp_path)
    # `bingo -p /tools | head -0`: a pipe whose reader is gone before bingo writes a byte.
    read, write = os.pipe()
    os.close(read)
    try:
        done = subprocess.run(
            [BINGO, "-p", "/tools"],
            cwd=box.project,
            env=box.env,
            stdin=subprocess.DEVNULL,
            stdout=write,
            stderr=subprocess.PIPE,
            text=True,
            timeout=60,
        )
    finally:
        os.close(write)
    assert (done.returncode, done.stderr) == (141, "")


def test_acp_started_by_hand_on_a_terminal_says_what_it_waits_for(tmp_path: Path) -> None:
    import pexpect

    from tests.e2e._bingo import BINGO

    box = Sandbox(tmp_path)
    child = pexpect.spawn(BINGO, ["--acp"], env=box.env, cwd=str(box.project), encoding="utf-8", timeout=20)
    try:
        child.expect(
            "bingo: --acp waits for an editor's Agent Client Protocol messages on stdin: add bingo --acp to your editor's agent settings"
        )
        child.sendeof()
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert "Traceback" not in (child.before or "")
    # Started by an editor (stdin a pipe), it says nothing of the kind.
    piped = box.run_with_input("--acp", input="")
    assert "waits for an editor" not in piped.stderr


def test_acp_with_stdin_a_device_is_one_line_not_a_wait_for_ever(tmp_path: Path) -> None:
    import subprocess

    from tests.e2e._bingo import BINGO

    box = Sandbox(tmp_path)
    # stdin /dev/null, stdout a pipe: what `bingo --acp </dev/null | cat` gives it.
    result = subprocess.run(
        [BINGO, "--acp"],
        env=box.env,
        cwd=box.project,
        stdin=subprocess.DEVNULL,
        capture_output=True,
        text=True,
        timeout=30,
    )
    assert result.returncode == 2
    assert (
        result.stderr
        == "bingo: bingo --acp speaks over pipes, and its stdin is a device: let an editor start it (docs/editors.md)\n"
    )
    assert result.stdout == ""


# --- issue 14 item 5: what the hints name exists ---------------------------------------


def test_version_prints_bingo_and_the_version(tmp_path: Path) -> None:
    import bingo

    for args in (("--version",), ("-p", "--version"), ("--vers",)):
        result = Sandbox(tmp_path).run(*args)
        assert (result.returncode, result.stdout, result.stderr) == (0, f"bingo {bingo.__version__}\n", ""), args


def test_sessions_is_a_command_under_print(tmp_path: Path) -> None:
    result = Sandbox(tmp_path).run("-p", "/sessions")
    assert (result.returncode, result.stdout, result.stderr) == (0, "no sessions in this project yet\n", "")


def test_exit_and_quit_are_a_quiet_success_under_print(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    for command in ("/exit", "/quit"):
        result = box.run("-p", command)
        assert (result.returncode, result.stdout, result.stderr) == (0, "", ""), command
    listed = box.run("-p", "/help").stdout
    assert all(any(line.startswith(c + " ") for line in listed.splitlines()) for c in ("/sessions", "/exit", "/quit"))


def test_resume_of_an_unknown_session_points_at_a_command_that_exists(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    result = box.run("-p", "--resume", "nope", "/help")
    assert result.stderr == "bingo: no session nope: list this project's sessions with bingo -p /sessions\n"
    assert box.run("-p", "/sessions").returncode == 0  # and that command runs


def test_stdin_is_the_prompt_when_none_is_given(tmp_path: Path) -> None:
    result = Sandbox(tmp_path).run_with_input(input="/help\n")
    assert result.returncode == 0, result.stderr
    assert result.stdout.splitlines()[0] == "bingo"


def test_stdin_is_added_to_the_prompt_as_a_fenced_block(tmp_path: Path) -> None:
    from tests.support.model_server import ModelServer

    with ModelServer([[("text", "Two words.")]]) as server:
        env = {"ANTHROPIC_API_KEY": "test-key", "ANTHROPIC_BASE_URL": server.url}
        result = Sandbox(tmp_path).run_with_input("-p", "how many words?", input="alpha ```beta\n", env=env)
        bodies = server.bodies
    assert result.returncode == 0, result.stderr
    assert "Two words." in result.stdout
    # The block's fence is longer than any run of backticks in what was piped.
    assert "how many words?\n\n````\nalpha ```beta\n````" in repr(bodies[0]["messages"]).replace("\\n", "\n")


def test_stdin_past_one_mib_is_refused_in_one_line(tmp_path: Path) -> None:
    result = Sandbox(tmp_path).run_with_input("-p", input="x" * ((1 << 20) + 1))
    assert result.returncode == 2
    assert (
        result.stderr
        == "bingo: stdin holds more than 1 MiB, the most a prompt on stdin may be: name the file in the prompt instead\n"
    )
    assert no_traceback(result)


def test_an_empty_prompt_is_bad_usage_and_reaches_no_model(tmp_path: Path) -> None:
    from tests.e2e._scripted import model_requests, text, use_scripted_model

    box = Sandbox(tmp_path)
    use_scripted_model(box, [[text("never asked")]])
    for prompt in ("", "   "):
        result = box.run("-p", prompt)
        assert result.returncode == 2, prompt
        assert result.stderr == 'bingo: the prompt is empty: write what you want in it: bingo -p "PROMPT"\n'
    assert model_requests(box) == []
    assert box.run("-p", "/sessions").stdout == "no sessions in this project yet\n"


def test_no_prompt_and_an_empty_stdin_says_how_to_give_one(tmp_path: Path) -> None:
    result = Sandbox(tmp_path).run_with_input("-p", input="")
    assert result.returncode == 2
    assert (
        result.stderr
        == 'bingo: no prompt was given and there is no terminal to ask for one: pass a prompt (bingo -p "PROMPT") or pipe one in (echo "PROMPT" | bingo)\n'
    )


def test_a_misspelled_provider_names_the_one_meant(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    result = box.run("-p", "--provider", "opnai", "hi")
    assert result.returncode == 1, result.stderr
    assert no_traceback(result)
    assert result.stderr == (
        "bingo: there is no provider 'opnai' (known: anthropic, openai): did you mean openai? "
        "name one of those as the provider, or install the plugin that provides it\n"
    )


def test_a_misspelled_command_names_the_one_meant(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    result = box.run("-p", "/sesions")
    assert result.returncode == 2
    assert result.stderr == "bingo: there is no command /sesions: did you mean /sessions? bingo -p /help lists them\n"
