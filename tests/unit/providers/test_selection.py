"""Which provider a run uses (INTERFACE.md §4), and which model of it."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from bingo.kernel.errors import ProviderError
from bingo.kernel.interfaces import Provider
from bingo.providers import (
    AnthropicProvider,
    OpenAIProvider,
    builtin_providers,
    choose_provider,
    default_model,
)
from bingo.wire import Delta, ModelRequest, ModelResponse, ProviderSpec

_NO_PROVIDER = (
    "no model provider is configured: set ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENAI_BASE_URL, or pass --provider"
)


class _PluginProvider:
    def __init__(self, name: str, models: list[str] | None = None) -> None:
        self._spec = ProviderSpec(name=name, models=models or [])

    @property
    def spec(self) -> ProviderSpec:
        return self._spec

    @property
    def source(self) -> str:
        return "plugin " + self._spec.name.split("__")[1]

    async def stream(self, request: ModelRequest, on_delta: Callable[[Delta], None]) -> ModelResponse:
        raise ProviderError("not used here")


def _by_name(*providers: Provider) -> dict[str, Provider]:
    return {p.spec.name: p for p in providers}


def _names(environ: dict[str, str]) -> list[str]:
    return [p.spec.name for p in builtin_providers(environ)]


def test_no_environment_configures_no_builtin_provider() -> None:
    assert _names({}) == []
    assert _names({"ANTHROPIC_API_KEY": "  "}) == []


def test_each_builtin_is_configured_by_its_key_or_base_url() -> None:
    assert _names({"ANTHROPIC_API_KEY": "k"}) == ["anthropic"]
    assert _names({"ANTHROPIC_BASE_URL": "http://127.0.0.1:1"}) == ["anthropic"]
    assert _names({"OPENAI_API_KEY": "k"}) == ["openai"]
    assert _names({"OPENAI_BASE_URL": "http://127.0.0.1:11434/v1"}) == ["openai"]
    assert _names({"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"}) == ["anthropic", "openai"]


def test_builtins_are_builtin_providers_with_their_names() -> None:
    anthropic, openai = builtin_providers({"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"})
    assert isinstance(anthropic, AnthropicProvider) and anthropic.source == "builtin"
    assert isinstance(openai, OpenAIProvider) and openai.source == "builtin"


def test_a_wanted_provider_that_exists_is_chosen_whatever_the_environment() -> None:
    plugin = _PluginProvider("plugin__echo__echo")
    environ = {"ANTHROPIC_API_KEY": "k"}
    providers = _by_name(*builtin_providers(environ), plugin)
    assert choose_provider("plugin__echo__echo", providers, environ) is plugin
    assert choose_provider("anthropic", providers, environ).spec.name == "anthropic"


def test_a_wanted_provider_that_does_not_exist_is_an_error_listing_the_known_ones() -> None:
    environ = {"OPENAI_BASE_URL": "http://x/v1"}
    providers = _by_name(*builtin_providers(environ), _PluginProvider("plugin__echo__echo"))
    with pytest.raises(ProviderError) as caught:
        choose_provider("plugin__nope__x", providers, environ)
    assert caught.value.line() == (
        "there is no provider 'plugin__nope__x' (known: anthropic, openai, plugin__echo__echo): "
        "name one of those as the provider, or install the plugin that provides it"
    )


def test_a_misspelled_provider_is_told_the_nearest_even_when_none_is_configured() -> None:
    with pytest.raises(ProviderError) as caught:
        choose_provider("opnai", {}, {})
    assert caught.value.line() == (
        "there is no provider 'opnai' (known: anthropic, openai): "
        "did you mean openai? name one of those as the provider, or install the plugin that provides it"
    )


def test_a_wanted_builtin_that_is_not_configured_says_what_to_set() -> None:
    with pytest.raises(ProviderError) as caught:
        choose_provider("anthropic", {}, {})
    assert caught.value.line() == (
        "provider 'anthropic' is not configured: set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for another server)"
    )


def test_with_none_wanted_anthropic_wins_when_its_key_is_set() -> None:
    environ = {"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"}
    providers = _by_name(*builtin_providers(environ), _PluginProvider("plugin__echo__echo"))
    assert choose_provider(None, providers, environ).spec.name == "anthropic"


def test_with_none_wanted_openai_is_next_by_key_or_base_url() -> None:
    for environ in ({"OPENAI_API_KEY": "k"}, {"OPENAI_BASE_URL": "http://x/v1"}):
        providers = _by_name(*builtin_providers(environ), _PluginProvider("plugin__echo__echo"))
        assert choose_provider(None, providers, environ).spec.name == "openai"


def test_with_none_wanted_the_only_plugin_provider_is_chosen() -> None:
    plugin = _PluginProvider("plugin__echo__echo")
    assert choose_provider(None, _by_name(plugin), {}) is plugin


def test_with_none_wanted_and_several_plugin_providers_none_is_guessed() -> None:
    providers = _by_name(_PluginProvider("plugin__a__x"), _PluginProvider("plugin__b__y"))
    with pytest.raises(ProviderError) as caught:
        choose_provider(None, providers, {})
    assert "plugin__a__x, plugin__b__y" in caught.value.message


def test_with_nothing_configured_the_error_says_how_to_choose() -> None:
    with pytest.raises(ProviderError) as caught:
        choose_provider(None, {}, {})
    assert caught.value.line() == _NO_PROVIDER


def test_default_models_are_the_builtins_defaults_or_a_plugins_first_model() -> None:
    anthropic, openai = builtin_providers({"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"})
    assert default_model(anthropic) == "claude-sonnet-4-5"
    assert default_model(openai) == "gpt-4o-mini"
    assert default_model(_PluginProvider("plugin__e__e", ["small", "large"])) == "small"
    assert default_model(_PluginProvider("plugin__e__e")) == "default"


def test_a_builtin_on_a_plain_http_endpoint_is_plain_and_on_an_https_one_is_not() -> None:
    # A plain-HTTP endpoint (a local model) needs no CA bundle: the SSL context is neither
    # begun beside start-up nor read for its client (ADR-0043, third session).
    local = {p.spec.name: p for p in builtin_providers({"OPENAI_BASE_URL": "HTTP://localhost:11434/v1"})}
    remote = {p.spec.name: p for p in builtin_providers({"ANTHROPIC_API_KEY": "k", "OPENAI_API_KEY": "k"})}
    assert local["openai"].plain
    assert not remote["anthropic"].plain and not remote["openai"].plain
