"""Plugins begun before bingo has started itself: the head start of a cold
`bingo -p "/command"` (ADR-0014).

A cold `bingo -p "/wordcount notes.txt"` imports for ~90 ms before the declaration cache
tells it the command is the wordcount plugin's; only then would the janitor's and the
plugin's interpreters start (~40 ms more, one after the other). So each run of a slash
command leaves a *launch record* in `<data>/launches.json`: for its directory and command,
the user-layer plugins the host began for it (path, arguments, and the environment entries
their manifests add), a digest of the environment, and the `stat` of every file that
decided it (the settings files, both plugin directories, the plugins' manifests, the
declaration cache and the trust file). The next run of that command in that directory reads
it first thing, before any heavy import (`begin`, from `bingo.cli`); when the environment and
every one of those files are as recorded, it starts the janitor and asks it for those plugins
at once, so that their start overlaps bingo's own.

A record can waste a start, never change a run: the host decides everything as before, and
`PluginProcess.spawn` adopts a begun process (`take`) only for the identical path,
arguments, environment and directory. What is not adopted is `abandon`ed when the host ends
(its stdin closes), and the janitor ends it with the run in any case. Only user-layer plugins
are recorded: a project's plugin is never started before its trust is checked.

Imported by `bingo.cli` before asyncio and msgspec: it uses only standard modules that are
cheap or that every run imports anyway.
"""

from __future__ import annotations

import _socket
import array
import json
import marshal
import os
import sys
import zlib

from ..kernel.home import DATA, bingo_home_path

TYPE_CHECKING = False  # not typing's: see the last paragraph above
if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from pathlib import Path
    from typing import NamedTuple
else:
    from collections import namedtuple as _namedtuple

__all__ = [
    "LAUNCHES",
    "WARDEN_GRACE",
    "Begun",
    "Recipe",
    "abandon",
    "begin",
    "command_of",
    "frame",
    "remember",
    "spawn_janitor",
    "spawn_request",
    "take",
    "take_janitor",
]

LAUNCHES = "launches.json"
"""The launch records, in the data directory."""
WARDEN_GRACE = 1.0
"""Seconds a warden gives its plugin between SIGTERM and SIGKILL (half of the host's
TERM_GRACE: it is done, and has swept, before the host would SIGKILL the group)."""
_KEEP = 64
"""Records kept (the most recently written): one per directory and command."""
_VERSION = 1
_JANITOR = (
    f"import sys; sys.path.append({os.path.dirname(os.path.abspath(__file__))!r}); "
    "import _janitor; _janitor.main(sys.argv[1:])"
)
"""How the janitor is started (`python -I -S -c _JANITOR FD PID MAIN`): imported from this
directory, put last on its path (after the standard library, which it alone imports), so
that its bytecode is the cached one; run as a script, it would compile its source at every
start, as long again as the rest of that start."""

_Field = str | int | float | list[str] | list[int] | dict[str, str]
"""What a message to the janitor is made of: only what `marshal` carries."""


if TYPE_CHECKING:

    class Recipe(NamedTuple):
        """How the host starts one plugin: `argv[0]` is the resolved `path`; `extra` is what
        its manifest adds to (or changes in) the environment bingo runs in."""

        path: str
        argv: tuple[str, ...]
        extra: tuple[tuple[str, str], ...]

    class Begun(NamedTuple):
        """A plugin asked of the janitor before the host wanted it: the janitor request's id,
        what was started, and bingo's ends of its pipes (stdin's write end, stdout's and
        stderr's read ends)."""

        request_id: int
        path: str
        argv: tuple[str, ...]
        env: Mapping[str, str]
        cwd: str
        fds: tuple[int, int, int]

else:  # the same records, without importing typing (or dataclasses, which imports inspect)
    Recipe = _namedtuple("Recipe", "path argv extra")
    Begun = _namedtuple("Begun", "request_id path argv env cwd fds")


_janitor: tuple[int, _socket.socket, list[int]] | None = None
"""The janitor `begin` started and the request ids it sent, until the host takes them."""
_begun: list[Begun] = []


def frame(message: tuple[_Field, ...]) -> bytes:
    """One message to the janitor: a 4-byte big-endian length, then the marshalled tuple."""
    data = marshal.dumps(message)
    return len(data).to_bytes(4, "big") + data


