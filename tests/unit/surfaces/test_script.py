"""The script surface's intricate parts: its schema document is what its types generate, the
price table, `--json-schema`'s reading and its check of an answer, and the line writer's
escapes (surfaces/script, ADR-0046)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import pytest

from bingo.kernel.errors import UsageError
from bingo.kernel.frames import AssistantFrame
from bingo.providers import cost_usd
from bingo.surfaces.script import ScriptSurface, read_schema
from bingo.surfaces.script._answer import Answer
from bingo.surfaces.script.schema import render
from bingo.wire import Message, Notice, TextBlock, Usage

SCHEMA = Path(__file__).resolve().parents[3] / "schema" / "script-output.json"


def test_committed_output_schema_is_what_the_output_types_generate() -> None:
    committed = SCHEMA.read_text(encoding="utf-8")
    assert committed == render(), "schema/script-output.json is stale: run python -m bingo.surfaces.script.schema"


def test_a_known_model_is_priced_by_its_name_with_or_without_a_date_and_cached_input_at_the_cache_price() -> None:
    usage = Usage(input_tokens=1_000_000, output_tokens=1_000_000)
    assert cost_usd("anthropic", "claude-sonnet-4-5-20250929", usage) == 18.0
    assert cost_usd("openai", "gpt-4o-mini-2024-07-18", usage) == 0.75
    assert cost_usd("openai", "gpt-4o", usage) == 12.5
    cached = Usage(input_tokens=1_000_000, output_tokens=0, cache_read_tokens=500_000, cache_write_tokens=500_000)
    assert cost_usd("anthropic", "claude-sonnet-4-5", cached) == pytest.approx(0.15 + 1.875)


def test_an_unknown_model_or_a_plugins_provider_has_no_price() -> None:
    usage = Usage(input_tokens=10, output_tokens=10)
    assert cost_usd("anthropic", "claude-future-9", usage) is None
    assert cost_usd("openai", "llama3", usage) is None
    # A longer name is another model, often priced otherwise: never the price of its prefix.
    assert cost_usd("openai", "gpt-5-pro", usage) is None
    assert cost_usd("openai", "o3-pro-2025-06-10", usage) is None
    assert cost_usd("openai", "gpt-5.4", usage) is None
    assert cost_usd("anthropic", "claude-opus-4-6", usage) is None
    assert cost_usd("plugin__scripted-model__scripted", "claude-sonnet-4-5", usage) is None


def test_a_schema_is_read_inline_or_from_a_file(tmp_path: Path) -> None:
    assert read_schema('{"type": "object"}', tmp_path) == {"type": "object"}
    (tmp_path / "s.json").write_text('{"type": "array"}', encoding="utf-8")
    assert read_schema("s.json", tmp_path) == {"type": "array"}


@pytest.mark.parametrize(
    ("value", "line"),
    [
        ("{nope", "the inline --json-schema is not JSON"),
        ("[1]", "--json-schema: there is no file [1]"),
        ("missing.json", "--json-schema: there is no file missing.json"),
        ('{"type": 5}', "--json-schema is not a valid JSON Schema: "),
        ('{"properties": {"a": {"type": "nope"}}}', "--json-schema is not a valid JSON Schema: "),
    ],
)
def test_a_bad_schema_is_a_usage_error_naming_what_is_wrong(tmp_path: Path, value: str, line: str) -> None:
    with pytest.raises(UsageError) as raised:
        read_schema(value, tmp_path)
    assert raised.value.line().startswith(line)
    assert raised.value.exit_code == 2


def test_an_answer_is_its_json_or_its_one_fenced_block_and_says_where_it_fails() -> None:
    schema = {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}
    assert Answer(schema, ' {"n": 3}\n').value == {"n": 3}
    assert Answer(schema, 'Here:\n```json\n{"n": 4}\n```\n').value == {"n": 4}
    assert Answer(schema, "three").problem == "the answer is not JSON"
    assert Answer(schema, '{"n": "x"}').problem == "at /n: 'x' is not of type 'integer'"
    assert Answer(schema, "{}").problem == "'n' is a required property"
    assert Answer(schema, "[" * 100_000).problem == "the answer is not JSON"


def test_no_line_carries_a_raw_control_or_direction_character() -> None:
    out = io.BytesIO()
    surface = ScriptSurface("stream-json", out=out, err=io.StringIO())
    hostile = "a\x1b]0;t\x07b\x9b2Jc\u202ed"
    surface.init(cwd="/", tools=[], plugins=[])
    surface.notice(Notice(source="p", message=hostile))
    surface.frame(AssistantFrame(message=Message(role="assistant", content=[TextBlock(text=hostile)]), turn=1))
    written = out.getvalue()
    for raw in ("\x1b", "\x07", "\x9b", "\u202e"):
        assert raw.encode() not in written
    lines = [json.loads(line) for line in written.splitlines()]
    assert lines[1]["message"] == hostile
    assert lines[2]["message"]["content"] == [{"type": "text", "text": hostile}]


def test_jsonschema_is_imported_only_for_json_schema() -> None:
    import subprocess
    import sys

    code = "import sys, bingo.app, bingo.surfaces.script; print('jsonschema' in sys.modules)"
    ran = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=30)
    assert ran.stdout.strip() == "False", ran.stderr


def test_usage_is_reported_as_anthropic_does_the_cached_input_apart() -> None:
    from bingo.surfaces.script._drive import _usage  # pyright: ignore[reportPrivateUsage]

    used = Usage(input_tokens=1000, output_tokens=50, cache_read_tokens=600, cache_write_tokens=300)
    reported = _usage(used)
    assert (reported.input_tokens, reported.cache_read_input_tokens, reported.cache_creation_input_tokens) == (
        100,
        600,
        300,
    )
    assert reported.output_tokens == 50
