"""The environment a `bash` command allowed by a rule runs git with (ADR-0018, issue 23).

Owns one decision: what of a repository's own configuration git may not run when nobody
was asked. A repository's `.git/config` (and what it includes) can name programs git runs
on an everyday command: `core.fsmonitor` on `git status`, hooks (`core.hooksPath`, or the
scripts in `.git/hooks/`), filter drivers and `textconv` on `git diff`, an alias that runs
a shell, a pager, an editor, `core.sshCommand`, `gpg.program`, a credential helper. A rule
like `bash(git status*)` allows `git status`, not whatever the repository puts there.

`environment` answers the variables (`GIT_CONFIG_COUNT`, `GIT_CONFIG_KEY_n`,
`GIT_CONFIG_VALUE_n`: git's command-line scope, which outranks every file) that put back, for
each such key the repository's local or worktree configuration sets, the person's own value
(system or global) or else a value that runs nothing; and, for every repository the command
may reach, `core.fsmonitor=false`, `core.hooksPath=/dev/null` and `protocol.ext.allow=never`.
It learns the keys from `git config --list --show-scope --includes` in the call's directory,
which reads configuration and runs none of it. A listing it cannot read whole (past its
deadline or its size bound) fails closed: git is given a key it refuses, whose name says
why, so no git command runs under the rule.

Not covered: a command that goes to another repository (`cd x && git …`, `git -C x …`) gets
only the fixed three; keys this table does not name. The sandbox (INTERFACE.md §9) is the
bound for those.
"""

from __future__ import annotations

import asyncio
import os

from ..kernel.programs import which

__all__ = ["environment"]

_LISTING_SECONDS = 5.0
"""How long `git config --list` may take before the command runs with the fixed keys only."""
_LISTING_LIMIT = 4 * 1024 * 1024
"""Bytes of listing read at most: a configuration larger than this is not a person's."""

_UNREAD = "bingo.unread: this repository's configuration could not be read in time or is too large, so git does not run under a rule; ask the person"
"""A key git refuses (it holds blanks), so every git command fails and says this line."""
_ALWAYS: tuple[tuple[str, str], ...] = (
    ("core.fsmonitor", "false"),
    ("core.hooksPath", "/dev/null"),
    ("protocol.ext.allow", "never"),
)
"""Set for every command allowed by a rule, whichever repository it reaches."""

_NEUTRAL: dict[tuple[str, str], str] = {
    # (section, variable) of a key with no subsection → a value that runs nothing.
    ("core", "pager"): "cat",
    ("core", "editor"): ":",
    ("sequence", "editor"): ":",
    ("core", "sshcommand"): "ssh",
    ("core", "askpass"): "",
    ("core", "alternaterefscommand"): "",
    ("diff", "external"): "",
    ("gpg", "program"): "gpg",
    ("credential", "helper"): "",
}
_NEUTRAL_NAMED: dict[tuple[str, str], str] = {
    # (section, variable) of a key with a subsection (`filter.<driver>.clean`).
    ("diff", "textconv"): "cat",
    ("diff", "command"): "",
    ("filter", "clean"): "cat",
    ("filter", "smudge"): "cat",
    ("filter", "process"): "",
    ("merge", "driver"): "",
    ("credential", "helper"): "",
    ("remote", "uploadpack"): "git-upload-pack",
    ("remote", "receivepack"): "git-receive-pack",
    ("submodule", "update"): "checkout",
    ("trailer", "command"): "",
    ("trailer", "cmd"): "",
    ("difftool", "cmd"): "",
    ("mergetool", "cmd"): "",
    ("man", "cmd"): "",
    ("browser", "cmd"): "",
    ("gpg", "defaultkeycommand"): "",
}
_GPG_PROGRAMS = {"openpgp": "gpg", "x509": "gpgsm", "ssh": "ssh-keygen"}
"""`gpg.<format>.program`: each format's own default."""
_ANY_NAME = frozenset({"alias", "pager"})
"""Sections whose every key runs something: `alias.st = !sh …`, `pager.log = less`."""
_ANY_NAME_NEUTRAL = {"alias": "", "pager": "false"}
_LISTS = frozenset({"helper"})
"""Variables that are lists: an empty value clears the list, then the person's own follow."""
_THEIRS = frozenset({"local", "worktree"})
_OWN = frozenset({"system", "global", "command"})


