"""Building one process's Policy and environment from the settings (INTERFACE.md §9).

Owns the default policy's lists (the secret paths, the browsers' profiles, the protected
paths, the secret variables), what a plugin gets beyond `bash` (its `dataDir` written, its
own directory read inside `~/.bingo`, its own `env` kept), what a server started through a
package runner (`npx`, `uvx`, `pipx run`, ...: `_launcher.py`) is granted alone (its package
manager's cache and registry), and the environment
every confined process gets (the host's less its secrets, the proxy named, a TMPDIR of its
own). It does not apply a Policy (the mechanism does) nor decide hosts (`_hosts.py`).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import msgspec

from ..kernel.sandboxing import Grant, SandboxGrants
from ._launcher import launcher
from ._policy import Policy

__all__ = [
    "BROWSER_PROFILES",
    "PROTECTED",
    "SECRET_PATHS",
    "Build",
    "confined_environ",
    "is_secret_name",
    "launcher_grants",
]

SECRET_PATHS: tuple[str, ...] = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".config/gh",
    ".password-store",
    ".local/share/keyrings",
)
"""Below the person's home: read and write refused to every confined process."""

BROWSER_PROFILES: tuple[str, ...] = (
    ".mozilla",
    ".librewolf",
    ".waterfox",
    ".thunderbird",
    ".config/google-chrome",
    ".config/google-chrome-beta",
    ".config/google-chrome-unstable",
    ".config/chromium",
    ".config/BraveSoftware",
    ".config/microsoft-edge",
    ".config/vivaldi",
    ".config/opera",
    ".config/epiphany",
    ".local/share/epiphany",
    "snap/firefox",
    "snap/chromium",
    "snap/brave",
    ".var/app/org.mozilla.firefox",
    ".var/app/com.google.Chrome",
    ".var/app/org.chromium.Chromium",
    ".var/app/com.brave.Browser",
    ".var/app/com.microsoft.Edge",
)
"""The browsers' profile directories (cookies, saved passwords, sessions) below the home."""

PROTECTED: tuple[str, ...] = (
    ".bingo",
    ".mcp.json",
    ".git/hooks",
    ".git/config",
    ".git/commondir",
    ".claude/skills",
    ".claude/commands",
    ".claude/agents",
    ".agents/skills",
    ".agents/commands",
    ".agents/agents",
)
"""Below the project: readable, never written (what changes what bingo or git runs next)."""

TERMINALS: tuple[Path, ...] = (Path("/dev/null"), Path("/dev/tty"), Path("/dev/pts"), Path("/dev/ptmx"))
"""The devices every confined process may write: /dev/null and the terminal devices."""

PROXY_VARIABLES: tuple[str, ...] = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY", "all_proxy")
"""What names bingo's proxy to a confined process (and to every tool it runs)."""

_NO_PROXY = ("NO_PROXY", "no_proxy")
"""Removed: every request, to localhost too, goes through the proxy (it has no other way out)."""

PROVIDER_KEYS: tuple[str, ...] = ("ANTHROPIC_API_KEY", "OPENAI_API_KEY", "ANTHROPIC_AUTH_TOKEN")
_SECRET_EXACT = frozenset({*PROVIDER_KEYS, "SSH_AUTH_SOCK", "GPG_AGENT_INFO", "BINGO_MATRIX_TOKEN"})
_SECRET_SUFFIXES = ("_TOKEN", "_SECRET", "_PASSWORD", "_KEY")


def is_secret_name(name: str, *, matrix_token: str = "BINGO_MATRIX_TOKEN") -> bool:
    """Whether the variable `name` is a secret §9 takes out of a confined process's environment."""
    upper = name.upper()
    return (
        name in _SECRET_EXACT
        or name == matrix_token
        or upper.startswith("AWS_")
        or upper.endswith(_SECRET_SUFFIXES)
        or "API_KEY" in upper
    )


def confined_environ(
    environ: Mapping[str, str],
    *,
    keep: Iterable[str] = (),
    own: Mapping[str, str] | None = None,
    proxy: tuple[str, int] | None,
    tmpdir: Path | None,
    matrix_token: str = "BINGO_MATRIX_TOKEN",
) -> dict[str, str]:
    """The environment of a confined process: `environ` less its secrets (unless `keep`
    names one), then `own` (a server's own `env`, as the person wrote it: kept whole), then
    the proxy's variables and TMPDIR, which nothing overrides."""
    kept = set(keep)
    env = {
        name: value
        for name, value in environ.items()
        if name in kept or not is_secret_name(name, matrix_token=matrix_token)
    }
    env.update(own or {})
    for name in _NO_PROXY:
        env.pop(name, None)
    if proxy is not None:
        url = f"http://{proxy[0]}:{proxy[1]}"
        env.update({name: url for name in PROXY_VARIABLES})
    else:
        for name in PROXY_VARIABLES:
            env.pop(name, None)
    if tmpdir is not None:
        env.update({"TMPDIR": str(tmpdir), "TMP": str(tmpdir), "TEMP": str(tmpdir)})
    return env


class Launched(msgspec.Struct, frozen=True):
    """What a package manager that launches a server is granted for that server alone."""

    write: tuple[Path, ...]
    hosts: tuple[str, ...]
    said: str = ""
    """The package runner, as a person writes it (`npx`, `uvx`, `pipx run`)."""


_PYPI = ("pypi.org", "files.pythonhosted.org")
_NPM = ("registry.npmjs.org", "registry.yarnpkg.com")


