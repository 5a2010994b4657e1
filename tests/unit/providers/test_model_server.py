"""The scripted model server run as its own process, as the black-box tests run it."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

from bingo.providers import AnthropicProvider, OpenAIProvider
from bingo.wire import Delta, Message, ModelRequest, ModelResponse, TextBlock, ToolUseBlock

_ROOT = Path(__file__).resolve().parents[3]

_HELLO = ModelRequest(model="m", messages=[Message(role="user", content=[TextBlock(text="hi")])])


async def _ask_both(base: str) -> tuple[ModelResponse, ModelResponse]:
    deltas: list[Delta] = []
    async with asyncio.timeout(5):
        first = await AnthropicProvider(api_key="k", base_url=base).stream(_HELLO, deltas.append)
        second = await OpenAIProvider(api_key=None, base_url=base + "/v1").stream(
            _HELLO, deltas.append
        )
    return first, second


def test_the_standalone_server_prints_its_port_serves_both_apis_and_logs_requests(
    tmp_path: Path,
) -> None:
    script = tmp_path / "script.json"
    log = tmp_path / "requests.jsonl"
    replies = [
        [["text", "Hello from the script"]],
        [["tool", "t1", "count", {"path": "notes.txt"}]],
    ]
    script.write_text(json.dumps({"replies": replies}), encoding="utf-8")
    command = [sys.executable, "-m", "tests.support.model_server", "--script", str(script)]
    with subprocess.Popen(
        [*command, "--log", str(log)], cwd=_ROOT, stdout=subprocess.PIPE, text=True
    ) as process:
        try:
            assert process.stdout is not None
            # The first line is the port (a crashed server gives EOF, and int('') fails).
            base = f"http://127.0.0.1:{int(process.stdout.readline())}"
            first, second = asyncio.run(_ask_both(base))
        finally:
            process.terminate()
            process.wait(5)
    assert first.message.content == [TextBlock(text="Hello from the script")]
    assert second.message.content == [
        ToolUseBlock(id="t1", name="count", input={"path": "notes.txt"})
    ]
    logged = [json.loads(line) for line in log.read_text(encoding="utf-8").splitlines()]
    assert [entry["path"] for entry in logged] == ["/v1/messages", "/v1/chat/completions"]
    assert logged[0]["body"]["messages"] == [
        {"role": "user", "content": [{"type": "text", "text": "hi"}]}
    ]
