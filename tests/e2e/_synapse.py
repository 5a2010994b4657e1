"""A real Matrix homeserver for the channel's black-box tests: Synapse, in its own
virtualenv, on 127.0.0.1, with SQLite and registration by shared secret.

`.synapse-venv/` at the repository's root (gitignored) is made once with
`pip install matrix-synapse` and reused; a fresh machine (CI) makes it in the first test
session, which takes about half a minute (one process makes it, under a file lock, while
parallel ones wait). One server serves the whole test session (`homeserver`,
session-scoped; with xdist, one for all the workers: the first that needs it starts it, under
a file lock, and the controller stops it at the end): each test registers its own users and
rooms, so tests share nothing but the process. A test that stops its homeserver has its own
(`own_homeserver`): `Synapse.stop` and `start` stop the server and start it again on the same
port and database, as a homeserver going away and coming back does.
"""

from __future__ import annotations

import base64
import contextlib
import fcntl
import hashlib
import hmac
import json
import os
import secrets
import signal
import subprocess
import threading
import time
import uuid
import warnings
from collections.abc import Iterator
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import httpx
import pytest

from bingo.sandbox.janitor import proc as procfs
from tests.support import installs, summary
from tests.support.ports import listening_port

VENV = installs.SYNAPSE_VENV
STAMP = installs.SYNAPSE_STAMP
SHARED_SECRET = "bingo-test-shared-secret"
START_TIMEOUT = 60.0
_MADE_HERE: list[bool] = []
"""Holds True once this process made the venv (under xdist, one process makes it)."""


def _install() -> str | None:
    """Make `.synapse-venv` with Synapse in it, once (tests/support/installs.py, under a file
    lock: `scripts/test` may have begun it in the background); why it cannot be made, or None."""
    if STAMP.exists():
        return None
    why = installs.synapse()
    _MADE_HERE.append(why is None)
    return why


def _signing_key() -> str:
    """A homeserver signing key as `--generate-keys` writes one (`ed25519 <key id> <seed in
    unpadded base64>`), made here: a start of Synapse's own less."""
    seed = base64.b64encode(secrets.token_bytes(32)).decode().rstrip("=")
    return f"ed25519 a_{secrets.token_hex(2)} {seed}\n"


def _config(root: Path, port: int) -> str:
    limit = "{per_second: 10000, burst_count: 10000}"
    return f"""
server_name: "localhost"
pid_file: {root}/homeserver.pid
listeners:
  - port: {port}
    bind_addresses: ['127.0.0.1']
    type: http
    tls: false
    x_forwarded: false
    resources:
      - names: [client]
        compress: false
database:
  name: sqlite3
  args:
    database: {root}/homeserver.db
media_store_path: {root}/media
signing_key_path: {root}/signing.key
registration_shared_secret: "{SHARED_SECRET}"
enable_registration: false
report_stats: false
macaroon_secret_key: "{secrets.token_hex(16)}"
form_secret: "{secrets.token_hex(16)}"
trusted_key_servers: []
suppress_key_server_warning: true
enable_metrics: false
bcrypt_rounds: 4
presence:
  enabled: false
rc_message: {limit}
rc_registration: {limit}
rc_login: {{address: {limit}, account: {limit}, failed_attempts: {limit}}}
rc_joins: {{local: {limit}, remote: {limit}}}
rc_invites: {{per_room: {limit}, per_user: {limit}, per_issuer: {limit}}}
rc_admin_redaction: {limit}
"""


def _config_port(config: str, port: int) -> str:
    """`config` with its listener on `port`."""
    return config.replace("  - port: 0\n", f"  - port: {port}\n", 1)