def _neutral(key: str) -> str | None:
    """The value that runs nothing for a key that can run a program, or None for a key
    that runs none."""
    section, _, rest = key.partition(".")
    section = section.lower()
    subsection, _, variable = rest.rpartition(".")
    variable = variable.lower()
    if section in _ANY_NAME and not subsection:
        return _ANY_NAME_NEUTRAL[section]
    if subsection:
        if (section, variable) == ("gpg", "program"):
            return _GPG_PROGRAMS.get(subsection.lower(), "gpg")
        return _NEUTRAL_NAMED.get((section, variable))
    return _NEUTRAL.get((section, variable))


def _entries(listing: bytes) -> list[tuple[str, str, str]]:
    """`git config --list --show-scope -z`: scope NUL key LF value NUL, or scope NUL key NUL
    for a key with no value."""
    fields = listing.decode("utf-8", "surrogateescape").split("\0")
    entries: list[tuple[str, str, str]] = []
    for at in range(0, len(fields) - 1, 2):
        key, _, value = fields[at + 1].partition("\n")
        entries.append((fields[at], key, value))
    return entries


def overrides(listing: bytes) -> list[tuple[str, str]]:
    """The keys and values that neutralise what a repository's configuration (`listing`)
    would run: the fixed three, then, for each key of its own that runs a program, the
    person's own value(s) or the neutral one."""
    entries = _entries(listing)
    found: list[tuple[str, str]] = list(_ALWAYS)
    theirs = dict.fromkeys(key for scope, key, _ in entries if scope in _THEIRS and _neutral(key) is not None)
    for key in theirs:
        neutral = _neutral(key) or ""
        own = [value for scope, name, value in entries if scope in _OWN and name == key]
        if key.rpartition(".")[2].lower() in _LISTS:
            found += [(key, ""), *((key, value) for value in own)]
        else:
            found.append((key, own[-1] if own else neutral))
    return found


async def _listing(cwd: str) -> bytes | None:
    """The configuration git would read in `cwd`; b"" when there is none to read (no git,
    no directory, a configuration git itself refuses), None when it could not be read whole."""
    git = which("git")
    if git is None:
        return b""
    try:
        process = await asyncio.create_subprocess_exec(
            git,
            "config",
            "--list",
            "--show-scope",
            "--includes",
            "-z",
            cwd=cwd,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.DEVNULL,
        )
    except OSError:
        return b""
    chunks: list[bytes] = []
    size = 0
    whole = False
    try:
        async with asyncio.timeout(_LISTING_SECONDS):
            assert process.stdout is not None  # stdout=PIPE
            while chunk := await process.stdout.read(65_536):
                chunks.append(chunk)
                size += len(chunk)
                if size > _LISTING_LIMIT:
                    break
            else:
                await process.wait()
                whole = True
    except TimeoutError:
        pass
    finally:
        if process.returncode is None:
            try:
                process.kill()
            except ProcessLookupError:
                pass  # it ended on its own
            await process.wait()
    if not whole:
        return None  # cut short: past the deadline, or past the bound
    return b"".join(chunks) if process.returncode == 0 else b""


async def environment(cwd: str) -> dict[str, str]:
    """The variables to add to a rule-allowed command's environment run in `cwd`, after
    any `GIT_CONFIG_COUNT` already set (whose entries stay, and come first)."""
    listing = await _listing(cwd)
    pairs = overrides(listing) if listing is not None else [(_UNREAD, "")]
    try:
        start = max(int(os.environ.get("GIT_CONFIG_COUNT", "0")), 0)
    except ValueError:
        start = 0
    extra = {"GIT_CONFIG_COUNT": str(start + len(pairs))}
    for offset, (key, value) in enumerate(pairs):
        extra[f"GIT_CONFIG_KEY_{start + offset}"] = key
        extra[f"GIT_CONFIG_VALUE_{start + offset}"] = value
    return extra
