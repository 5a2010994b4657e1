"""The janitor's framing: what one end encodes the other decodes, however the bytes arrive."""

from __future__ import annotations

from bingo.sandbox.janitor._codec import HEADER, Decoder, Message, encode

_MESSAGES: list[Message] = [
    ("spawn", 1, "/bin/plugin", ["/bin/plugin", "-v"], {"PATH": "/bin", "É": "ü"}, "/tmp", 1.0, [0, 1]),
    ("spawned", 1, 4242),
    ("failed", 2, 9, "the plugin's pipes did not arrive"),
    ("exit", 4242, 768),
]


def test_a_message_is_its_length_then_its_body() -> None:
    frame = encode(("exit", 7, 0))
    assert int.from_bytes(frame[:HEADER], "big") == len(frame) - HEADER


def test_messages_split_anywhere_are_decoded_whole_and_in_order() -> None:
    stream = b"".join(encode(message) for message in _MESSAGES)
    for size in (1, 2, 3, 5, 7, len(stream)):
        decoder = Decoder()
        decoded: list[object] = []
        for start in range(0, len(stream), size):
            decoded.extend(decoder.feed(stream[start : start + size]))
        assert decoded == _MESSAGES, size


def test_a_message_not_yet_whole_is_kept_for_the_next_piece() -> None:
    decoder = Decoder()
    frame = encode(("spawned", 3, 99))
    assert decoder.feed(frame[:-1]) == []
    assert decoder.feed(frame[-1:] + frame[:HEADER]) == [("spawned", 3, 99)]
    assert decoder.feed(frame[HEADER:]) == [("spawned", 3, 99)]
