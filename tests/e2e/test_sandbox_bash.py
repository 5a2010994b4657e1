"""`bash` in the sandbox, through the real binary (INTERFACE.md §3, §9; issue 24): the model's
command runs without asking and reaches only what was granted. The evidence is the attacked
side's (tests/e2e/_breakout.py): the planted key, the files, the servers, the test's process.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from tests.e2e._bingo import Sandbox, no_traceback
from tests.e2e._breakout import BREAKOUT, SECRET_ENV, attempted, held, targets
from tests.e2e._scripted import model_requests, result_text, text, tool, tool_results, use_scripted_model

REPORT = "breakout-bash.json"
"""Written in the project's `out/` (tests/e2e/_breakout.py makes it)."""


def _breakout_turn(box: Sandbox, targets_file: Path, **settings: Any) -> None:
    command = f"python3 {BREAKOUT} {targets_file} out/{REPORT} bash"
    use_scripted_model(box, [[tool("b1", "bash", {"command": command})], [text("done")]], **settings)


def _told(box: Sandbox) -> str:
    requests = model_requests(box)
    return "\n".join(result_text(block) for request in requests for block in tool_results(request))


def test_sandboxed_bash_runs_without_asking_and_reaches_only_what_was_granted(tmp_path: Path) -> None:
    box = Sandbox(tmp_path, env=dict(SECRET_ENV))
    with targets(box) as found:
        _breakout_turn(box, found.write(tmp_path / "targets.json"), sandbox={"network": {"allow": ["localhost"]}})
        result = box.run("-p", "run it")  # no rule allows bash: the sandbox is its bound
        assert result.returncode == 0, result.stderr
        report = attempted(box, REPORT)
        assert report, f"bash did not run: {result.stderr}"
        assert held(found, report) == []
        assert found.granted is not None and found.granted.paths == ["/granted"]  # through the proxy, by name
        port = found.ports["ungranted"]
        refusal = [
            line for line in result.stderr.splitlines() if f"refused bash a connection to 127.0.0.1:{port}" in line
        ]
        assert len(refusal) == 1 and "sandbox.network.allow" in refusal[0], result.stderr
        assert "PATH" in report["env"] and no_traceback(result)


def test_without_the_sandbox_bash_is_asked_and_reaches_what_the_person_can(tmp_path: Path) -> None:
    """--no-sandbox and the user's mode "off" restore today's behaviour."""
    for how in ("flag", "settings"):
        box = Sandbox(tmp_path / how, env=dict(SECRET_ENV))
        with targets(box) as found:
            settings: dict[str, Any] = {"sandbox": {"mode": "off"}} if how == "settings" else {}
            _breakout_turn(box, found.write(box.root / "targets.json"), **settings)
            flags = ("--no-sandbox",) if how == "flag" else ()
            asked = box.run("-p", *flags, "run it")
            assert "bash is not allowed here" in asked.stdout + asked.stderr
            assert not (box.project / "out" / REPORT).exists()
            _breakout_turn(box, found.write(box.root / "targets.json"), **settings)
            ran = box.run("-p", *flags, "--allow", "bash", "run it")
            assert ran.returncode == 0, ran.stderr
            assert found.changed() and found.tcp_hits and found.unix_hits, how  # unconfined, as before
            assert found.ungranted is not None and found.ungranted.paths == ["/ungranted"]
            assert "GH_TOKEN" in attempted(box, REPORT)["env"]


def test_a_trusted_project_cannot_widen_the_sandbox(tmp_path: Path) -> None:
    box = Sandbox(tmp_path, env=dict(SECRET_ENV))
    with targets(box) as found:
        targets_file = found.write(tmp_path / "targets.json")
        box.settings(
            {"sandbox": {"mode": "off", "write": [str(found.outside)], "env": {"keep": ["GH_TOKEN"]}}}, layer="project"
        )
        assert box.run("--trust").returncode == 0
        _breakout_turn(box, targets_file)
        result = box.run("-p", "run it")
        assert result.returncode == 0, result.stderr
        report = attempted(box, REPORT)
        assert report and held(found, report) == []
        assert "widens the sandbox" in result.stderr


