"""One MCP server's sign-in, as a run and `bingo mcp login` use it (INTERFACE §14).

Owns the sign-in's lifetime: the Authorization header a request carries (refreshed before
the token expires), what a 401 does (one refresh, then a sign-in: asked about on a
terminal, else the line naming `bingo mcp login NAME`), the client registered again when
the server answers `invalid_client`, and the sign-in itself: a loopback listener on
127.0.0.1 bound before the URL is made (`_loopback.py`), the URL said (the caller escapes
it), the browser opened when there is one, the redirect awaited with a deadline, the code
exchanged.

A token is only ever in the store's file and in an Authorization header: never in a log
line, a notice, an error's words or an environment. It imports only when a server needs a
sign-in (a 401, or a sign-in kept for it), so no other start pays for it (ADR-0047).
"""

from __future__ import annotations

import asyncio
import logging
import os
import secrets
import socket
import time
from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING, Final
from urllib.parse import urlsplit

import msgspec

from ..kernel.errors import BingoError, SettingsError
from ._loopback import Callback, bind_loopback, can_open_browser, open_browser
from ._oauth import (
    AuthServer,
    Client,
    OAuthError,
    Pkce,
    authorization_url,
    discover,
    exchange_code,
    refresh,
    register,
)
from ._oauth_store import Grant, GrantStore

if TYPE_CHECKING:
    import httpx

    from ..kernel.interfaces import Json
    from ._mcp_http import Ask, SignInPlace

__all__ = ["OAuthSettings", "SignIn", "ask_and_sign_in", "login_line"]

_log = logging.getLogger(__name__)

REFRESH_MARGIN: Final = 60.0
"""Seconds before its expiry that a token is refreshed rather than sent."""
LOGIN_SECONDS: Final = 300.0
"""Seconds a sign-in waits for the browser's redirect."""


def login_line(name: str) -> str:
    """What a server that needs a sign-in is said as, where nobody is asked."""
    return f"needs a sign-in: run `bingo mcp login {name}`"


class OAuthSettings(msgspec.Struct, frozen=True, rename="camel"):
    """`plugins.<name>.oauth`: a client the person registered, instead of a registration."""

    client_id: str | None = None
    client_secret_env: str | None = None
    """The environment variable holding the client's secret (never the secret itself)."""
    scope: str | None = None
    callback_port: int | None = None
    """The loopback port the configured client's redirect URI names (0: any)."""

    @classmethod
    def read(cls, name: str, plugin: Mapping[str, Json]) -> OAuthSettings:
        """`plugins.<name>.oauth` from the plugin's settings slice.

        Raises:
            SettingsError: it is not an object of those keys with those types (exit 2).
        """
        value = plugin.get("oauth")
        if value is None:
            return cls()
        try:
            return msgspec.convert(value, cls)
        except msgspec.ValidationError as exc:
            raise SettingsError(
                f"plugins.{name}.oauth in settings is wrong: {exc}",
                'write {"clientId": "...", "clientSecretEnv": "VAR", "scope": "...", "callbackPort": 8976}',
            ) from None

    def client(self, environ: Mapping[str, str], readable: frozenset[str] | None = None) -> Client | None:
        """The configured client, its secret read from the environment; `readable`: the
        variables it may read (a project's server: the person's `mcpVariables`, ADR-0028),
        None for any.

        Raises:
            OAuthError: the secret's variable is unset, or not one it may read.
        """
        if not self.client_id:
            return None
        if self.client_secret_env and readable is not None and self.client_secret_env not in readable:
            raise OAuthError(
                f"a project's server may not read {self.client_secret_env} for its client secret",
                "add it to mcpVariables in your own settings (~/.bingo/settings.json) if you mean it",
            )
        secret = environ.get(self.client_secret_env) if self.client_secret_env else None
        if self.client_secret_env and not secret:
            raise OAuthError(
                f"the variable {self.client_secret_env} that plugins.<name>.oauth.clientSecretEnv names is not set",
                "export it with the client's secret, or remove clientSecretEnv for a public client",
            )
        return Client(client_id=self.client_id, client_secret=secret, registered=False)


