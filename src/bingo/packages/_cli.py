"""`bingo plugin add|list|remove|update` (INTERFACE.md §12; ADR-0048)."""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

from ..bridge._package import Installed, Package, digest_of, files_of, read_package, read_record, write_record
from ..kernel.errors import UsageError
from ..kernel.home import bingo_home, data_dir
from ..kernel.settings import find_project
from ..surfaces import escape
from ._fetch import fetch

__all__ = ["run_plugin"]

_USAGE = (
    "write bingo plugin add SOURCE [--project] [--yes], bingo plugin list, bingo plugin remove NAME [--project], "
    "or bingo plugin update [NAME] [--yes]"
)


def run_plugin(argv: list[str]) -> int:
    """Run `bingo plugin …` with `argv` the words after `plugin`; the exit status."""
    if not argv or argv[0] not in ("add", "list", "remove", "update"):
        raise UsageError("bingo plugin takes add, list, remove or update", _USAGE)
    action, rest = argv[0], argv[1:]
    flags = {word for word in rest if word.startswith("-")}
    words = [word for word in rest if not word.startswith("-")]
    unknown = flags - {"--project", "--yes", "-y"}
    if unknown:
        raise UsageError(f"bingo plugin {action} does not take {sorted(unknown)[0]}", _USAGE)
    home = bingo_home(dict(os.environ))
    user_home = Path(os.environ.get("HOME") or Path.home())
    project = find_project(Path.cwd(), user_home)
    plugins = project / ".bingo" / "plugins" if "--project" in flags else home / "plugins"
    if action == "list":
        if words:
            raise UsageError("bingo plugin list takes no name", _USAGE)
        return _list(home, project)
    if action == "update":
        if len(words) > 1:
            raise UsageError("bingo plugin update takes at most one NAME", _USAGE)
        return _update(words[0] if words else None, plugins, home, yes=bool(flags & {"--yes", "-y"}))
    if len(words) != 1:
        raise UsageError(f"bingo plugin {action} takes one {'SOURCE' if action == 'add' else 'NAME'}", _USAGE)
    if action == "remove":
        return _remove(words[0], plugins, home)
    return _add(words[0], plugins, home, yes=bool(flags & {"--yes", "-y"}))


def _show(package: Package, source: str) -> str:
    """What `add` shows before installing: every part, every command that will run."""
    lines = [f"{package.name} {package.version} ({_KINDS[package.kind]}) from {source}"]
    if package.description:
        lines.append(f"  {package.description[:300]}")
    if package.entry:
        lines.append(f"  plugin process: {' '.join(package.entry)}")
    for name, server in package.servers:
        if server.url is not None:
            lines.append(f"  MCP server {name}: {server.url}")
        else:
            lines.append(f"  MCP server {name}: {' '.join([server.command or '', *server.args])}")
            lines += [f"    env {key}={value}" for key, value in sorted(server.env.items())]
    lines += [f"  skill {name}" for name in package.skills]
    lines += [f"  command /{name} (or /{package.name}:{name})" for name in package.commands]
    lines += [f"  agent {name}" for name in package.agents]
    for hook in package.hooks:
        matcher = f" [{hook.matcher}]" if hook.matcher else ""
        lines.append(f"  hook {hook.event}{matcher}: {hook.command}")
    lines += [f"  not loaded: {problem}" for problem in package.problems]
    lines += [f"  warning: {warning}" for warning in package.warnings]
    lines.append("  sandbox grants asked for: none (its processes run under your sandbox policy)")
    return "\n".join(escape(line) for line in lines)


_KINDS = {"bingo": "bingo plugin", "claude": "Claude Code plugin", "agent": "Agent Plugins package"}


def _ask(name: str) -> bool:
    sys.stderr.write(escape(f"Install {name}? [y/N] "))
    sys.stderr.flush()
    answer = sys.stdin.readline().strip().lower()
    return answer in ("y", "yes")


def _changes(old: Path, new: Path) -> list[str]:
    """Each file added, removed or changed from the installed `old` to the fetched `new`."""
    before, after = files_of(old), files_of(new)
    lines: list[str] = []
    for label in sorted(set(before) | set(after)):
        if label == ".":
            continue
        if label not in before:
            lines.append(f"added {label}")
        elif label not in after:
            lines.append(f"removed {label}")
        elif before[label] != after[label] and not (old / label).is_dir():
            lines.append(f"changed {label}")
    return lines[:200]


