"""Which model provider a run uses (INTERFACE.md §4), and which model of it.

Owns three rules: which built-in providers the environment configures, which provider is
chosen when one is named and when none is, and the default model of each. It does not
register providers (the caller puts them in the kernel's registry) and does not stream.
Nothing here imports httpx.
"""

from __future__ import annotations

import difflib
from collections.abc import Mapping

from ..kernel.errors import ProviderError
from ..kernel.interfaces import Provider
from ..kernel.notices import Notices
from ..kernel.registry import BUILTIN
from . import anthropic, openai
from ._http import STALL_SECONDS, HttpProvider
from ._retry import ATTEMPTS, Retry
from ._tls import Tls
from .anthropic import AnthropicProvider
from .openai import OpenAIProvider

__all__ = ["FALLBACK_MODEL", "builtin_providers", "choose_provider", "default_model"]

FALLBACK_MODEL = "default"
"""The model asked for when a provider declares none (a plugin provider may ignore it)."""

_BUILTIN_DEFAULTS = {"anthropic": anthropic.DEFAULT_MODEL, "openai": openai.DEFAULT_MODEL}

_HOW_TO_CHOOSE = "set ANTHROPIC_API_KEY, OPENAI_API_KEY or OPENAI_BASE_URL, or pass --provider"

_NEEDS = {
    "anthropic": "set ANTHROPIC_API_KEY (and ANTHROPIC_BASE_URL for another server)",
    "openai": "set OPENAI_API_KEY or OPENAI_BASE_URL",
}


def _set(environ: Mapping[str, str], name: str) -> bool:
    return bool(environ.get(name, "").strip())


def builtin_providers(
    environ: Mapping[str, str],
    *,
    notices: Notices | None = None,
    attempts: int = ATTEMPTS,
    stall_seconds: float = STALL_SECONDS,
    tls: Tls | None = None,
) -> list[HttpProvider]:
    """The built-in providers `environ` configures: `anthropic` when ANTHROPIC_API_KEY or
    ANTHROPIC_BASE_URL is set, `openai` when OPENAI_API_KEY or OPENAI_BASE_URL is set. Each
    tries a momentarily failed request up to `attempts` times, saying each wait on `notices`,
    and gives up on an answer that goes `stall_seconds` without content. Each keeps one HTTP
    client from its first request, and its owner closes it (`HttpProvider.aclose`) at the
    run's end: the composition keeps the providers for the run, not for a turn. Their
    clients take `tls`'s SSL context (made beside start-up) when it is given."""
    found: list[HttpProvider] = []
    retry = Retry(attempts=attempts)
    if _set(environ, "ANTHROPIC_API_KEY") or _set(environ, "ANTHROPIC_BASE_URL"):
        found.append(
            AnthropicProvider(
                api_key=environ.get("ANTHROPIC_API_KEY") or None,
                base_url=environ.get("ANTHROPIC_BASE_URL") or None,
                retry=retry,
                stall_seconds=stall_seconds,
                notices=notices,
                tls=tls,
            )
        )
    if _set(environ, "OPENAI_API_KEY") or _set(environ, "OPENAI_BASE_URL"):
        found.append(
            OpenAIProvider(
                api_key=environ.get("OPENAI_API_KEY") or None,
                base_url=environ.get("OPENAI_BASE_URL") or None,
                retry=retry,
                stall_seconds=stall_seconds,
                notices=notices,
                tls=tls,
            )
        )
    return found


def choose_provider(wanted: str | None, providers: Mapping[str, Provider], environ: Mapping[str, str]) -> Provider:
    """The provider a prompt runs on.

    `wanted` (from `--provider` or settings) names one by id: `anthropic`, `openai` or
    `plugin__<plugin>__<provider>`, and it must be in `providers`. With none wanted: the
    first of anthropic (ANTHROPIC_API_KEY set), openai (OPENAI_API_KEY or OPENAI_BASE_URL
    set), and the only plugin provider.

    Raises:
        ProviderError: the wanted provider does not exist, or none can be chosen.
    """
    if wanted:
        if wanted in providers:
            return providers[wanted]
        if wanted in _NEEDS:
            raise ProviderError(f"provider {wanted!r} is not configured", _NEEDS[wanted])
        # The built-ins are named even when unconfigured: they exist, they only need a key.
        known = sorted({*providers, *_NEEDS})
        near = difflib.get_close_matches(wanted, known, n=1, cutoff=0.8)
        hint = f"did you mean {near[0]}? " if near else ""
        raise ProviderError(
            f"there is no provider {wanted!r} (known: {', '.join(known)})",
            f"{hint}name one of those as the provider, or install the plugin that provides it",
        )
    if _set(environ, "ANTHROPIC_API_KEY") and "anthropic" in providers:
        return providers["anthropic"]
    if (_set(environ, "OPENAI_API_KEY") or _set(environ, "OPENAI_BASE_URL")) and ("openai" in providers):
        return providers["openai"]
    plugged = [p for p in providers.values() if p.source != BUILTIN]
    if len(plugged) == 1:
        return plugged[0]
    if len(plugged) > 1:
        names = ", ".join(sorted(p.spec.name for p in plugged))
        raise ProviderError(
            f"no model provider is chosen and several plugins offer one ({names})",
            "pass --provider with one of them, or set provider in settings",
        )
    raise ProviderError("no model provider is configured", _HOW_TO_CHOOSE)


def default_model(provider: Provider) -> str:
    """The model used when none is named: the built-ins' defaults, a plugin provider's
    first declared model, else `default`."""
    if provider.source == BUILTIN and provider.spec.name in _BUILTIN_DEFAULTS:
        return _BUILTIN_DEFAULTS[provider.spec.name]
    models = provider.spec.models
    return models[0] if models else FALLBACK_MODEL
