"""How many examples a property test tries: its own figure under Hypothesis's default profile,
scaled down with the profile's `max_examples` under a lighter one (CI's `ci` profile,
tests/conftest.py, ADR-0041).

`@settings(max_examples=examples(300))` tries 300 examples on a developer's machine and 75
under `ci` (its 25 against the default 100): the same properties, fewer draws. Read when the
test module is imported, which pytest does after it has loaded the profile.
"""

from __future__ import annotations

from hypothesis import settings

__all__ = ["examples"]

_DEFAULT = 100
"""Hypothesis's own `max_examples`, which every test's figure was chosen against."""

_FLOOR = 10
"""No property is tried on fewer examples than this, however light the profile."""


def examples(count: int) -> int:
    """`count` scaled by the active profile's `max_examples` against the default's."""
    scaled = count * settings().max_examples // _DEFAULT
    return max(min(count, _FLOOR), scaled)