def _update(name: str | None, plugins: Path, home: Path, *, yes: bool) -> int:
    record = read_record(plugins)
    names = [name] if name is not None else sorted(record)
    if name is not None and name not in record:
        raise UsageError(
            f"no plugin named {name} was added with bingo plugin add in {plugins}", "see bingo plugin list"
        )
    worst = 0
    for each in names:
        worst = max(worst, _add(record[each].source, plugins, home, yes=yes, updating=each))
    return worst


def _add(source: str, plugins: Path, home: Path, *, yes: bool, updating: str | None = None) -> int:
    plugins.mkdir(parents=True, exist_ok=True)
    staging = Path(tempfile.mkdtemp(prefix=".add-", dir=plugins))
    try:
        fetched = fetch(source, staging / "package")
        if fetched.listing:
            print(escape(f"{source} is a marketplace; add one of its plugins with bingo plugin add {source}#NAME:"))
            print("\n".join(escape(f"  {name}  {about}".rstrip()) for name, about in fetched.listing))
            return 0
        probe = read_package(fetched.directory, data_dir(home) / "plugins" / "_")
        if isinstance(probe, str):
            raise UsageError(
                f"{source} holds no plugin bingo reads: {probe}", "check the source (section 12 of the docs)"
            )
        target = plugins / probe.name
        data = data_dir(home) / "plugins" / probe.name
        package = read_package(fetched.directory, data, target)
        assert not isinstance(package, str)
        again = package.name in read_record(plugins)  # added again: its new bytes replace the old
        if (target.exists() or target.is_symlink()) and not again:
            raise UsageError(
                f"a plugin named {package.name} is already installed at {target}",
                f"run bingo plugin remove {package.name} first",
            )
        if updating is not None:
            if package.name != updating:
                raise UsageError(f"{source} now holds plugin {package.name}, not {updating}", "add it by its name")
            changes = _changes(target, fetched.directory)
            if not changes:
                print(escape(f"{updating} is up to date with {source}."))
                return 0
            print(escape(f"{updating}: what changed since it was added:"))
            print("\n".join(escape(f"  {line}") for line in changes))
        print(_show(package, source))
        if not yes:
            if not (sys.stdin.isatty() and sys.stderr.isatty()):
                raise UsageError(
                    f"{package.name} was not installed: nobody here can say yes", "pass --yes to install it as shown"
                )
            if not _ask(package.name):
                print("Not installed.")
                return 1
        if again and (target.exists() or target.is_symlink()):
            os.rename(target, staging / "old")
        os.rename(fetched.directory, target)
        digest = digest_of(target)
        if digest is None:
            shutil.rmtree(target, ignore_errors=True)
            raise UsageError(f"{package.name} cannot be pinned (too large or unreadable)", "check the package")
        record = read_record(plugins)
        record[package.name] = Installed(
            source=source,
            version=package.version,
            kind=package.kind,
            digest=digest,
            ref=fetched.ref,
            commit=fetched.commit,
        )
        write_record(plugins, record)
        print(escape(f"Installed {package.name} into {target}, pinned to sha256 {digest[:16]}."))
        return 0
    finally:
        shutil.rmtree(staging, ignore_errors=True)


def _state(directory: Path, installed: Installed) -> str:
    if not directory.is_dir():
        return "missing"
    return "as pinned" if digest_of(directory) == installed.digest else "CHANGED since add: not started"


def _list(home: Path, project: Path) -> int:
    lines: list[str] = []
    for layer, plugins in (("user", home / "plugins"), ("project", project / ".bingo" / "plugins")):
        for name, installed in sorted(read_record(plugins).items()):
            at = f" @ {installed.commit[:12]}" if installed.commit else ""
            lines.append(
                f"{name} {installed.version or '-'} ({layer}) from {installed.source}{at}: {_state(plugins / name, installed)}"
            )
    print("\n".join(escape(line) for line in lines) if lines else "No plugins installed by bingo plugin add.")
    return 0


def _remove(name: str, plugins: Path, home: Path) -> int:
    target = plugins / name
    record = read_record(plugins)
    if name.startswith(".") or "/" in name or (not target.is_dir() and name not in record):
        raise UsageError(f"no plugin named {name} in {plugins}", "bingo plugin list shows what is installed")
    shutil.rmtree(target, ignore_errors=True)
    shutil.rmtree(data_dir(home) / "plugins" / name, ignore_errors=True)
    if name in record:
        del record[name]
        write_record(plugins, record)
    print(escape(f"Removed {name} and its data."))
    return 0
