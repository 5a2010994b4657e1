"""Rules with arguments (INTERFACE.md §3, ADR-0018): `TOOL(PATTERN)` read, a bash command
split into the parts a pattern allows one by one (and never one that substitutes or
redirects), paths made absolute with `..` and links resolved, the narrow "always" rule,
and the lines naming rules that are malformed or match no tool."""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from bingo.kernel._shell import pieces
from bingo.kernel.gate import Decision, Gate, Rule, Verdict, always_rule, exact, parse_rule, refusal, rule_problems
from bingo.kernel.settings import Permissions, load_settings
from bingo.wire import Json, ToolTraits
from tests.support.examples import examples

UNTRUSTED = ToolTraits()
PROJECT = "/proj"


def _gate(
    *, allow: tuple[str, ...] = (), ask: tuple[str, ...] = (), deny: tuple[str, ...] = (), project: str = PROJECT
) -> Gate:
    return Gate(Permissions(allow=allow, ask=ask, deny=deny), project=project)


def _bash(gate: Gate, command: str) -> Verdict:
    return gate.decide("bash", UNTRUSTED, input={"command": command}, cwd=PROJECT).verdict


def _on(gate: Gate, tool: str, input: Json, cwd: str = PROJECT) -> Verdict:
    return gate.decide(tool, UNTRUSTED, input=input, cwd=cwd).verdict


# --- the grammar ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "tool", "pattern"),
    [
        ("bash", "bash", None),
        ("plugin__*__rm", "plugin__*__rm", None),
        ("bash(git status*)", "bash", "git status*"),
        ("bash(echo (x)*)", "bash", "echo (x)*"),
        ("bash(a)(b)", "bash", "a)(b"),
        ("read(/etc/*)", "read", "/etc/*"),
        ("bash( )", "bash", " "),
        ("*(src/*)", "*", "src/*"),
    ],
)
def test_a_rule_is_a_name_and_the_pattern_between_its_first_parenthesis_and_its_end(
    text: str, tool: str, pattern: str | None
) -> None:
    assert parse_rule(text) == Rule(text, tool, pattern)


@pytest.mark.parametrize(
    ("text", "tool", "problem"),
    [
        ("bash(ls", "bash", "its '(' is not closed by a ')' at its end; write bash(PATTERN), e.g. bash(git status*)"),
        ("bash(ls)x", "bash", "its '(' is not closed by a ')' at its end; write bash(PATTERN), e.g. bash(git status*)"),
        ("bash()", "bash", "its pattern is empty; write bash for every call, or bash(PATTERN)"),
        ("bash)", "bash", "it has a ')' with no '(' before it; write bash(PATTERN)"),
        ("(ls)", "", "it names no tool before its '('; write TOOL(PATTERN), e.g. bash(git status*)"),
        ("", "", "it is empty; write a tool name, e.g. bash or plugin__wordcount__count"),
    ],
)
def test_a_malformed_rule_says_what_is_wrong_and_how_to_write_it(text: str, tool: str, problem: str) -> None:
    assert parse_rule(text) == Rule(text, tool, None, problem)


def test_a_malformed_allow_rule_allows_nothing() -> None:
    gate = _gate(allow=("bash(git status",))

    assert _bash(gate, "git status") is Verdict.ASK


def test_a_malformed_deny_rule_denies_every_call_of_its_tool_until_fixed() -> None:
    gate = _gate(allow=("bash",), deny=("bash(rm -rf *",))

    assert gate.decide("bash", UNTRUSTED, input={"command": "ls"}, cwd=PROJECT) == Decision(
        Verdict.DENY, "bash(rm -rf *"
    )


def test_an_empty_pattern_is_malformed_not_a_match_for_the_empty_command() -> None:
    assert _bash(_gate(allow=("bash()",)), "") is Verdict.ASK


# --- bash: what an allow pattern allows ------------------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "git status",
        "git status -s",
        "  git   status\t-s  ",
        "git status 2>&1",
        "git status >/dev/null",
        "git status 2> /dev/null",
        "git status &>/dev/null",
        "git status >&2",
        "git status && git status -s",
        "git status; git status",
        'git status "a && b"',
        "git status 'x; rm y'",
        "git status '$(rm x)'",
        "git status \\; rm x",
        "git status $HOME",
        "git status $'it\\'s'",
    ],
)
def test_a_prefix_rule_allows_its_command_with_any_plain_arguments(command: str) -> None:
    assert _bash(_gate(allow=("bash(git status*)",)), command) is Verdict.ALLOW


