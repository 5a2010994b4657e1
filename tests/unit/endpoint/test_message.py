"""Whose answer an over-long line is, read from its ends alone (ADR-0028)."""

from __future__ import annotations

import pytest

from bingo.endpoint._message import answered_id


@pytest.mark.parametrize(
    ("head", "tail", "expected"),
    [
        (b'{"jsonrpc":"2.0","id":7,"result":{"content":[', b"", 7),
        (b'{"id": 3, "result": {"output": {"parts"', b"", 3),
        (b'{"jsonrpc": "2.0", "id": "ab", "error": {"code"', b"", "ab"),
        (b'{"result": {"content": [{"type": "text", "text": "xx', b'xx"}]}, "jsonrpc": "2.0", "id": 12}', 12),
        (b'{"jsonrpc":"2.0","id":7,"method":"sampling/createMessage","params":{', b'"id":3}', None),
        (b'{"jsonrpc":"2.0","method":"notifications/progress","params":{', b'"id":3}}', None),
        (b"xxxxxxxx", b"xxxx", None),
    ],
)
def test_the_id_of_the_call_an_overlong_line_answers(head: bytes, tail: bytes, expected: int | str | None) -> None:
    assert answered_id(head, tail) == expected