class SignIn:
    """Server `name` at `url`: its kept sign-in, the header a request carries, and a new
    sign-in when one is needed. `client` is the HTTP client the requests go through."""

    __slots__ = (
        "_client",
        "_config",
        "_environ",
        "_grant",
        "_loaded",
        "_lock",
        "_offer",
        "_readable",
        "_say",
        "_store",
        "name",
        "url",
        "why",
    )

    def __init__(
        self,
        name: str,
        url: str,
        *,
        store: GrantStore,
        config: OAuthSettings,
        environ: Mapping[str, str],
        client: httpx.AsyncClient,
        say: Callable[[str], None],
        offer: Callable[[str | None], bool] | None = None,
        readable: frozenset[str] | None = None,
    ) -> None:
        self.name = name
        self.url = url
        self.why: str | None = None
        """Why no sign-in could be had, once one could not (after `unauthorized`)."""
        self._store = store
        self._config = config
        self._environ = environ
        self._client = client
        self._say = say
        self._offer = offer
        self._readable = readable
        self._grant: Grant | None = None
        self._loaded = False
        self._lock = asyncio.Lock()

    def _kept(self) -> Grant | None:
        if not self._loaded:
            self._grant, self._loaded = self._store.load(self.name, self.url), True
        return self._grant

    def _keep(self, grant: Grant) -> None:
        self._grant, self._loaded = grant, True
        try:
            self._store.save(self.name, grant)
        except OSError as exc:
            # Signed in for this run; the next one signs in again.
            _log.warning("%s: the sign-in could not be kept: %s", self.name, exc.strerror)

    # --- a request's header -----------------------------------------------------------

    async def header(self) -> dict[str, str]:
        """The Authorization header for a request (a token about to expire refreshed first),
        or none when there is no sign-in."""
        async with self._lock:
            grant = self._kept()
            if grant is None or grant.tokens is None:
                return {}
            expires = grant.tokens.expires_at
            if expires is not None and expires - REFRESH_MARGIN <= time.time() and grant.tokens.refresh_token:
                grant = await self._refresh(grant)
                if grant is None or grant.tokens is None:
                    return {}
            return {"Authorization": f"Bearer {grant.tokens.access_token}"}

    async def unauthorized(self, sent: Mapping[str, str], challenge: str | None) -> bool:
        """The server answered 401 to a request that carried `sent` (its header): True when
        the request is worth sending again (refreshed, or signed in), else `why` says why."""
        token = sent.get("Authorization", "").removeprefix("Bearer ") or None
        async with self._lock:
            grant = self._kept()
            current = grant.tokens.access_token if grant is not None and grant.tokens is not None else None
            if current is not None and current != token:
                return True  # another request refreshed meanwhile
            if grant is not None and grant.tokens is not None and grant.tokens.refresh_token:
                refreshed = await self._refresh(grant)
                if refreshed is not None and refreshed.tokens is not None:
                    return True  # sent again once (McpHttp): a 401 to it is the answer
            if self._offer is not None and self._offer(challenge):
                # Asked outside this start: a person's sign-in outlives a handshake's deadline.
                self.why = f"needs a sign-in: answer the question about it (or run `bingo mcp login {self.name}`)"
                return False
            self.why = self.why or login_line(self.name)
            return False

    async def _refresh(self, grant: Grant) -> Grant | None:
        """`grant` with refreshed tokens, kept; None when the refresh was refused (the
        tokens are forgotten: a sign-in is needed). A refused client is registered again."""
        assert grant.tokens is not None and grant.tokens.refresh_token is not None
        who = self._configured() or grant.client
        if who is None:
            return None
        try:
            tokens = await refresh(self._client, grant.server, who, grant.tokens.refresh_token)
        except OAuthError as exc:
            _log.info("%s: refreshing the sign-in failed: %s", self.name, exc.message)
            if exc.code is None:
                return None  # unreachable, say: the tokens are kept for the next try
            if exc.code == "invalid_client" and who.registered:
                who = await self._register_again(grant, who)
                if who is not None:
                    try:
                        tokens = await refresh(self._client, grant.server, who, grant.tokens.refresh_token)
                    except OAuthError:
                        self._keep(msgspec.structs.replace(grant, client=who, tokens=None))
                        self.why = (
                            f"{login_line(self.name)} (its client registration had expired; bingo registered again)"
                        )
                        return None
                    fresh = msgspec.structs.replace(grant, client=who, tokens=tokens)
                    self._keep(fresh)
                    return fresh
            self._keep(msgspec.structs.replace(grant, tokens=None))
            return None
        fresh = msgspec.structs.replace(grant, tokens=tokens)
        self._keep(fresh)
        return fresh

    async def _register_again(self, grant: Grant, old: Client) -> Client | None:
        try:
            return await register(self._client, grant.server, old.redirect_uri or "http://127.0.0.1/callback")
        except OAuthError as exc:
            _log.info("%s: registering again failed: %s", self.name, exc.message)
            return None

    def _configured(self) -> Client | None:
        return self._config.client(self._environ, self._readable)

    # --- a new sign-in ------------------------------------------------------------------

    async def login(self, challenge: str | None = None) -> None:
        """Sign in now (`bingo mcp login NAME`, or a yes to the question); `challenge` is the
        server's `WWW-Authenticate`, if a 401 gave it already.

        Raises:
            OAuthError: the sign-in failed (the line says how).
        """
        async with self._lock:
            await self._login(challenge)

    def logout(self) -> bool:
        """Forget the kept sign-in (tokens and registration); whether there was one."""
        self._grant, self._loaded = None, True
        return self._store.forget(self.name)

    async def _challenge(self) -> str | None:
        """The server's `WWW-Authenticate`, asked with an unsigned request."""
        import httpx

        try:
            response = await self._client.post(
                self.url,
                content=b'{"jsonrpc":"2.0","id":0,"method":"ping"}',
                headers={"Accept": "application/json, text/event-stream", "Content-Type": "application/json"},
                timeout=30.0,
            )
        except httpx.HTTPError as exc:
            raise OAuthError(f"{self.url} cannot be reached: {type(exc).__name__}") from exc
        return response.headers.get("www-authenticate") if response.status_code == 401 else None

    async def _login(self, challenge: str | None) -> None:
        if challenge is None:
            challenge = await self._challenge()
        server = await discover(self._client, self.url, challenge)
        if self._config.scope:
            server = msgspec.structs.replace(server, scope=self._config.scope)
        kept = self._kept()
        who = self._configured()
        if who is None and kept is not None and kept.client is not None and kept.client.registered:
            expired = kept.client.secret_expires_at is not None and kept.client.secret_expires_at <= time.time()
            same = kept.server.registration_endpoint == server.registration_endpoint
            who = kept.client if same and not expired else None
        for _ in range(2):  # a second time only when the registration was refused at the token endpoint
            sock, who = await self._listener(server, who)
            try:
                redirect_uri = f"http://127.0.0.1:{sock.getsockname()[1]}/callback"
                pkce, state = Pkce.make(), secrets.token_urlsafe(24)
                url = authorization_url(server, who, redirect_uri=redirect_uri, pkce=pkce, state=state)
                opening = can_open_browser(os.environ)
                self._say(f"Sign in to {self.name}: open {url}")
                if opening:
                    open_browser(url)
                code = await Callback(state, self.name).wait(sock, LOGIN_SECONDS)
            finally:
                sock.close()
            try:
                tokens = await exchange_code(self._client, server, who, code=code, redirect_uri=redirect_uri, pkce=pkce)
            except OAuthError as exc:
                if exc.code == "invalid_client" and who.registered:
                    self._say(
                        f"{self.name}'s authorization server no longer knows bingo's registration: registering again"
                    )
                    who = None
                    continue
                raise
            self._keep(Grant(url=self.url, server=server, client=who, tokens=tokens))
            self.why = None
            return
        raise OAuthError("the authorization server refused bingo's new registration too")

    async def _listener(self, server: AuthServer, who: Client | None) -> tuple[socket.socket, Client]:
        """The loopback socket the redirect comes to, bound before the URL is made: on the
        port the client's redirect URI names, else any; and the client (registered now
        when there is none, or its redirect URI's port is taken)."""
        port = 0
        if who is not None and not who.registered:
            port = self._config.callback_port or 0
        elif who is not None and who.redirect_uri:
            port = urlsplit(who.redirect_uri).port or 0
        sock = bind_loopback(port)
        if sock is None and who is not None and who.registered:
            sock, who = bind_loopback(0), None  # its port is taken: a registration for another
        if sock is None:
            raise OAuthError(
                f"the sign-in's redirect port 127.0.0.1:{port} is in use",
                f"free it, or change plugins.{self.name}.oauth.callbackPort",
            )
        if who is None:
            redirect_uri = f"http://127.0.0.1:{sock.getsockname()[1]}/callback"
            try:
                who = await register(self._client, server, redirect_uri)
            except BaseException:
                sock.close()
                raise
            kept = self._kept()
            # Kept at once: a sign-in abandoned in the browser does not cost a registration.
            self._keep(Grant(url=self.url, server=server, client=who, tokens=kept.tokens if kept else None))
        return sock, who


