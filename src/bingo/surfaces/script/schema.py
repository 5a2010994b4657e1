"""Generation of `schema/script-output.json`: the JSON Schema of every line
`bingo -p --output-format json|stream-json` prints, generated from the output's own types
(`_shapes`), so it cannot disagree with them.

Run `python -m bingo.surfaces.script.schema` to rewrite it; a test fails when the committed
file is stale.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import msgspec

from ._shapes import Line

__all__ = ["generate", "render"]


def generate() -> dict[str, Any]:
    """The schema document: any line (`anyOf` the five, by `type`); `json`'s one line is a
    `ResultLine`."""
    (line,), defs = msgspec.json.schema_components([Line], ref_template="#/$defs/{name}")
    return {
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "title": "bingo -p --output-format json | stream-json",
        "description": (
            "One line of bingo's output for scripts (INTERFACE.md section 13, docs/scripts.md): "
            "`--output-format json` prints one ResultLine; `stream-json` prints an InitLine first, "
            "then AssistantLine, UserLine and NoticeLine objects as the run goes, and a ResultLine last. "
            "The shapes are Claude Code's. Generated from bingo's own types: do not edit."
        ),
        **line,
        "$defs": defs,
    }


def render() -> str:
    """The schema document as the committed file's text."""
    return json.dumps(generate(), indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def main() -> None:
    """Rewrite `schema/script-output.json` (or the path given) from the output's types."""
    target = Path(sys.argv[1]) if len(sys.argv) > 1 else Path("schema/script-output.json")
    target.write_text(render(), encoding="utf-8")


if __name__ == "__main__":
    main()
