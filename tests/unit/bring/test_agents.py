"""Agent files (INTERFACE.md section 15): front matter edge cases, places, the catalogue, and
matching the tools a file names against a run's."""

from __future__ import annotations

from pathlib import Path

import pytest

from bingo.bring import AgentFile, agent_catalogue, find_agents, offered_tools, parse_agent
from bingo.bring._files import Layer
from bingo.bring._front import split_front

HERE = Path("/x/agents/a.md")


def _parse(text: str) -> AgentFile | str:
    front = split_front(text)
    return parse_agent(front.fields, front.body, HERE, "user")


def _file(front: str, body: str = "Do the thing.") -> str:
    return f"---\n{front}\n---\n{body}\n"


def test_a_claude_code_agent_file_loads_as_written() -> None:
    agent = _parse(
        _file(
            "name: code-reviewer\n"
            "description: >-\n  Expert code review specialist.\n  Use after writing code.\n"
            "tools: Read, Grep, Glob, Bash\nmodel: sonnet\ncolor: blue"
        )
    )
    assert isinstance(agent, AgentFile)
    assert agent.name == "code-reviewer"
    assert agent.description == "Expert code review specialist. Use after writing code."
    assert agent.tools == ("Read", "Grep", "Glob", "Bash")
    assert agent.model == "sonnet" and agent.isolation is None
    assert agent.body == "Do the thing."


@pytest.mark.parametrize(
    ("tools", "expected"),
    [
        ("", None),  # `tools:` with no value is YAML null: it names none, so all
        ("tools: Read, Grep", ("Read", "Grep")),
        ("tools: Read,Grep,, Read", ("Read", "Grep")),  # blanks and repeats dropped
        ("tools: [read, grep]", ("read", "grep")),
        ("tools:\n  - read\n  - mcp__github__search", ("read", "mcp__github__search")),
        ('tools: ""', ()),  # an empty string names no tool: the child gets none
        ("tools: []", ()),
        ("tools: mcp__db__*", ("mcp__db__*",)),
    ],
)
def test_tools_is_a_list_or_a_comma_separated_string(tools: str, expected: tuple[str, ...] | None) -> None:
    front = "name: a\ndescription: b" + (f"\n{tools}" if tools else "\ntools:")
    agent = _parse(_file(front))
    assert isinstance(agent, AgentFile), agent
    assert agent.tools == expected


@pytest.mark.parametrize(
    ("front", "problem"),
    [
        ("description: b", "has no name"),
        ("name: ''\ndescription: b", "has no name"),
        ("name: Code Reviewer\ndescription: b", "is not lowercase"),
        ("name: " + "a" * 65 + "\ndescription: b", "is not lowercase"),
        ("name: 7\ndescription: b", "has no name"),
        ("name: a", "has no description"),
        ("name: a\ndescription: '   '", "has no description"),
        ("name: a\ndescription: " + "d" * 1025, "over 1024"),
        ("name: a\ndescription: b\ntools: 3", "neither a list"),
        ("name: a\ndescription: b\ntools: [read, {x: 1}]", "not a tool name (a string)"),
        ("name: a\ndescription: b\ntools: Bash(git *)", "which is not a tool name: list tools by name"),
        ("name: a\ndescription: b\nmodel: [x]", "its model"),
        ("name: a\ndescription: b\nmodel: ''", "its model"),
        ("name: a\ndescription: b\nisolation: container", "isolation 'container'"),
        ("name: a\ndescription: b\nisolation: true", "isolation 'True'"),
    ],
)
def test_a_bad_front_matter_is_one_line_naming_what_to_fix(front: str, problem: str) -> None:
    said = _parse(_file(front))
    assert isinstance(said, str) and problem in said, said
    assert "\n" not in said


def test_model_inherit_is_the_parents_and_isolation_worktree_is_kept() -> None:
    agent = _parse(_file("name: a_b-1\ndescription: b\nmodel: inherit\nisolation: worktree"))
    assert isinstance(agent, AgentFile)
    assert agent.model is None and agent.isolation == "worktree" and agent.name == "a_b-1"


def test_find_agents_project_wins_the_name_and_each_bad_file_is_one_notice(tmp_path: Path) -> None:
    user, project = tmp_path / "user", tmp_path / "project"
    user.mkdir()
    project.mkdir()
    (user / "shared.md").write_text(_file("name: shared\ndescription: the user's"), encoding="utf-8")
    (user / "mine.md").write_text(_file("name: mine\ndescription: only mine"), encoding="utf-8")
    (user / "bad.md").write_text(_file("name: Bad\ndescription: x"), encoding="utf-8")
    (user / "plain.md").write_text("no front matter here\n", encoding="utf-8")
    (user / "broken.md").write_text("---\nname: [unclosed\ndescription: x\n---\n", encoding="utf-8")
    (user / "notes.txt").write_text(_file("name: txt\ndescription: not markdown"), encoding="utf-8")
    (user / ".hidden.md").write_text(_file("name: hidden\ndescription: hidden"), encoding="utf-8")
    (project / "shared.md").write_text(_file("name: shared\ndescription: the project's"), encoding="utf-8")
    said: list[str] = []
    found = find_agents([Layer(user, "user", Path("/")), Layer(project, "project", project)], said.append)
    assert sorted(found) == ["mine", "shared"]
    assert found["shared"].description == "the project's" and found["shared"].whose == "project"
    assert len(said) == 3
    assert all(line.startswith("agent ") and "is not loaded: " in line for line in said)
    assert {Path(line.split(" ")[1]).name for line in said} == {"bad.md", "plain.md", "broken.md"}


def test_within_one_layer_the_first_file_keeps_the_name(tmp_path: Path) -> None:
    first, second = tmp_path / "bingo", tmp_path / "claude"
    for place, words in ((first, "bingo's"), (second, "claude's")):
        place.mkdir()
        (place / "x.md").write_text(_file(f"name: x\ndescription: {words}"), encoding="utf-8")
    found = find_agents([Layer(first, "user", Path("/")), Layer(second, "user", Path("/"))], lambda _: None)
    assert found["x"].description == "bingo's"


def test_offered_tools_reads_claude_codes_names_and_never_gives_agent() -> None:
    available = ["read", "grep", "bash", "write", "agent", "skill", "plugin__github__search", "plugin__db__q"]
    offered, unmatched = offered_tools(("Read", "Grep", "mcp__github__search", "Task", "agent", "Nope"), available)
    assert offered == {"read", "grep", "plugin__github__search"}
    assert unmatched == ["Nope"]
    every, none = offered_tools(None, available)
    assert every == set(available) - {"agent"} and none == []
    starred, _ = offered_tools(("mcp__*",), available)
    assert starred == {"plugin__github__search", "plugin__db__q"}
    nothing, _ = offered_tools((), available)
    assert nothing == frozenset()


def test_the_catalogue_lists_each_agent_and_keeps_to_its_bound() -> None:
    agents = {
        f"agent-{n:04}": AgentFile(f"agent-{n:04}", "d" * 300, None, None, None, "", HERE, "user") for n in range(200)
    }
    whole = agent_catalogue(dict(list(agents.items())[:3]))
    assert "- agent-0000: " + "d" * 300 in whole and "`agent` tool" in whole
    bounded = agent_catalogue(agents, limit=4_000)
    listed = bounded.split("The agents:\n\n", 1)[1]
    assert len(listed) <= 4_000 + 80
    assert "more agents, not listed here" in listed
    assert "the `agent` tool" in agent_catalogue({}).lower() or "`agent` tool" in agent_catalogue({})
