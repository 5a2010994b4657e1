"""OAuth 2.1 for an MCP server that needs a sign-in, as the MCP authorization specification
(2025-06-18 and later) says: the requests and what bingo reads of their answers.

Owns discovery (the `WWW-Authenticate` challenge's `resource_metadata`, protected resource
metadata, RFC 9728; authorization server metadata, RFC 8414 or OpenID discovery), dynamic
client registration (RFC 7591), PKCE (S256, RFC 7636), the authorization URL with the
`resource` parameter (RFC 8707), and the token endpoint's two grants (the code, the refresh
token). Each failure is an OAuthError whose `code` is the server's `error` (`invalid_client`,
`invalid_grant`) when it gave one, so a caller decides by the code, never by words.

It keeps nothing (`_oauth_store.py` does), opens no browser and listens on no port
(`_signin.py` does), and never logs a token, a code or a secret. httpx is the only library:
what authlib or the MCP SDK's client auth would add is a few form posts (ADR-0047).
"""

from __future__ import annotations

import base64
import hashlib
import re
import secrets
import time
from collections.abc import Callable
from typing import TYPE_CHECKING, Final, TypeVar
from urllib.parse import urlencode, urlsplit, urlunsplit

import msgspec

from ..kernel.errors import BingoError
from ..kernel.log import cut

if TYPE_CHECKING:
    import httpx

__all__ = [
    "AuthServer",
    "Client",
    "OAuthError",
    "Pkce",
    "Tokens",
    "authorization_url",
    "discover",
    "exchange_code",
    "refresh",
    "register",
]

OAUTH_TIMEOUT: Final = 30.0
"""Seconds one request to an authorization server may take."""
_BODY: Final = 64 * 1024
"""Bytes of a metadata, registration or token answer read: more is no answer of these."""
_CHALLENGE = re.compile(r'([A-Za-z_][A-Za-z0-9_-]*)\s*=\s*(?:"((?:[^"\\]|\\.)*)"|([^\s,]+))')


class OAuthError(BingoError):
    """A sign-in step failed. `code` is the server's OAuth `error` when it gave one."""

    def __init__(self, message: str, hint: str = "", *, code: str | None = None) -> None:
        super().__init__(message, hint)
        self.code = code


class _ResourceMetadata(msgspec.Struct):
    resource: str | None = None
    authorization_servers: list[str] = msgspec.field(default_factory=list[str])
    scopes_supported: list[str] | None = None


class AuthServer(msgspec.Struct, frozen=True):
    """What bingo needs of an authorization server's metadata, and the resource it signs in to."""

    issuer: str
    authorization_endpoint: str
    token_endpoint: str
    resource: str
    """The `resource` parameter: the MCP server's canonical URI (its metadata's, else its URL)."""
    registration_endpoint: str | None = None
    scope: str | None = None
    """The scope to ask for: the challenge's, else the resource's `scopes_supported`."""


class _ServerMetadata(msgspec.Struct):
    issuer: str | None = None
    authorization_endpoint: str | None = None
    token_endpoint: str | None = None
    registration_endpoint: str | None = None
    code_challenge_methods_supported: list[str] | None = None


class Client(msgspec.Struct, frozen=True):
    """The client bingo is at that server: registered (dynamic), or the person's (configured)."""

    client_id: str
    client_secret: str | None = None
    redirect_uri: str | None = None
    """The redirect URI it was registered with (a dynamic registration's)."""
    secret_expires_at: float | None = None
    """When a registered secret expires (unix seconds); None or 0: never."""
    registered: bool = True
    """Whether bingo registered it (and may register again) or the settings name it."""


class _Registered(msgspec.Struct):
    client_id: str
    client_secret: str | None = None
    client_secret_expires_at: float | None = None


class Tokens(msgspec.Struct, frozen=True):
    access_token: str
    refresh_token: str | None = None
    expires_at: float | None = None
    """When the access token expires (unix seconds), if the server said."""


class _TokenAnswer(msgspec.Struct):
    access_token: str
    token_type: str = "Bearer"
    expires_in: float | None = None
    refresh_token: str | None = None


class _ErrorAnswer(msgspec.Struct):
    error: str | None = None
    error_description: str | None = None


class Pkce(msgspec.Struct, frozen=True):
    """A PKCE verifier and its S256 challenge (RFC 7636 §4.1-4.2)."""

    verifier: str
    challenge: str

    @classmethod
    def make(cls) -> Pkce:
        """A fresh pair: 64 random characters of the unreserved set."""
        return cls.of(secrets.token_urlsafe(48))

    @classmethod
    def of(cls, verifier: str) -> Pkce:
        digest = hashlib.sha256(verifier.encode("ascii")).digest()
        return cls(verifier=verifier, challenge=base64.urlsafe_b64encode(digest).decode("ascii").rstrip("="))


