"""bingo's one table of commands: each name is kept from plugins, and each place offers /help."""

from __future__ import annotations

from bingo.kernel.registry import BUILTIN_COMMANDS
from bingo.run import PLACES, TABLE, elsewhere


def test_every_command_in_the_table_has_a_reserved_name_but_the_rooms_stop_word() -> None:
    # /stop is taken by a room before any command is looked up, so a plugin's /stop (on
    # another surface) may keep its name.
    assert {entry.name for entry in TABLE} - {"stop"} <= BUILTIN_COMMANDS
    assert len({entry.name for entry in TABLE}) == len(TABLE)


def test_every_place_offers_help_and_names_what_it_does_not_offer() -> None:
    for place in PLACES:
        assert any(entry.name == "help" and place in entry.places for entry in TABLE)
        line = elsewhere(place)
        assert line is not None and line.startswith("not offered here: /")
