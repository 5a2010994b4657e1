"""The built-in providers' SSL context, made beside bingo's start-up (ADR-0043).

Owns `Tls`: httpx's default SSL context made (the CA bundle read and parsed, which OpenSSL
does without the GIL) on a thread of its own, begun as a run that will ask the model
starts, so that the first request finds it made instead of making it on its way out.
Every built-in provider's client takes that one context. It makes no client and opens no
connection (`_http.HttpProvider` does, at its first request); a run that never begins it
pays nothing, and a run whose context failed to be made gets the client's own, made at its
first request as before.
"""

from __future__ import annotations

import logging
import os
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
        # httpx's own default context (`httpx.create_ssl_context()`: SSL_CERT_FILE, else
        # SSL_CERT_DIR, else certifi's bundle), made without importing httpx: the thread
        # holds the GIL only for the small imports of certifi, and OpenSSL reads and parses
        # the bundle without it, so the work runs beside the main thread's, not between.
        try:
            import ssl

            import certifi

            if os.environ.get("SSL_CERT_FILE"):
                self._context = ssl.create_default_context(cafile=os.environ["SSL_CERT_FILE"])
            elif os.environ.get("SSL_CERT_DIR"):
                self._context = ssl.create_default_context(capath=os.environ["SSL_CERT_DIR"])
            else:
                self._context = ssl.create_default_context(cafile=certifi.where())
        except Exception:  # boundary: the first client makes its own, and says what is wrong then
            _log.exception("the SSL context could not be made ahead of the first request")

    def context(self) -> ssl.SSLContext | None:
        """The context once made (waiting for `begin`'s thread), or None when it was never
        begun or failed: the client then makes its own."""
        if self._thread is not None:
            self._thread.join()
        return self._context