def challenge_params(header: str) -> dict[str, str]:
    """The parameters of a `WWW-Authenticate: Bearer k="v", ...` challenge (RFC 6750 §3)."""
    _, _, rest = header.strip().partition(" ")
    return {m.group(1).lower(): m.group(2) if m.group(2) is not None else m.group(3) for m in _CHALLENGE.finditer(rest)}


def _origin(url: str) -> str:
    parts = urlsplit(url)
    return urlunsplit((parts.scheme, parts.netloc, "", "", ""))


def _well_known(url: str, name: str) -> list[str]:
    """RFC 8414 §3.1 / RFC 9728 §3.1: `/.well-known/<name>` inserted before the path, then
    (for a URL with a path) at the root."""
    parts = urlsplit(url)
    path = parts.path.rstrip("/")
    places = [urlunsplit((parts.scheme, parts.netloc, f"/.well-known/{name}{path}", "", ""))]
    if path:
        places.append(urlunsplit((parts.scheme, parts.netloc, f"/.well-known/{name}", "", "")))
    return places


async def _json_get(client: httpx.AsyncClient, url: str) -> bytes | None:
    """The body of a 200 answer to GET `url`, or None (any other status)."""
    import httpx

    try:
        response = await client.get(url, headers={"Accept": "application/json"}, timeout=OAUTH_TIMEOUT)
    except httpx.HTTPError as exc:
        raise OAuthError(f"{_origin(url)} cannot be reached: {type(exc).__name__}") from exc
    if response.status_code != 200:
        return None
    return response.content[:_BODY]


_Doc = TypeVar("_Doc", bound=msgspec.Struct)


async def _first(
    client: httpx.AsyncClient, places: list[str], kind: type[_Doc], usable: Callable[[_Doc], bool]
) -> _Doc | None:
    """The first document among `places` that answers, decodes as `kind` and is `usable`."""
    for place in places:
        body = await _json_get(client, place)
        if body is None:
            continue
        try:
            found = msgspec.json.decode(body, type=kind)
        except msgspec.DecodeError:
            continue
        if usable(found):
            return found
    return None


async def discover(client: httpx.AsyncClient, url: str, challenge: str | None) -> AuthServer:
    """Where MCP server `url` signs in, from its 401's `WWW-Authenticate` (`challenge`).

    Raises:
        OAuthError: no authorization server could be found, or it does not offer PKCE S256.
    """
    params = challenge_params(challenge) if challenge else {}
    places = [params["resource_metadata"]] if params.get("resource_metadata") else []
    places += _well_known(url, "oauth-protected-resource")
    resource = await _first(client, places, _ResourceMetadata, lambda _: True) or _ResourceMetadata()
    # No protected resource metadata (the 2025-03-26 revision): the server is its own issuer.
    issuer = resource.authorization_servers[0] if resource.authorization_servers else _origin(url)
    metadata = await _first(
        client,
        [*_well_known(issuer, "oauth-authorization-server"), *_well_known(issuer, "openid-configuration")],
        _ServerMetadata,
        lambda found: bool(found.authorization_endpoint and found.token_endpoint),
    )
    if metadata is None or metadata.authorization_endpoint is None or metadata.token_endpoint is None:
        raise OAuthError(
            f"{url} asks for a sign-in, but no authorization server metadata was found at {cut(issuer, 200)}",
            "the server may not follow the MCP authorization specification",
        )
    if "S256" not in (metadata.code_challenge_methods_supported or []):
        raise OAuthError(
            f"the authorization server {cut(issuer, 200)} does not offer PKCE with S256, which the MCP specification requires",
            "bingo does not sign in without it",
        )
    scope = params.get("scope") or (" ".join(resource.scopes_supported) if resource.scopes_supported else None)
    return AuthServer(
        issuer=metadata.issuer or issuer,
        authorization_endpoint=metadata.authorization_endpoint,
        token_endpoint=metadata.token_endpoint,
        registration_endpoint=metadata.registration_endpoint,
        resource=resource.resource or url,
        scope=scope,
    )


def _oauth_error(response: httpx.Response, what: str) -> OAuthError:
    try:
        answer = msgspec.json.decode(response.content[:_BODY], type=_ErrorAnswer)
    except (msgspec.DecodeError, msgspec.ValidationError):
        answer = _ErrorAnswer()
    said = answer.error or f"HTTP {response.status_code}"
    if answer.error_description:
        said += f": {cut(answer.error_description, 200)}"
    return OAuthError(f"{what} failed ({said})", code=answer.error)


