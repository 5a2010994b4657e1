"""Which of a project's paths git would not track: the `.gitignore` files of every directory
(and `.git/info/exclude`), read whether or not the project is a git repository.

Owns the matching, through `pathspec`'s `GitIgnoreSpec` (the gitignore dialect: negation,
anchoring, `**`, directory-only patterns and git's own precedence quirks), one spec per
`.gitignore`, the deepest deciding first as git does. It does not walk the tree (`_scan`
does, asking `Ignores.below` for each directory it enters and `ignored` for each name), and it
does not read git's global excludes (`core.excludesFile`): a checkpoint records more, never
less, than the project's own rules say.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathspec import GitIgnoreSpec

__all__ = ["Ignores", "read_spec"]

_MAX_IGNORE_BYTES = 1 << 20
"""A `.gitignore` longer than this is read only this far: a rule file, not data."""


def read_spec(path: str) -> GitIgnoreSpec | None:
    """The rules of the gitignore-format file at `path`, or None when there is none (or it
    cannot be read: then nothing more is ignored, so more is recorded, never less)."""
    try:
        with open(path, "rb") as file:
            data = file.read(_MAX_IGNORE_BYTES)
    except OSError:
        return None
    from pathspec import GitIgnoreSpec

    lines = data.decode("utf-8", "surrogateescape").splitlines()
    spec = GitIgnoreSpec.from_lines(lines)
    return spec if spec.patterns else None


@dataclass(frozen=True, slots=True)
class Ignores:
    """The rules in force in one directory: each spec with the directory (relative to the
    project, "" for its root, else ending in "/") its patterns are relative to, the deepest
    last."""

    specs: tuple[tuple[str, GitIgnoreSpec], ...] = ()
    key: tuple[int, ...] = ()
    """The serial numbers of the specs: equal keys, equal rules."""

    def below(self, directory: str, spec: GitIgnoreSpec | None, serial: int = 0) -> Ignores:
        """The rules in force in `directory` (relative, "" or ending in "/"), whose own
        `.gitignore` is `spec` (numbered `serial` by whoever parsed it)."""
        return self if spec is None else Ignores((*self.specs, (directory, spec)), (*self.key, serial))

    def ignored(self, path: str, is_dir: bool) -> bool:
        """Whether git would ignore `path` (relative to the project, no trailing "/"): the
        deepest file whose patterns match decides, and its last matching pattern within it."""
        for base, spec in reversed(self.specs):
            rel = path[len(base) :] + ("/" if is_dir else "")
            decided = spec.check_file(rel).include
            if decided is not None:
                return decided
        return False
