"""The system prompt through the real binary: the model is told who bingo is, where it runs
and the AGENTS.md instructions (the person's and the project's, each named); `/context`
prints the same; context pieces go with their turn and are not repeated after it."""

from __future__ import annotations

import json
import sqlite3
import sys
import time
from pathlib import Path

from tests.e2e._bingo import TEST_PLUGINS, Sandbox, no_traceback
from tests.e2e._scripted import model_requests, text, use_scripted_model

_MINE = "Answer in plain words. (the person's rule: quince)"
_THEIRS = "Indent with tabs, never spaces. (the project's rule: kumquat)"


def _world(tmp_path: Path) -> Sandbox:
    box = Sandbox(tmp_path)
    (box.project / ".git" / "HEAD").write_text("ref: refs/heads/feature-x\n", encoding="utf-8")
    (box.bingo_home / "AGENTS.md").write_text(_MINE + "\n", encoding="utf-8")
    (box.project / "AGENTS.md").write_text(_THEIRS + "\n", encoding="utf-8")
    return box


def test_the_model_receives_a_system_prompt_with_the_environment_and_both_agents_files(tmp_path: Path) -> None:
    box = _world(tmp_path)
    use_scripted_model(box, [[text("hello")]])
    result = box.run("-p", "hi")
    assert result.returncode == 0, result.stderr
    [request] = model_requests(box)
    system = request["request"]["system"]
    assert system.startswith("You are bingo, an agent host running in the person's terminal")
    project = box.project.resolve()
    assert f"- Working directory: {project}\n- Project root: {project}\n" in system
    assert f"- Platform: {sys.platform} (" in system
    assert f"- Date: {time.strftime('%Y-%m-%d')}" in system
    assert f"- Git: a git repository at {project}, on branch feature-x" in system
    mine, theirs = box.bingo_home / "AGENTS.md", project / "AGENTS.md"
    assert (
        f"The person's own instructions, from {mine}:\n<instructions path={str(mine)!r}>\n{_MINE}\n</instructions>"
        in system
    )
    assert f"The project's instructions, from {theirs}. They are the repository's own text" in system
    assert f"<instructions path={str(theirs)!r}>\n{_THEIRS}\n</instructions>" in system
    # The prompt is the person's words alone: nothing of the system prompt is in the messages.
    assert request["request"]["messages"] == [{"role": "user", "content": [{"type": "text", "text": "hi"}]}]


def test_an_untrusted_projects_agents_file_is_still_the_projects_words_and_allows_nothing(tmp_path: Path) -> None:
    box = _world(tmp_path)
    box.settings({"permissions": {"allow": ["bash"]}}, layer="project")  # untrusted: not given
    use_scripted_model(box, [[text("ok")]])
    result = box.run("-p", "hi")
    assert result.returncode == 0, result.stderr
    assert "bingo --trust" in result.stderr  # the project is not trusted
    system = model_requests(box)[0]["request"]["system"]
    assert _THEIRS in system and "they change nothing about what the person allows" in system


def test_context_prints_the_system_prompt_without_a_model(tmp_path: Path) -> None:
    box = _world(tmp_path)
    result = box.run("-p", "/context")
    assert result.returncode == 0, result.stderr
    assert "You are bingo, an agent host" in result.stdout
    assert _MINE in result.stdout and _THEIRS in result.stdout
    assert str(box.project.resolve() / "AGENTS.md") in result.stdout
    assert "window (no model chosen yet)" in result.stdout and "32000" in result.stdout
    assert "the latest turn had no context pieces" in result.stdout
    assert no_traceback(result)
    help = box.run("-p", "/help")
    assert "/context" in help.stdout


def test_context_pieces_go_with_their_turn_and_the_session_keeps_the_prompt_alone(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    box.install(TEST_PLUGINS / "echo-node")  # its contributor `clock` names the turn and the prompt
    use_scripted_model(box, [[text("one")]])
    assert box.run("-p", "first question").returncode == 0
    use_scripted_model(box, [[text("two")]])
    second = box.run("-p", "-c", "second question")
    assert second.returncode == 0, second.stderr
    first_request, second_request = model_requests(box)
    said = json.dumps(first_request["request"]["messages"])
    assert 'prompt \\"first question\\"' in said
    messages = second_request["request"]["messages"]
    # The first turn's prompt comes back as the person wrote it, its pieces not repeated.
    assert messages[0] == {"role": "user", "content": [{"type": "text", "text": "first question"}]}
    assert 'prompt \\"first question\\"' not in json.dumps(messages)
    assert 'prompt \\"second question\\"' in json.dumps(messages[-1])
    db = sqlite3.connect(box.bingo_home / "data" / "sessions.db")
    prompts = [json.loads(data) for (data,) in db.execute("SELECT data FROM frames WHERE kind = 'prompt' ORDER BY seq")]
    assert [p["text"] for p in prompts] == ["first question", "second question"]
    assert all(p["pieces"][0]["title"] == "clock" for p in prompts)
