"""The sandbox's attacked side, for the zoo's hostile processes (tests/plugins/zoo/_breakout.py):
the test's own servers, files and process that a confined process must not reach, and the
checks that take their evidence from them (INTERFACE.md §9; issue 24).

`Targets` stands them up: a planted `$HOME/.ssh/id_rsa`, a file outside the project and each
protected path inside it, a TCP server, a UDP server and a Unix socket outside the project, a
process of the test's own (`sleep`) with a marker in its environment, and two HTTP servers on
127.0.0.1 (one the test grants by the name `localhost`, one it never grants, reached by its
address). Every server records what reached it; nothing here sleeps to wait.
"""

from __future__ import annotations

import http.server
import json
import os
import socket
import subprocess
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from tests.e2e._bingo import TEST_PLUGINS, Sandbox

BREAKOUT = TEST_PLUGINS / "zoo" / "_breakout.py"
SECRET = "-----BEGIN OPENSSH PRIVATE KEY----- planted-by-the-test"
VICTIM_MARKER = "victim-environ-marker-6c1f"
SECRET_ENV = {
    "ANTHROPIC_API_KEY": "sk-planted-anthropic",
    "OPENAI_API_KEY": "sk-planted-openai",
    "GH_TOKEN": "planted-gh-token",
    "AWS_SECRET_ACCESS_KEY": "planted-aws",
    "SSH_AUTH_SOCK": "/tmp/planted-agent.sock",
    "DB_PASSWORD": "planted-password",
    "BINGO_MATRIX_TOKEN": "planted-matrix",
}
"""Secrets put in bingo's own environment: none may reach a confined process."""
PROTECTED = (".bingo/breakout", ".mcp.json", ".git/hooks/pre-commit", ".git/config", ".claude/skills/x/SKILL.md")
"""Inside the project, never written by a confined process (§9's protected paths)."""


