"""Tool names the model APIs accept: the fitted name a provider sends, and the way back.

Owns the rule that turns a canonical tool name (`plugin__<plugin>__<tool>`, `read`, ...)
into the name a model API accepts, and the per-request table that maps the model's tool
calls back to the canonical name before they leave the provider. The Messages API and Chat
Completions both refuse a tool name that does not match `^[A-Za-z0-9_-]{1,64}$`, and a
plugin's name (up to 64 characters) plus its tool's name (which may hold a `.`) can break
either rule.

The rule (ADR-0011):

- a name that already fits is sent as it is: built-in tools and most plugin tools never
  change;
- any other name has each disallowed character replaced by `_` and gets a tag, `_` and the
  first 8 hex digits of the SHA-256 of the canonical name; when that is still too long, the
  name keeps its first 20 and last 34 characters around the tag (`head_tag_tail`), so the
  model still reads the plugin's prefix and the tool's own name;
- within one request, names that fit keep theirs, and the others, in sorted order, take
  their fitted name unless it is already taken, in which case the tag is the hash of
  `<name>#1`, `<name>#2`, ... until it is free. The table is therefore a bijection, and the
  same set of names always gives the same table.

It does not know which provider uses it, nor anything else about requests than the names of
their tools and of the tool calls in their history. Everything outside the provider (the
gate, hooks, `/tools`, the store) only ever sees the canonical name.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Mapping
from typing import Final

import msgspec

from ..wire import ModelRequest, ToolUseBlock

__all__ = ["TOOL_NAME_MAX", "ToolNames", "fit_name", "fits", "request_names"]

TOOL_NAME_MAX: Final = 64
"""The longest tool name the Messages API and Chat Completions accept."""

_FITS = re.compile(r"[A-Za-z0-9_-]{1,64}")
_DISALLOWED = re.compile(r"[^A-Za-z0-9_-]")
_TAG_DIGITS: Final = 8
# A long name keeps this much of its start (`plugin__` and the plugin's name begin there) ...
_HEAD: Final = 20
# ... and the rest of the 64 characters from its end, where the tool's own name is.
_TAIL: Final = TOOL_NAME_MAX - _HEAD - _TAG_DIGITS - 2


def fits(name: str) -> bool:
    """True when a model API accepts `name` as it is."""
    return _FITS.fullmatch(name) is not None


def _tag(name: str, attempt: int) -> str:
    seed = name if attempt == 0 else f"{name}#{attempt}"
    return hashlib.sha256(seed.encode("utf-8", "surrogatepass")).hexdigest()[:_TAG_DIGITS]


def fit_name(name: str, attempt: int = 0) -> str:
    """The fitted form of `name` (its `attempt`-th one, when earlier ones were taken).

    Always matches `^[A-Za-z0-9_-]{1,64}$`. A name that already fits is returned as it is
    only by `ToolNames`; this function always tags, so that it can be asked again.
    """
    clean = _DISALLOWED.sub("_", name)
    tag = _tag(name, attempt)
    if len(clean) + 1 + len(tag) <= TOOL_NAME_MAX:
        return f"{clean}_{tag}"
    return f"{clean[:_HEAD]}_{tag}_{clean[-_TAIL:]}"


class ToolNames(msgspec.Struct, frozen=True):
    """One request's table between canonical tool names and the names sent to the model."""

    to_api: Mapping[str, str]
    to_canonical: Mapping[str, str]

    @classmethod
    def of(cls, names: Iterable[str]) -> ToolNames:
        """The table for these canonical names (duplicates and order do not matter)."""
        unique = sorted(set(names))
        to_api = {name: name for name in unique if fits(name)}
        taken = set(to_api)
        for name in unique:
            if name in to_api:
                continue
            attempt = 0
            fitted = fit_name(name)
            while fitted in taken:
                attempt += 1
                fitted = fit_name(name, attempt)
            to_api[name] = fitted
            taken.add(fitted)
        return cls(to_api=to_api, to_canonical={api: name for name, api in to_api.items()})

    def api(self, canonical: str) -> str:
        """The name to send the model for `canonical`."""
        found = self.to_api.get(canonical)
        return found if found is not None else canonical if fits(canonical) else fit_name(canonical)

    def canonical(self, api: str) -> str:
        """The canonical name of a tool the model called by `api`. A name the table does not
        hold (the model made one up) comes back as it is, for the kernel to refuse."""
        return self.to_canonical.get(api, api)


def request_names(request: ModelRequest) -> ToolNames:
    """The table for one request: its tools and every tool call in its history, so that a
    call the model made earlier is sent back under the name it was made with."""
    names = [tool.name for tool in request.tools]
    for message in request.messages:
        names.extend(b.name for b in message.content if isinstance(b, ToolUseBlock))
    return ToolNames.of(names)