@dataclass
class Synapse:
    """One Synapse process (its directory, port and the process while it runs)."""

    root: Path
    port: int
    process: subprocess.Popen[bytes] | None = None
    starts: list[float] = field(default_factory=lambda: [])
    """Seconds each start took, until the client API answered."""

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    @property
    def python(self) -> str:
        return str(VENV / "bin" / "python")

    def start(self) -> None:
        """Start Synapse and wait until its client API answers. The first start binds port 0
        (a port of its own, read back from the kernel); a restart binds the same port again."""
        config = self.root / "homeserver.yaml"
        if not config.exists():
            config.write_text(_config(self.root, self.port), encoding="utf-8")
            (self.root / "signing.key").write_text(_signing_key(), encoding="utf-8")
        began = time.monotonic()
        log = open(self.root / "synapse.out", "ab")
        self.process = subprocess.Popen(
            [self.python, "-m", "synapse.app.homeserver", "-c", str(config)],
            cwd=self.root,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        log.close()
        if self.port == 0:
            try:
                self.port = listening_port(self.process, timeout=START_TIMEOUT)
            except AssertionError as exc:
                raise RuntimeError(f"{exc}; see {self.root / 'synapse.out'}") from None
            config.write_text(_config_port(config.read_text(encoding="utf-8"), self.port), encoding="utf-8")
        deadline = began + START_TIMEOUT
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise RuntimeError(f"synapse exited with {self.process.returncode}; see {self.root / 'synapse.out'}")
            try:
                if httpx.get(self.url + "/_matrix/client/versions", timeout=1, trust_env=False).status_code == 200:
                    self.starts.append(time.monotonic() - began)
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.1)
        raise RuntimeError(f"synapse did not answer within {START_TIMEOUT} s; see {self.root / 'synapse.out'}")

    def stop(self) -> None:
        process, self.process = self.process, None
        if process is None or process.poll() is not None:
            return
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(timeout=20)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(timeout=10)

    def restart(self) -> None:
        self.stop()
        self.start()

    def register(self, name: str) -> User:
        """A new user, by the admin API with the shared secret's HMAC; their access token."""
        name = f"{name}-{uuid.uuid4().hex[:8]}"
        password = secrets.token_hex(12)
        endpoint = self.url + "/_synapse/admin/v1/register"
        nonce = httpx.get(endpoint, timeout=10, trust_env=False).json()["nonce"]
        mac = hmac.new(
            SHARED_SECRET.encode(),
            b"\x00".join([nonce.encode(), name.encode(), password.encode(), b"notadmin"]),
            hashlib.sha1,
        ).hexdigest()
        answer = httpx.post(
            endpoint,
            json={"nonce": nonce, "username": name, "password": password, "admin": False, "mac": mac},
            timeout=30,
            trust_env=False,
        )
        answer.raise_for_status()
        data = answer.json()
        return User(self, data["user_id"], data["access_token"])


@dataclass
class User:
    """A Matrix account, and the few client calls a test makes as it."""

    server: Synapse
    id: str
    token: str

    def _call(
        self, method: str, path: str, body: dict[str, Any] | None = None, params: dict[str, str] | None = None
    ) -> dict[str, Any]:
        answer = httpx.request(
            method,
            self.server.url + "/_matrix/client/v3/" + path,
            json=body,
            params=params,
            headers={"Authorization": f"Bearer {self.token}"},
            timeout=30,
            trust_env=False,
        )
        answer.raise_for_status()
        data: dict[str, Any] = answer.json()
        return data

    def create_room(self, *invite: User) -> str:
        return str(
            self._call("POST", "createRoom", {"preset": "private_chat", "invite": [u.id for u in invite]})["room_id"]
        )

    def join(self, room: str) -> None:
        self._call("POST", f"join/{room}", {})

    def leave(self, room: str) -> None:
        self._call("POST", f"rooms/{room}/leave", {})

    def invite(self, room: str, user: User) -> None:
        self._call("POST", f"rooms/{room}/invite", {"user_id": user.id})

    def say(self, room: str, body: str) -> str:
        return self.send(room, {"msgtype": "m.text", "body": body})

    def send(self, room: str, content: dict[str, Any], kind: str = "m.room.message") -> str:
        txn = uuid.uuid4().hex
        return str(self._call("PUT", f"rooms/{room}/send/{kind}/{txn}", content)["event_id"])

    def messages(self, room: str) -> list[dict[str, Any]]:
        """Every m.room.message in `room`, oldest first."""
        data = self._call(
            "GET",
            f"rooms/{room}/messages",
            params={"dir": "b", "limit": "1000", "filter": '{"types":["m.room.message"]}'},
        )
        events: list[dict[str, Any]] = data["chunk"]
        return list(reversed(events))


class FirstSyncHeld:
    """A proxy before `server` that holds bingo's first `/sync` (the one without `since`)
    until the test sets `release` (`held` is set once it arrived); every other request passes
    as it is. Use as a context manager; its `url` is the bot's homeserver."""

    def __init__(self, server: Synapse) -> None:
        self.held = threading.Event()
        self.release = threading.Event()
        target, proxy = server.url, self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return None

            def _pass(self) -> None:
                if self.command == "GET" and self.path.split("?")[0].endswith("/sync") and "since=" not in self.path:
                    proxy.held.set()
                    proxy.release.wait(timeout=START_TIMEOUT)
                length = int(self.headers.get("Content-Length") or 0)
                answer = httpx.request(
                    self.command,
                    target + self.path,
                    content=self.rfile.read(length) if length else None,
                    headers={k: v for k, v in self.headers.items() if k.lower() in ("authorization", "content-type")},
                    timeout=60,
                    trust_env=False,
                )
                self.send_response(answer.status_code)
                self.send_header("Content-Type", answer.headers.get("Content-Type", "application/json"))
                self.send_header("Content-Length", str(len(answer.content)))
                self.end_headers()
                self.wfile.write(answer.content)

            do_GET = do_POST = do_PUT = _pass

        self._http = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._http.daemon_threads = True
        self.url = f"http://127.0.0.1:{self._http.server_address[1]}"

    def __enter__(self) -> FirstSyncHeld:
        threading.Thread(target=self._http.serve_forever, daemon=True).start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.release.set()
        self._http.shutdown()
        self._http.server_close()


