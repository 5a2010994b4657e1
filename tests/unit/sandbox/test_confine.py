"""The sandbox's mechanism, from the attacked side (issue 24, ADR-0030): real processes are
spawned confined through `bingo.sandbox.spawn` (the janitor's path every plugin and `bash`
command takes) and what they try is judged by what it left: the planted file unread, the
file not written, the server never contacted, the process still alive.

Every network promise is tested twice: in the run's network namespace, and on the degraded
path (no user namespaces, forced by `_run._NO_USERNS`, the tests' private knob)."""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import socket
import subprocess
import sys
import textwrap
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from bingo.sandbox import Policy, _run, probe, proxy_listener, spawn
from bingo.sandbox.janitor import proc as procfs
from tests.unit.sandbox._nobody import as_nobody

WAIT = 20.0
"""Seconds a confined process has to finish (bounded, never a timing assertion)."""

SUPPORT = probe()
pytestmark = pytest.mark.skipif(
    not SUPPORT.confines, reason="this kernel cannot confine: " + "; ".join(SUPPORT.missing)
)
NEEDS_NETNS = pytest.mark.skipif(not SUPPORT.userns, reason="no user namespaces here")


@dataclass
class World:
    """A home with planted secrets, a project in it, and the policy a `bash` call would get."""

    home: Path
    project: Path
    outside: Path
    policy: Policy


@pytest.fixture
def world(tmp_path: Path) -> World:
    home = (tmp_path / "home").resolve()
    (home / ".ssh").mkdir(parents=True)
    (home / ".ssh" / "id_rsa").write_text("PLANTED-PRIVATE-KEY\n")
    (home / ".bashrc").write_text("# the person's own\n")
    project = home / "project"
    (project / ".git" / "hooks").mkdir(parents=True)
    (project / ".git" / "config").write_text("[core]\n")
    (project / ".bingo").mkdir()
    (project / ".bingo" / "settings.json").write_text("{}\n")
    (project / "src").mkdir()
    (project / "notes.txt").write_text("notes\n")
    (project / ".mcp.json").write_text("{}\n")
    outside = (tmp_path / "outside").resolve()
    outside.mkdir()
    policy = Policy(
        denied=(home / ".ssh",),
        writable=(project,),
        protected=(project / ".git" / "hooks", project / ".git" / "config", project / ".bingo", project / ".mcp.json"),
        proxy=None,
    )
    return World(home, project, outside, policy)


