"""An MCP server that needs a sign-in, built from the Python SDK's own server auth support
(`MCPServer(auth_server_provider=..., auth=AuthSettings(...))`): it is its own authorization
server (metadata, dynamic registration, authorize, token with PKCE checked by the SDK) and
its resource server (401 + WWW-Authenticate, protected resource metadata).

The authorize step approves at once (the test's "browser" follows the redirect). It binds
127.0.0.1:0 and prints `PORT <n>` on stdout. Unauthenticated `/admin/*` routes let a test see
and change what the server keeps: `GET /admin/events` (what it was asked: registrations,
authorizations with their PKCE challenge and resource, token grants, MCP requests with the
status answered), `POST /admin/expire` (every access token refused from now on),
`POST /admin/revoke` (every token forgotten), `POST /admin/forget-clients` (every client and
token forgotten), `POST /admin/client?id=ID` (a client the person "registered by hand", its redirect
`http://127.0.0.1/callback` on any port),
`POST /admin/lifetime?seconds=N` (the access tokens' lifetime from now on).
Tool `whoami`: the client id the call was made with.
"""

import secrets
import socket
import time

import uvicorn
from mcp.server import MCPServer
from mcp.server.auth.middleware.auth_context import get_access_token
from mcp.server.auth.provider import (
    AccessToken,
    AuthorizationCode,
    AuthorizationParams,
    RefreshToken,
    construct_redirect_uri,
)
from mcp.server.auth.settings import AuthSettings, ClientRegistrationOptions
from mcp.shared.auth import OAuthClientInformationFull, OAuthToken
from starlette.requests import Request
from starlette.responses import JSONResponse

sock = socket.socket()
sock.bind(("127.0.0.1", 0))
sock.listen(64)
PORT = sock.getsockname()[1]
BASE = f"http://127.0.0.1:{PORT}"

EVENTS: list[dict] = []
STATE = {"lifetime": 3600}


class Provider:
    def __init__(self):
        self.clients: dict[str, OAuthClientInformationFull] = {}
        self.codes: dict[str, AuthorizationCode] = {}
        self.access: dict[str, AccessToken] = {}
        self.refresh: dict[str, RefreshToken] = {}

    async def get_client(self, client_id):
        return self.clients.get(client_id)

    async def register_client(self, client_info):
        EVENTS.append({"kind": "register", "client": client_info.client_id})
        self.clients[client_info.client_id] = client_info

    async def authorize(self, client, params: AuthorizationParams):
        code = secrets.token_urlsafe(16)
        EVENTS.append(
            {
                "kind": "authorize",
                "client": client.client_id,
                "challenge": params.code_challenge,
                "resource": params.resource,
            }
        )
        self.codes[code] = AuthorizationCode(
            code=code,
            scopes=params.scopes or [],
            expires_at=time.time() + 300,
            client_id=client.client_id,
            code_challenge=params.code_challenge,
            redirect_uri=params.redirect_uri,
            redirect_uri_provided_explicitly=params.redirect_uri_provided_explicitly,
            resource=params.resource,
        )
        return construct_redirect_uri(str(params.redirect_uri), code=code, state=params.state)

    async def load_authorization_code(self, client, authorization_code):
        return self.codes.get(authorization_code)

    def _issue(self, client_id, scopes, resource):
        access, refresh = "at-" + secrets.token_urlsafe(24), "rt-" + secrets.token_urlsafe(24)
        self.access[access] = AccessToken(
            token=access,
            client_id=client_id,
            scopes=scopes,
            expires_at=int(time.time()) + STATE["lifetime"],
            resource=resource,
        )
        self.refresh[refresh] = RefreshToken(token=refresh, client_id=client_id, scopes=scopes, resource=resource)
        return OAuthToken(
            access_token=access, expires_in=STATE["lifetime"], refresh_token=refresh, scope=" ".join(scopes) or None
        )

    async def exchange_authorization_code(self, client, authorization_code):
        # The SDK's token handler checked the PKCE verifier against the challenge before this.
        self.codes.pop(authorization_code.code, None)
        EVENTS.append({"kind": "token", "grant": "authorization_code", "client": client.client_id, "pkce": "verified"})
        return self._issue(client.client_id, authorization_code.scopes, authorization_code.resource)

    async def load_refresh_token(self, client, refresh_token):
        found = self.refresh.get(refresh_token)
        return found if found is not None and found.client_id == client.client_id else None

    async def exchange_refresh_token(self, client, refresh_token, scopes):
        self.refresh.pop(refresh_token.token, None)
        EVENTS.append({"kind": "token", "grant": "refresh_token", "client": client.client_id})
        return self._issue(client.client_id, scopes or refresh_token.scopes, refresh_token.resource)

    async def load_access_token(self, token):
        found = self.access.get(token)
        if found is None or (found.expires_at is not None and found.expires_at < time.time()):
            return None
        return found

    async def revoke_token(self, token):
        self.access.pop(token.token, None)
        self.refresh.pop(token.token, None)


