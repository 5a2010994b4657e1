"""The sign-in's protocol pieces (bridge/_oauth.py, _oauth_store.py, _signin.py's settings)
through httpx's MockTransport: what is asked where, in which order, and what is kept."""

from __future__ import annotations

import asyncio
import json
import stat
from pathlib import Path

import httpx
import pytest

from bingo.bridge._oauth import AuthServer, Client, OAuthError, Pkce, Tokens, challenge_params, discover, refresh
from bingo.bridge._oauth_store import Grant, GrantStore
from bingo.bridge._signin import OAuthSettings
from bingo.kernel.errors import SettingsError

MCP = "https://mcp.example.com/api/mcp"
ISSUER = "https://auth.example.com/tenant"
AS_METADATA = {
    "issuer": ISSUER,
    "authorization_endpoint": f"{ISSUER}/authorize",
    "token_endpoint": f"{ISSUER}/token",
    "registration_endpoint": f"{ISSUER}/register",
    "code_challenge_methods_supported": ["S256"],
}


def _discovered(
    routes: dict[str, dict[str, object]], challenge: str | None
) -> tuple[AuthServer | OAuthError, list[str]]:
    asked: list[str] = []

    def answer(request: httpx.Request) -> httpx.Response:
        url = str(request.url)
        asked.append(url)
        return httpx.Response(200, json=routes[url]) if url in routes else httpx.Response(404)

    async def main() -> AuthServer | OAuthError:
        async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
            try:
                return await discover(client, MCP, challenge)
            except OAuthError as exc:
                return exc

    return asyncio.run(main()), asked


def test_pkce_s256_is_rfc_7636s_own_example() -> None:
    pair = Pkce.of("dBjftJeZ4CVP-mB92K27uhbUJU1p1r_wW1gFWFOEjXk")  # RFC 7636 Appendix B
    assert pair.challenge == "E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM"
    fresh = Pkce.make()
    assert len(fresh.verifier) >= 43 and Pkce.of(fresh.verifier) == fresh


def test_a_challenge_is_read_as_rfc_6750_writes_it() -> None:
    header = 'Bearer error="invalid_token", resource_metadata="https://x/.well-known/oauth-protected-resource/mcp", scope="read write"'
    assert challenge_params(header) == {
        "error": "invalid_token",
        "resource_metadata": "https://x/.well-known/oauth-protected-resource/mcp",
        "scope": "read write",
    }


def test_discovery_follows_the_challenge_then_rfc_8414s_path_insertion() -> None:
    prm = "https://mcp.example.com/custom/prm"
    server, asked = _discovered(
        {
            prm: {"resource": MCP, "authorization_servers": [ISSUER], "scopes_supported": ["mcp"]},
            "https://auth.example.com/.well-known/oauth-authorization-server/tenant": AS_METADATA,
        },
        f'Bearer resource_metadata="{prm}"',
    )
    assert asked == [prm, "https://auth.example.com/.well-known/oauth-authorization-server/tenant"]
    assert server == AuthServer(
        issuer=ISSUER,
        authorization_endpoint=f"{ISSUER}/authorize",
        token_endpoint=f"{ISSUER}/token",
        registration_endpoint=f"{ISSUER}/register",
        resource=MCP,
        scope="mcp",
    )


def test_without_resource_metadata_the_server_is_its_own_issuer_found_by_openid_discovery() -> None:
    server, asked = _discovered({"https://mcp.example.com/.well-known/openid-configuration": AS_METADATA}, None)
    assert asked == [
        "https://mcp.example.com/.well-known/oauth-protected-resource/api/mcp",
        "https://mcp.example.com/.well-known/oauth-protected-resource",
        "https://mcp.example.com/.well-known/oauth-authorization-server",
        "https://mcp.example.com/.well-known/openid-configuration",
    ]
    assert isinstance(server, AuthServer) and server.resource == MCP


def test_a_server_without_pkce_s256_is_not_signed_in_to() -> None:
    plain = {**AS_METADATA, "code_challenge_methods_supported": ["plain"]}
    server, _ = _discovered({"https://mcp.example.com/.well-known/oauth-authorization-server": plain}, None)
    assert isinstance(server, OAuthError) and "PKCE" in server.message


def test_a_refused_refresh_carries_the_servers_error_code_and_sends_the_resource() -> None:
    sent: list[dict[str, list[str]]] = []

    def answer(request: httpx.Request) -> httpx.Response:
        from urllib.parse import parse_qs

        sent.append(parse_qs(request.content.decode()))
        return httpx.Response(401, json={"error": "invalid_client", "error_description": "unknown client"})

    server = AuthServer(issuer=ISSUER, authorization_endpoint="a", token_endpoint=f"{ISSUER}/token", resource=MCP)

    async def main() -> OAuthError:
        async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
            with pytest.raises(OAuthError) as caught:
                await refresh(client, server, Client(client_id="c1"), "rt-1")
            return caught.value

    error = asyncio.run(main())
    assert error.code == "invalid_client"
    assert sent == [
        {"grant_type": ["refresh_token"], "refresh_token": ["rt-1"], "client_id": ["c1"], "resource": [MCP]}
    ]


