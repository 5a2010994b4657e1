"""`--allow '*'` is what the README and docs/plugins.md say it is (issue 25, item 11), through
the real binary: every tool no `deny` or `ask` rule names runs without a question for this run
(a plugin's, and `write` outside the project too), while `deny` still refuses, `write` into
`.git` needs a rule naming it, a `bash` call asking to run outside the sandbox is still asked
(so refused where nobody can answer), and the sandbox still confines `bash`. The evidence is
the files written or not, and the model's tool results."""

from __future__ import annotations

import json
from pathlib import Path

from tests.e2e._bingo import EXAMPLES, REPO, Sandbox, no_traceback
from tests.e2e._scripted import model_requests, result_text, text, tool, tool_results, use_scripted_model


def test_allow_star_allows_every_tool_not_denied_and_the_sandbox_still_applies(tmp_path: Path) -> None:
    box = Sandbox(tmp_path / "box")
    box.install(EXAMPLES / "wordcount")
    (box.project / "notes.txt").write_text("a b c\n", encoding="utf-8")
    outside = tmp_path / "outside.txt"
    in_git = box.project / ".git" / "info-exclude-by-star"
    by_bash = tmp_path / "by-bash.txt"
    use_scripted_model(
        box,
        [
            [
                tool("count", "plugin__wordcount__count", {"path": "notes.txt"}),
                tool("outside", "write", {"path": str(outside), "content": "written\n"}),
                tool("git", "write", {"path": str(in_git), "content": "x\n"}),
                tool("bash", "bash", {"command": f"echo hi > {by_bash}"}),
                tool("escape", "bash", {"command": "true", "outsideSandbox": True}),
                tool("denied", "grep", {"pattern": "a"}),
            ],
            [text("done")],
        ],
        permissions={"deny": ["grep"]},
    )
    result = box.run("-p", "go", "--allow", "*")
    assert no_traceback(result)
    results = {block["toolUseId"]: block for block in tool_results(model_requests(box)[1])}
    assert not results["count"].get("isError"), result_text(results["count"])
    assert outside.read_text(encoding="utf-8") == "written\n"  # `write` is bingo's own, outside any sandbox
    assert not in_git.exists() and results["git"]["isError"] is True
    assert not by_bash.exists() and results["bash"]["isError"] is True  # confined to the project
    assert results["escape"]["isError"] is True and "outside the sandbox" in result_text(results["escape"])
    assert results["denied"]["isError"] is True
    # Nothing of it was saved: the next run has no such rule.
    assert json.loads((box.bingo_home / "settings.json").read_text(encoding="utf-8"))["permissions"] == {
        "deny": ["grep"]
    }
    assert not (box.project / ".bingo" / "settings.local.json").exists()


def test_the_readme_and_plugins_md_say_what_allow_star_is() -> None:
    readme = " ".join((REPO / "README.md").read_text(encoding="utf-8").split())
    plugins = " ".join((REPO / "docs" / "plugins.md").read_text(encoding="utf-8").split())
    assert (
        "--allow '*' allows every tool no deny or ask rule names, for this run: the sandbox still confines bash and plugins"
        in readme
    )
    assert "`--allow '*'` is the rule `*`, for this run only (nothing is saved)" in plugins
    assert "the sandbox (docs/sandbox.md) still confines `bash`, every plugin and every stdio MCP server" in plugins