provider = Provider()
server = MCPServer(
    "mcp-oauth",
    auth_server_provider=provider,
    auth=AuthSettings(
        issuer_url=BASE,
        resource_server_url=f"{BASE}/mcp",
        client_registration_options=ClientRegistrationOptions(enabled=True),
        validate_token_resource=True,
    ),
)


@server.tool()
def whoami() -> str:
    """Who the call was made as."""
    token = get_access_token()
    return f"signed in as {token.client_id if token else 'nobody'}"


@server.custom_route("/admin/events", methods=["GET"])
async def events(request: Request):
    return JSONResponse(EVENTS)


@server.custom_route("/admin/expire", methods=["POST"])
async def expire(request: Request):
    for token in provider.access.values():
        token.expires_at = 0
    return JSONResponse({})


@server.custom_route("/admin/revoke", methods=["POST"])
async def revoke(request: Request):
    provider.access.clear()
    provider.refresh.clear()
    return JSONResponse({})


@server.custom_route("/admin/forget-clients", methods=["POST"])
async def forget(request: Request):
    provider.clients.clear()
    provider.access.clear()
    provider.refresh.clear()
    return JSONResponse({})


@server.custom_route("/admin/lifetime", methods=["POST"])
async def lifetime(request: Request):
    STATE["lifetime"] = int(request.query_params["seconds"])
    return JSONResponse({})


class AnyLoopbackPort(OAuthClientInformationFull):
    """A client registered by hand with `http://127.0.0.1/callback`: any port of it is
    allowed, as RFC 8252 §7.3 says a loopback redirect's is."""

    def validate_redirect_uri(self, redirect_uri):
        if redirect_uri is not None and redirect_uri.host == "127.0.0.1" and redirect_uri.path == "/callback":
            return redirect_uri
        return super().validate_redirect_uri(redirect_uri)


@server.custom_route("/admin/client", methods=["POST"])
async def client(request: Request):
    info = AnyLoopbackPort(
        client_id=request.query_params["id"],
        redirect_uris=["http://127.0.0.1/callback"],
        token_endpoint_auth_method="none",
        grant_types=["authorization_code", "refresh_token"],
        response_types=["code"],
    )
    provider.clients[info.client_id] = info
    return JSONResponse({})


class Recording:
    """Every /mcp request and the status it was answered with."""

    def __init__(self, app):
        self.app = app

    async def __call__(self, scope, receive, send):
        if scope["type"] != "http" or not scope["path"].startswith("/mcp"):
            return await self.app(scope, receive, send)
        signed = any(name == b"authorization" for name, _ in scope["headers"])

        async def sending(message):
            if message["type"] == "http.response.start":
                EVENTS.append({"kind": "mcp", "method": scope["method"], "signed": signed, "status": message["status"]})
            await send(message)

        return await self.app(scope, receive, sending)


app = Recording(server.streamable_http_app())
print(f"PORT {PORT}", flush=True)
uvicorn.Server(uvicorn.Config(app, log_level="warning", lifespan="on")).run(sockets=[sock])