def test_a_sign_in_is_kept_0600_and_only_for_the_url_it_was_made_for(tmp_path: Path) -> None:
    store = GrantStore(tmp_path / "oauth")
    server = AuthServer(issuer=ISSUER, authorization_endpoint="a", token_endpoint="t", resource=MCP)
    store.save("remote", Grant(url=MCP, server=server, client=Client(client_id="c1"), tokens=Tokens(access_token="at")))
    kept = store.path("remote")
    assert stat.S_IMODE(kept.stat().st_mode) == 0o600 and stat.S_IMODE(kept.parent.stat().st_mode) == 0o700
    assert json.loads(kept.read_text())["tokens"]["access_token"] == "at"
    loaded = store.load("remote", MCP)
    assert loaded is not None and loaded.tokens == Tokens(access_token="at")
    assert store.load("remote", "https://elsewhere.example.com/mcp") is None  # a token goes only where it was issued
    kept.write_text("{not json")
    assert store.load("remote", MCP) is None
    assert store.forget("remote") and not store.forget("remote")


def test_oauth_settings_of_the_wrong_type_are_one_line_and_a_projects_secret_is_the_persons_to_grant() -> None:
    with pytest.raises(SettingsError) as caught:
        OAuthSettings.read("remote", {"oauth": {"clientId": 5}})
    assert caught.value.message.startswith("plugins.remote.oauth in settings is wrong: ")
    config = OAuthSettings.read("remote", {"oauth": {"clientId": "mine", "clientSecretEnv": "MINE_SECRET"}})
    assert config.client({"MINE_SECRET": "s"}) == Client(client_id="mine", client_secret="s", registered=False)
    with pytest.raises(OAuthError, match="may not read MINE_SECRET"):
        config.client({"MINE_SECRET": "s"}, readable=frozenset())
    assert config.client({"MINE_SECRET": "s"}, readable=frozenset({"MINE_SECRET"})) is not None


def test_the_sign_in_is_imported_only_when_a_server_needs_one() -> None:
    import subprocess
    import sys

    signing = [
        "bingo.bridge._signin",
        "bingo.bridge._oauth",
        "bingo.bridge._oauth_store",
        "bingo.bridge._loopback",
        "webbrowser",
        "mcp",
        "authlib",
    ]
    script = f"import sys, bingo.app, bingo.bridge.host, bingo.bridge._mcp_http; print([m for m in {signing!r} if m in sys.modules])"
    done = subprocess.run([sys.executable, "-I", "-c", script], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"


def test_every_401_of_a_long_session_is_refreshed_once(tmp_path: Path) -> None:
    store = GrantStore(tmp_path / "oauth")
    server = AuthServer(issuer=ISSUER, authorization_endpoint="a", token_endpoint=f"{ISSUER}/token", resource=MCP)
    kept = Grant(
        url=MCP, server=server, client=Client(client_id="c1"), tokens=Tokens(access_token="at0", refresh_token="rt0")
    )
    store.save("remote", kept)
    issued = iter(range(1, 10))

    def answer(request: httpx.Request) -> httpx.Response:
        n = next(issued)
        return httpx.Response(200, json={"access_token": f"at{n}", "refresh_token": f"rt{n}", "token_type": "Bearer"})

    async def main() -> list[bool]:
        from bingo.bridge._signin import SignIn

        async with httpx.AsyncClient(transport=httpx.MockTransport(answer)) as client:
            sign_in = SignIn(
                "remote", MCP, store=store, config=OAuthSettings(), environ={}, client=client, say=lambda _line: None
            )
            answers: list[bool] = []
            for _ in range(2):  # the server refuses each token in turn, hours apart
                sent = await sign_in.header()
                answers.append(await sign_in.unauthorized(sent, None))
            return answers

    assert asyncio.run(main()) == [True, True]
    final = store.load("remote", MCP)
    assert final is not None and final.tokens == Tokens(access_token="at2", refresh_token="rt2")


def test_the_redirect_listener_takes_only_its_own_state_and_a_refusal_is_an_error() -> None:
    from bingo.bridge._loopback import Callback, bind_loopback

    async def get(port: int, target: str) -> bytes:
        reader, writer = await asyncio.open_connection("127.0.0.1", port)
        writer.write(f"GET {target} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode())
        answer = await reader.read()
        writer.close()
        return answer.split(b"\r\n", 1)[0]

    async def main() -> tuple[list[bytes], str, OAuthError]:
        sock = bind_loopback(0)
        assert sock is not None
        port = sock.getsockname()[1]
        waiting = asyncio.create_task(Callback("s1", "remote").wait(sock, 5))
        statuses = [
            await get(port, "/callback?code=stolen&state=other"),  # a page that guessed the port
            await get(port, "/elsewhere?code=x&state=s1"),
            await get(port, "/callback?code=c1&state=s1"),
        ]
        code = await waiting
        refused = bind_loopback(0)
        assert refused is not None
        again = asyncio.create_task(Callback("s2", "remote").wait(refused, 5))
        await get(refused.getsockname()[1], "/callback?error=access_denied&error_description=no&state=s2")
        with pytest.raises(OAuthError) as caught:
            await again
        return statuses, code, caught.value

    statuses, code, error = asyncio.run(main())
    assert statuses == [b"HTTP/1.1 400 Bad Request", b"HTTP/1.1 404 Not Found", b"HTTP/1.1 200 OK"]
    assert code == "c1"
    assert error.code == "access_denied"