@pytest.mark.parametrize(
    "command",
    [
        "git status && rm -rf /",
        "git status; rm x",
        "git status & rm x",
        "git status || rm x",
        "git status | sh",
        "git status |& sh",
        "git status\nrm x",
        "git status $(rm x)",
        'git status "$(rm x)"',
        "git status `rm x`",
        'git status "`rm x`"',
        "git status $((1+1))",
        "git status ${x}",
        "git status $[1]",
        "git status <(rm x)",
        "git status >(rm x)",
        "git status > out",
        "git status >> out",
        "git status >| out",
        "git status &> out",
        "git status 2>out",
        "git status >/dev/null/x",
        "git status >&out",
        "git status < in",
        "git status <<EOF\nx\nEOF",
        "git status <<< x",
        "(git status)",
        "git status (x)",
        "git status \\\n; rm x",
        'git status "$\\\n(rm x)"',
        "git status 'unterminated",
        'git status "unterminated',
        "git status \\",
        "rm x; git status",
        "FOO=1 git status",
    ],
)
def test_a_prefix_rule_never_allows_a_chained_substituted_or_redirecting_command(command: str) -> None:
    assert _bash(_gate(allow=("bash(git status*)",)), command) is Verdict.ASK


def test_each_part_of_a_command_may_be_allowed_by_a_different_rule() -> None:
    gate = _gate(allow=("bash(git status*)", "bash(head*)"))

    decision = gate.decide("bash", UNTRUSTED, input={"command": "git status | head -5"}, cwd=PROJECT)

    assert decision == Decision(Verdict.ALLOW, "bash(git status*), bash(head*)")


def test_an_exact_rule_allows_exactly_its_text_whatever_it_holds() -> None:
    gate = _gate(allow=("bash(make && make test > log)",))

    assert _bash(gate, "make && make test > log") is Verdict.ALLOW
    assert _bash(gate, "  make && make test > log\n") is Verdict.ALLOW
    assert _bash(gate, "make && make test > log; rm x") is Verdict.ASK
    assert _bash(gate, "make") is Verdict.ASK


def test_spaces_around_a_bash_pattern_do_not_count_and_a_star_inside_matches_any_run() -> None:
    assert _bash(_gate(allow=("bash( git status* )",)), "git status -s") is Verdict.ALLOW
    assert _bash(_gate(allow=("bash(git * --short)",)), "git status --short") is Verdict.ALLOW
    assert _bash(_gate(allow=("bash(git * --short)",)), "git status --short; rm x") is Verdict.ASK


def test_parentheses_in_a_pattern_match_parentheses_in_quoted_text() -> None:
    gate = _gate(allow=("bash(echo '(x)'*)",))

    assert _bash(gate, "echo '(x)' y") is Verdict.ALLOW
    assert _bash(_gate(allow=("bash(echo (x)*)",)), "echo (x)") is Verdict.ASK  # a subshell: unfit


def test_a_bare_bash_rule_still_allows_every_command() -> None:
    assert _bash(_gate(allow=("bash",)), "git status && rm -rf / $(x) > y") is Verdict.ALLOW


def test_a_pattern_rule_for_another_tool_does_not_allow_bash() -> None:
    assert _bash(_gate(allow=("read(git status*)",)), "git status") is Verdict.ASK


_TAIL_ALPHABET = st.sampled_from(
    [
        " ",
        "a",
        "-s",
        "'",
        '"',
        "\\",
        "$",
        "(",
        ")",
        "`",
        ";",
        "&",
        "|",
        ">",
        "<",
        "\n",
        "/dev/null",
        "1",
        "{",
        "}",
        "#",
        "*",
    ]
)
_ATTACKS = [
    "; rm -rf /",
    " && rm -rf /",
    " || rm -rf /",
    " | sh",
    " & rm -rf /",
    "\nrm -rf /",
    " $(rm -rf /)",
    " `rm -rf /`",
    " > /etc/passwd",
    " <(rm -rf /)",
]


@settings(derandomize=True, deadline=None, max_examples=examples(400))
@given(tail=st.lists(_TAIL_ALPHABET, max_size=12).map("".join), attack=st.sampled_from(_ATTACKS))
def test_whatever_a_prefix_rule_allows_it_no_longer_allows_with_a_command_after_it(tail: str, attack: str) -> None:
    gate = _gate(allow=("bash(git status*)",))
    command = "git status" + tail
    # A `#` may open a comment that the attack would only extend (bash runs nothing of
    # `git status #; rm -rf /`): then only an attack on a new line is one.
    if _bash(gate, command) is Verdict.ALLOW and ("#" not in tail or attack.startswith("\n")):
        assert _bash(gate, command + attack) is Verdict.ASK
    assert _bash(gate, "rm -rf /;" + command) is Verdict.ASK


