"""How many tokens of input each known model takes: the table compaction is measured against.

Owns the table and its lookup (the longest known prefix of the model's name wins, so
`gpt-4o-mini-2024-07-18` is found under `gpt-4o-mini`, and `gpt-4` alone does not catch
`gpt-4o`). A model nobody wrote down answers None, and the kernel applies its conservative
default (`kernel.compaction.DEFAULT_WINDOW`); the person's `contextWindow` setting overrides
both. It does not decide when to compact (the turn loop does) and asks no server: the
figures are the providers' published limits, as of the date in ADR-0021.
"""

from __future__ import annotations

__all__ = ["context_window"]

_ANTHROPIC: dict[str, int] = {
    # Every Claude model since Claude 2.1 takes 200 000 tokens (the 1M window is a beta
    # that has to be asked for by header; bingo does not ask).
    "claude-": 200_000,
    "claude-2.0": 100_000,
    "claude-instant": 100_000,
}

_OPENAI: dict[str, int] = {
    "gpt-5": 272_000,  # 400 000 in all, of which 128 000 are reserved for output
    "gpt-4.1": 1_047_576,
    "gpt-4o": 128_000,
    "chatgpt-4o": 128_000,
    "gpt-4-turbo": 128_000,
    "gpt-4-1106": 128_000,
    "gpt-4-0125": 128_000,
    "gpt-4-32k": 32_768,
    "gpt-4": 8_192,
    "gpt-3.5-turbo": 16_385,
    "o1": 200_000,
    "o1-mini": 128_000,
    "o1-preview": 128_000,
    "o3": 200_000,
    "o3-mini": 200_000,
    "o4-mini": 200_000,
}

_TABLES: dict[str, dict[str, int]] = {"anthropic": _ANTHROPIC, "openai": _OPENAI}


def context_window(provider: str, model: str) -> int | None:
    """The input tokens `model` of the built-in `provider` takes, or None when the table
    does not know it. A plugin's provider is looked up by its model's name against every
    table: a plugin that serves `claude-sonnet-4-5` serves a 200 000-token model."""
    tables = [_TABLES[provider]] if provider in _TABLES else list(_TABLES.values())
    best: tuple[int, int] | None = None
    for table in tables:
        for prefix, window in table.items():
            if model.startswith(prefix) and (best is None or len(prefix) > best[0]):
                best = (len(prefix), window)
    return best[1] if best is not None else None
