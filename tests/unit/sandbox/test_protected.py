"""The protected paths inside a writable project, from the attacked side (issue 24, ADR-0030's
2026-12-04 section): in the run's user namespace each confined process gets a mount
namespace of its own where the protected paths that exist are bound read-only, so ordinary
work beside them (a new file at the project's root, `npm install`, `git commit`) succeeds,
while `.git/config`, `.git/hooks`, `.mcp.json` and `.bingo/` stay unwritten and cannot be
moved, removed or unmounted. On the degraded path (no user namespace, forced by
`_run._NO_USERNS`) the walk keeps them, and what the ADR says it costs is asserted: no new
entry in a directory above a protected path.

Real confined processes through `bingo.sandbox.spawn` (the janitor's path); the evidence is
the project's own bytes and git's own log, read from outside."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
import sys
import textwrap
from dataclasses import dataclass
from pathlib import Path

import pytest

from bingo.sandbox import Policy, _run, probe, proxy_listener, spawn
from tests.unit.sandbox._nobody import as_nobody

WAIT = 20.0
"""Seconds a confined process has to finish (bounded, never a timing assertion)."""

SUPPORT = probe()
pytestmark = [
    pytest.mark.skipif(not SUPPORT.confines, reason="this kernel cannot confine: " + "; ".join(SUPPORT.missing)),
    pytest.mark.skipif(shutil.which("git") is None, reason="needs git"),
]
GIT = ["git", "-c", "user.name=Tester", "-c", "user.email=tester@example.invalid", "-c", "init.defaultBranch=main"]


@dataclass
class Project:
    root: Path
    policy: Policy
    before: dict[str, bytes]
    """The protected files' bytes before the confined process ran."""
    hooks: list[str]


PROTECTED = (".bingo", ".mcp.json", ".git/hooks", ".git/config")


def _project(root: Path, *, hooks: bool = True, mcp: bool = True, bingo: bool = True) -> Project:
    root.mkdir(parents=True)
    subprocess.run([*GIT, "init", "-q", str(root)], check=True)
    (root / "README").write_text("readme\n")
    subprocess.run([*GIT, "-C", str(root), "add", "README"], check=True)
    subprocess.run([*GIT, "-C", str(root), "commit", "-qm", "first"], check=True)
    if not hooks:
        shutil.rmtree(root / ".git" / "hooks")
    if mcp:
        (root / ".mcp.json").write_text('{"mcpServers": {}}\n')
    if bingo:
        (root / ".bingo").mkdir()
        (root / ".bingo" / "settings.json").write_text("{}\n")
    root = root.resolve()
    policy = Policy(denied=(), writable=(root,), protected=tuple(root / name for name in PROTECTED), proxy=None)
    before = {
        name: (root / name).read_bytes()
        for name in (".git/config", ".mcp.json", ".bingo/settings.json")
        if (root / name).exists()
    }
    listed = sorted(os.listdir(root / ".git" / "hooks")) if hooks else []
    return Project(root, policy, before, listed)


@pytest.fixture
def project(tmp_path: Path) -> Project:
    return _project(tmp_path / "project")


