"""What people bring from other hosts, through the real binary (INTERFACE.md section 11):
real Agent Skills from the public anthropics/skills repository as an npm package ships them (tests/e2e/_skills.py)
and markdown commands written as Claude Code's documentation shows them. Evidence is what the
scripted model received: its system prompt, its messages, its tool results."""

from __future__ import annotations

import shutil
from pathlib import Path

from tests.e2e._bingo import Sandbox, no_traceback
from tests.e2e._scripted import model_requests, result_text, text, tool, tool_results, use_scripted_model
from tests.e2e._skills import real_skills


def _with_skills(box: Sandbox, *names: str, where: Path | None = None) -> Path:
    place = where or box.home / ".claude" / "skills"
    place.mkdir(parents=True, exist_ok=True)
    for name in names:
        shutil.copytree(real_skills() / name, place / name)
    return place


def test_real_skills_are_in_the_catalogue_the_skill_tool_gives_the_body_and_files_and_read_reads_them(
    tmp_path: Path,
) -> None:
    box = Sandbox(tmp_path)
    place = _with_skills(box, "brand-guidelines", "internal-comms", "ux-ui-design-system")
    # A skill of bingo's own place, its description a folded multi-line YAML block.
    own = box.bingo_home / "skills" / "release-notes"
    own.mkdir(parents=True)
    (own / "SKILL.md").write_text(
        "---\nname: release-notes\ndescription: >-\n  Writes release notes\n  from the git log: use it\n"
        "  when asked for a changelog.\n---\n# Release notes\nRead CHANGES first.\n",
        encoding="utf-8",
    )
    example = place / "internal-comms" / "examples" / "faq-answers.md"
    use_scripted_model(
        box,
        [
            [tool("s1", "skill", {"name": "internal-comms"})],
            [tool("r1", "read", {"path": str(example)})],
            [text("done")],
        ],
    )
    result = box.run("-p", "write our FAQ")
    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    first, second, third = model_requests(box)
    system = first["request"]["system"]
    assert "- brand-guidelines: Applies Anthropic's official brand colors and typography" in system
    assert "- internal-comms: A set of resources to help me write all kinds of internal communications" in system
    assert "- release-notes: Writes release notes from the git log: use it when asked for a changelog." in system
    # ux-ui-design-system's real description is 1,189 characters, over the 1,024 allowed: one notice, the rest load.
    assert "ux-ui-design-system" not in system
    [refused] = [line for line in result.stderr.splitlines() if "ux-ui-design-system" in line]
    assert "SKILL.md is not loaded: its description is 1189 characters, over 1024" in refused
    assert "skill" in [spec["name"] for spec in first["request"]["tools"]]
    # The skill tool ran without a rule (trusted, read-only) and gave the body and the other files.
    [loaded] = tool_results(second)
    words = result_text(loaded)
    assert not loaded.get("isError")
    assert f"Base directory for this skill: {place / 'internal-comms'}" in words
    assert "## Tone" in words or "internal communications" in words
    assert f"- {example}" in words and f"- {place / 'internal-comms' / 'LICENSE.txt'}" in words
    # The model read one of them with read.
    read = [block for block in tool_results(third) if block["toolUseId"] == "r1"][0]
    assert not read.get("isError") and "FAQ" in result_text(read)