def test_outside_the_sandbox_is_refused_where_nobody_can_be_asked_whatever_the_rules(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    marker = tmp_path / "outside-marker"
    call = {"command": f"touch {marker}", "outsideSandbox": True, "reason": "it writes outside the project"}
    use_scripted_model(
        box, [[tool("b1", "bash", call)], [text("done")]], permissions={"allow": ["bash", f"bash(touch {marker})"]}
    )
    box.run("-p", "--allow", "bash", "run it")
    assert not marker.exists()
    told = _told(box)
    assert "outside the sandbox" in told and "no person to ask" in told


def test_a_failing_sandboxed_command_tells_the_model_it_ran_in_the_sandbox(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    use_scripted_model(box, [[tool("b1", "bash", {"command": f"touch {box.home}/outside"})], [text("done")]])
    result = box.run("-p", "run it")
    assert result.returncode == 0, result.stderr
    assert not (box.home / "outside").exists()
    told = _told(box)
    assert "[exit code 1]" in told and "ran in bingo's sandbox" in told
    assert json.dumps(told)


def test_on_a_terminal_a_host_nobody_granted_is_asked_about_and_always_is_saved(tmp_path: Path) -> None:
    from tests.e2e.test_terminal import terminal

    box = Sandbox(tmp_path)
    with targets(box) as found:
        assert box.run("--trust").returncode == 0  # the project's .mcp.json: not asked about here
        command = f"python3 {BREAKOUT} {found.write(tmp_path / 'targets.json')} out/{REPORT} bash"
        replies: list[Any] = [[("tool", "t1", "bash", {"command": command})], [("text", "Done.")]]
        with terminal(box, replies) as screen:
            screen.child.send("run it\r")
            granted, ungranted = found.ports["granted"], found.ports["ungranted"]
            screen.expect(rf"bash wants to reach localhost:{granted} \(yes: this once; always: saved in\s")
            screen.expect(r"\[y\] yes +\[a\] always +\[n\] no \(Esc\)")
            screen.child.send("a")
            screen.expect(rf"bash wants to reach 127\.0\.0\.1:{ungranted} \(yes: this once; always: saved in\s")
            screen.expect(r"\[n\] no \(Esc\)")
            screen.child.send("n")
            screen.expect(r"Done\.")
            screen.prompt()
            screen.child.sendcontrol("d")
            assert screen.exits() == 0
        assert found.granted is not None and found.granted.paths == ["/granted"]
        assert found.ungranted is not None and found.ungranted.paths == []
        saved = json.loads((box.project / ".bingo" / "settings.local.json").read_text(encoding="utf-8"))
        assert saved == {"sandbox": {"network": {"allow": ["localhost"]}}}
        assert held(found, attempted(box, REPORT)) == []


def test_on_a_terminal_outside_the_sandbox_is_asked_with_a_question_that_says_so(tmp_path: Path) -> None:
    from tests.e2e.test_terminal import terminal

    box = Sandbox(tmp_path)
    outside = tmp_path / "outside-marker"
    call = {"command": f"touch {outside}", "outsideSandbox": True, "reason": "it writes beside the project"}
    replies: list[Any] = [[("tool", "t1", "bash", call)], [("tool", "t2", "bash", call)], [("text", "Done.")]]
    box.settings({"permissions": {"allow": ["bash"]}})  # no rule allows a call outside
    with terminal(box, replies) as screen:
        screen.child.send("touch it\r")
        screen.expect(
            r"bash wants to run OUTSIDE the sandbox, with everything you can reach.*\n +reason: it writes beside the project\n +command: touch\s"
        )
        screen.expect(r"\[y\] yes +\[n\] no \(Esc\)")
        screen.child.send("n")
        screen.expect(r"bash wants to run OUTSIDE the sandbox")
        screen.expect(r"\[y\] yes +\[n\] no \(Esc\)")
        assert not outside.exists()  # the first, declined, never ran
        screen.child.send("y")
        screen.expect(r"Done\.")
        screen.prompt()
        screen.child.sendcontrol("d")
        assert screen.exits() == 0
    assert outside.exists()  # the second ran outside: the sandbox would have refused it
