"""The built-in model providers and the rule that chooses one.

`AnthropicProvider` (Messages API) and `OpenAIProvider` (Chat Completions, and the servers
that copy it) implement the kernel's `Provider` as `HttpProvider`s, each keeping one HTTP
client until its `aclose` (ADR-0040); `selection` decides which one a run uses.
Both stream over httpx, which is imported only when a model is actually asked for, so
importing this package at start-up costs a few class definitions and nothing more.
Private modules: `_http` (the skeleton both are: `HttpProvider`, the one streamed POST and
its transport's failures; each provider module declares only its `Api`), `_errors` (the
wording of every other failure, and the `Endpoint` those lines name), `_retry` (what failure is
momentary and how long to wait before the next try), `_sse` (the event-stream grammar),
`_windows` (each known model's context window: `context_window`), `_prices` (each known
model's price: `cost_usd`), `_tls` (`Tls`: the clients' one SSL context, made on a thread
beside start-up, ADR-0043).
"""

from ._http import HttpProvider
from ._prices import cost_usd
from ._tls import Tls
from ._windows import context_window
from .anthropic import AnthropicProvider
from .openai import OpenAIProvider
from .selection import builtin_providers, choose_provider, default_model

__all__ = [
    "AnthropicProvider",
    "HttpProvider",
    "OpenAIProvider",
    "Tls",
    "builtin_providers",
    "choose_provider",
    "context_window",
    "cost_usd",
    "default_model",
]