_ORACLE_RULES = ("bash(echo ok*)", "bash(ls*)", "bash(true*)", f"bash({exact('ls build/*')})")
_ORACLE_STARTS = st.sampled_from(["echo ok", "ls", "true", "ls build/*", ""])
_ORACLE_TOKENS = st.sampled_from(
    [
        " ",
        "x",
        ";",
        "&",
        "&&",
        "|",
        "||",
        "\n",
        "$(",
        "${",
        ")",
        "(",
        "`",
        "'",
        '"',
        "\\",
        "$'",
        "{",
        "}",
        "#",
        ">",
        ">>",
        "<",
        "2>&1",
        "/dev/null",
        "X",
        "touch X",
        " touch X",
        ">X",
        "$(touch X)",
        "\\\n",
        # comments: a `#` that begins a word hides the rest of its line, not the next one
        " #",
        " #'",
        "#'",
        " # x",
        "\ntouch X",
        "\n mk",
        # assignments and words glued to a rule's word: `lsx=1 mk`, `lsx`, `ls=1`
        "lsx",
        "lsx=1",
        "=1",
        " X=1 ",
        "ok=1",
        "true=",
        # paths: `$B/mk` and `./mk` are programs, `mk` on PATH too; `*` and `/` glued
        "$B/mk",
        " $B/mk",
        "./mk",
        " mk",
        "mk",
        "/",
        "*",
        "/*",
        "build/",
        " ../",
    ]
)
"""`mk` and `lsx` are programs on the oracle's PATH (and `$B/mk` one by its path) that make
the file `X` where they run: a command that makes `X` ran something no rule names."""


@pytest.fixture(scope="module")
def oracle_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    where = tmp_path_factory.mktemp("oracle-bin")
    for name in ("mk", "lsx"):
        (where / name).write_text("#!/bin/sh\n: > X\n", encoding="utf-8")
        (where / name).chmod(0o755)
    return where


@settings(derandomize=True, deadline=None, max_examples=examples(1500))
@given(start=_ORACLE_STARTS, tail=st.lists(_ORACLE_TOKENS, max_size=10).map("".join))
@example(start="ls", tail=" #'\nmk #'")  # issue 23 item 1: a comment that hides a newline
@example(start="ls", tail="x=1 mk")  # item 3: an assignment glued to `ls*`
@example(start="ls", tail="x")  # item 3: more of the word `ls`
@example(start="ls build/", tail=" X=1 mk")  # item 2: the exact rule's `*` is a character
@example(start="ls build/* #", tail="\n$B/mk")
def test_bash_itself_runs_nothing_the_rules_do_not_name(
    start: str, tail: str, oracle_bin: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """The oracle is bash: a command the gate lets `bash(echo ok*)`, `bash(ls*)`,
    `bash(true*)` and the exact `bash(ls build/\\*)` allow is run, in an empty directory,
    and must leave it empty: no `touch X`, `mk` or `lsx` ran, no file was redirected to,
    whatever comments, assignments, paths and stars it holds."""
    command = start + tail
    if _bash(_gate(allow=_ORACLE_RULES), command) is not Verdict.ALLOW:
        return
    where = tmp_path_factory.mktemp("oracle")
    env = {"PATH": f"{oracle_bin}:{os.defpath}", "B": str(oracle_bin)}
    subprocess.run(
        ["/bin/bash", "-c", command], cwd=where, stdin=subprocess.DEVNULL, capture_output=True, timeout=5, env=env
    )
    assert list(where.iterdir()) == [], command


# --- issue 23: comments, a star glued to a word, assignments, paths, exact rules -------


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("ls # a comment", Verdict.ALLOW),
        ("ls #; rm -rf /", Verdict.ALLOW),  # bash runs `ls`: the rest is the comment
        ("ls;# x", Verdict.ALLOW),
        ("ls #'\ntouch pwned #'", Verdict.ASK),  # the comment ends at the newline
        ("ls # x\nrm y", Verdict.ASK),
        ("ls a#b; rm y", Verdict.ASK),  # `#` inside a word is no comment
        ("ls '#'\nrm y", Verdict.ASK),
        ("ls \\#\nrm y", Verdict.ASK),
    ],
)
def test_a_comment_is_read_as_bash_reads_it(command: str, expected: Verdict) -> None:
    assert _bash(_gate(allow=("bash(ls*)",)), command) is expected


@pytest.mark.parametrize(
    ("rule", "command", "expected"),
    [
        ("bash(ls*)", "ls", Verdict.ALLOW),
        ("bash(ls*)", "ls -la", Verdict.ALLOW),
        ("bash(ls*)", "ls\t-la  src", Verdict.ALLOW),
        ("bash(ls*)", "ls>/dev/null", Verdict.ALLOW),
        ("bash(ls*)", "lsx", Verdict.ASK),
        ("bash(ls*)", "lsx=1 touch x", Verdict.ASK),
        ("bash(ls*)", "lsd/../run.sh", Verdict.ASK),
        ("bash(ls*)", "ls\\ -la", Verdict.ASK),
        ("bash(ls*)", "ls'x'", Verdict.ASK),
        ("bash(ssh prod*)", "ssh production-db uptime", Verdict.ASK),
        ("bash(ssh prod*)", "ssh prod uptime", Verdict.ALLOW),
        ("bash(ssh prod*)", "ssh prod", Verdict.ALLOW),
        ("bash(ls *)", "ls -la", Verdict.ALLOW),
        ("bash(ls *)", "lsx", Verdict.ASK),
        ("bash(git * --short)", "git status --short", Verdict.ALLOW),
        ("bash(npm run test*)", "npm run test:unit", Verdict.ASK),
        ("bash(npm run test:*)", "npm run test:unit", Verdict.ASK),
        ("bash(npm run test:unit*)", "npm run test:unit --watch", Verdict.ALLOW),
    ],
)
def test_a_star_after_a_word_is_the_rest_of_the_command_after_a_blank_never_more_of_the_word(
    rule: str, command: str, expected: Verdict
) -> None:
    assert _bash(_gate(allow=(rule,)), command) is expected


