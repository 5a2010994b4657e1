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