def spawn_request(request_id: int, path: str, argv: Sequence[str], env: Mapping[str, str], cwd: str) -> bytes:
    """The janitor's `spawn` message: the plugin runs on the CPUs bingo runs on now (the
    janitor's own may be older), and its warden gives it WARDEN_GRACE."""
    cpus = sorted(os.sched_getaffinity(0))
    return frame(("spawn", request_id, path, list(argv), dict(env), cwd, WARDEN_GRACE, cpus))


def spawn_janitor() -> tuple[int, _socket.socket]:
    """posix_spawn the run's janitor (no fork of bingo, whatever its size), its stdio on
    /dev/null, in a session of its own (a terminal's Ctrl-C is bingo's to handle); its pid
    and bingo's end of the control socket (blocking).

    Raises:
        OSError: it cannot be started.
    """
    ours, theirs = _socket.socketpair(_socket.AF_UNIX, _socket.SOCK_STREAM)
    try:
        os.set_inheritable(theirs.fileno(), True)
        # Its parent-death signal follows the thread that spawned it: only the main thread
        # is sure to live as long as bingo (EOF on the socket covers the rest).
        # (threading is imported by anything that starts a thread with it: if it is not, this
        # is the thread that started the interpreter, as threading itself would assume)
        threading = sys.modules.get("threading")
        main = "1" if threading is None or threading.current_thread() is threading.main_thread() else "0"
        argv = [sys.executable, "-I", "-S", "-c", _JANITOR, str(theirs.fileno()), str(os.getpid()), main]
        devnull = [(os.POSIX_SPAWN_OPEN, fd, os.devnull, os.O_RDWR, 0) for fd in (0, 1, 2)]
        pid = os.posix_spawn(sys.executable, argv, dict(os.environ), file_actions=devnull, setsid=True)
    except BaseException:
        ours.close()
        raise
    finally:
        theirs.close()
    return pid, ours


def command_of(prompt: str | None) -> str | None:
    """The slash command a prompt runs (`/wordcount notes.txt` → `wordcount`), or None."""
    if prompt is None or not prompt.startswith("/"):
        return None
    return prompt[1:].partition(" ")[0] or None


def _key(cwd: str, command: str) -> str:
    return f"{cwd}\0{command}"


def _digest(environ: Mapping[str, str]) -> int:
    """What says the environment changed (a collision costs a wasted start at most)."""
    text = "\0".join(f"{key}={value}" for key, value in sorted(environ.items()))
    return zlib.crc32(text.encode("utf-8", "surrogateescape"))


def _state(path: str) -> list[int] | None:
    """What says a file (or directory) changed: inode, size, mtime and ctime; None if absent."""
    try:
        st = os.stat(path)
    except OSError:
        return None
    return [st.st_ino, st.st_size, st.st_mtime_ns, st.st_ctime_ns]


def _list(value: object) -> list[object] | None:
    return value if isinstance(value, list) else None  # pyright: ignore[reportUnknownVariableType]


def _dict(value: object) -> dict[str, object] | None:
    return value if isinstance(value, dict) else None  # pyright: ignore[reportUnknownVariableType]


def _records(path: str) -> dict[str, object]:
    try:
        with open(path, "rb") as file:
            data = _dict(json.loads(file.read()))
    except (OSError, ValueError):
        return {}
    if data is None or data.get("version") != _VERSION:
        return {}
    return _dict(data.get("records")) or {}


def _recipes(record: object, environ: Mapping[str, str]) -> list[Recipe]:
    """The record's recipes if it still holds (same environment, every witness unchanged);
    otherwise none."""
    fields = _dict(record) or {}
    witness, spawns = _list(fields.get("witness")), _list(fields.get("spawn"))
    if witness is None or spawns is None or fields.get("environ") != _digest(environ):
        return []
    for item in witness:
        pair = _list(item)
        if pair is None or len(pair) != 2 or not isinstance(pair[0], str) or _state(pair[0]) != pair[1]:
            return []
    found: list[Recipe] = []
    for spawn in spawns:
        recipe = _dict(spawn) or {}
        path, argv, extra = recipe.get("path"), _list(recipe.get("argv")), _dict(recipe.get("extra"))
        if not isinstance(path, str) or argv is None or extra is None:
            return []
        words = tuple(word for word in argv if isinstance(word, str))
        pairs = tuple((key, value) for key, value in extra.items() if isinstance(value, str))
        found.append(Recipe(path=path, argv=words, extra=pairs))
    return found


