"""The process's model choice: which provider and model a turn asks, made when the first
turn needs it (ADR-0040, ADR-0043). The run factory and every run share the one the app
makes; nothing here is imported with a provider.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ..kernel.interfaces import Provider
from ..kernel.registry import Registry
from ..kernel.settings import Settings

if TYPE_CHECKING:
    from ..providers import HttpProvider, Tls

__all__ = ["ModelChooser"]

_BUILTIN_NAMES = ("anthropic", "openai")
"""The built-in providers' names (`providers.builtin_providers`), known here without importing them."""


class ModelChooser:
    """The process's model choice (a ChooseModel), made when the first turn needs it: the
    providers package (and httpx with it) is imported only then, and a plugin's provider
    counts as well. The built-in providers are built at the first choice and kept for the
    process, each with its one HTTP client (ADR-0040); `aclose` closes them at its end."""

    __slots__ = ("_builtins", "_environ", "_registry", "_settings", "_tls")

    def __init__(self, settings: Settings, registry: Registry, environ: dict[str, str]) -> None:
        self._settings = settings
        self._registry = registry
        self._environ = environ
        self._builtins: list[HttpProvider] | None = None
        self._tls: Tls | None = None

    def prepare(self) -> None:
        """For a run that will ask the model at once (`-p` with a prompt): begin, on a
        thread beside the rest of start-up, the SSL context the built-in providers'
        clients take (ADR-0043), when the provider the run will choose is a built-in one
        whose endpoint is not plain HTTP."""
        chosen = self._settings.provider
        if chosen is not None and chosen not in _BUILTIN_NAMES:
            return  # a plugin's provider: no HTTP client of bingo's
        from ..kernel.errors import ProviderError
        from ..providers import choose_provider

        builtins = self._built()
        try:
            provider = choose_provider(chosen, {p.spec.name: p for p in builtins}, self._environ)
        except ProviderError:
            return  # none of them: a plugin's, or none (the turn says so)
        if not any(p is provider and p.plain for p in builtins):  # plain HTTP needs no CA bundle
            assert self._tls is not None
            self._tls.begin()

    def _built(self) -> list[HttpProvider]:
        """The built-in providers, made once."""
        if self._builtins is None:
            from ..providers import Tls, builtin_providers

            settings = self._settings
            self._tls = Tls()
            self._builtins = builtin_providers(
                self._environ,
                notices=self._registry.notices,
                attempts=settings.model_attempts,
                stall_seconds=settings.model_stall_seconds,
                tls=self._tls,
            )
        return self._builtins

    def __call__(self) -> tuple[Provider, str]:
        from ..providers import choose_provider, default_model

        settings = self._settings
        providers: dict[str, Provider] = {p.spec.name: p for p in self._built()}
        providers.update(self._registry.providers)
        provider = choose_provider(settings.provider, providers, self._environ)
        return provider, settings.model or default_model(provider)

    async def aclose(self) -> None:
        """Close the built-in providers' HTTP clients (none is made before a request)."""
        for provider in self._builtins or ():
            await provider.aclose()
