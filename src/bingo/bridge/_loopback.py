"""The sign-in's loopback redirect (RFC 8252 §7.3) and the person's browser.

Owns the listener on 127.0.0.1 the authorization server redirects the browser to (the first
`/callback` with the right `state` answers; anything else is told no and ignored; each
request's head is bounded in bytes and time), binding it, and opening the browser where one
would be seen. It does not speak OAuth (`_oauth.py`) and keeps nothing.
"""

from __future__ import annotations

import asyncio
import logging
import socket
import sys
from collections.abc import Mapping
from typing import Final
from urllib.parse import parse_qs, urlsplit

from ..kernel.log import cut
from ._oauth import OAuthError

__all__ = ["Callback", "bind_loopback", "can_open_browser", "open_browser"]

_log = logging.getLogger(__name__)

_REQUEST_HEAD: Final = 8192
"""Bytes of the redirect's request line and headers read: a browser's fit in far less."""
_HEAD_SECONDS: Final = 10.0
"""Seconds a connection to the loopback listener has to send its request."""
_PAGE: Final = (
    "<!doctype html><meta charset=utf-8><title>bingo</title><p>{}</p><p>You can close this tab and return to bingo.</p>"
)


def can_open_browser(environ: Mapping[str, str]) -> bool:
    """Whether a browser would open where the person sees it: `BROWSER` set, a desktop, or
    macOS or Windows. Otherwise `webbrowser` may take over the terminal with a text browser."""
    if environ.get("BROWSER"):
        return True
    if sys.platform in ("darwin", "win32"):
        return True
    return bool(environ.get("DISPLAY") or environ.get("WAYLAND_DISPLAY"))


def open_browser(url: str) -> None:
    """Open `url` in the person's browser, without waiting: `webbrowser` may wait on the
    browser's command, and the redirect has to be answered meanwhile (a daemon thread: an
    exit never waits for it)."""
    import threading
    import webbrowser

    def run() -> None:
        try:
            webbrowser.open(url)
        except Exception as exc:  # boundary: the URL is printed whatever the browser does
            _log.info("the browser could not be opened: %s", type(exc).__name__)

    threading.Thread(target=run, name="bingo-browser", daemon=True).start()


class Callback:
    """The loopback listener the browser is redirected to: the first `/callback` with the
    right `state` answers; anything else is told no and ignored."""

    __slots__ = ("_answer", "_state", "_who")

    def __init__(self, state: str, who: str) -> None:
        self._state = state
        self._who = who
        self._answer: asyncio.Future[str] = asyncio.get_running_loop().create_future()

    async def wait(self, sock: socket.socket, seconds: float) -> str:
        server = await asyncio.start_server(self._serve, sock=sock)
        try:
            async with asyncio.timeout(seconds):
                return await self._answer
        except TimeoutError:
            raise OAuthError(
                f"no sign-in arrived within {seconds:g} s", f"run bingo mcp login {self._who} again"
            ) from None
        finally:
            server.close()
            await server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        try:
            async with asyncio.timeout(_HEAD_SECONDS):
                head = await reader.readuntil(b"\r\n\r\n")
        except (TimeoutError, asyncio.IncompleteReadError, asyncio.LimitOverrunError, ConnectionError):
            writer.close()
            return
        status, said = self._read(head[:_REQUEST_HEAD])
        page = _PAGE.format(said).encode()
        writer.write(
            f"HTTP/1.1 {status}\r\nContent-Type: text/html; charset=utf-8\r\nContent-Length: {len(page)}\r\n"
            "Connection: close\r\nCache-Control: no-store\r\n\r\n".encode()
            + page
        )
        try:
            await writer.drain()
        except ConnectionError:
            pass
        writer.close()

    def _read(self, head: bytes) -> tuple[str, str]:
        line = head.split(b"\r\n", 1)[0].decode("latin-1")
        parts = line.split(" ")
        if len(parts) != 3 or parts[0] != "GET":
            return "405 Method Not Allowed", "Not a sign-in."
        target = urlsplit(parts[1])
        if target.path != "/callback":
            return "404 Not Found", "Not a sign-in."
        query = parse_qs(target.query)
        if query.get("state", [""])[0] != self._state or self._answer.done():
            return "400 Bad Request", "This sign-in is not the one bingo is waiting for."
        error = query.get("error", [""])[0]
        if error:
            description = query.get("error_description", [""])[0]
            said = f"{cut(error, 60)}: {cut(description, 200)}" if description else cut(error, 60)
            self._answer.set_exception(OAuthError(f"the sign-in was refused ({said})", code=error))
            return "200 OK", "The sign-in was refused."
        code = query.get("code", [""])[0]
        if not code:
            return "400 Bad Request", "The redirect holds no code."
        self._answer.set_result(code)
        return "200 OK", "Signed in."


def bind_loopback(port: int) -> socket.socket | None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    # The last sign-in's connections linger in TIME_WAIT on its port, which a registered
    # redirect URI names again: as any server does, bind it all the same.
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        sock.bind(("127.0.0.1", port))
        sock.listen(8)
    except OSError:
        sock.close()
        return None
    return sock