def wait_for(predicate: Any, *, timeout: float = 30.0, every: float = 0.2, what: str = "the condition") -> Any:
    """Poll `predicate` until it answers something truthy; that answer. Fails past `timeout`."""
    deadline = time.monotonic() + timeout
    while True:
        value = predicate()
        if value:
            return value
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout} s waiting for {what}")
        time.sleep(every)


def _install_or_skip() -> None:
    """Make `.synapse-venv` if it is not there (its time in the summary); skip the test where
    it cannot be made, or fail it under CI."""
    began = time.monotonic()
    fresh = not STAMP.exists()
    why = _install()
    if why is not None:
        if os.environ.get("CI"):
            pytest.fail(f"the Matrix homeserver could not be installed, and CI must run these tests: {why}")
        pytest.skip(f"the Matrix homeserver could not be installed: {why}")
    if fresh and any(_MADE_HERE):  # (not a worker that waited for another's install)
        summary.record("matrix", "synapse installed into .synapse-venv (s)", time.monotonic() - began)


def _started(server: Synapse) -> None:
    summary.add("matrix", "homeservers started")
    summary.add("matrix", "synapse starts (restarts included)", len(server.starts))
    summary.add("matrix", "synapse start, seconds (all starts)", sum(server.starts))


_SHARED = "synapse-shared"
"""The directory, in the session's base temporary directory, of the homeserver xdist's
workers share: its files, `lock` and `server.json` (its pid and port)."""


def _shared_server(root: Path) -> Synapse | None:
    """The workers' homeserver, when one of them started it and it answers."""
    try:
        known = json.loads((root / "server.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    server = Synapse(root, int(known["port"]))
    try:
        if httpx.get(server.url + "/_matrix/client/versions", timeout=10, trust_env=False).status_code == 200:
            return server
    except httpx.TransportError:
        pass
    return None


@pytest.fixture(scope="session")
def homeserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Synapse]:
    """One Synapse for the whole test session (installed on first use): under xdist, one for
    all the workers, started by the first that needs it and stopped by the controller at the
    session's end (`stop_shared`); each test registers its own users and rooms, so tests share
    nothing but the process. A test that stops its homeserver has one of its own
    (`own_homeserver`). Its figures go in the run's closing summary (tests/support/summary.py)."""
    _install_or_skip()
    if os.environ.get("PYTEST_XDIST_WORKER") is None:
        with _alone(tmp_path_factory) as server:
            yield server
        return
    root = tmp_path_factory.getbasetemp().parent / _SHARED  # the controller's: every worker's
    root.mkdir(exist_ok=True)
    with (root / "lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        found = _shared_server(root)
        if found is None:
            found = Synapse(root, 0)
            found.start()
            assert found.process is not None
            (root / "server.json").write_text(
                json.dumps({"pid": found.process.pid, "port": found.port}), encoding="utf-8"
            )
            _started(found)
    yield found
    process, found.process = found.process, None
    with warnings.catch_warnings():
        # The server outlives this worker (the controller stops it): its Popen is let go
        # without the warning of a child still running.
        warnings.simplefilter("ignore", ResourceWarning)
        del process


def stop_shared(basetemp: Path) -> None:
    """Stop the homeserver xdist's workers shared (the controller, at the session's end),
    if one was started: SIGTERM its group, then SIGKILL, each wait bounded."""
    try:
        pid = int(json.loads((basetemp / _SHARED / "server.json").read_text(encoding="utf-8"))["pid"])
    except (OSError, ValueError, KeyError):
        return
    for sig, wait in ((signal.SIGTERM, 20.0), (signal.SIGKILL, 10.0)):
        try:
            os.killpg(pid, sig)
        except ProcessLookupError:
            return
        deadline = time.monotonic() + wait
        while procfs.alive(pid) and time.monotonic() < deadline:
            time.sleep(0.05)
        if not procfs.alive(pid):
            return


@pytest.fixture
def own_homeserver(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Synapse]:
    """A Synapse of the test's own, for a test that stops and restarts it (the session's is
    shared)."""
    _install_or_skip()
    with _alone(tmp_path_factory) as server:
        yield server


@contextlib.contextmanager
def _alone(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Synapse]:
    """A Synapse started for one holder, stopped when it lets go (its figures recorded)."""
    server = Synapse(tmp_path_factory.mktemp("synapse"), 0)
    server.start()
    try:
        yield server
    finally:
        server.stop()
        _started(server)
