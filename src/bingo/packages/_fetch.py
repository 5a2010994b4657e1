"""Where a package comes from: a `SOURCE` read (a directory, or a git repository with an
optional `#REF`) and fetched into a temporary directory (ADR-0048)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path
from typing import Final

import msgspec

from ..kernel.errors import UsageError
from ..kernel.programs import which
from ..wire import Json

__all__ = ["Fetched", "fetch"]

_GIT_TIMEOUT: Final = 300
"""Seconds a clone may take before it is given up (and nothing is left behind)."""
_MARKETPLACE_MAX: Final = 1_000_000
"""A marketplace.json larger than this is refused (a list of plugins is a few kilobytes)."""


class Fetched(msgspec.Struct, frozen=True):
    """A package's files in `directory`; the ref asked for and the commit got, for git. A
    marketplace fetched without `#NAME` has `listing`, its plugins (name, description)."""

    directory: Path
    ref: str | None = None
    commit: str | None = None
    listing: tuple[tuple[str, str], ...] = ()


def _is_git(source: str) -> bool:
    return source.startswith(("https://", "http://", "git@", "file://", "ssh://", "git://"))


def _git(args: list[str], cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    git = which("git")
    if git is None:
        raise UsageError("git is not installed, and this source is a git repository", "install git, then run it again")
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0"}
    return subprocess.run(
        [git, *args], cwd=cwd, env=env, capture_output=True, text=True, timeout=_GIT_TIMEOUT, check=False
    )


def fetch(source: str, into: Path) -> Fetched:
    """The package `source` names, its files copied or cloned into `into` (which must not
    exist; its parent is a staging directory this may use too). `SOURCE#NAME` on a
    marketplace is its plugin NAME; `#REF` otherwise a git ref. Raises UsageError with one
    line when the source is none bingo reads or fails."""
    location, _, fragment = source.partition("#")
    tree = into.parent / "tree"
    fetched = _fetch(location, fragment or None, tree)
    market = tree / MARKETPLACE
    if fetched.ref is None and market.is_file() and not _is_plugin(tree):
        plugins = _marketplace(market)
        if fragment:
            return _pick(plugins, fragment, tree, into, source)
        return Fetched(into, listing=tuple((name, _text(entry.get("description"))) for name, entry in plugins.items()))
    os.rename(tree, into)
    return msgspec.structs.replace(fetched, directory=into)


MARKETPLACE: Final = ".claude-plugin/marketplace.json"
"""The file that makes a repository a marketplace of Claude Code plugins."""


def _is_plugin(tree: Path) -> bool:
    return (tree / ".claude-plugin" / "plugin.json").is_file() or (tree / "plugin.json").is_file()


def _text(value: Json) -> str:
    return value[:200] if isinstance(value, str) else ""


def _marketplace(path: Path) -> dict[str, dict[str, Json]]:
    """The plugins a marketplace.json lists, by name."""
    from ..bridge._jsonfile import Unreadable, read_json
    from ..bridge._package import as_array, as_object

    value = read_json(path, _MARKETPLACE_MAX)
    if isinstance(value, Unreadable):
        raise UsageError(value.line(path), "fix the marketplace, or add a plugin's own directory")
    document = as_object(value) or {}
    found: dict[str, dict[str, Json]] = {}
    for entry in as_array(document.get("plugins")) or []:
        plugin = as_object(entry)
        if plugin is not None and isinstance(plugin.get("name"), str):
            found[str(plugin["name"])] = dict(plugin)
    return found


def _pick(plugins: dict[str, dict[str, Json]], name: str, tree: Path, into: Path, source: str) -> Fetched:
    """Plugin `name` of the marketplace in `tree`, moved or fetched into `into`."""
    entry = plugins.get(name)
    if entry is None:
        raise UsageError(
            f"the marketplace {source.partition('#')[0]} has no plugin {name!r}",
            f"its plugins: {', '.join(sorted(plugins)) or 'none'}",
        )
    where = entry.get("source")
    if isinstance(where, str):
        real = (tree / where).resolve()
        if not real.is_relative_to(tree.resolve()) or not real.is_dir():
            raise UsageError(f"the marketplace's plugin {name!r} is at {where!r}, not a directory in it", "")
        os.rename(real, into)
        shutil.rmtree(tree, ignore_errors=True)
        return Fetched(into)
    from ..bridge._package import as_object

    spec = as_object(where) or {}
    kind, ref = spec.get("source"), spec.get("ref")
    if kind == "github" and isinstance(spec.get("repo"), str):
        remote = f"https://github.com/{spec['repo']}.git"
    elif kind in ("url", "git") and isinstance(spec.get("url"), str):
        remote = str(spec["url"])
    elif kind == "npm" and isinstance(spec.get("package"), str):
        remote = f"npm:{spec['package']}"
    else:
        raise UsageError(
            f"the marketplace's plugin {name!r} has a source bingo does not read", "add it by its own source"
        )
    shutil.rmtree(tree, ignore_errors=True)
    fetched = _fetch(remote, str(ref) if isinstance(ref, str) else None, tree)
    os.rename(tree, into)
    return msgspec.structs.replace(fetched, directory=into)


def _fetch(location: str, ref: str | None, into: Path) -> Fetched:
    """`location` (a directory, a git repository, or `npm:SPEC`) into `into`; `ref` is the
    fragment, a ref for git (a directory with one and no .git keeps it for its marketplace)."""
    if location.startswith("npm:"):
        return _npm(location.removeprefix("npm:"), into)
    path = Path(location).expanduser()
    if not _is_git(location):
        if not path.exists():
            raise UsageError(
                f"{location} is not a directory, a git repository or an npm: package",
                "give a plugin's directory, a git URL (https://, git@, file://) or a repository's path",
            )
        if not path.is_dir():
            raise UsageError(f"{location} is not a directory", "give the plugin's directory")
        if (ref is None or (path / MARKETPLACE).is_file()) and not (path / ".git").exists():
            shutil.copytree(path, into, symlinks=True)
            return Fetched(into)
        location = str(path.absolute())
    args = ["clone", "--quiet", "--no-recurse-submodules"]
    if ref is None:
        args += ["--depth", "1"]
    try:
        done = _git([*args, "--", location, str(into)])
        if done.returncode != 0:
            raise UsageError(
                f"git could not clone {location}: {_last(done.stderr)}", "check the address and that you can reach it"
            )
        if ref is not None and not ((into / MARKETPLACE).is_file() and not _is_plugin(into)):
            done = _git(["checkout", "--quiet", ref, "--"], cwd=into)
            if done.returncode != 0:
                raise UsageError(f"{location} has no ref {ref!r}: {_last(done.stderr)}", "give a branch, tag or commit")
        head = _git(["rev-parse", "HEAD"], cwd=into).stdout.strip() or None
    except subprocess.TimeoutExpired as exc:
        raise UsageError(f"git took longer than {_GIT_TIMEOUT} s on {location}", "try again") from exc
    shutil.rmtree(into / ".git", ignore_errors=True)
    if ref is not None and (into / MARKETPLACE).is_file() and not _is_plugin(into):
        return Fetched(into, None, head)  # the fragment names one of its plugins
    return Fetched(into, ref, head)


def _npm(spec: str, into: Path) -> Fetched:
    """npm package `spec` (`NAME[@VERSION]`, or a tarball's path) unpacked into `into`, its
    dependencies installed there by npm, with no package's scripts run (nobody has seen
    them yet)."""
    import tarfile

    npm = which("npm")
    if npm is None:
        raise UsageError("npm is not installed, and this source is an npm package", "install node and npm")
    if not spec:
        raise UsageError("npm: needs a package name", "write npm:NAME or npm:NAME@VERSION")
    packed = into.parent / "npm-pack"
    packed.mkdir()
    common = ["--ignore-scripts", "--no-audit", "--no-fund", "--loglevel=error"]
    try:
        done = subprocess.run(
            [npm, "pack", "--json", "--pack-destination", str(packed), *common, "--", spec],
            cwd=packed,
            capture_output=True,
            text=True,
            timeout=_GIT_TIMEOUT,
            check=False,
        )
        if done.returncode != 0:
            raise UsageError(f"npm could not fetch {spec}: {_last(done.stderr)}", "check the name and version")
        [tarball] = sorted(packed.glob("*.tgz"))
        with tarfile.open(tarball) as archive:
            archive.extractall(packed / "unpacked", filter="data")
        os.rename(packed / "unpacked" / "package", into)
        if (into / "package.json").is_file() and '"dependencies"' in (into / "package.json").read_text("utf-8"):
            done = subprocess.run(
                [npm, "install", "--omit=dev", *common],
                cwd=into,
                capture_output=True,
                text=True,
                timeout=_GIT_TIMEOUT,
                check=False,
            )
            if done.returncode != 0:
                raise UsageError(f"npm could not install {spec}'s dependencies: {_last(done.stderr)}", "try again")
    except (subprocess.TimeoutExpired, OSError, ValueError, KeyError, IndexError, tarfile.TarError) as exc:
        raise UsageError(
            f"npm could not fetch {spec} ({type(exc).__name__}: {exc})", "check the name and version"
        ) from exc
    return Fetched(into, spec)


def _last(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[-1][:300] if lines else "no reason given"
