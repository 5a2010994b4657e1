"""`--json-schema SCHEMA`: the schema read and checked, what the model is told, and the final
answer validated against it (INTERFACE.md §13).

Owns reading the schema (inline JSON, or the file it names: `kernel.files.open_regular`),
checking it is a schema at all, the words that tell the model, the answer's JSON found in
its text (the whole text, else one fenced block) and its validation. The validator is the
`jsonschema` library (every draft, `$ref`, formats as annotations): it is imported here, and
this module only when the flag is given, so a run without it never pays its import.
It does not run turns (the surface's driver does).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ...kernel.errors import UsageError

__all__ = ["Answer", "SCHEMA_LIMIT", "correction", "instruction", "read_schema"]

SCHEMA_LIMIT = 1 << 20
"""The most a schema file may hold, in bytes (1 MiB)."""

_HOW = 'give a JSON Schema, inline (--json-schema \'{"type": "object"}\') or as a file\'s path'


def read_schema(value: str, cwd: Path) -> dict[str, Any]:
    """The schema `value` gives: inline JSON when it starts with `{`, else the file it names
    (relative to `cwd`), checked against its draft's metaschema.

    Raises:
        UsageError: it cannot be read, is not JSON, or is not a valid schema (exit 2).
    """
    text = value
    if not value.lstrip().startswith("{"):
        text = _read(cwd / value, value)
    import msgspec

    try:
        schema = msgspec.json.decode(text, type=dict[str, Any])
    except msgspec.ValidationError:
        raise UsageError("--json-schema is not a JSON object", _HOW) from None
    except msgspec.DecodeError as exc:
        where = "the inline --json-schema" if text is value else f"--json-schema file {value}"
        raise UsageError(f"{where} is not JSON ({exc})", _HOW) from None
    from jsonschema import exceptions, validators

    try:
        validators.validator_for(schema).check_schema(schema)
    except exceptions.SchemaError as exc:
        raise UsageError(f"--json-schema is not a valid JSON Schema: {_where(exc)}{exc.message}", _HOW) from None
    return schema


def _read(path: Path, value: str) -> str:
    import os

    from ...kernel.files import NotRegular, open_regular

    try:
        fd, _info = open_regular(path)
    except FileNotFoundError:
        raise UsageError(f"--json-schema: there is no file {value}", _HOW) from None
    except (NotRegular, OSError) as exc:
        raise UsageError(f"--json-schema file {value} cannot be read ({exc})", _HOW) from None
    with os.fdopen(fd, "rb") as file:
        data = file.read(SCHEMA_LIMIT + 1)
    if len(data) > SCHEMA_LIMIT:
        raise UsageError(f"--json-schema file {value} holds more than 1 MiB", "give a smaller schema")
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError(f"--json-schema file {value} is not UTF-8 text", _HOW) from None


def _where(error: Any) -> str:
    path = "/".join(str(step) for step in error.absolute_path)
    return f"at /{path}: " if path else ""


def instruction(schema: dict[str, Any]) -> str:
    """What is added to the prompt: the answer's form."""
    return (
        "Your final answer must be only a JSON value, with no other text around it, valid against "
        f"this JSON Schema:\n{json.dumps(schema, indent=2)}"
    )


def correction(problem: str) -> str:
    """The one correction round's prompt."""
    return (
        f"Your answer is not valid against the JSON Schema: {problem}. "
        "Answer again with only the corrected JSON value, and no other text."
    )


class Answer:
    """The final answer's check against the schema: `value` when it is valid, else `problem`
    says why in one line."""

    __slots__ = ("problem", "value")

    def __init__(self, schema: dict[str, Any], text: str) -> None:
        from jsonschema import validators

        self.value: Any = None
        self.problem: str | None = None
        found = _json_in(text)
        if found is None:
            self.problem = "the answer is not JSON"
            return
        validator = validators.validator_for(schema)(schema)
        error = next(iter(sorted(validator.iter_errors(found[0]), key=lambda e: list(e.absolute_path))), None)
        if error is not None:
            self.problem = f"{_where(error)}{error.message}"
            return
        self.value = found[0]


def _json_in(text: str) -> tuple[Any] | None:
    """The JSON value `text` is (stripped), or that its one fenced block holds; None when
    there is none."""
    candidates = [text.strip()]
    if "```" in text:
        inner = text.split("```")
        if len(inner) >= 3:
            block = inner[1]
            candidates.append(block.split("\n", 1)[1] if block.startswith(("json", "JSON")) else block)
    for candidate in candidates:
        try:
            return (json.loads(candidate),)
        except (ValueError, RecursionError):
            continue
    return None