@pytest.mark.parametrize(
    "command",
    [
        "X=1 ls",
        "lsx=1 ls",
        "a[0]=1 ls",
        "X+=1 ls",
        ">/dev/null X=1 ls",
        "2>&1 X=1 ls",
        "ls; X=1 ls",
        "time ls",
        "! ls",
        "{ ls; }",
        "if ls; then ls; fi",
    ],
)
def test_an_assignment_or_a_reserved_word_first_is_unfit_for_any_allow_pattern(command: str) -> None:
    assert _bash(_gate(allow=("bash(*)", "bash(ls*)")), command) is Verdict.ASK


@pytest.mark.parametrize(
    ("rule", "command", "expected"),
    [
        ("bash(* --help)", "make --help", Verdict.ALLOW),
        ("bash(* --help)", "./make --help", Verdict.ASK),
        ("bash(* --help)", "$HOME/make --help", Verdict.ASK),
        ("bash(* --help)", "$MAKE --help", Verdict.ASK),
        ("bash(* --help)", "2>&1 ./make --help", Verdict.ASK),
        ("bash(* --help)", "./make>/dev/null --help", Verdict.ASK),
        ("bash(*)", "~/bin/x", Verdict.ASK),
        ("bash(./run.sh*)", "./run.sh -v", Verdict.ALLOW),
        ("bash(*/run.sh*)", "./run.sh -v", Verdict.ALLOW),
        ("bash(cat *)", "cat ./notes/a.txt", Verdict.ALLOW),
    ],
)
def test_a_path_as_the_command_is_allowed_only_where_the_patterns_first_word_is_one(
    rule: str, command: str, expected: Verdict
) -> None:
    assert _bash(_gate(allow=(rule,)), command) is expected


def test_an_escaped_star_is_the_character_so_an_exact_rule_allows_exactly_its_text() -> None:
    gate = _gate(allow=("bash(rm -rf build/\\*)",))

    assert _bash(gate, "rm -rf build/*") is Verdict.ALLOW
    assert _bash(gate, "rm -rf build/ ../victim") is Verdict.ASK
    assert _bash(gate, "rm -rf build/x") is Verdict.ASK
    assert _bash(gate, "rm -rf build/*; rm -rf ../victim") is Verdict.ASK


@settings(derandomize=True, deadline=None, max_examples=examples(300))
@given(text=st.lists(st.sampled_from(["*", "\\", "a", " ", "/", "\\*", "\\\\", "x y"]), max_size=8).map("".join))
def test_exact_gives_the_pattern_of_the_text_alone(text: str) -> None:
    path = "/proj/f" + text
    rule = f"write({exact(path)})"
    gate = _gate(allow=(rule,))
    assert _on(gate, "write", {"path": path, "content": ""}) is Verdict.ALLOW
    assert _on(gate, "write", {"path": path + "x", "content": ""}) is Verdict.ASK
    if "*" in text:
        assert _on(gate, "write", {"path": path.replace("*", "", 1), "content": ""}) is Verdict.ASK


def test_always_to_a_command_holding_a_star_saves_the_star_as_a_character() -> None:
    assert (
        always_rule("bash", {"command": "rm -rf build/*"}, cwd="/nonexistent", project=PROJECT)
        == "bash(rm -rf build/\\*)"
    )
    assert always_rule("bash", {"command": "echo \\* x"}, cwd="/nonexistent", project=PROJECT) == "bash(echo \\\\\\* x)"
    assert always_rule("write", {"path": "build/*"}, cwd=PROJECT, project=PROJECT) == "write(build/\\*)"
    gate = _gate()
    gate.allow(gate.always_rule("write", {"path": "build/*", "content": ""}, PROJECT))
    assert _on(gate, "write", {"path": "build/x", "content": ""}) is Verdict.ASK


def test_always_for_one_word_gives_a_rule_bounded_by_the_word() -> None:
    gate = _gate()
    gate.allow(gate.always_rule("bash", {"command": "ls"}, "/nonexistent"))

    assert gate.always_rule("bash", {"command": "ls"}, "/nonexistent") == "bash(ls*)"
    assert _bash(gate, "ls -la") is Verdict.ALLOW
    assert _bash(gate, "lsx=1 touch x") is Verdict.ASK
    assert _bash(gate, "lsd/../run.sh") is Verdict.ASK