def begin(environ: Mapping[str, str], cwd: str, prompt: str | None) -> int:
    """Begin what the launch record holds for `prompt`'s command in `cwd`, if it still
    holds (Linux only: the janitor does the spawning); how many plugins were begun. Never
    raises: a head start that cannot be had is no start."""
    global _janitor
    command = command_of(prompt)
    if command is None or _janitor is not None or not sys.platform.startswith("linux"):
        return 0
    try:
        record = _records(os.path.join(bingo_home_path(environ), DATA, LAUNCHES)).get(_key(cwd, command))
        recipes = _recipes(record, environ)
        if not recipes:
            return 0
        pid, sock = spawn_janitor()
    except OSError:
        return 0
    ids: list[int] = []
    _janitor = (pid, sock, ids)
    for request_id, recipe in enumerate(recipes, start=1):
        env = dict(environ)
        env.update(recipe.extra)
        stdin_r, stdin_w = os.pipe()
        stdout_r, stdout_w = os.pipe()
        stderr_r, stderr_w = os.pipe()
        theirs = [stdin_r, stdout_w, stderr_w]
        message = spawn_request(request_id, recipe.path, recipe.argv, env, cwd)
        try:
            sock.sendmsg([message], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, array.array("i", theirs))])
        except OSError:
            for fd in (stdin_w, stdout_r, stderr_r):
                os.close(fd)
            break
        finally:
            for fd in theirs:
                os.close(fd)
        ids.append(request_id)
        _begun.append(Begun(request_id, recipe.path, recipe.argv, env, cwd, (stdin_w, stdout_r, stderr_r)))
    return len(_begun)


def take_janitor() -> tuple[int, _socket.socket, list[int]] | None:
    """The janitor `begin` started (pid, control socket, the ids of the spawns it asked
    for), handed over once."""
    global _janitor
    started, _janitor = _janitor, None
    return started


def take(path: str, argv: Sequence[str], env: Mapping[str, str], cwd: str) -> Begun | None:
    """The begun plugin with exactly this path, argv, environment and directory, handed
    over once; None when there is none."""
    for index, begun in enumerate(_begun):
        if begun.path == path and begun.argv == tuple(argv) and begun.cwd == cwd and begun.env == env:
            del _begun[index]
            return begun
    return None


def abandon() -> None:
    """Close bingo's ends of every begun plugin the host did not take: each reads EOF and
    ends (its warden sweeps; the janitor reports it to nobody)."""
    import logging

    while _begun:
        begun = _begun.pop()
        logging.getLogger(__name__).info("a plugin begun early was not wanted: %s", " ".join(begun.argv))
        for fd in begun.fds:
            try:
                os.close(fd)
            except OSError:
                pass


def remember(
    data_dir: Path, cwd: str, command: str, recipes: Sequence[Recipe], witness: Sequence[Path], environ: Mapping[str, str]
) -> None:
    """Record what a run of `command` in `cwd` began (or, with no recipes, forget it), with
    the state of `witness` now; the file is rewritten only when that differs. Never raises:
    a record that cannot be written is a head start lost."""
    import logging

    path = data_dir / LAUNCHES
    records = _records(str(path))
    key = _key(cwd, command)
    record: dict[str, object] | None = None
    if recipes:
        record = {
            "environ": _digest(environ),
            "witness": [[str(item), _state(str(item))] for item in witness],
            "spawn": [{"path": r.path, "argv": list(r.argv), "extra": dict(r.extra)} for r in recipes],
        }
    if records.get(key) == record:
        return
    records.pop(key, None)
    if record is not None:
        records[key] = record
    kept = dict(list(records.items())[-_KEEP:])
    try:
        data_dir.mkdir(parents=True, exist_ok=True)
        temporary = path.with_name(f".{LAUNCHES}.{os.getpid()}")
        temporary.write_text(json.dumps({"version": _VERSION, "records": kept}), encoding="utf-8")
        os.replace(temporary, path)
    except OSError as exc:
        logging.getLogger(__name__).warning("cannot write %s: %s", path, exc)
