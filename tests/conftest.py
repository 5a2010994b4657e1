"""Shared by every test: a clean environment, so no test sees the machine's own settings."""

from __future__ import annotations

import os

import pytest

_CLEARED_PREFIXES = ("BINGO_", "ANTHROPIC_", "OPENAI_")
_CLEARED = ("HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy")


@pytest.fixture(autouse=True)
def clean_environ(monkeypatch: pytest.MonkeyPatch) -> None:
    """No BINGO_*, provider keys or proxy variables leak in from the machine (httpx style)."""
    for name in list(os.environ):
        if name.startswith(_CLEARED_PREFIXES) or name in _CLEARED:
            monkeypatch.delenv(name, raising=False)
