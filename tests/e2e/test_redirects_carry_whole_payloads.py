"""Issue 11, item 4: a `redirect` whose value is not a whole payload of the same shape
decides nothing, with one notice, and the hooks after it see the payload as it was. Before,
a redirect to `{}` blinded every later hook (they were shown `{}`) while the call went on:
a guard denying `bash` never saw a `bash` call, and the call ran."""

from __future__ import annotations

from pathlib import Path

from tests.e2e._bingo import Sandbox, no_traceback
from tests.e2e._declares import decided, install_declaring
from tests.e2e._scripted import model_requests, notices, result_text, text, tool, tool_results, use_scripted_model


def test_a_redirect_to_an_empty_object_does_not_blind_the_guard_after_it(tmp_path: Path) -> None:
    box = Sandbox(tmp_path)
    marker = box.root / "bash-ran"
    command = f"touch {marker}"
    # Hooks run in plugin-name order: the blinder's before the guard's.
    install_declaring(box, "blinder")
    install_declaring(box, "guard")
    use_scripted_model(
        box,
        [[tool("c1", "bash", {"command": command})], [text("done.")]],
        plugins={
            "blinder": {
                "hooks": [{"name": "blind", "site": "tool", "points": ["before"]}],
                "answers": {"blind": {"outcome": "redirect", "value": {}}},
            },
            "guard": {
                "hooks": [{"name": "guard", "site": "tool", "points": ["before"]}],
                "answers": {"guard": "deny-bash"},
            },
        },
        sandbox={"mode": "off"},  # without a sandbox, where --allow bash would write the marker
    )

    result = box.run("-p", "--allow", "bash", "run it")

    assert result.returncode == 0, result.stderr
    assert no_traceback(result)
    assert not marker.exists()
    assert [d["payload"] for d in decided(box, "guard")] == [
        {"tool": "bash", "input": {"command": command}, "callId": "c1"}
    ]
    [refused] = tool_results(model_requests(box)[-1])
    assert result_text(refused) == "bash was refused by hook guard (guard): no shell here"
    assert notices(result.stderr, "blinder") == [
        "blinder: hook blind answered 'redirect' with a payload missing tool, input, callId, which decides "
        "nothing: a redirect carries a whole payload of the same shape (tool, input, callId)"
    ]
