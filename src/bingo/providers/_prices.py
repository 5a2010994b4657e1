"""What a response of each known model costs, in US dollars: the table `total_cost_usd` is
computed from (`bingo -p --output-format json`, INTERFACE.md §13).

Owns the table and its lookup. A model is priced when its name is a known one, alone or
followed by a date (`claude-sonnet-4-5-20250929`, `gpt-4o-2024-08-06`) or `-latest`: never by a
bare prefix, since a newer model under a longer name is often priced differently (`gpt-5-pro`,
`o3-pro`, `gpt-5.4` are not `gpt-5` or `o3`). Only the built-in providers' models are priced: a
plugin's provider, or a model nobody wrote down, has no price (None), and the output says null
rather than guess. A server that copies a built-in API (`OPENAI_BASE_URL`) under a known model's
name is priced as that model.

The figures are list prices per million tokens, standard tier, no batch discount, the 5-minute
cache write, written down on 2026-12-04 (this machine cannot reach the providers' sites).
Anthropic's Claude 3 and 4/4.1 models match https://docs.anthropic.com/en/docs/about-claude/pricing
as stored in the project's reference library, its 4.5 models and OpenAI's
(https://openai.com/api/pricing) the third-party copies of those pages of 2026. Prices change: the table is dated so a stale one is noticed;
correct it from those pages.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from ..wire import Usage

__all__ = ["PRICES_AS_OF", "Price", "cost_usd", "price"]

PRICES_AS_OF = "2026-12-04"
"""The day the table was read from the providers' pages."""


@dataclass(slots=True, frozen=True)
class Price:
    """US dollars per million tokens: uncached input, output, input read from the prompt
    cache, input written to it."""

    input: float
    output: float
    cache_read: float
    cache_write: float


def _anthropic(input: float, output: float) -> Price:
    # Anthropic's cache: a read is 0.1x the input price, a 5-minute write 1.25x.
    return Price(input, output, cache_read=input * 0.1, cache_write=input * 1.25)


def _openai(input: float, output: float, cached: float) -> Price:
    # OpenAI's cache is automatic: writing costs nothing more than input.
    return Price(input, output, cache_read=cached, cache_write=input)


_ANTHROPIC: dict[str, Price] = {
    "claude-opus-4-5": _anthropic(5.0, 25.0),
    "claude-opus-4-1": _anthropic(15.0, 75.0),
    "claude-opus-4-0": _anthropic(15.0, 75.0),
    "claude-opus-4": _anthropic(15.0, 75.0),  # claude-opus-4-20250514
    "claude-sonnet-4": _anthropic(3.0, 15.0),
    "claude-sonnet-4-0": _anthropic(3.0, 15.0),
    "claude-sonnet-4-5": _anthropic(3.0, 15.0),
    "claude-3-7-sonnet": _anthropic(3.0, 15.0),
    "claude-3-5-sonnet": _anthropic(3.0, 15.0),
    "claude-haiku-4-5": _anthropic(1.0, 5.0),
    "claude-3-5-haiku": _anthropic(0.8, 4.0),
    "claude-3-haiku": _anthropic(0.25, 1.25),
    "claude-3-opus": _anthropic(15.0, 75.0),
}

_OPENAI: dict[str, Price] = {
    "gpt-5": _openai(1.25, 10.0, 0.125),
    "gpt-5-mini": _openai(0.25, 2.0, 0.025),
    "gpt-5-nano": _openai(0.05, 0.4, 0.005),
    "gpt-4.1": _openai(2.0, 8.0, 0.5),
    "gpt-4.1-mini": _openai(0.4, 1.6, 0.1),
    "gpt-4.1-nano": _openai(0.1, 0.4, 0.025),
    "gpt-4o": _openai(2.5, 10.0, 1.25),
    "gpt-4o-mini": _openai(0.15, 0.6, 0.075),
    "o3": _openai(2.0, 8.0, 0.5),
    "o3-mini": _openai(1.1, 4.4, 0.55),
    "o4-mini": _openai(1.1, 4.4, 0.275),
}

_TABLES: dict[str, dict[str, Price]] = {"anthropic": _ANTHROPIC, "openai": _OPENAI}


_SUFFIX = re.compile(r"(-\d{8}|-\d{4}-\d{2}-\d{2}|-latest)?")
"""What may follow a known model's name in a name that is still that model: a date or `-latest`."""


def price(provider: str, model: str) -> Price | None:
    """The price of `model` of the built-in `provider`, or None when the table does not know
    it (or `provider` is not a built-in one)."""
    table = _TABLES.get(provider, {})
    for name, found in table.items():
        if model.startswith(name) and _SUFFIX.fullmatch(model, len(name)):
            return found
    return None


def cost_usd(provider: str, model: str, usage: Usage) -> float | None:
    """What `usage` of `model` cost, in US dollars; None when its price is not known.
    `usage.input_tokens` counts every input token, the cached ones too (`wire.Usage`)."""
    known = price(provider, model)
    if known is None:
        return None
    uncached = max(0, usage.input_tokens - usage.cache_read_tokens - usage.cache_write_tokens)
    dollars = (
        uncached * known.input
        + usage.output_tokens * known.output
        + usage.cache_read_tokens * known.cache_read
        + usage.cache_write_tokens * known.cache_write
    ) / 1_000_000
    return round(dollars, 10)
