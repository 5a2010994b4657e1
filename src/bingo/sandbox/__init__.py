"""The sandbox: what a process bingo starts may reach (INTERFACE.md section 9; ADR-0030).

This package sits between the kernel and the packages that start processes (tools, bridge):
it may import `wire` and `kernel`; `tools`, `bridge` and above may import it. It holds the
janitor (`janitor/`, ADR-0013), which starts every plugin and every confined process and
applies a `Policy` in the forked child just before `exec`.

The API (what the settings' side codes against; each promise below is tested in
tests/unit/sandbox/):

- `Policy` (`_policy.py`): the one value saying what a confined process may reach. Paths
  absolute and resolved. The mechanism adds, for every confined process: a TMPDIR of its
  own (made 0700 under the janitor's TMPDIR or /tmp, readable and writable, set as `TMPDIR`
  in its environment over whatever the given env said, removed with everything in it when
  its warden ends) and the devices `/dev/null`, `/dev/zero`, `/dev/full`, `/dev/tty`,
  `/dev/ptmx` and, in the run's network namespace, `/dev/pts` (its own devpts: below).
  Everything else of the environment is taken as given: removing secrets and adding the
  proxy's variables is the caller's.
- `probe() -> Support`: what this kernel offers, read without changing anything (~1 ms;
  loads `ctypes`, so call it when the answer is needed). `Support.confines` False: nothing
  can be confined, `Support.missing` says why in words a person can act on. `Support.weaker`:
  what holds less than the full sandbox here (e.g. no user namespaces: the degraded network
  path), in words; `Support.mechanism`: one line for `/sandbox`.
- `await proxy_listener() -> (socket | None, reason)`: the TCP socket listening on
  127.0.0.1:PORT inside the run's network namespace (made once per run by the janitor:
  a user + network namespace with only loopback up). bingo's proxy accepts on it (the
  caller owns it and must keep it open for the run); `Policy.proxy` must then be
  `("127.0.0.1", PORT)`. From then on, every confined spawn joins that namespace: no
  route out, no DNS. None: why, in words; then the proxy listens on the host's loopback
  itself (the degraded path). On both paths Landlock (ABI 4+) lets a confined process
  connect over TCP to `Policy.proxy`'s port alone: not to another listener in the
  namespace (another process's proxy, a server it started), so a listener per process
  tells the proxy who asks. On the degraded path that port is reachable on any address
  (see `Support.weaker`). `Policy.proxy` None: no TCP at all.
- Spawning confined: `bridge.process.PluginProcess.spawn(..., policy=Policy)` for plugins
  and stdio MCP servers; `tools.BashTool(policy=...)` (or its `policy` attribute, or its
  `policy_for(call)` overridden) for the `bash` tool; both through `spawn(...)` here, which
  raises OSError (one line: what was refused) when the process cannot be confined as asked:
  never silently unconfined. None: today's unconfined spawn, unchanged. A process bingo
  talks to over pipes (a plugin, an MCP server, a command hook) is started by `start`
  (`_process.py`): through the janitor, confined or not, or directly, in a group of its own,
  with asyncio streams over its pipes (`Started`). The `bash` tool's
  commands (`spawn(..., warden=False)`) run in a process the janitor confined ahead, one
  per policy (at most four), waiting from the end of the previous command of that policy.

What a confined process gets, whatever it does (ADR-0030): reads everywhere but
`Policy.denied` (names stay listable; contents are refused); writes only beneath
`Policy.writable` and its TMPDIR, never beneath `Policy.protected`; no socket but TCP (no
UDP, raw, packet, netlink, nor unix sockets other than socketpair); no new namespaces,
mounts, setns, io_uring, keyrings; no capabilities; no signal, ptrace or /proc/PID/environ
of a process outside its own sandbox (Landlock ABI 6 for signals).

Protected paths, on the two paths (ADR-0030, 2026-12-04):
- In the run's network namespace (once `proxy_listener()` made it; the normal path), each
  confined process has a mount namespace of its own where each protected path that exists
  is bound read-only onto itself, and each directory between it and its writable root is
  bound onto itself (a mount point cannot be renamed or removed: `.git` cannot be moved
  aside and remade). Everything else in a writable root is writable, new entries included:
  a new file at the project's root, `node_modules/`, `git add` and `git commit` work. A
  missing `<project>/.git/hooks` under an existing `.git` is made empty before the spawn;
  another protected path that is missing is left creatable (`.bingo/`, `.mcp.json`: what a
  project brings there is under trust, INTERFACE.md section 1; ADR-0030 says what else) and
  is bound from the next spawn on. A protected path that is a symbolic link keeps the walk
  below (its directories closed to new entries).
  `/dev/pts` there is a devpts instance of the process's own: it can make pseudo-terminals
  (`script`, `expect`), and the person's are not there.
- On the degraded path (no user namespace), Landlock alone: a protected or denied path makes
  each directory above it (up to the writable or "/" root) closed to new entries, because
  Landlock can only allow. A protected `<project>/.mcp.json`, even missing, closes the
  project's root to new files and directories (existing entries, and everything beneath
  them, stay writable); `.git/hooks` closes `.git/` (so `git commit`, which makes
  `.git/index.lock`, fails inside); `/dev/pts` is refused (no pseudo-terminal). Entries made
  later by someone else (bingo's own `write`, the person) become writable at the next spawn
  (the janitor walks a directory again when its mtime changed). `Support.weaker` says so.
- On both, a denied path inside a writable root (a person's `sandbox.deny`) closes the
  directories above it to new entries.

The settings' side (ADR-0031): `Build` (`_build.py`) makes each process's `Policy` and
environment from the grants (who may widen is `kernel.sandboxing`'s); `Hosts` (`_hosts.py`)
decides each request the proxy asks about; `Sandbox` (`_runtime.py`) is the run's side: in
force or not, the proxy's listeners, each process's confinement; `SandboxCommand` is
`/sandbox`.

Importing this package imports only `Policy`; the rest loads when first used (PEP 562), so a
run that confines nothing pays nothing.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._policy import Policy

if TYPE_CHECKING:
    from ._build import PROTECTED, SECRET_PATHS, Build, confined_environ, is_secret_name, launcher_grants
    from ._command import SandboxCommand, plugin_sandbox_words
    from ._hosts import Hosts
    from ._launcher import Launcher, launcher
    from ._process import Started, resolve, start
    from ._run import proxy_listener, spawn
    from ._runtime import Confined, Sandbox
    from ._support import Support, probe

__all__ = [
    "PROTECTED",
    "SECRET_PATHS",
    "Build",
    "Confined",
    "Hosts",
    "Launcher",
    "Policy",
    "Sandbox",
    "SandboxCommand",
    "Started",
    "Support",
    "confined_environ",
    "is_secret_name",
    "launcher",
    "launcher_grants",
    "plugin_sandbox_words",
    "probe",
    "proxy_listener",
    "resolve",
    "spawn",
    "start",
]

_LAZY = {
    "Support": "_support",
    "probe": "_support",
    "proxy_listener": "_run",
    "spawn": "_run",
    **dict.fromkeys(("Started", "resolve", "start"), "_process"),
    **dict.fromkeys(
        ("PROTECTED", "SECRET_PATHS", "Build", "confined_environ", "is_secret_name", "launcher_grants"), "_build"
    ),
    **dict.fromkeys(("SandboxCommand", "plugin_sandbox_words"), "_command"),
    "Hosts": "_hosts",
    **dict.fromkeys(("Launcher", "launcher"), "_launcher"),
    **dict.fromkeys(("Confined", "Sandbox"), "_runtime"),
}


def __getattr__(name: str) -> object:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    import importlib

    value: object = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value
