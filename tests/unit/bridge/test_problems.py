"""The one table of problems and fixes: its words fill in, and each key is one problem's."""

from __future__ import annotations

from bingo.bridge import _problems as P


def test_a_problem_says_what_was_wrong_then_its_fix() -> None:
    assert (
        P.PROTOCOL.words(theirs=4, ours=5)
        == 'it speaks protocol 4, but this host speaks only protocol 5: answer initialize with "protocol": 5'
    )
    assert P.PROTOCOL.said(theirs=4, ours=5) == "it speaks protocol 4, but this host speaks only protocol 5"
    assert P.UNEXPECTED_STRING_ID.words(said="'7'", log="/l") == (
        "answered id '7', which the host never asked or already had an answer for; ignored "
        "(bingo's request ids are integers: answer with the id exactly as it came; see /l)"
    )
    assert P.RELATIVE_COMMAND.words(where="entry.command", command="./run", rest="run") == (
        "`entry.command` './run' is a relative path: write ${PLUGIN_ROOT}/run for a file in the plugin's directory"
    )


def test_every_problem_is_in_the_table_once_and_fills_in() -> None:
    named = [value for value in vars(P).values() if isinstance(value, P.Problem)]
    assert sorted(id(p) for p in named) == sorted(id(p) for p in P.PROBLEMS)
    for problem in P.PROBLEMS:
        fields: dict[str, object] = {
            name: "x"
            for name in (
                "directory",
                "name",
                "where",
                "command",
                "rest",
                "value",
                "why",
                "written",
                "whose",
                "has",
                "s",
                "keys",
                "theirs",
                "ours",
                "lines",
                "first",
                "key",
                "bridged",
                "room",
                "kind",
                "shown",
                "times",
                "log",
                "said",
                "method",
                "got",
                "what",
                "count",
                "field",
                "grace",
                "closing",
                "mib",
                "error",
                "how",
                "per_second",
                "burst",
                "prefix",
                "problem",
                "cwd",
                "root",
            )
        }
        fields.update(seconds=1.0, grace=2.0, per_second=1.0)
        assert problem.words(**fields).startswith(problem.said(**fields))
