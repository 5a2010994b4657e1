"""Decode speed and import cost of the contract library: msgspec (chosen) against pydantic v2.

Prints figures, asserts nothing. Needs pydantic in the environment it runs in
(`bench/run` installs it into the bench's own environment, never the project's).
Run: python bench/contract.py
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from typing import Literal

import msgspec

from bingo.wire import TableView, TextPart, ToolCallResult, ToolOutput


def _payload() -> bytes:
    rows: list[list[str | int | float | None]] = [[f"file-{i}.txt", i * 37, i * 3] for i in range(90)]
    output = ToolOutput(
        parts=[TextPart(text="counted " * 40)],
        display=TableView(title="counts", columns=["file", "words", "lines"], rows=rows),
    )
    return msgspec.json.encode(ToolCallResult(output=output))


def _time(fn: object, data: bytes, n: int = 20_000) -> float:
    assert callable(fn)
    samples = []
    for _ in range(5):
        start = time.perf_counter()
        for _ in range(n // 5):
            fn(data)
        samples.append((time.perf_counter() - start) / (n // 5))
    return statistics.median(samples) * 1e6


def _import_ms(module: str) -> float:
    code = f"import time; t=time.perf_counter(); import {module}; print((time.perf_counter()-t)*1000)"
    runs = [float(subprocess.check_output([sys.executable, "-c", code])) for _ in range(5)]
    return statistics.median(runs)


def main() -> None:
    data = _payload()
    decoder = msgspec.json.Decoder(ToolCallResult)
    ms = _time(decoder.decode, data)
    print(f"typed tool result: {len(data)} bytes")
    print(f"msgspec decode:   {ms:8.2f} µs   import {_import_ms('msgspec'):6.1f} ms")
    try:
        import pydantic
    except ImportError:
        print("pydantic not installed here: install it to compare")
        return

    class PText(pydantic.BaseModel):
        type: Literal["text"]
        text: str

    class PTable(pydantic.BaseModel):
        type: Literal["table"]
        title: str | None = None
        columns: list[str]
        rows: list[list[str | int | float | None]]

    class POut(pydantic.BaseModel):
        parts: list[PText]
        display: PTable | None = None
        isError: bool = False

    class PResult(pydantic.BaseModel):
        output: POut

    pd = _time(PResult.model_validate_json, data)
    print(f"pydantic decode:  {pd:8.2f} µs   import {_import_ms('pydantic'):6.1f} ms")
    print(f"ratio pydantic/msgspec decode: {pd / ms:.1f}x")


if __name__ == "__main__":
    main()