async def register(client: httpx.AsyncClient, server: AuthServer, redirect_uri: str) -> Client:
    """Register bingo as a public client with `redirect_uri` (RFC 7591).

    Raises:
        OAuthError: the server offers no registration, or refused it.
    """
    import httpx

    if server.registration_endpoint is None:
        raise OAuthError(
            f"the authorization server {cut(server.issuer, 200)} offers no client registration",
            "register a client there and set plugins.<name>.oauth.clientId in your settings",
        )
    metadata = {
        "client_name": "bingo",
        "redirect_uris": [redirect_uri],
        "grant_types": ["authorization_code", "refresh_token"],
        "response_types": ["code"],
        "token_endpoint_auth_method": "none",
    }
    if server.scope:
        metadata["scope"] = server.scope
    try:
        response = await client.post(server.registration_endpoint, json=metadata, timeout=OAUTH_TIMEOUT)
    except httpx.HTTPError as exc:
        raise OAuthError(
            f"registering at {_origin(server.registration_endpoint)} failed: {type(exc).__name__}"
        ) from exc
    if response.status_code not in (200, 201):
        raise _oauth_error(response, "registering bingo as a client")
    try:
        answer = msgspec.json.decode(response.content[:_BODY], type=_Registered)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise OAuthError("the client registration's answer could not be read") from exc
    return Client(
        client_id=answer.client_id,
        client_secret=answer.client_secret,
        redirect_uri=redirect_uri,
        secret_expires_at=answer.client_secret_expires_at or None,
    )


def authorization_url(server: AuthServer, client: Client, *, redirect_uri: str, pkce: Pkce, state: str) -> str:
    """The URL the person opens to sign in (authorization code, PKCE S256, `resource`)."""
    query = {
        "response_type": "code",
        "client_id": client.client_id,
        "redirect_uri": redirect_uri,
        "code_challenge": pkce.challenge,
        "code_challenge_method": "S256",
        "state": state,
        "resource": server.resource,
    }
    if server.scope:
        query["scope"] = server.scope
    separator = "&" if "?" in server.authorization_endpoint else "?"
    return f"{server.authorization_endpoint}{separator}{urlencode(query)}"


async def _token(client: httpx.AsyncClient, server: AuthServer, who: Client, form: dict[str, str], what: str) -> Tokens:
    import httpx

    form = {**form, "client_id": who.client_id, "resource": server.resource}
    if who.client_secret:
        form["client_secret"] = who.client_secret  # client_secret_post: what a registration answers by default
    try:
        response = await client.post(
            server.token_endpoint, data=form, headers={"Accept": "application/json"}, timeout=OAUTH_TIMEOUT
        )
    except httpx.HTTPError as exc:
        raise OAuthError(f"{what} failed: {_origin(server.token_endpoint)} cannot be reached") from exc
    if response.status_code != 200:
        raise _oauth_error(response, what)
    try:
        answer = msgspec.json.decode(response.content[:_BODY], type=_TokenAnswer)
    except (msgspec.DecodeError, msgspec.ValidationError) as exc:
        raise OAuthError(f"{what} failed: the token endpoint's answer could not be read") from exc
    if answer.token_type.lower() != "bearer":
        raise OAuthError(f"{what} failed: the token is of type {cut(answer.token_type, 40)}, not Bearer")
    expires = time.time() + answer.expires_in if answer.expires_in is not None else None
    return Tokens(access_token=answer.access_token, refresh_token=answer.refresh_token, expires_at=expires)


async def exchange_code(
    client: httpx.AsyncClient, server: AuthServer, who: Client, *, code: str, redirect_uri: str, pkce: Pkce
) -> Tokens:
    """The tokens for an authorization `code` (with the PKCE verifier).

    Raises:
        OAuthError: refused (its `code` says why: `invalid_client`, `invalid_grant`).
    """
    form = {"grant_type": "authorization_code", "code": code, "redirect_uri": redirect_uri}
    return await _token(client, server, who, {**form, "code_verifier": pkce.verifier}, "the sign-in")


async def refresh(client: httpx.AsyncClient, server: AuthServer, who: Client, refresh_token: str) -> Tokens:
    """New tokens for a refresh token; the old refresh token is kept when none is sent back.

    Raises:
        OAuthError: refused (its `code` says why: `invalid_client`, `invalid_grant`).
    """
    form = {"grant_type": "refresh_token", "refresh_token": refresh_token}
    tokens = await _token(client, server, who, form, "refreshing the sign-in")
    if tokens.refresh_token is None:
        return msgspec.structs.replace(tokens, refresh_token=refresh_token)
    return tokens
