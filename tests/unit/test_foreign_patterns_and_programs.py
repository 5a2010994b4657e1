"""What a repository, a plugin or a model chooses is never given to a backtracking regex engine
nor looked up on PATH's relative entries (ADR-0050, ADR-0051).

Read from the source, as test_architecture.py reads imports: a new `re.compile(x)` of a
pattern that is not bingo's own text, or a new `shutil.which`, fails here before any test of
behaviour could miss the hang or the program it brings."""

from __future__ import annotations

import ast
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "bingo"

_RE_CALLS = frozenset({"compile", "match", "fullmatch", "search", "finditer", "findall", "sub", "split"})
_RE_ALLOWED = {
    # The channel's own directories, each `re.escape`d, as alternatives with a look-ahead
    # (which RE2 has not): literals only, no quantifier to backtrack over.
    "surfaces/channel/_paths.py",
}
_WHICH_ALLOWED = {
    # The one lookup: PATH's absolute directories only.
    "kernel/programs.py",
    # `--check` says whether a hook's program is on PATH as the hook's own `bash -c` will
    # look for it (the person's shell's lookup, ADR-0050).
    "bring/check.py",
}


def _ours(node: ast.expr) -> bool:
    """Whether a pattern argument is bingo's own text: a literal, a module constant, or
    literals and constants put together."""
    if isinstance(node, ast.Constant | ast.Name):
        return True
    if isinstance(node, ast.BinOp):
        return _ours(node.left) and _ours(node.right)
    if isinstance(node, ast.JoinedStr):
        return all(
            isinstance(part, ast.Constant) or (isinstance(part, ast.FormattedValue) and _ours(part.value))
            for part in node.values
        )
    return False


def _calls() -> list[tuple[str, int, str, ast.Call]]:
    found: list[tuple[str, int, str, ast.Call]] = []
    for path in sorted(SRC.rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in ast.walk(tree):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
                owner = node.func.value
                if isinstance(owner, ast.Name):
                    found.append((path.relative_to(SRC).as_posix(), node.lineno, f"{owner.id}.{node.func.attr}", node))
    return found


def test_no_pattern_from_outside_is_compiled_by_pythons_re() -> None:
    wrong = [
        f"{where}:{line} {name}"
        for where, line, name, call in _calls()
        if name.startswith("re.")
        and name[3:] in _RE_CALLS
        and call.args
        and not _ours(call.args[0])
        and where not in _RE_ALLOWED
    ]
    assert wrong == [], "use kernel.patterns.linear (RE2) for a pattern bingo did not write: " + ", ".join(wrong)


def test_programs_are_looked_up_only_in_paths_absolute_directories() -> None:
    wrong = [
        f"{where}:{line}" for where, line, name, _ in _calls() if name == "shutil.which" and where not in _WHICH_ALLOWED
    ]
    assert wrong == [], "use kernel.programs.which: " + ", ".join(wrong)