def test_slash_skill_and_markdown_commands_submit_their_prompt_with_the_arguments(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    _with_skills(box, "brand-guidelines")
    commands = box.home / ".claude" / "commands"
    (commands / "frontend").mkdir(parents=True)
    # As Claude Code's documentation writes them: front matter, $ARGUMENTS, positional $1 $2, and !`cmd`.
    (commands / "fix-issue.md").write_text(
        "---\ndescription: Fix a GitHub issue\nargument-hint: [issue-number] [priority]\n---\n"
        "Fix issue #$1 with priority $2. Context: !`git log -1`\nAll of it: $ARGUMENTS\n",
        encoding="utf-8",
    )
    (commands / "frontend" / "component.md").write_text("Create a React component.\n", encoding="utf-8")
    use_scripted_model(box, [[text("one")], [text("two")], [text("three")]])
    result = box.run("-p", '/fix-issue 123 "very high"')
    assert result.returncode == 0, result.stderr
    result = box.run("-p", "/frontend:component Button")
    assert result.returncode == 0, result.stderr
    result = box.run("-p", "/brand-guidelines make the slides on-brand")
    assert result.returncode == 0, result.stderr
    prompts = [r["request"]["messages"][-1]["content"][0]["text"] for r in model_requests(box)]
    assert prompts[0] == ('Fix issue #123 with priority very high. Context: !`git log -1`\nAll of it: 123 "very high"')
    assert prompts[1] == "Create a React component.\n\nARGUMENTS: Button"
    assert prompts[2].startswith(
        f"Base directory for this skill: {box.home / '.claude' / 'skills' / 'brand-guidelines'}"
    )
    assert "# Anthropic Brand Styling" in prompts[2]
    assert prompts[2].endswith("\n\nARGUMENTS: make the slides on-brand")
    # /help lists them with their hints; /skills lists the skills.
    shown = box.run("-p", "/help")
    assert shown.returncode == 0, shown.stderr
    assert "/fix-issue [issue-number] [priority]" in shown.stdout and "Fix a GitHub issue" in shown.stdout
    assert "/frontend:component" in shown.stdout and "/brand-guidelines" in shown.stdout
    listed = box.run("-p", "/skills")
    assert "brand-guidelines" in listed.stdout and "Applies Anthropic's official brand colors" in listed.stdout


def test_a_command_named_as_bingos_own_is_refused_with_one_notice_and_the_others_work(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    commands = box.bingo_home / "commands"
    commands.mkdir(parents=True)
    (commands / "help.md").write_text("Tell me a joke.\n", encoding="utf-8")
    (commands / "broken.md").write_text("---\ndescription: x\n  nested: [\n---\nbody\n", encoding="utf-8")
    (commands / "fine.md").write_text("fine $ARGUMENTS\n", encoding="utf-8")
    result = box.run("-p", "/help")
    assert result.returncode == 0, result.stderr
    assert "Tell me a joke" not in result.stdout and "/fine" in result.stdout
    [clash] = [line for line in result.stderr.splitlines() if "help.md" in line]
    assert "/help is bingo's own command, so it is not offered as /help" in clash
    [broken] = [line for line in result.stderr.splitlines() if "broken.md" in line]
    assert "is not loaded: its front matter is not valid YAML" in broken


def test_an_untrusted_projects_skills_and_commands_are_not_loaded_and_one_notice_says_so(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    _with_skills(box, "webapp-testing", where=box.project / ".claude" / "skills")
    (box.project / ".claude" / "commands").mkdir(parents=True)
    (box.project / ".claude" / "commands" / "deploy.md").write_text("Deploy it.\n", encoding="utf-8")
    use_scripted_model(box, [[text("ok")], [text("ok")]])
    result = box.run("-p", "hi")
    assert result.returncode == 0, result.stderr
    assert "webapp-testing" not in model_requests(box)[0]["request"]["system"]
    [notice] = [line for line in result.stderr.splitlines() if "skills and commands in" in line]
    assert "is not a trusted project" in notice and "bingo --trust" in notice
    assert box.run("-p", "/deploy").returncode == 2  # no such command
    # Trusted, as it is now: they load.
    assert box.run("--trust").returncode == 0
    result = box.run("-p", "hi")
    assert result.returncode == 0, result.stderr
    assert "- webapp-testing: Toolkit for interacting with" in model_requests(box)[1]["request"]["system"]
    # Changed since: left out again.
    (box.project / ".claude" / "skills" / "webapp-testing" / "scripts" / "with_server.py").write_text("evil\n")
    result = box.run("-p", "/help")
    assert "changed since you trusted it" in result.stderr and "/deploy" not in result.stdout


def test_started_in_the_home_directory_the_persons_own_skills_are_not_a_projects(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    _with_skills(box, "brand-guidelines")
    result = box.run("-p", "/skills", cwd=box.home)
    assert result.returncode == 0, result.stderr
    assert "brand-guidelines" in result.stdout
    assert "trust" not in result.stderr  # ~/.claude/skills is the person's, not an untrusted project's


def test_a_command_whose_yaml_aliases_stand_for_millions_of_values_is_refused_not_expanded(tmp_path: Path) -> None:
    # Seven anchors, each listing the one before nine times: 300 bytes standing for 9^7 values,
    # which joining the hint into one line made (half a gigabyte; two more anchors are 40 GB).
    box = Sandbox(tmp_path)
    anchors = ["&a [x,x,x,x,x,x,x,x,x]"]
    for name, before in zip("bcdefg", "abcdef", strict=True):
        anchors.append(f"&{name} [" + ",".join([f"*{before}"] * 9) + "]")
    commands = box.project / ".claude" / "commands"
    commands.mkdir(parents=True)
    (commands / "bomb.md").write_text(f"---\ndescription: b\nargument-hint: [{', '.join(anchors)}]\n---\nbody\n")
    (commands / "fine.md").write_text("fine $ARGUMENTS\n", encoding="utf-8")
    assert box.run("--trust").returncode == 0
    result = box.run("-p", "/help")
    assert result.returncode == 0, result.stderr
    assert "/fine" in result.stdout and "/bomb" not in result.stdout
    [refused] = [line for line in result.stderr.splitlines() if "bomb.md" in line]
    assert "its front matter repeats itself through YAML aliases into over 16384 values" in refused
