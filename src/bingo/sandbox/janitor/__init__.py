"""The janitor: one small process per bingo run, the parent of every plugin process, so that
nothing a plugin starts outlives the plugin, or outlives bingo (ADR-0013).

Its protocol lives here whole: `_codec.py` frames a message (a length, then a marshalled
tuple) for both ends; `_client.py` is bingo's end (start the janitor, ask it for a plugin,
hear how each ended: `JanitorClient`; `_spawned.py`, what a spawn gives back; `_parked.py`,
the processes confined ahead it holds); `_server.py` is the janitor's own code
(`JanitorServer` and the warden it forks per plugin); `_prctl.py` reaches libc's prctl for
it; `proc.py` reads /proc, for the janitor's sweeps, a plugin's shutdown and the tests.
A confined spawn's part, in the janitor, is imported at the first one: `_sandbox.py` (the
plans and rules it keeps), `_park.py` (processes confined ahead) and the kernel's
confinement: `_confine.py` (the sequence in the child) over `_syscall.py`, `_landlock.py`,
`_seccomp.py` and `_netns.py`. It does not own a plugin's streams, log or shutdown
(`bridge/process.py`).

The janitor's process imports this package from its parent directory as `janitor` (see
`_client._SERVER`) and must import nothing of bingo's, so importing the package imports none
of its modules: each export is imported when first asked for (PEP 562), and `_server`,
`_codec`, `_prctl` and `proc` import only the standard library and each other.
"""

from __future__ import annotations

TYPE_CHECKING = False  # not typing's: the janitor's process imports the package too
if TYPE_CHECKING:
    from ._client import SPAWN_WAIT, USE_JANITOR, JanitorClient, Spawned, kill_warden, spawn_janitor, wind_down

__all__ = [
    "SPAWN_WAIT",
    "USE_JANITOR",
    "JanitorClient",
    "Spawned",
    "kill_warden",
    "spawn_janitor",
    "wind_down",
]


def __getattr__(name: str) -> object:
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from . import _client  # every export is the client's

    value: object = getattr(_client, name)
    globals()[name] = value
    return value