def test_a_deny_or_ask_pattern_keeps_the_wide_reading_of_a_star() -> None:
    gate = _gate(allow=("bash",), deny=("bash(rm*)",), ask=("bash(ls build/\\*)",))

    assert _bash(gate, "rmdir x") is Verdict.DENY
    assert _bash(gate, "ls build/*") is Verdict.ASK
    assert _bash(gate, "ls build/x") is Verdict.ALLOW


@pytest.mark.parametrize("rules", [("write(*)",), ("write",), ("*",), ("write(/*)",), ("write(*)", "write(.g*)")])
@pytest.mark.parametrize(
    "path",
    [
        ".git/config",
        ".git/hooks/pre-commit",
        "sub/.git",
        "sub/.git/config",
        "/elsewhere/.GIT/hooks/x",
        "src/../.git/config",
    ],
)
def test_write_and_edit_reach_into_git_only_by_a_rule_that_names_it(rules: tuple[str, ...], path: str) -> None:
    gate = _gate(allow=rules)

    assert _on(gate, "write", {"path": path, "content": ""}) is Verdict.ASK
    assert _on(gate, "edit", {"path": path, "oldString": "a", "newString": "b"}) is Verdict.ASK
    assert _on(gate, "write", {"path": "src/a.py", "content": ""}) is Verdict.ALLOW


@pytest.mark.parametrize(
    "path",
    [
        ".git/bingo-worktrees",
        ".git/bingo-worktrees/agent-x-1/.git",
        ".git/bingo-worktrees/agent-x-1/sub/.git/config",
        ".git/bingo-worktrees/agent-x-1/../../config",
        ".git/bingo-worktrees/../hooks/pre-commit",
        ".git/Bingo-Worktrees/agent-x-1/a.py",
        ".git/worktrees/agent-x-1/config.worktree",
    ],
)
def test_a_subagents_worktree_is_a_working_tree_but_git_around_it_stays_guarded(path: str) -> None:
    gate = _gate(allow=("write",))

    assert _on(gate, "write", {"path": ".git/bingo-worktrees/agent-x-1/src/a.py", "content": ""}) is Verdict.ALLOW
    assert _on(gate, "write", {"path": "a.py", "content": ""}, PROJECT + "/.git/bingo-worktrees/agent-x-1") is (
        Verdict.ALLOW
    )
    assert _on(gate, "write", {"path": path, "content": ""}) is Verdict.ASK


def test_a_rule_that_names_git_reaches_it() -> None:
    gate = _gate(allow=("write(.git/info/exclude)", "edit(.git/*)"))

    assert _on(gate, "write", {"path": ".git/info/exclude", "content": ""}) is Verdict.ALLOW
    assert _on(gate, "write", {"path": ".git/config", "content": ""}) is Verdict.ASK
    assert _on(gate, "edit", {"path": ".git/config", "oldString": "a", "newString": "b"}) is Verdict.ALLOW


def test_a_link_into_git_is_not_reached_by_a_rule_that_does_not_name_it(tmp_path: Path) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / ".git" / "config").write_text("")
    os.symlink(tmp_path / ".git" / "config", tmp_path / "notes.md")
    gate = _gate(allow=("write(*)",), project=str(tmp_path))

    assert _on(gate, "write", {"path": "notes.md", "content": ""}, str(tmp_path)) is Verdict.ASK
    assert gate.decide("write", UNTRUSTED, input={"path": "notes.md", "content": ""}, cwd=str(tmp_path)).near == (
        "write(*)",
    )


def test_the_refusal_of_a_write_into_git_says_a_rule_must_name_it() -> None:
    decision = _gate(allow=("write",)).decide(
        "write", UNTRUSTED, input={"path": ".git/config", "content": ""}, cwd=PROJECT
    )

    assert decision == Decision(Verdict.ASK, None, ("write",))
    assert refusal("write", decision.near) == (
        "write is not allowed here: this call does not match 'write' (a path is matched after it is made absolute and "
        "its .. and links are resolved, and one inside a .git directory only by a rule that names .git): add a rule to "
        "permissions.allow or pass --allow"
    )


# --- bash: what a deny or ask pattern matches -------------------------------------


@pytest.mark.parametrize(
    "command",
    [
        "rm -rf x",
        "git status && rm -rf x",
        "git status;rm x",
        "echo $(rm x)",
        "echo `rm x`",
        "sudo rm x",
        "FOO=1 rm x",
        '"rm" x',
        "(rm x)",
        "if true; then rm x; fi",
    ],
)
def test_a_deny_pattern_matches_when_any_part_of_the_command_matches(command: str) -> None:
    gate = _gate(allow=("bash",), deny=("bash(rm *)",))

    assert gate.decide("bash", UNTRUSTED, input={"command": command}, cwd=PROJECT) == Decision(
        Verdict.DENY, "bash(rm *)"
    )


def test_a_deny_pattern_does_not_match_a_command_none_of_whose_parts_match() -> None:
    assert _bash(_gate(allow=("bash",), deny=("bash(rm *)",)), "git status && ls rm") is Verdict.ALLOW


