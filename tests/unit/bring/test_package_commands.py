"""A plugin package's markdown commands (ADR-0048): each is `/PLUGIN:NAME`, and `/NAME` too
while no other command has the name, as Claude Code offers a plugin's command."""

from __future__ import annotations

from pathlib import Path

from bingo.bring import bring
from bingo.bring._slash import MarkdownCommand
from bingo.kernel.notices import Notice, Notices
from bingo.kernel.settings import Settings


def _command(directory: Path, name: str, body: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / f"{name}.md").write_text(body, encoding="utf-8")


def test_a_packages_command_has_its_long_name_and_its_bare_one_only_while_no_other_has_it(tmp_path: Path) -> None:
    home, user_home = tmp_path / "home" / ".bingo", tmp_path / "home"
    plugins = home / "plugins"
    _command(plugins / "alpha" / "commands", "deploy", "alpha deploys\n")
    _command(plugins / "beta" / "commands", "deploy", "beta deploys\n")
    _command(plugins / "alpha" / "commands", "tidy", "alpha tidies\n")
    _command(plugins / "alpha" / "commands", "help", "alpha helps\n")
    _command(plugins / "beta" / "commands", "notes", "beta notes\n")
    _command(home / "commands", "notes", "my notes\n")
    notices = Notices()
    said: list[Notice] = []
    notices.listen(said.append)
    brought = bring(
        home=home,
        user_home=user_home,
        project=None,
        settings=Settings(),
        notices=notices,
        sandbox=None,
        workdir=tmp_path,
        session=lambda: "s",
        mcp=set(),
        packages=[plugins / "alpha", plugins / "beta"],
    )
    commands = brought.slash(taken={"help"}, plugins={}, say=lambda line: said.append(Notice("bingo", line, "warning")))
    bodies = {name: command.file.body for name, command in commands.items() if isinstance(command, MarkdownCommand)}
    assert bodies["alpha:deploy"] == "alpha deploys" and bodies["beta:deploy"] == "beta deploys"
    assert "deploy" not in bodies  # two packages have it: only the long names
    assert bodies["tidy"] == "alpha tidies" and bodies["alpha:tidy"] == "alpha tidies"  # nobody else has it
    assert bodies["notes"] == "my notes" and bodies["beta:notes"] == "beta notes"  # the person's own wins the name
    assert "help" not in bodies and bodies["alpha:help"] == "alpha helps"  # bingo's own keeps /help
    assert said == []  # the long name works: nothing to say
    assert "(plugin alpha)" in commands["alpha:tidy"].spec.hint


def _skill(directory: Path, name: str, description: str) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    (directory / "SKILL.md").write_text(f"---\nname: {name}\ndescription: {description}\n---\n{description}\n")


def test_a_packages_skill_is_also_plugin_colon_name_whoever_has_the_bare_name(tmp_path: Path) -> None:
    """As Claude Code offers a plugin's skill (`/my-plugin:hello`): the long name always, the
    bare name (and the `skill` tool's name) by the usual order: the project's, the person's
    own, then the first package's."""
    from bingo.bring._slash import SkillCommand

    home, user_home, project = tmp_path / "home" / ".bingo", tmp_path / "home", tmp_path / "project"
    plugins = home / "plugins"
    _skill(plugins / "alpha" / "skills" / "tidy", "tidy", "alpha tidies")
    _skill(plugins / "beta" / "skills" / "tidy", "tidy", "beta tidies")
    _skill(plugins / "beta" / "skills" / "lint", "lint", "beta lints")
    _skill(home / "skills" / "lint", "lint", "my lint")
    _skill(project / ".bingo" / "skills" / "ship", "ship", "project ships")
    _skill(plugins / "alpha" / "skills" / "ship", "ship", "alpha ships")
    brought = bring(
        home=home,
        user_home=user_home,
        project=project,
        settings=Settings(),
        notices=Notices(),
        sandbox=None,
        workdir=tmp_path,
        session=lambda: "s",
        mcp=set(),
        packages=[plugins / "alpha", plugins / "beta"],
    )
    said: list[str] = []
    commands = brought.slash(taken=set(), plugins={}, say=said.append)
    described = {
        name: command.skill.description for name, command in commands.items() if isinstance(command, SkillCommand)
    }
    assert described == {
        "tidy": "alpha tidies",  # the first package's
        "alpha:tidy": "alpha tidies",
        "beta:tidy": "beta tidies",
        "lint": "my lint",  # the person's own
        "beta:lint": "beta lints",
        "ship": "project ships",  # the project's
        "alpha:ship": "alpha ships",
    }
    assert {name: skill.description for name, skill in brought.skills.items()} == {
        "tidy": "alpha tidies",
        "lint": "my lint",
        "ship": "project ships",
    }
    assert said == []