class _Counted(http.server.BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        self.server.paths.append(self.path)  # type: ignore[attr-defined]
        body = b"reached"
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        pass


class _HTTP(http.server.ThreadingHTTPServer):
    paths: list[str]


@dataclass
class Targets:
    """What the hostile process is pointed at, and what reached it."""

    box: Sandbox
    outside: Path
    tcp_hits: list[bytes] = field(default_factory=lambda: [])
    unix_hits: list[bytes] = field(default_factory=lambda: [])
    udp: socket.socket | None = None
    victim: subprocess.Popen[bytes] | None = None
    granted: _HTTP | None = None
    ungranted: _HTTP | None = None
    before: dict[str, bytes | None] = field(default_factory=lambda: {})
    ports: dict[str, int] = field(default_factory=lambda: {})

    def write(self, path: Path) -> Path:
        """The targets file for a hostile process (readable by it: it names no secret)."""
        targets = {
            "secret": str(self.box.home / ".ssh" / "id_rsa"),
            "writes": [
                str(self.outside / "written"),
                str(self.box.home / ".bashrc"),
                *(str(self.box.project / p) for p in PROTECTED),
            ],
            "tcp": self.ports["tcp"],
            "udp": self.ports["udp"],
            "unix": str(self.outside / "unix.sock"),
            "pid": self.victim.pid if self.victim is not None else 0,
            "granted": f"http://localhost:{self.ports['granted']}/granted",
            "ungranted": f"http://127.0.0.1:{self.ports['ungranted']}/ungranted",
        }
        path.write_text(json.dumps(targets), encoding="utf-8")
        return path

    # --- the evidence, from the attacked side ------------------------------------------

    def udp_hits(self) -> list[bytes]:
        assert self.udp is not None
        got: list[bytes] = []
        while True:
            try:
                got.append(self.udp.recv(4096))
            except BlockingIOError:
                return got

    def changed(self) -> list[str]:
        """The targets written to: the file outside, ~/.bashrc, each protected path."""
        return [name for name, content in self.before.items() if _content(Path(name)) != content]

    def leaked(self, *texts: str) -> list[str]:
        """Every file under the project holding one of `texts` (what the process could write)."""
        found: list[str] = []
        for path in self.box.project.rglob("*"):
            if path.is_file() and ".git" not in path.parts:
                data = path.read_text(encoding="utf-8", errors="replace")
                found += [f"{path}: {text}" for text in texts if text in data]
        return found

    def victim_alive(self) -> bool:
        return self.victim is not None and self.victim.poll() is None


def _content(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def _accepting(server: socket.socket, hits: list[bytes]) -> None:
    while True:
        try:
            conn, _ = server.accept()
        except OSError:
            return
        with conn:
            conn.settimeout(5)
            try:
                hits.append(conn.recv(100) or b"(connected)")
            except OSError:
                hits.append(b"(connected)")


@contextmanager
def targets(box: Sandbox) -> Iterator[Targets]:
    """Stand up everything a hostile process is pointed at; tear it all down after."""
    outside = box.root / "outside"
    outside.mkdir()
    ssh = box.home / ".ssh"
    ssh.mkdir(exist_ok=True)
    (ssh / "id_rsa").write_text(SECRET, encoding="utf-8")
    (box.home / ".bashrc").write_text("# the person's\n", encoding="utf-8")
    (box.project / ".bingo").mkdir(exist_ok=True)
    # Each protected path exists, as in a person's project: a missing .mcp.json is left
    # creatable inside (ADR-0030, 2026-12-04; tested in tests/unit/sandbox/test_protected.py).
    if not (box.project / ".mcp.json").exists():
        (box.project / ".mcp.json").write_text('{"mcpServers": {}}\n', encoding="utf-8")
    (box.project / ".git" / "hooks").mkdir(parents=True, exist_ok=True)
    (box.project / ".git" / "config").write_text("[core]\n", encoding="utf-8")
    (box.project / ".claude" / "skills" / "x").mkdir(parents=True, exist_ok=True)
    (box.project / "out").mkdir(exist_ok=True)  # where the hostile process writes its report
    found = Targets(box=box, outside=outside)
    tcp = socket.create_server(("127.0.0.1", 0))
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix.bind(str(outside / "unix.sock"))
    unix.listen(8)
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    udp.setblocking(False)
    found.udp = udp
    found.granted = _HTTP(("127.0.0.1", 0), _Counted)
    found.ungranted = _HTTP(("127.0.0.1", 0), _Counted)
    found.granted.paths, found.ungranted.paths = [], []
    found.ports = {
        "tcp": tcp.getsockname()[1],
        "udp": udp.getsockname()[1],
        "granted": found.granted.server_address[1],
        "ungranted": found.ungranted.server_address[1],
    }
    threads = [
        threading.Thread(target=_accepting, args=(tcp, found.tcp_hits), daemon=True),
        threading.Thread(target=_accepting, args=(unix, found.unix_hits), daemon=True),
        threading.Thread(target=found.granted.serve_forever, daemon=True),
        threading.Thread(target=found.ungranted.serve_forever, daemon=True),
    ]
    for thread in threads:
        thread.start()
    found.victim = subprocess.Popen(["sleep", "600"], env={**os.environ, "VICTIM_MARKER": VICTIM_MARKER})
    found.before = {
        str(p): _content(p) for p in (outside / "written", box.home / ".bashrc", *(box.project / p for p in PROTECTED))
    }
    try:
        yield found
    finally:
        found.victim.kill()
        found.victim.wait(timeout=10)
        for server in (found.granted, found.ungranted):
            server.shutdown()
            server.server_close()
        tcp.close()
        unix.close()
        udp.close()


def attempted(box: Sandbox, name: str) -> dict[str, Any]:
    """What the hostile process saw (its own report): for the failure message only."""
    path = box.project / "out" / name
    return json.loads(path.read_text(encoding="utf-8")) if path.exists() else {}


def held(found: Targets, report: dict[str, Any]) -> list[str]:
    """Every promise of §9 the attacked side shows broken (empty: all held)."""
    broken: list[str] = []
    if found.leaked(SECRET, VICTIM_MARKER):
        broken.append(f"a secret reached the project: {found.leaked(SECRET, VICTIM_MARKER)}")
    if found.changed():
        broken.append(f"written: {found.changed()}")
    if found.tcp_hits:
        broken.append(f"the TCP server was contacted: {found.tcp_hits}")
    if found.udp_hits():
        broken.append("the UDP server got a datagram")
    if found.unix_hits:
        broken.append(f"the Unix socket was contacted: {found.unix_hits}")
    if not found.victim_alive():
        broken.append("the test's own process was killed")
    assert found.ungranted is not None
    if found.ungranted.paths:
        broken.append(f"the ungranted server was reached: {found.ungranted.paths}")
    env = report.get("env", {})
    broken += [f"{name} reached the process" for name in SECRET_ENV if name in env]
    if broken:
        broken.append(
            f"(the process's own report: {json.dumps({k: v for k, v in report.items() if k != 'env'})[:2000]})"
        )
    return broken