def test_an_ask_pattern_asks_about_a_chain_holding_its_command() -> None:
    gate = _gate(allow=("bash",), ask=("bash(git push*)",))

    assert gate.decide("bash", UNTRUSTED, input={"command": "git status; git push -f"}, cwd=PROJECT) == Decision(
        Verdict.ASK, "bash(git push*)"
    )


def test_the_pieces_a_deny_rule_reads_include_what_substitutions_run() -> None:
    assert {"rm x", "sudo rm x", "echo"} <= pieces("echo $(sudo rm x)")


def test_a_call_with_no_readable_argument_is_denied_by_a_pattern_and_not_allowed_by_one() -> None:
    assert _on(_gate(allow=("bash",), deny=("bash(rm*)",)), "bash", {"command": 3}) is Verdict.DENY
    assert _on(_gate(allow=("bash(*)",)), "bash", {}) is Verdict.ASK


def test_without_a_call_only_bare_rules_decide() -> None:
    gate = _gate(allow=("bash(git status*)",), deny=("bash(rm*)",))

    assert gate.decide("bash", UNTRUSTED) == Decision(Verdict.ASK, None)


# --- paths ------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("path", "cwd", "expected"),
    [
        ("src/a.py", PROJECT, Verdict.ALLOW),
        ("/proj/src/a.py", "/elsewhere", Verdict.ALLOW),
        ("a.py", "/proj/src", Verdict.ALLOW),
        ("../proj/src/a.py", "/proj", Verdict.ALLOW),
        ("//proj/src/a.py", PROJECT, Verdict.ALLOW),
        ("src/./deep/a.py", PROJECT, Verdict.ALLOW),
        ("src/../a.py", PROJECT, Verdict.ASK),
        ("src/../../etc/passwd", PROJECT, Verdict.ASK),
        ("/proj/src/../../etc/passwd", PROJECT, Verdict.ASK),
        ("src", PROJECT, Verdict.ASK),
        ("srcx/a.py", PROJECT, Verdict.ASK),
        ("a.py", PROJECT, Verdict.ASK),
    ],
)
def test_a_path_pattern_is_relative_to_the_project_and_dot_dot_never_escapes_it(
    path: str, cwd: str, expected: Verdict
) -> None:
    assert (
        _on(_gate(allow=("edit(src/*)",)), "edit", {"path": path, "oldString": "a", "newString": "b"}, cwd) is expected
    )


@pytest.mark.parametrize(
    "path", ["/etc/passwd", "//etc/passwd", "/tmp/../etc/passwd", "../../../../../../etc/shadow", "/etc/./x"]
)
def test_a_path_deny_rule_matches_however_the_path_is_spelled(path: str) -> None:
    assert _on(_gate(deny=("read(/etc/*)",)), "read", {"path": path}) is Verdict.DENY


def test_a_path_under_home_is_matched_after_the_tilde_is_expanded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HOME", "/home/someone")

    assert _on(_gate(deny=("read(~/.ssh/*)",)), "read", {"path": "~/.ssh/id_ed25519"}) is Verdict.DENY
    assert _on(_gate(deny=("read(/home/someone/.ssh/*)",)), "read", {"path": "~/.ssh/id_ed25519"}) is Verdict.DENY


def test_a_link_out_of_an_allowed_directory_is_not_allowed_and_a_link_into_a_denied_one_is_denied(
    tmp_path: Path,
) -> None:
    project, outside = tmp_path / "project", tmp_path / "outside"
    (project / "src").mkdir(parents=True)
    outside.mkdir()
    (outside / "secret").write_text("x")
    os.symlink(outside / "secret", project / "src" / "link")
    os.symlink(outside, project / "src" / "dir")
    gate = _gate(allow=("write(src/*)",), deny=("read(../outside/*)",), project=str(project))

    assert _on(gate, "write", {"path": "src/link", "content": ""}, str(project)) is Verdict.ASK
    assert _on(gate, "write", {"path": "src/dir/new", "content": ""}, str(project)) is Verdict.ASK
    assert _on(gate, "write", {"path": "src/plain", "content": ""}, str(project)) is Verdict.ALLOW
    assert _on(gate, "read", {"path": "src/link"}, str(project)) is Verdict.DENY


def test_a_glob_is_allowed_only_when_every_path_it_can_walk_is(tmp_path: Path) -> None:
    gate = _gate(allow=("glob(src/*)",))

    assert _on(gate, "glob", {"pattern": "**/*.py", "path": "src"}) is Verdict.ALLOW
    assert _on(gate, "glob", {"pattern": "src/**/*.py"}) is Verdict.ALLOW
    assert _on(gate, "glob", {"pattern": "**/*.py"}) is Verdict.ASK
    assert _on(gate, "glob", {"pattern": "../../etc/*", "path": "src"}) is Verdict.ASK
    assert _on(gate, "glob", {"pattern": "/etc/*", "path": "src"}) is Verdict.ASK


