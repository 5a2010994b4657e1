"""Skills and commands found in their places: names checked, one line per bad file, a
project's wins the name; the catalogue bounded as ADR-0045 says."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from bingo.bring import CATALOGUE_CHARS, Skill, catalogue, find_commands, find_skills
from bingo.bring._files import Layer
from tests.support.summary import record


def _skill(root: Path, directory: str, front: str, body: str = "body\n") -> None:
    (root / directory).mkdir(parents=True)
    (root / directory / "SKILL.md").write_text(f"---\n{front}\n---\n{body}", encoding="utf-8")


def test_bad_skills_are_one_line_each_and_the_others_load_and_the_project_wins_the_name(tmp_path: Path) -> None:
    user, project = tmp_path / "user", tmp_path / "project"
    _skill(user, "ok", "name: ok\ndescription: the user's")
    _skill(user, "Upper", "name: Upper\ndescription: x")
    _skill(user, "nodesc", "name: nodesc")
    _skill(user, "long", "name: long\ndescription: " + "x" * 1025)
    (user / "none").mkdir()
    (user / "none" / "SKILL.md").write_text("# no front matter\n", encoding="utf-8")
    _skill(project, "ok", "name: ok\ndescription: the project's")
    said: list[str] = []
    found = find_skills(
        [Layer(user, "user", Path("/")), Layer(project, "project", project)],
        said.append,
    )
    assert sorted(found) == ["ok"] and found["ok"].description == "the project's"
    assert len(said) == 4
    assert any("Upper/SKILL.md is not loaded: its name 'Upper' is not lowercase" in line for line in said)
    assert any("nodesc/SKILL.md is not loaded: its front matter has no description" in line for line in said)
    assert any("long/SKILL.md is not loaded: its description is 1025 characters, over 1024" in line for line in said)
    assert any("none/SKILL.md is not loaded: it has no front matter" in line for line in said)


def test_a_file_beside_the_skills_is_no_skill_and_no_notice(tmp_path: Path) -> None:
    """A skill is a directory holding SKILL.md: `skills/review-code.md` (as a published plugin
    ships) is neither loaded nor complained of (it was a notice saying "Not a directory")."""
    _skill(tmp_path, "ok", "name: ok\ndescription: fine")
    (tmp_path / "review-code.md").write_text("---\ndescription: a command, filed here\n---\nReview.\n")
    said: list[str] = []
    found = find_skills([Layer(tmp_path, "user", Path("/"))], said.append)
    assert sorted(found) == ["ok"] and said == []


def test_a_project_skill_linked_out_of_the_project_is_not_read(tmp_path: Path) -> None:
    project, outside = tmp_path / "project", tmp_path / "outside"
    _skill(outside, "evil", "name: evil\ndescription: x")
    (project / "skills").mkdir(parents=True)
    (project / "skills" / "evil").symlink_to(outside / "evil")
    said: list[str] = []
    assert find_skills([Layer(project / "skills", "project", project)], said.append) == {}
    assert len(said) == 1 and "outside the project" in said[0]


def test_commands_are_named_by_their_path_and_a_broken_file_is_one_line(tmp_path: Path) -> None:
    (tmp_path / "git").mkdir()
    (tmp_path / "git" / "commit.md").write_text("---\ndescription: Commit\nargument-hint: [msg]\n---\nCommit $1\n")
    (tmp_path / "plain.md").write_text("# Plain command\nDo it.\n")
    (tmp_path / "broken.md").write_text("---\ndescription: x\n")
    (tmp_path / "notes.txt").write_text("not a command\n")
    said: list[str] = []
    found = find_commands([Layer(tmp_path, "user", Path("/"))], said.append)
    assert sorted(found) == ["git:commit", "plain"]
    assert found["git:commit"].argument_hint == "[msg]" and found["git:commit"].description == "Commit"
    assert found["plain"].description == "Plain command"
    assert len(said) == 1 and "broken.md is not loaded: its front matter is not closed" in said[0]


def _many(count: int, words: int) -> dict[str, Skill]:
    return {
        f"skill-{i:03}": Skill(f"skill-{i:03}", ("word " * words).strip(), Path("/s"), "", "user") for i in range(count)
    }


def test_fifty_skills_fit_the_catalogue_whole() -> None:
    skills = _many(50, 40)  # about 200 characters of description each, as real skills have
    text = catalogue(skills)
    assert all(f"- {name}: word word" in text for name in skills)
    record("skills catalogue", "50 skills of ~200-char descriptions (characters)", len(text))


def test_past_its_bound_the_catalogue_cuts_descriptions_then_names_then_counts() -> None:
    listed = catalogue(_many(120, 200)).split("\n\n", 2)[-1]
    assert len(listed) <= CATALOGUE_CHARS
    assert "- skill-000: word" in listed and "…" in listed
    many = catalogue(_many(2000, 200)).split("\n\n", 2)[-1]
    assert len(many) <= CATALOGUE_CHARS
    assert "- skill-000: word" in many and "\n- skill-1500\n" not in many
    assert many.endswith("more skills, not listed here: the `skill` tool takes any of their names")
    record("skills catalogue", "2000 skills, bound (characters)", len(many))


def test_yaml_is_imported_only_when_a_file_with_front_matter_is_found(tmp_path: Path) -> None:
    script = (
        "import sys\nfrom pathlib import Path\n"
        "from bingo.bring import find_commands, find_skills\nfrom bingo.bring._files import Layer\n"
        f"where = Path({str(tmp_path)!r})\n"
        "find_skills([Layer(where / 'skills', 'user', Path('/'))], print)\n"
        "find_commands([Layer(where / 'commands', 'user', Path('/'))], print)\n"
        "print('yaml' in sys.modules)\n"
    )
    (tmp_path / "commands").mkdir()
    (tmp_path / "commands" / "plain.md").write_text("no front matter\n", encoding="utf-8")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
    _skill(tmp_path / "skills", "x", "name: x\ndescription: y")
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "True"