@pytest.fixture(params=["netns", "degraded"])
def network(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Which network path the test's confined processes take."""
    if request.param == "netns" and not SUPPORT.userns:
        pytest.skip("no user namespaces here")
    if request.param == "degraded":
        monkeypatch.setattr(_run, "_NO_USERNS", True)
    return str(request.param)


async def _run_confined(
    argv: list[str], policy: Policy, cwd: Path, env: dict[str, str] | None = None, *, warden: bool = True
) -> tuple[str, int | None]:
    spawned = await spawn(
        argv[0],
        argv,
        env if env is not None else dict(os.environ),
        cwd,
        grace=1.0,
        policy=policy,
        merged=True,
        warden=warden,
    )

    def read() -> bytes:
        chunks: list[bytes] = []
        while chunk := os.read(spawned.stdout, 65536):
            chunks.append(chunk)
        os.close(spawned.stdout)
        return b"".join(chunks)

    async with asyncio.timeout(WAIT):
        out = await asyncio.to_thread(read)
        code = await spawned.ended
    return out.decode("utf-8", "replace"), code


def confined(argv: list[str], policy: Policy, cwd: Path, env: dict[str, str] | None = None) -> tuple[str, int | None]:
    """Run `argv` confined by `policy`; its merged output and exit code."""
    return asyncio.run(_run_confined(argv, policy, cwd, env))


def bash(command: str, world: World, policy: Policy | None = None) -> str:
    out, _code = confined(["/bin/bash", "-c", command], policy or world.policy, world.project)
    return out


def python(script: str, world: World, policy: Policy | None = None) -> str:
    out, _code = confined(
        [sys.executable, "-I", "-S", "-c", textwrap.dedent(script)], policy or world.policy, world.project
    )
    return out


# --- files ------------------------------------------------------------------------------


def test_a_planted_ssh_key_is_unreadable_and_its_content_absent(world: World) -> None:
    key = world.home / ".ssh" / "id_rsa"
    out = bash(f"cat {key}; cp {key} copy; base64 {key}; grep -r PLANTED {world.home}/.ssh; echo done", world)
    assert "PLANTED" not in out
    assert "UExBTlRFRC" not in out  # base64 of it
    assert "Permission denied" in out
    assert out.rstrip().endswith("done")
    assert not (world.project / "copy").exists()


def test_reading_everywhere_else_works(world: World) -> None:
    out = bash(f"cat {world.home}/.bashrc {world.project}/notes.txt; ls {world.home}/.ssh", world)
    assert "# the person's own" in out
    assert "notes" in out
    assert "id_rsa" in out  # names are listable, contents are not (ADR-0030)


def test_writes_outside_the_writable_paths_are_refused(world: World) -> None:
    in_tmp = Path("/tmp") / f"bingo-sandbox-test-{os.getpid()}-{id(world)}"
    try:
        out = bash(
            f"echo evil >> {world.home}/.bashrc; echo evil > {world.outside}/planted; mkdir {world.home}/newdir; "
            f"rm -f {world.home}/.bashrc; echo evil > {in_tmp}; echo done",
            world,
        )
        assert out.rstrip().endswith("done")
        assert (world.home / ".bashrc").read_text() == "# the person's own\n"
        assert not (world.outside / "planted").exists()
        assert not (world.home / "newdir").exists()
        assert not in_tmp.exists()
    finally:
        in_tmp.unlink(missing_ok=True)


def test_writes_to_each_protected_path_are_refused(world: World) -> None:
    project = world.project
    out = bash(
        "echo evil >> .git/config; echo evil > .git/hooks/pre-commit; echo '{}' > .mcp.json; "
        "echo evil > .bingo/settings.json; rm -rf .bingo; mv .git/config gone; ln -s /tmp .git/hooks/x; echo done",
        world,
    )
    assert out.rstrip().endswith("done")
    assert (project / ".git" / "config").read_text() == "[core]\n"
    assert not (project / ".git" / "hooks" / "pre-commit").exists()
    assert not (project / ".git" / "hooks" / "x").exists()
    assert (project / ".mcp.json").read_text() == "{}\n"
    assert (project / ".bingo" / "settings.json").read_text() == "{}\n"
    # `mv .git/config gone` in the process's own mount namespace copies it across the mount
    # before failing to remove it (a copy; the original is in place, unchanged, above).
    assert not (project / "gone").exists() or (project / "gone").read_text() == "[core]\n"


def test_writes_inside_the_project_work(world: World) -> None:
    out = bash("echo new > src/made.py && echo more >> notes.txt && mkdir -p src/a/b && echo ok", world)
    assert out.strip() == "ok"
    assert (world.project / "src" / "made.py").read_text() == "new\n"
    assert (world.project / "notes.txt").read_text() == "notes\nmore\n"


_MOVES = """
    import os
    os.makedirs("src/cache/tmp", exist_ok=True)
    os.makedirs("src/cache/archive", exist_ok=True)
    with open("src/cache/tmp/wheel", "w") as file:
        file.write("unpacked")
    os.rename("src/cache/tmp/wheel", "src/cache/archive/wheel")  # what uv's and pip's caches do
    os.rename("src/cache/tmp", "src/tmp")
    for target in (".git/hooks/wheel", ".bingo/wheel"):
        with open("src/cache/archive/other", "w") as file:
            file.write("evil")
        try:
            os.rename("src/cache/archive/other", target)
            print("MOVED into", target)
        except OSError as exc:
            print("refused", target, exc.errno)
    print("done")
"""


def test_a_file_moves_between_directories_it_may_write_and_never_into_a_protected_one(
    world: World, network: str
) -> None:
    # Landlock refuses every rename across directories in a layer that does not grant
    # REFER, even one about TCP alone: the proxy port's layer must grant it (uvx's cache).
    policy = world.policy
    if network == "netns":
        policy = Policy(policy.denied, policy.writable, policy.protected, ("127.0.0.1", 9))
    out = python(_MOVES, world, policy)
    assert out.rstrip().endswith("done"), out
    assert (world.project / "src" / "cache" / "archive" / "wheel").read_text() == "unpacked"
    assert (world.project / "src" / "tmp").is_dir()
    assert "MOVED" not in out, out
    assert not (world.project / ".git" / "hooks" / "wheel").exists()
    assert not (world.project / ".bingo" / "wheel").exists()


def test_each_process_has_a_tmpdir_of_its_own_removed_when_it_ends(world: World) -> None:
    first = bash('echo $TMPDIR; stat -c %a "$TMPDIR"; echo x > "$TMPDIR/f" && cat "$TMPDIR/f"', world).split()
    second = bash("echo $TMPDIR", world).split()
    tmpdir, mode, content = first
    assert (mode, content) == ("700", "x")
    assert second[0] != tmpdir
    # Removed when the janitor reaped its warden, before it read the next spawn.
    assert not Path(tmpdir).exists()


def test_a_process_confined_ahead_has_its_own_tmpdir_removed_when_it_ends(world: World) -> None:
    # The bash tool's commands: the first forked at its call, the next ones confined ahead.
    from bingo.sandbox.janitor import JanitorClient
    from bingo.sandbox.janitor._client import _key  # pyright: ignore[reportPrivateUsage]

    command = ["/bin/bash", "-c", 'echo $TMPDIR; stat -c %a "$TMPDIR"; echo x > "$TMPDIR/f" && cat "$TMPDIR/f"']

    async def go() -> list[list[str]]:
        seen: list[list[str]] = []
        client = JanitorClient.running()
        for index in range(3):
            if index:
                netns = client.netns and not _run._NO_USERNS  # pyright: ignore[reportPrivateUsage]
                async with asyncio.timeout(WAIT):
                    while _key(world.policy, netns) not in client.parked:
                        await asyncio.sleep(0.01)
            out, _code = await _run_confined(command, world.policy, world.project, warden=False)
            seen.append(out.split())
        return seen

    seen = asyncio.run(go())
    tmpdirs = [each[0] for each in seen]
    assert all(each[1:] == ["700", "x"] for each in seen), seen
    assert len(set(tmpdirs)) == 3
    assert not any(Path(tmpdir).exists() for tmpdir in tmpdirs[:2])


# --- other processes ------------------------------------------------------------------------


def test_no_signal_reaches_an_outside_process_and_its_environ_is_unreadable(world: World) -> None:
    env = dict(os.environ, BINGO_TEST_MARKER="OUTSIDE-SECRET-VALUE")
    victim = subprocess.Popen(["sleep", "60"], env=env)
    try:
        out = bash(
            f"kill -TERM {victim.pid}; kill -KILL {victim.pid}; cat /proc/{victim.pid}/environ; "
            f"cat /proc/{os.getpid()}/environ; tr '\\0' '\\n' < /proc/{victim.pid}/environ; echo done",
            world,
        )
        assert out.rstrip().endswith("done")
        assert victim.poll() is None  # still alive
        assert procfs.alive(victim.pid)
        assert "OUTSIDE-SECRET-VALUE" not in out
        assert "PATH=" not in out
    finally:
        victim.kill()
        victim.wait()


def test_the_persons_terminal_is_neither_read_nor_written(world: World) -> None:
    master, follower = os.openpty()
    try:
        terminal = os.ttyname(follower)
        out = python(
            f"""
            import os
            for flags in (os.O_RDONLY | os.O_NONBLOCK, os.O_WRONLY | os.O_NONBLOCK):
                try:
                    fd = os.open({terminal!r}, flags)
                    if flags & os.O_WRONLY:
                        os.write(fd, b"INJECTED")
                    print("OPENED")
                except OSError as exc:
                    print("refused:", exc)
            """,
            world,
        )
        assert "OPENED" not in out and out.count("refused") == 2, out
        os.set_blocking(master, False)
        with pytest.raises(BlockingIOError):
            os.read(master, 100)  # nothing was written to it
    finally:
        os.close(master)
        os.close(follower)


def test_a_process_cannot_make_namespaces_mount_or_keep_capabilities(world: World, network: str) -> None:
    # bash is what was exec'ed (as root here, in the namespace or not): it holds no
    # capability, and no_new_privs is set. The bounding set is emptied where a process may
    # be the machine's root (no namespace of the run's).
    if network == "netns":
        listener, why = asyncio.run(proxy_listener())
        assert listener is not None, why
        listener.close()
    out = bash(
        "grep -E '^Cap(Inh|Eff|Prm|Bnd|Amb)' /proc/self/status; grep NoNewPrivs /proc/self/status; "
        "unshare -r true && echo UNSHARED; unshare -n true && echo UNSHARED; "
        "mount -t tmpfs none src && echo MOUNTED; echo done",
        world,
    )
    assert out.rstrip().endswith("done")
    assert "UNSHARED" not in out and "MOUNTED" not in out
    caps = dict(line.split(":\t") for line in out.splitlines() if line.startswith("Cap"))
    assert set(caps) == {"CapInh", "CapEff", "CapPrm", "CapBnd", "CapAmb"}
    for name in ("CapInh", "CapEff", "CapPrm", "CapAmb"):
        assert caps[name] == "0000000000000000", (name, caps)
    if network == "degraded":
        assert caps["CapBnd"] == "0000000000000000"
    assert "NoNewPrivs:\t1" in out


# --- the network --------------------------------------------------------------------------


@contextlib.contextmanager
def servers(tmp: Path) -> Iterator[tuple[socket.socket, socket.socket, socket.socket, socket.socket, str]]:
    """Outside servers that must never be contacted: TCP and UDP on the host's loopback, a
    unix socket outside the writable paths, and an abstract unix socket."""
    tcp = socket.create_server(("127.0.0.1", 0))
    udp = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    udp.bind(("127.0.0.1", 0))
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix.bind(str(tmp / "outside.sock"))
    unix.listen(8)
    name = f"bingo-test-{os.getpid()}-{id(tmp)}"
    abstract = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    abstract.bind("\0" + name)
    abstract.listen(8)
    for server in (tcp, udp, unix, abstract):
        server.setblocking(False)
    try:
        yield tcp, udp, unix, abstract, name
    finally:
        for server in (tcp, udp, unix, abstract):
            server.close()


def _never_contacted(server: socket.socket) -> bool:
    """Whether `server` saw nothing: the confined process has exited, so a connection or a
    datagram it made would be queued by now."""
    try:
        if server.type == socket.SOCK_DGRAM:
            server.recv(1024)
        else:
            server.accept()[0].close()
    except BlockingIOError:
        return True
    return False


_ATTACKS = """
    import socket, sys
    tcp, udp, unix, abstract = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    def attempt(what, make, target):
        try:
            s = make()
            s.settimeout(3)
            if s.type == socket.SOCK_DGRAM:
                s.sendto(b"exfiltrated", target)
            else:
                s.connect(target)
                s.sendall(b"exfiltrated")
            print(what, "REACHED")
        except OSError as exc:
            print(what, "refused:", exc)
    host, port = tcp.split(":")
    attempt("tcp", lambda: socket.socket(socket.AF_INET, socket.SOCK_STREAM), (host, int(port)))
    attempt("tcp6", lambda: socket.socket(socket.AF_INET6, socket.SOCK_STREAM), ("::ffff:127.0.0.1", int(port)))
    attempt("udp", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM), ("127.0.0.1", udp))
    attempt("dns", lambda: socket.socket(socket.AF_INET, socket.SOCK_DGRAM), ("1.1.1.1", 53))
    def fast_open():
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.sendto(b"exfiltrated", socket.MSG_FASTOPEN, (host, int(port)))
        print("tfo REACHED")
    try:
        fast_open()
    except OSError as exc:
        print("tfo refused:", exc)
    attempt("unix", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM), unix)
    attempt("abstract", lambda: socket.socket(socket.AF_UNIX, socket.SOCK_STREAM), "\\0" + abstract)
    for family, kind in ((socket.AF_INET, socket.SOCK_RAW), (socket.AF_PACKET, socket.SOCK_RAW), (socket.AF_NETLINK, socket.SOCK_RAW)):
        try:
            socket.socket(family, kind, 1 if family == socket.AF_INET else 0)
            print("raw", family, "MADE")
        except OSError as exc:
            print("raw", family, "refused:", exc)
    print("done")
"""


def test_outside_servers_are_never_contacted(world: World, network: str, tmp_path: Path) -> None:
    with servers(tmp_path) as (tcp, udp, unix, abstract, name):
        tcp_at = "127.0.0.1:%d" % tcp.getsockname()[1]
        argv = [
            sys.executable,
            "-I",
            "-S",
            "-c",
            textwrap.dedent(_ATTACKS),
            tcp_at,
            str(udp.getsockname()[1]),
            str(tmp_path / "outside.sock"),
            name,
        ]
        policy = world.policy
        if network == "netns":
            listener, why = asyncio.run(proxy_listener())
            assert listener is not None, why
            policy = Policy(policy.denied, policy.writable, policy.protected, ("127.0.0.1", listener.getsockname()[1]))
            listener.close()
        out, _code = confined(argv, policy, world.project)
        assert out.rstrip().endswith("done"), out
        assert "REACHED" not in out and "MADE" not in out, out
        for server in (tcp, udp, unix, abstract):
            assert _never_contacted(server), (server, out)


_TO_PROXY = """
    import socket, sys
    port = int(sys.argv[1])
    s = socket.create_connection(("127.0.0.1", port), timeout=5)
    s.sendall(b"CONNECT pypi.org:443 HTTP/1.1\\r\\n\\r\\n")
    print("sent", flush=True)
    print("answer", s.recv(100).decode(), flush=True)
    for host in ("127.0.0.2", "10.0.0.1"):
        try:
            socket.create_connection((host, port), timeout=2)
            print(host, "REACHED")
        except OSError as exc:
            print(host, "refused:", exc)
    # Another listener on the same loopback (another process's proxy, a server): refused too.
    other = socket.create_server(("127.0.0.1", 0))
    try:
        socket.create_connection(other.getsockname(), timeout=2)
        print("other port REACHED")
    except OSError as exc:
        print("other port refused:", exc)
"""


async def _through_the_proxy(world: World, listener: socket.socket) -> tuple[str, bytes]:
    port = listener.getsockname()[1]
    policy = Policy(world.policy.denied, world.policy.writable, world.policy.protected, ("127.0.0.1", port))
    listener.setblocking(False)
    loop = asyncio.get_running_loop()
    argv = [sys.executable, "-I", "-S", "-c", textwrap.dedent(_TO_PROXY), str(port)]
    run = asyncio.create_task(_run_confined(argv, policy, world.project))
    async with asyncio.timeout(WAIT):
        conn, _address = await loop.sock_accept(listener)
        with conn:
            request = await loop.sock_recv(conn, 100)
            await loop.sock_sendall(conn, b"HTTP/1.1 200 OK\r\n\r\n")
        out, _code = await run
    return out, request


@NEEDS_NETNS
def test_the_proxy_listener_is_reachable_from_inside_and_nothing_else(world: World, tmp_path: Path) -> None:
    async def go() -> tuple[str, bytes, bool]:
        listener, why = await proxy_listener()
        assert listener is not None, why
        with listener, servers(tmp_path) as (tcp, *_rest):
            out, request = await _through_the_proxy(world, listener)
            return out, request, _never_contacted(tcp)

    out, request, quiet = asyncio.run(go())
    assert request == b"CONNECT pypi.org:443 HTTP/1.1\r\n\r\n"
    assert "answer HTTP/1.1 200 OK" in out
    assert "REACHED" not in out
    assert quiet


def test_the_degraded_path_reaches_the_proxy_port_alone(
    world: World, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_run, "_NO_USERNS", True)
    listener, why = asyncio.run(proxy_listener())
    assert listener is None and "refused" in why
    if SUPPORT.landlock < 4:
        pytest.skip("Landlock ABI < 4 has no TCP rules")

    async def go() -> tuple[str, bytes]:
        with socket.create_server(("127.0.0.1", 0)) as host_proxy:
            return await _through_the_proxy(world, host_proxy)

    out, request = asyncio.run(go())
    assert request.startswith(b"CONNECT pypi.org:443")
    assert "answer HTTP/1.1 200 OK" in out


def test_no_network_at_all_without_a_proxy(world: World, network: str, tmp_path: Path) -> None:
    # Policy.proxy None: not even the run's listener is reachable.
    if network == "netns":
        listener, why = asyncio.run(proxy_listener())
        assert listener is not None, why
        port = listener.getsockname()[1]
    else:
        listener = socket.create_server(("127.0.0.1", 0))
        port = listener.getsockname()[1]
    with listener:
        listener.setblocking(False)
        out = python(
            f"""
            import socket
            try:
                socket.create_connection(("127.0.0.1", {port}), timeout=3)
                print("REACHED")
            except OSError as exc:
                print("refused:", exc)
            """,
            world,
        )
        assert "refused" in out and "REACHED" not in out
        assert _never_contacted(listener)


# --- what it says ----------------------------------------------------------------------------


def test_probe_names_the_mechanism_and_what_is_weaker_in_words() -> None:
    assert SUPPORT.confines
    assert SUPPORT.mechanism.startswith(f"Landlock ABI {SUPPORT.landlock} + seccomp")
    from bingo.sandbox._support import weaknesses

    degraded = weaknesses(4, userns=False)
    assert any("proxy's port" in line and "any address" in line for line in degraded)
    old = weaknesses(3, userns=False)
    assert any("directly" in line for line in old)
    assert any("signal" in line for line in old)


def test_a_plugin_that_cannot_be_confined_as_asked_is_not_started(world: World) -> None:
    # Without the janitor (elsewhere than Linux) a policy cannot be applied: the spawn
    # fails with the reason, and the command never runs unconfined.
    from bingo.bridge.process import PluginLog, PluginProcess

    marker = world.outside / "ran"

    async def go() -> str:
        try:
            await PluginProcess.spawn(
                ["/bin/sh", "-c", f"touch {marker}"],
                env=dict(os.environ),
                cwd=world.project,
                log=PluginLog(world.outside / "log"),
                janitor=False,
                policy=world.policy,
            )
        except OSError as exc:
            return str(exc)
        return "started"

    assert "only through the janitor" in asyncio.run(go())
    assert not marker.exists()


def test_the_ssh_key_is_unreadable_from_a_confined_bash_tool(world: World) -> None:
    from bingo.kernel.interfaces import ToolCall
    from bingo.tools import BashTool
    from bingo.wire import TextPart

    async def go() -> str:
        call = ToolCall(
            call_id="c1",
            input={"command": f"cat {world.home}/.ssh/id_rsa; echo x > ~/planted"},
            cwd=str(world.project),
            session="s",
            turn=1,
        )
        env = dict(os.environ, HOME=str(world.home))
        output = await BashTool(policy=world.policy, env=env).call(call)
        (part,) = output.parts
        assert isinstance(part, TextPart)
        return part.text

    text = asyncio.run(go())
    assert "PLANTED" not in text
    assert "Permission denied" in text
    assert not (world.home / "planted").exists()


def test_killing_the_group_ends_a_confined_process(world: World) -> None:
    async def go() -> tuple[int, int | None]:
        spawned = await spawn(
            "/bin/bash",
            ["/bin/bash", "-c", "sleep 60 & echo $!; wait"],
            dict(os.environ),
            world.project,
            grace=0.5,
            policy=world.policy,
            merged=True,
        )
        line = await asyncio.to_thread(os.read, spawned.stdout, 100)
        os.killpg(spawned.pid, signal.SIGTERM)
        async with asyncio.timeout(WAIT):
            code = await spawned.ended
        os.close(spawned.stdout)
        return int(line.split()[0]), code

    child, _code = asyncio.run(go())
    assert not procfs.alive(child)


# --- unprivileged, as on a person's laptop -----------------------------------------------

_AS_NOBODY = """
import asyncio, os, socket, sys, tempfile, pathlib
from bingo.sandbox import Policy, _run, proxy_listener, spawn

async def main(degraded):
    _run._NO_USERNS = degraded
    home = pathlib.Path(tempfile.mkdtemp()).resolve()
    (home / ".ssh").mkdir()
    (home / ".ssh" / "id_rsa").write_text("PLANTED-PRIVATE-KEY")
    project = home / "project"
    (project / ".git").mkdir(parents=True)
    (project / ".git" / "config").write_text("[core]")
    (project / "src").mkdir()
    listener, _why = await proxy_listener()
    if listener is None:
        listener = socket.create_server(("127.0.0.1", 0))
    listener.setblocking(False)
    port = listener.getsockname()[1]
    policy = Policy((home / ".ssh",), (project,), (project / ".git" / "config",), ("127.0.0.1", port))
    command = (
        f"cat {home}/.ssh/id_rsa; echo evil >> .git/config; echo ok > src/made; echo evil > {home}/planted; "
        f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo proxy-reached"
    )
    spawned = await spawn("/bin/bash", ["/bin/bash", "-c", command], {"PATH": "/usr/bin:/bin"}, project, grace=1.0, policy=policy, merged=True)
    out = b""
    while chunk := os.read(spawned.stdout, 65536):
        out += chunk
    await spawned.ended
    try:
        listener.accept()[0].close()
        seen = "proxy-saw-it"
    except BlockingIOError:
        seen = "proxy-saw-nothing"
    print(os.getuid(), home, seen, "\\n" + out.decode())

asyncio.run(main(sys.argv[1] == "degraded"))
"""


@pytest.mark.parametrize("path", ["netns", "degraded"])
def test_an_unprivileged_user_is_confined_the_same(path: str) -> None:
    if path == "netns" and not SUPPORT.userns:
        pytest.skip("no user namespaces here")
    command = as_nobody()
    if command is None:
        pytest.skip("needs root, setpriv and a Python that uid 65534 can run with bingo")
    done = subprocess.run([*command, "-c", _AS_NOBODY, path], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    first, _newline, out = done.stdout.partition("\n")
    uid, home, seen = first.split()
    assert uid == "65534"
    assert "PLANTED" not in out
    assert (Path(home) / "project" / ".git" / "config").read_text() == "[core]"
    assert (Path(home) / "project" / "src" / "made").read_text() == "ok\n"
    assert not (Path(home) / "planted").exists()
    assert "proxy-reached" in out and seen == "proxy-saw-it", out
    subprocess.run(["rm", "-rf", home], check=False)


_TRY_PORTS = """
import socket, sys
for port in sys.argv[1:]:
    try:
        socket.create_connection(("127.0.0.1", int(port)), timeout=3).close()
        print(port, "reached")
    except OSError as exc:
        print(port, "refused:", exc)
"""


def test_each_process_reaches_its_own_proxy_port_and_not_anothers(
    world: World, monkeypatch: pytest.MonkeyPatch
) -> None:
    # A listener per process (ADR-0031) tells the proxy who asks only if a process cannot
    # reach another's: each spawn's TCP is bounded to its own Policy.proxy, also for the
    # `bash` tool's commands, which the janitor forks and confines ahead of their call.
    monkeypatch.setattr(_run, "_NO_USERNS", True)
    if SUPPORT.landlock < 4:
        pytest.skip("Landlock ABI < 4 has no TCP rules")
    first, second = socket.create_server(("127.0.0.1", 0)), socket.create_server(("127.0.0.1", 0))
    ports = [str(listener.getsockname()[1]) for listener in (first, second)]

    async def run(port: str) -> str:
        policy = Policy(world.policy.denied, world.policy.writable, world.policy.protected, ("127.0.0.1", int(port)))
        argv = [sys.executable, "-I", "-S", "-c", _TRY_PORTS, *ports]
        spawned = await spawn(
            argv[0], argv, dict(os.environ), world.project, grace=1.0, policy=policy, merged=True, warden=False
        )
        out = await asyncio.to_thread(lambda: b"".join(iter(lambda: os.read(spawned.stdout, 65536), b"")))
        os.close(spawned.stdout)
        async with asyncio.timeout(WAIT):
            await spawned.ended
        return out.decode()

    async def parked() -> None:
        # The janitor confines the next process once the last one ended; wait (bounded)
        # until it has handed it over, so that the next spawn is sure to take it.
        from bingo.sandbox.janitor import JanitorClient
        from bingo.sandbox.janitor._client import _key  # pyright: ignore[reportPrivateUsage]

        client = JanitorClient.running()
        async with asyncio.timeout(WAIT):
            while _key(world.policy, False) not in client.parked:
                await asyncio.sleep(0.01)

    async def go() -> list[tuple[str, bool, bool]]:
        seen: list[tuple[str, bool, bool]] = []
        for index, port in enumerate((ports[0], ports[1], ports[0], ports[1])):
            if index:
                await parked()  # the later ones run in processes confined ahead
            out = await run(port)
            seen.append((out, _never_contacted(first), _never_contacted(second)))
        return seen

    with first, second:
        first.setblocking(False)
        second.setblocking(False)
        seen = asyncio.run(go())
    for index, (out, first_quiet, second_quiet) in enumerate(seen):
        mine, other = (ports[0], ports[1]) if index % 2 == 0 else (ports[1], ports[0])
        assert f"{mine} reached" in out and f"{other} refused" in out, out
        assert (first_quiet, second_quiet) == ((False, True) if index % 2 == 0 else (True, False))


def test_a_namespace_refused_when_made_is_said_by_the_probe(monkeypatch: pytest.MonkeyPatch) -> None:
    # The kernel's settings may allow user namespaces while a container's seccomp profile
    # refuses them: once proxy_listener() found out, probe() says so, never silently.
    monkeypatch.setattr(
        _run, "refused", "a user namespace could not be used (making a user namespace: Operation not permitted)"
    )
    support = probe()
    assert not support.userns
    assert any("Operation not permitted" in line for line in support.missing)
    assert any("proxy's port" in line or "directly" in line for line in support.weaker)


def test_the_tmpdirs_of_a_killed_janitor_are_removed_by_the_next(world: World) -> None:
    # A janitor SIGKILLed cannot remove the TMPDIRs it made (here: the one of the process it
    # confined ahead); the next janitor's first confined spawn does.
    from bingo.sandbox.janitor import JanitorClient
    from bingo.sandbox.janitor._client import _key  # pyright: ignore[reportPrivateUsage]

    async def go() -> tuple[str, str]:
        client = JanitorClient.running()
        await _run_confined(["/bin/true"], world.policy, world.project, warden=False)
        wanted = _key(world.policy, client.netns and not _run._NO_USERNS)  # pyright: ignore[reportPrivateUsage]
        async with asyncio.timeout(WAIT):
            while wanted not in client.parked:
                await asyncio.sleep(0.01)
        left = client.parked[wanted].tmpdir
        os.kill(client.pid, signal.SIGKILL)
        async with asyncio.timeout(WAIT):
            while client.alive:  # it reads EOF on the janitor's socket
                await asyncio.sleep(0.01)
        out, _code = await _run_confined(["/bin/sh", "-c", "echo $TMPDIR"], world.policy, world.project)
        return left, out.strip()

    left, fresh = asyncio.run(go())
    assert Path(left).parent == Path(fresh).parent
    assert not Path(left).exists()


# --- what the janitor keeps -------------------------------------------------------------


def test_many_policies_beside_a_crowded_directory_never_run_the_janitor_out_of_files(tmp_path: Path) -> None:
    # Each policy's walk holds an O_PATH fd per entry of every directory above a denied path:
    # 30 policies beside 3,000 entries are 90,000 fds, past the janitor's 65,536, unless the
    # walks it keeps are bounded (the full suite met this: every test is its own policy).
    crowded = (tmp_path / "crowded").resolve()
    crowded.mkdir()
    for index in range(3000):
        (crowded / f"f{index}").touch()
    project = (tmp_path / "project").resolve()
    project.mkdir()
    out = ""
    for index in range(30):
        secret = crowded / f"secret{index}"
        secret.mkdir()
        (secret / "key").write_text("PLANTED\n")
        policy = Policy(denied=(secret,), writable=(project,), protected=(), proxy=None)
        out, code = confined(["/bin/bash", "-c", f"cat {secret}/key; echo ran {index}"], policy, project)
        assert code == 0, out
    assert out.endswith("ran 29\n") and "PLANTED" not in out