def launcher_grants(argv: Sequence[str], environ: Mapping[str, str], home: Path) -> Launched | None:
    """The cache directories and registries a server started through a package runner
    (`_launcher.launcher`: `npx`, `uvx`, `pipx run`, `pnpm dlx`, ...) needs to start, or None
    for any other command. Directories are made when missing, so they can be granted."""
    found = launcher(argv)
    if found is None:
        return None
    manager = found.manager
    cache = Path(environ.get("XDG_CACHE_HOME") or home / ".cache")
    npm_cache = Path(environ.get("npm_config_cache") or environ.get("NPM_CONFIG_CACHE") or home / ".npm")
    hosts: tuple[str, ...] = _NPM
    if manager == "npm":
        dirs = [npm_cache]
    elif manager == "pnpm":
        dirs = [npm_cache, cache / "pnpm", home / ".local" / "share" / "pnpm"]
    elif manager == "yarn":
        dirs = [npm_cache, home / ".yarn" / "berry", cache / "yarn"]
        hosts = (*_NPM, "repo.yarnpkg.com")
    elif manager == "bun":
        dirs = [npm_cache, home / ".bun" / "install" / "cache"]
    elif manager == "uv":
        dirs = [Path(environ.get("UV_CACHE_DIR") or cache / "uv"), home / ".local" / "share" / "uv"]
        hosts = (
            *_PYPI,
            "github.com",
            "objects.githubusercontent.com",
        )  # uv fetches a Python from GitHub when it has none
    else:
        dirs = [
            Path(environ.get("PIPX_HOME") or home / ".local" / "share" / "pipx"),
            home / ".local" / "pipx",
            cache / "pip",
        ]
        hosts = _PYPI
    made: list[Path] = []
    for directory in dirs:
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError:
            continue
        made.append(Path(os.path.realpath(directory)))
    return Launched(write=tuple(made), hosts=hosts, said=found.said)


def _resolved(path: Path) -> Path:
    return Path(os.path.realpath(path))


def _unique(paths: Iterable[Path]) -> tuple[Path, ...]:
    seen: dict[Path, None] = {}
    for path in paths:
        seen.setdefault(path, None)
    return tuple(seen)


def _around(keep: Path, top: Path) -> list[Path]:
    """Every entry below `top` that is not on the way to `keep` (nor below it): denying
    them all leaves `keep` (and only it, of `top`) reachable."""
    out: list[Path] = []
    here = top
    for part in keep.relative_to(top).parts:
        try:
            entries = sorted(here.iterdir())
        except OSError:
            entries = []
        out += [entry for entry in entries if entry.name != part]
        here = here / part
    return out


class Build(msgspec.Struct, frozen=True):
    """What every policy of this run is built from: the grants, the person's home, bingo's
    home (`~/.bingo`), the project, and the proxy's address."""

    grants: SandboxGrants
    home: Path
    bingo_home: Path
    project: Path
    proxy: tuple[str, int] | None

    def _secrets(self) -> list[Path]:
        home = self.home
        return [home / name for name in (*SECRET_PATHS, *BROWSER_PROFILES)]

    def _protected(self) -> tuple[Path, ...]:
        project = _resolved(self.project)
        return _unique(project / name for name in PROTECTED)

    def _denied(self, exceptions: Sequence[Path] = ()) -> tuple[Path, ...]:
        """The secret paths, `sandbox.deny`, and `~/.bingo`, less what leads to each of
        `exceptions` (a plugin's own directory and its dataDir, inside it)."""
        denied = [_resolved(path) for path in self._secrets()]
        denied += [Path(grant.value) for grant in self.grants.deny]
        bingo = _resolved(self.bingo_home)
        inside = [_resolved(path) for path in exceptions if _resolved(path).is_relative_to(bingo)]
        if not inside:
            denied.append(bingo)
        else:
            kept = set(inside)
            around: set[Path] = set()
            for path in inside:
                around.update(_around(path, bingo))
            # An entry on the way to one exception may be the other exception's parent.
            denied += sorted(p for p in around if not any(k == p or k.is_relative_to(p) for k in kept))
        return _unique(denied)

    def _writable(self, extra: Iterable[Grant | Path]) -> tuple[Path, ...]:
        # The mechanism adds the process's own TMPDIR (it makes it) and the devices too.
        paths = [_resolved(self.project), *TERMINALS]
        paths += [Path(grant.value) for grant in self.grants.write]
        paths += [Path(item.value) if isinstance(item, Grant) else item for item in extra]
        return _unique(paths)

    def for_bash(self, readable: Sequence[Path] = (), writable: Sequence[Path] = ()) -> Policy:
        """The policy of a `bash` call (and everything it forks); `readable` are directories
        inside `~/.bingo` it may read too, `writable` ones it may write (an installed package's
        own and its data directory, for its hooks)."""
        return Policy(
            denied=self._denied(readable),
            writable=self._writable([_resolved(path) for path in writable]),
            protected=self._protected(),
            proxy=self.proxy,
        )

    def for_plugin(self, name: str, *, root: Path, data_dir: Path, launched: Launched | None = None) -> Policy:
        """The policy of plugin `name`'s process: bash's, plus its `dataDir` written, its own
        directory read (inside `~/.bingo`), its `plugins.<name>.sandbox.write` grants and what
        its launcher needs."""
        extra: list[Grant | Path] = [_resolved(data_dir), *self.grants.plugin(name).write]
        if launched is not None:
            extra += launched.write
        return Policy(
            denied=self._denied([root, data_dir]),
            writable=self._writable(extra),
            protected=self._protected(),
            proxy=self.proxy,
        )