def test_a_search_denied_below_a_directory_is_denied_when_it_searches_above_it(tmp_path: Path) -> None:
    gate = _gate(deny=("grep(/etc/*)", "glob(/etc/*)"), project=str(tmp_path))

    assert _on(gate, "grep", {"pattern": "root", "path": "/"}) is Verdict.DENY
    assert _on(gate, "glob", {"pattern": "**/passwd", "path": "/"}) is Verdict.DENY
    assert _on(gate, "glob", {"pattern": "etc/passwd", "path": "/"}) is Verdict.DENY
    assert _on(gate, "grep", {"pattern": "root", "path": str(tmp_path)}, str(tmp_path)) is Verdict.ASK


def test_a_grep_of_one_file_is_a_path_and_of_a_directory_every_path_below_it(tmp_path: Path) -> None:
    (tmp_path / "src").mkdir()
    (tmp_path / "src" / "a.py").write_text("x")
    gate = _gate(allow=("grep(src/a.py)", "grep(lib/*)"), project=str(tmp_path))

    assert _on(gate, "grep", {"pattern": "x", "path": "src/a.py"}, str(tmp_path)) is Verdict.ALLOW
    assert _on(gate, "grep", {"pattern": "x", "path": "src"}, str(tmp_path)) is Verdict.ASK
    (tmp_path / "lib").mkdir()
    assert _on(gate, "grep", {"pattern": "x", "path": "lib"}, str(tmp_path)) is Verdict.ALLOW


def test_a_bridged_tool_is_matched_by_its_bare_name_only() -> None:
    name = "plugin__wordcount__count"
    gate = _gate(allow=(f"{name}(notes.txt)",), deny=(f"{name}(*)",))

    assert _on(gate, name, {"path": "notes.txt"}) is Verdict.ASK
    assert _on(_gate(allow=(name,)), name, {"path": "notes.txt"}) is Verdict.ALLOW


# --- the narrow "always" ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("command", "rule"),
    [
        ("git status", "bash(git status*)"),
        ("git status -s", "bash(git status*)"),
        ("npm test -- --watch", "bash(npm test*)"),
        ("make", "bash(make*)"),
        ("ls -la", "bash(ls -la)"),
        ("rm -rf build", "bash(rm -rf build)"),
        ("git status && touch X", "bash(git status && touch X)"),
        ("echo $(date)", "bash(echo $(date))"),
        ("FOO=1 make", "bash(FOO=1 make)"),
        ("'git' status", "bash('git' status)"),
        ("  git log  ", "bash(git log*)"),
        ("", "bash( )"),
    ],
)
def test_always_for_bash_offers_the_command_and_subcommand_else_the_exact_command(command: str, rule: str) -> None:
    assert always_rule("bash", {"command": command}, cwd="/nonexistent", project=PROJECT) == rule


def test_always_does_not_take_a_path_in_the_directory_for_a_subcommand(tmp_path: Path) -> None:
    (tmp_path / "build").mkdir()

    assert always_rule("bash", {"command": "rm build"}, cwd=str(tmp_path), project=str(tmp_path)) == "bash(rm build)"


@settings(derandomize=True, deadline=None, max_examples=examples(300))
@given(command=st.lists(_TAIL_ALPHABET | st.sampled_from(["git", "status", "rm", "x"]), max_size=10).map("".join))
def test_the_always_rule_allows_the_call_it_was_offered_for(command: str) -> None:
    gate = _gate()
    gate.allow(gate.always_rule("bash", {"command": command}, "/nonexistent"))

    assert gate.decide("bash", UNTRUSTED, input={"command": command}, cwd="/nonexistent").verdict is Verdict.ALLOW


def test_the_exact_always_rule_does_not_allow_more_than_the_command() -> None:
    gate = _gate()
    gate.allow(gate.always_rule("bash", {"command": "git status && touch X"}, PROJECT))

    assert _bash(gate, "git status && touch X; rm -rf /") is Verdict.ASK


def test_always_for_a_path_tool_is_the_path_relative_to_the_project_or_absolute() -> None:
    assert always_rule("edit", {"path": "src/../src/a.py"}, cwd=PROJECT, project=PROJECT) == "edit(src/a.py)"
    assert always_rule("write", {"path": "/tmp/x"}, cwd=PROJECT, project=PROJECT) == "write(/tmp/x)"
    assert always_rule("glob", {"pattern": "**/*.py", "path": "src"}, cwd=PROJECT, project=PROJECT) == "glob(src/*)"


def test_the_always_rule_for_a_path_allows_the_call(tmp_path: Path) -> None:
    gate = _gate(project=str(tmp_path))
    input: Json = {"path": "notes/a.txt", "content": "x"}
    gate.allow(gate.always_rule("write", input, str(tmp_path)))

    assert _on(gate, "write", input, str(tmp_path)) is Verdict.ALLOW
    assert _on(gate, "write", {"path": "notes/b.txt", "content": "x"}, str(tmp_path)) is Verdict.ASK


def test_always_for_a_tool_without_a_main_argument_is_its_name() -> None:
    assert (
        always_rule("plugin__wordcount__count", {"path": "x"}, cwd=PROJECT, project=PROJECT)
        == "plugin__wordcount__count"
    )


