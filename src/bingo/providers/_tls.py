"""The built-in providers' SSL context, made beside bingo's start-up (ADR-0043).

Owns `Tls`: httpx imported and its SSL context made (the CA bundle read and parsed, which
OpenSSL does without the GIL) on a thread of its own, begun as a run that will ask the model
starts, so that the first request finds them ready instead of making them on its way out.
Every built-in provider's client takes that one context. It makes no client and opens no
connection (`_http.HttpProvider` does, at its first request); a run that never begins it
pays nothing, and a run whose context failed to be made gets the client's own, made at its
first request as before.
"""

from __future__ import annotations

import logging
import threading
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import ssl

__all__ = ["Tls"]

_log = logging.getLogger(__name__)


class Tls:
    """One SSL context for the providers' clients, begun on a thread (`begin`) and waited
    for where the first client is made (`context`)."""

    __slots__ = ("_context", "_thread")

    def __init__(self) -> None:
        self._context: ssl.SSLContext | None = None
        self._thread: threading.Thread | None = None

    def begin(self) -> None:
        """Start making the context, once; returns at once."""
        if self._thread is None:
            # A daemon: a process that ends before its first request does not wait for it.
            self._thread = threading.Thread(target=self._make, name="bingo-tls", daemon=True)
            self._thread.start()

    def _make(self) -> None:
        try:
            import httpx

            # httpx's own default (certifi's bundle; SSL_CERT_FILE and SSL_CERT_DIR honoured).
            self._context = httpx.create_ssl_context()
        except Exception:  # boundary: the first client makes its own, and says what is wrong then
            _log.exception("the SSL context could not be made ahead of the first request")

    def context(self) -> ssl.SSLContext | None:
        """The context once made (waiting for `begin`'s thread), or None when it was never
        begun or failed: the client then makes its own."""
        if self._thread is not None:
            self._thread.join()
        return self._context