SIGN_IN_CONNECT: Final = 10.0
"""Seconds to reach a server or its authorization server while signing in."""


async def ask_and_sign_in(name: str, url: str, *, place: SignInPlace, ask: Ask, challenge: str | None) -> None:
    """Ask the person whether to sign in to server `name` now, and do if they say yes, with
    an HTTP client of its own (the start that found the 401 is over by then). Whatever
    happens is said; nothing is raised (it runs in the host's task group)."""
    import httpx

    question = f"{name} (the MCP server at {url}) needs a sign-in: sign in now in your browser?"
    try:
        answer = (await ask(question, ["yes", "no"])).strip().lower()
    except BingoError:
        answer = "no"  # nobody answered
    if answer not in ("y", "yes"):
        place.say(f"not signed in: run `bingo mcp login {name}` to sign in later")
        return
    try:
        timeout = httpx.Timeout(30.0, connect=SIGN_IN_CONNECT)
        async with httpx.AsyncClient(timeout=timeout, follow_redirects=False) as client:
            sign_in = SignIn(
                name,
                url,
                store=GrantStore(place.store),
                config=OAuthSettings.read(name, place.settings),
                environ=place.environ,
                client=client,
                say=place.say,
                readable=place.readable,
            )
            await sign_in.login(challenge)
    except BingoError as exc:
        place.say(f"could not sign in: {exc.line()}")
        return
    except Exception as exc:  # boundary: a sign-in's fault never ends the run
        _log.exception("%s: signing in failed", name)
        place.say(f"could not sign in: {type(exc).__name__}; run `bingo mcp login {name}` to try again")
        return
    place.say("signed in: its tools work from the next call")
