"""The table of context windows: the longest known prefix of a model's name wins, a plugin's
provider is looked up by its model's name, and an unknown model is not guessed at."""

from __future__ import annotations

from bingo.providers import context_window


def test_every_claude_model_takes_200k_and_the_oldest_100k() -> None:
    assert context_window("anthropic", "claude-sonnet-4-5") == 200_000
    assert context_window("anthropic", "claude-3-5-haiku-20241022") == 200_000
    assert context_window("anthropic", "claude-2.0") == 100_000


def test_the_longest_prefix_wins_so_gpt_4_does_not_catch_gpt_4o_or_gpt_4_1() -> None:
    assert context_window("openai", "gpt-4o-mini-2024-07-18") == 128_000
    assert context_window("openai", "gpt-4.1-nano") == 1_047_576
    assert context_window("openai", "gpt-4-0613") == 8_192
    assert context_window("openai", "gpt-4-32k") == 32_768
    assert context_window("openai", "o1-mini") == 128_000
    assert context_window("openai", "o3") == 200_000


def test_a_model_nobody_wrote_down_is_unknown() -> None:
    assert context_window("openai", "llama3.1:8b") is None  # a local server behind OPENAI_BASE_URL
    assert context_window("anthropic", "gpt-4o") is None  # a provider's own table only


def test_a_plugins_provider_is_looked_up_by_its_models_name() -> None:
    assert context_window("plugin__relay__claude", "claude-opus-4-1") == 200_000
    assert context_window("plugin__scripted-model__scripted", "scripted-1") is None