# --- what is said ---------------------------------------------------------------------


def test_a_refusal_near_a_pattern_rule_names_it_and_what_a_pattern_allows() -> None:
    assert refusal("bash", ["bash(git status*)"]) == (
        "bash is not allowed here: this call does not match 'bash(git status*)' (a pattern allows a command only "
        "when each part between ;, &, |, && or || matches one, with no $( ), backticks, parentheses or redirections): "
        "add a rule to permissions.allow or pass --allow"
    )


def test_the_refused_decision_carries_the_pattern_rules_that_did_not_match() -> None:
    gate = _gate(allow=("bash(git status*)", "read"))

    assert gate.decide("bash", UNTRUSTED, input={"command": "git status; rm x"}, cwd=PROJECT) == Decision(
        Verdict.ASK, None, ("bash(git status*)",)
    )


_TOOLS = {"bash": "builtin", "read": "builtin", "plugin__wordcount__count": "wordcount"}


@pytest.mark.parametrize(
    ("placed", "line"),
    [
        (
            ("--allow", "allow", "plugin__wordcount_count"),
            "--allow 'plugin__wordcount_count' matches no tool (did you mean plugin__wordcount__count?)",
        ),
        (
            ("--allow", "allow", "wordcount"),
            "--allow 'wordcount' matches no tool: wordcount is a plugin, and a rule names one of its tools (did you mean plugin__wordcount__count?)",
        ),
        (
            ("/s.json", "deny", "bassh(rm*)"),
            "/s.json: permissions.deny rule 'bassh(rm*)' matches no tool (did you mean bash(rm*)?)",
        ),
        (("/s.json", "allow", "plugin__zz__*"), "/s.json: permissions.allow rule 'plugin__zz__*' matches no tool"),
        (
            ("/s.json", "deny", "bash(ls"),
            "/s.json: permissions.deny rule 'bash(ls' is not a rule: its '(' is not closed by a ')' at its end; "
            "write bash(PATTERN), e.g. bash(git status*) (until it is fixed it denies every call of bash)",
        ),
        (
            ("/s.json", "allow", "bash()"),
            "/s.json: permissions.allow rule 'bash()' is not a rule: its pattern is empty; write bash for every call, "
            "or bash(PATTERN) (it allows nothing until it is fixed)",
        ),
        (
            ("/s.json", "allow", "plugin__wordcount__count(notes.txt)"),
            "/s.json: permissions.allow rule 'plugin__wordcount__count(notes.txt)' can match no call: a pattern narrows "
            "only bash, read, write, edit, glob or grep, and plugin__wordcount__count has no main argument "
            "(write plugin__wordcount__count to match every call)",
        ),
    ],
)
def test_a_rule_that_is_malformed_or_matches_no_tool_is_named_in_one_line(
    placed: tuple[str, str, str], line: str
) -> None:
    assert rule_problems([placed], _TOOLS, {"wordcount"}) == [line]


def test_rules_that_match_a_tool_are_not_named_and_a_rule_repeated_in_one_place_is_named_once() -> None:
    placed = [
        ("--allow", "allow", "bash(git*)"),
        ("/s.json", "deny", "plugin__*"),
        ("/s.json", "deny", "nope"),
        ("/s.json", "deny", "nope"),
    ]

    assert rule_problems(placed, _TOOLS, set()) == ["/s.json: permissions.deny rule 'nope' matches no tool"]


def test_settings_keep_where_each_rule_in_force_came_from(tmp_path: Path) -> None:
    home, project = tmp_path / "home", tmp_path / "project"
    (project / ".bingo").mkdir(parents=True)
    home.mkdir()
    (home / "settings.json").write_text('{"permissions": {"deny": ["bash(rm*)"]}}', encoding="utf-8")
    (project / ".bingo" / "settings.json").write_text(
        '{"permissions": {"allow": ["bash"], "ask": ["edit"]}}', encoding="utf-8"
    )

    untrusted = load_settings(
        home=home, project=project, project_trusted=False, overrides={"permissions": {"allow": ["read"]}}
    )
    trusted = load_settings(home=home, project=project, project_trusted=True)

    user, shared = str(home / "settings.json"), str(project / ".bingo" / "settings.json")
    assert untrusted.rules == ((user, "deny", "bash(rm*)"), (shared, "ask", "edit"), ("--allow", "allow", "read"))
    assert trusted.rules == ((user, "deny", "bash(rm*)"), (shared, "allow", "bash"), (shared, "ask", "edit"))


def test_a_tool_whose_own_name_holds_parentheses_is_matched_by_that_name_whole() -> None:
    name = "plugin__x__f(y)"
    gate = _gate()
    gate.allow(gate.always_rule(name, {}, PROJECT))

    assert _on(gate, name, {}) is Verdict.ALLOW
    assert rule_problems([("--allow", "allow", name)], {name: "x"}, {"x"}) == []