@pytest.fixture(params=["netns", "degraded"])
def path(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Which path the confined processes take: the run's user namespace (made here, as
    bingo's proxy does at start), or the degraded path."""
    if request.param == "netns":
        if not SUPPORT.userns:
            pytest.skip("no user namespaces here")
        listener, why = asyncio.run(proxy_listener())
        assert listener is not None, why
        listener.close()
    else:
        monkeypatch.setattr(_run, "_NO_USERNS", True)
    return str(request.param)


async def _run_confined(argv: list[str], policy: Policy, cwd: Path, *, warden: bool = True) -> str:
    env = dict(os.environ, GIT_CONFIG_NOSYSTEM="1", HOME=str(cwd.parent))
    spawned = await spawn(argv[0], argv, env, cwd, grace=1.0, policy=policy, merged=True, warden=warden)

    def read() -> bytes:
        chunks: list[bytes] = []
        while chunk := os.read(spawned.stdout, 65536):
            chunks.append(chunk)
        os.close(spawned.stdout)
        return b"".join(chunks)

    async with asyncio.timeout(WAIT):
        out = await asyncio.to_thread(read)
        await spawned.ended
    return out.decode("utf-8", "replace")


def bash(command: str, project: Project) -> str:
    return asyncio.run(_run_confined(["/bin/bash", "-c", command], project.policy, project.root))


def python(script: str, project: Project) -> str:
    argv = [sys.executable, "-I", "-S", "-c", textwrap.dedent(script)]
    return asyncio.run(_run_confined(argv, project.policy, project.root))


def _log(root: Path) -> list[str]:
    done = subprocess.run(
        ["git", "-c", "safe.directory=*", "-C", str(root), "log", "--format=%s"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.split()


def _unchanged(project: Project) -> None:
    root = project.root
    for name, data in project.before.items():
        assert (root / name).read_bytes() == data, name
    assert sorted(os.listdir(root / ".git" / "hooks")) == project.hooks
    assert not (root / ".git" / "hooks" / "pre-commit").exists()


_ORDINARY = (
    "touch new.py && echo touched; mkdir node_modules && touch node_modules/x && echo modules; "
    f"git add . && {' '.join(GIT)} commit -qm inside && echo committed; echo done"
)


def test_ordinary_work_beside_the_protected_paths(project: Project, path: str) -> None:
    out = bash(_ORDINARY, project)
    root = project.root
    assert out.rstrip().endswith("done"), out
    if path == "netns":
        assert (root / "new.py").exists() and (root / "node_modules" / "x").exists(), out
        assert _log(root) == ["inside", "first"], out
        committed = subprocess.run(
            ["git", "-C", str(root), "show", "--name-only", "--format="], capture_output=True, text=True
        )
        assert "new.py" in committed.stdout.split()
    else:
        # The degraded path (ADR-0030): each directory above a protected path is closed to
        # new entries: the project's root and .git/ (git's index.lock).
        assert not (root / "new.py").exists() and not (root / "node_modules").exists(), out
        assert _log(root) == ["first"], out
    _unchanged(project)


def test_the_protected_paths_stay_unwritten_and_cannot_be_moved(project: Project, path: str) -> None:
    out = bash(
        "echo evil >> .git/config; echo evil > .git/hooks/pre-commit; echo evil > .mcp.json; "
        "echo evil > .bingo/settings.json; mv .git/hooks x; rm -rf .git/hooks; mv .git/config y; "
        "mv .git g; mv .bingo b; rm -f .mcp.json; ln .git/config hard; umount .git/hooks; umount -l .git/config; "
        f"{' '.join(GIT)} config core.hooksPath /tmp; echo done",
        project,
    )
    assert out.rstrip().endswith("done"), out
    _unchanged(project)
    root = project.root
    # (`mv .git/hooks x` may copy it across mounts before failing to remove it: a copy, the
    # hooks themselves untouched.)
    for name in ("g", "b", "hard"):
        assert not (root / name).exists(), (name, out)
    assert (root / ".mcp.json").exists() and (root / ".git").is_dir() and (root / ".bingo").is_dir()


_SYSCALLS = """
    import ctypes, errno, os
    libc = ctypes.CDLL(None, use_errno=True)
    def attempt(what, call):
        try:
            call()
            print(what, "DONE")
        except OSError as exc:
            print(what, errno.errorcode.get(exc.errno, exc.errno))
    def umount(target):
        if libc.umount2(target.encode(), 2) != 0:
            raise OSError(ctypes.get_errno(), "umount2")
    attempt("rename-hooks", lambda: os.rename(".git/hooks", ".git/x"))
    attempt("rmdir-hooks", lambda: os.rmdir(".git/hooks"))
    attempt("rename-git", lambda: os.rename(".git", "g"))
    attempt("unlink-mcp", lambda: os.unlink(".mcp.json"))
    attempt("rename-config", lambda: os.rename(".git/config", ".git/y"))
    attempt("link-config", lambda: os.link(".git/config", "hard"))
    attempt("umount-hooks", lambda: umount(".git/hooks"))
    if os.path.isdir(".git/hooks") and not os.path.exists(".git/d"):
        try:
            os.mkdir(".git/d")  # beside the mount point, in the same mount: only the target differs
            attempt("rename-over-hooks", lambda: os.rename(".git/d", ".git/hooks"))
            os.rmdir(".git/d")
        except OSError as exc:
            print("rename-over-hooks", errno.errorcode.get(exc.errno, exc.errno))
    attempt("write-config", lambda: open(".git/config", "a").write("evil"))
"""


def test_a_mount_point_is_neither_renamed_removed_nor_unmounted(project: Project, path: str) -> None:
    out = python(_SYSCALLS, project)
    seen = dict(line.split(" ", 1) for line in out.splitlines() if " " in line)
    assert "DONE" not in seen.values(), out
    if path == "netns":
        # Each is a mount point in the process's own namespace: the kernel refuses moving or
        # removing it (EBUSY), a hard link across mounts (EXDEV), writing (EROFS); seccomp
        # refuses umount.
        # (rename-over-hooks: a directory made beside it cannot be moved over it.)
        for name in ("rename-hooks", "rename-over-hooks", "rmdir-hooks", "rename-git", "unlink-mcp", "rename-config"):
            assert seen[name] == "EBUSY", (name, out)
        assert seen["link-config"] == "EXDEV", out
        assert seen["write-config"] == "EROFS", out
    else:
        for name in (
            "rename-hooks",
            "rmdir-hooks",
            "rename-git",
            "unlink-mcp",
            "rename-config",
            "link-config",
            "write-config",
        ):
            assert seen[name] == "EACCES", (name, out)
    assert seen["umount-hooks"] == "EPERM", out
    _unchanged(project)


def test_missing_protected_paths(tmp_path: Path, path: str) -> None:
    # ADR-0030: a missing .git/hooks under an existing .git is made empty by bingo before
    # the spawn (where a planted pre-commit would go); a missing .bingo/ or .mcp.json is
    # left creatable in the namespace (what a project brings there is under trust); on the
    # degraded path the project's root is closed to them.
    project = _project(tmp_path / "project", hooks=False, mcp=False, bingo=False)
    root = project.root
    out = bash(
        "mkdir -p .git/hooks; echo evil > .git/hooks/pre-commit; echo '{}' > .mcp.json; "
        "mkdir .bingo && echo '{}' > .bingo/settings.json; echo done",
        project,
    )
    assert out.rstrip().endswith("done"), out
    assert not (root / ".git" / "hooks" / "pre-commit").exists()
    if path == "netns":
        assert (root / ".git" / "hooks").is_dir() and os.listdir(root / ".git" / "hooks") == []
        assert (root / ".mcp.json").read_text() == "{}\n"
        assert (root / ".bingo" / "settings.json").read_text() == "{}\n"
    else:
        assert not (root / ".git" / "hooks").exists()
        assert not (root / ".mcp.json").exists() and not (root / ".bingo").exists()


def test_processes_confined_ahead_work_and_see_a_protected_path_made_since(project: Project, path: str) -> None:
    # The bash tool's commands run in processes the janitor forked and confined ahead (their
    # mount namespace made ahead too). One parked while .mcp.json was missing is let go
    # when it appears, so the next command cannot write it.
    from bingo.sandbox.janitor import JanitorClient
    from bingo.sandbox.janitor._client import _key  # pyright: ignore[reportPrivateUsage]

    (project.root / ".mcp.json").unlink()
    root = project.root

    async def parked() -> None:
        client = JanitorClient.running()
        netns = client.netns and not _run._NO_USERNS  # pyright: ignore[reportPrivateUsage]
        async with asyncio.timeout(WAIT):
            while _key(project.policy, netns) not in client.parked:
                await asyncio.sleep(0.01)

    async def go() -> list[str]:
        outs: list[str] = []
        for index in range(3):
            if index:
                await parked()
            if index == 2:
                (root / ".mcp.json").write_text("{}\n")  # the person's, made while one waits
            command = (
                f"touch made{index} && echo made; echo evil > .git/hooks/pre-commit; echo evil > .mcp.json; echo done"
            )
            outs.append(await _run_confined(["/bin/bash", "-c", command], project.policy, root, warden=False))
        return outs

    outs = asyncio.run(go())
    assert all(out.rstrip().endswith("done") for out in outs), outs
    if path == "netns":
        assert all((root / f"made{index}").exists() for index in range(3)), outs
    else:
        assert not any((root / f"made{index}").exists() for index in range(3)), outs
    assert (root / ".mcp.json").read_text() == "{}\n"
    assert not (root / ".git" / "hooks" / "pre-commit").exists()


_PTY = """
    import os, pty, sys
    try:
        master, follower = pty.openpty()
        os.write(follower, b"through-a-pty")
        print("own pty", os.ttyname(follower), os.read(master, 100).decode())
    except OSError as exc:
        print("own pty refused:", exc)
    try:
        fd = os.open(sys.argv[1], os.O_RDWR | os.O_NONBLOCK | os.O_NOCTTY)
        os.write(fd, b"INJECTED")
        print("persons REACHED")
    except OSError as exc:
        print("persons refused:", exc)
"""


def test_a_pty_of_its_own_and_never_the_persons(project: Project, path: str) -> None:
    # A few ptys, so that the person's is not the first number a new instance would give
    # (inside, its own is /dev/pts/0: the name alone would not tell them apart).
    pairs = [os.openpty() for _ in range(4)]
    master, follower = pairs[-1]
    try:
        terminal = os.ttyname(follower)
        assert terminal != "/dev/pts/0"
        argv = [sys.executable, "-I", "-S", "-c", textwrap.dedent(_PTY), terminal]
        out = asyncio.run(_run_confined(argv, project.policy, project.root))
        assert "persons refused" in out and "REACHED" not in out, out
        os.set_blocking(master, False)
        with pytest.raises(BlockingIOError):
            os.read(master, 100)  # nothing reached the person's terminal
        if path == "netns":
            assert "own pty /dev/pts/" in out and "through-a-pty" in out, out
            script = bash("script -qec 'echo in-a-pty' /dev/null", project) if shutil.which("script") else "in-a-pty"
            assert "in-a-pty" in script, script
        else:
            assert "own pty refused" in out, out  # the degraded path: no pseudo-terminal inside
    finally:
        for pair in pairs:
            for fd in pair:
                os.close(fd)


# --- unprivileged, as on a person's laptop -----------------------------------------------

_AS_NOBODY = """
import asyncio, os, subprocess, sys, tempfile, pathlib
from bingo.sandbox import Policy, _run, proxy_listener, spawn

GIT = ["git", "-c", "user.name=T", "-c", "user.email=t@e.invalid", "-c", "init.defaultBranch=main"]

async def main(degraded):
    _run._NO_USERNS = degraded
    home = pathlib.Path(tempfile.mkdtemp()).resolve()
    project = home / "project"
    subprocess.run([*GIT, "init", "-q", str(project)], check=True)
    (project / ".mcp.json").write_text("{}")
    listener, _why = await proxy_listener()
    if listener is not None:
        listener.close()
    protected = tuple(project / p for p in (".bingo", ".mcp.json", ".git/hooks", ".git/config"))
    policy = Policy((), (project,), protected, None)
    command = (
        "touch new.py && echo touched; git add new.py && " + " ".join(GIT) + " commit -qm inside && echo committed; "
        "echo evil >> .git/config; echo evil > .git/hooks/pre-commit; echo evil > .mcp.json; mv .git g; echo done"
    )
    env = {"PATH": "/usr/bin:/bin", "HOME": str(home), "GIT_CONFIG_NOSYSTEM": "1"}
    spawned = await spawn("/bin/bash", ["/bin/bash", "-c", command], env, project, grace=1.0, policy=policy, merged=True)
    out = b""
    while chunk := os.read(spawned.stdout, 65536):
        out += chunk
    await spawned.ended
    print(os.getuid(), home, "\\n" + out.decode())

asyncio.run(main(sys.argv[1] == "degraded"))
"""


@pytest.mark.parametrize("way", ["netns", "degraded"])
def test_an_unprivileged_user_works_beside_the_protected_paths(way: str) -> None:
    if way == "netns" and not SUPPORT.userns:
        pytest.skip("no user namespaces here")
    command = as_nobody()
    if command is None:
        pytest.skip("needs root, setpriv and a Python that uid 65534 can run with bingo")
    done = subprocess.run([*command, "-c", _AS_NOBODY, way], capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    first, _newline, out = done.stdout.partition("\n")
    uid, home = first.split()
    root = Path(home) / "project"
    try:
        assert uid == "65534"
        assert out.rstrip().endswith("done"), out
        assert (root / ".mcp.json").read_text() == "{}"
        assert "evil" not in (root / ".git" / "config").read_text()
        assert not (root / ".git" / "hooks" / "pre-commit").exists() and (root / ".git").is_dir()
        if way == "netns":
            assert (root / "new.py").exists() and _log(root) == ["inside"], out
        else:
            assert not (root / "new.py").exists(), out
    finally:
        subprocess.run(["rm", "-rf", home], check=False)


def test_the_degraded_path_says_what_it_costs() -> None:
    # Never silently weaker: without a user namespace, probe() says what the walk costs.
    from bingo.sandbox._support import weaknesses

    degraded = " ".join(weaknesses(6, userns=False))
    assert "no new file or directory at the project's root" in degraded
    assert "git commit" in degraded and "pseudo-terminal" in degraded
    assert not any("project's root" in line for line in weaknesses(6, userns=True))


def test_a_planted_link_does_not_make_bingo_create_hooks_elsewhere(tmp_path: Path, path: str) -> None:
    # A project whose `.git` a process made a link to a directory outside: the missing
    # `.git/hooks` is made beneath the project only, never through the link.
    elsewhere = (tmp_path / "elsewhere").resolve()
    elsewhere.mkdir()
    root = (tmp_path / "project").resolve()
    root.mkdir()
    (root / ".git").symlink_to(elsewhere)
    policy = Policy(denied=(), writable=(root,), protected=tuple(root / name for name in PROTECTED), proxy=None)
    out = asyncio.run(_run_confined(["/bin/bash", "-c", "touch new.py; echo done"], policy, root))
    assert out.rstrip().endswith("done"), out
    assert not (elsewhere / "hooks").exists()


def test_a_missing_protected_path_deeper_down_leaves_the_root_open(tmp_path: Path, path: str) -> None:
    # An empty `.git` (no config yet) and a `.claude/` without `skills/`: walking around the
    # missing paths would close the project's root again; in the namespace they are left
    # creatable (ADR-0030), the root stays open and .git/hooks is made and kept.
    root = (tmp_path / "project").resolve()
    (root / ".git").mkdir(parents=True)
    (root / ".claude").mkdir()
    protected = (*(root / name for name in PROTECTED), root / ".claude" / "skills")
    policy = Policy(denied=(), writable=(root,), protected=protected, proxy=None)
    command = "touch new.py && echo made; echo evil > .git/hooks/pre-commit; echo done"
    out = asyncio.run(_run_confined(["/bin/bash", "-c", command], policy, root))
    assert out.rstrip().endswith("done"), out
    assert not (root / ".git" / "hooks" / "pre-commit").exists()
    if path == "netns":
        assert (root / "new.py").exists(), out
        assert (root / ".git" / "hooks").is_dir()
    else:
        assert not (root / "new.py").exists(), out


def test_a_planted_commondir_is_gone_before_the_persons_git_runs(project: Project, path: str) -> None:
    # git reads $GIT_DIR/commondir in every repository and takes hooks and config from the
    # directory it names: one left behind would run a confined process's hook in the
    # person's next commit, outside the sandbox. It cannot be bound read-only while missing,
    # so the janitor removes it when the process that made it ends.
    marker = project.root.parent / "hook-ran"
    bash(
        "mkdir -p evil/hooks evil/objects evil/refs && cp -r .git/objects .git/refs evil/ && "
        "printf '[core]\\n\\trepositoryformatversion = 0\\n' > evil/config && "
        f"printf '#!/bin/sh\\ntouch {marker}\\n' > evil/hooks/pre-commit && chmod +x evil/hooks/pre-commit && "
        "echo ../evil > .git/commondir; ls .git/commondir",
        project,
    )
    assert not (project.root / ".git" / "commondir").exists()
    (project.root / "after.txt").write_text("the person's own\n")
    subprocess.run([*GIT, "-c", "safe.directory=*", "-C", str(project.root), "add", "after.txt"], check=True)
    subprocess.run([*GIT, "-c", "safe.directory=*", "-C", str(project.root), "commit", "-qm", "person"], check=True)
    assert not marker.exists()  # the planted hook never ran
    assert "person" in _log(project.root)
