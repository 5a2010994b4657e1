"""The glob tool and its pattern grammar: matches newest first, bounded, never in `.git`."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from bingo.kernel.interfaces import ToolCall
from bingo.tools import GlobTool
from bingo.tools._common import glob_regex
from bingo.wire import Json, TextPart, ToolOutput


def _glob(cwd: Path, raw: Json) -> ToolOutput:
    async def go() -> ToolOutput:
        async with asyncio.timeout(5):
            call = ToolCall(call_id="c1", input=raw, cwd=str(cwd), session="s", turn=1)
            return await GlobTool().call(call)

    return asyncio.run(go())


def _text(output: ToolOutput) -> str:
    (part,) = output.parts
    assert isinstance(part, TextPart)
    return part.text


def _touch(root: Path, relative: str, mtime: int = 1_000_000) -> None:
    path = root / relative
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(relative)
    os.utime(path, (mtime, mtime))


def test_glob_lists_matches_at_any_depth_newest_first(tmp_path: Path) -> None:
    _touch(tmp_path, "a.py", 100)
    _touch(tmp_path, "pkg/b.py", 300)
    _touch(tmp_path, "pkg/deep/c.py", 200)
    _touch(tmp_path, "pkg/readme.md", 400)
    output = _glob(tmp_path, {"pattern": "**/*.py"})
    assert not output.is_error
    assert _text(output) == "pkg/b.py\npkg/deep/c.py\na.py"


def test_glob_orders_files_of_the_same_age_by_path(tmp_path: Path) -> None:
    for name in ("z.txt", "b.txt", "m/a.txt"):
        _touch(tmp_path, name)
    assert _text(_glob(tmp_path, {"pattern": "**/*.txt"})) == "b.txt\nm/a.txt\nz.txt"


def test_glob_star_matches_only_at_the_top(tmp_path: Path) -> None:
    _touch(tmp_path, "top.py")
    _touch(tmp_path, "sub/inner.py")
    assert _text(_glob(tmp_path, {"pattern": "*.py"})) == "top.py"


def test_glob_never_looks_inside_git(tmp_path: Path) -> None:
    _touch(tmp_path, ".git/hooks/pre-commit.py")
    _touch(tmp_path, ".github/ci.py")
    assert _text(_glob(tmp_path, {"pattern": "**/*.py"})) == ".github/ci.py"


def test_glob_searches_under_path_and_shows_paths_from_the_working_directory(
    tmp_path: Path,
) -> None:
    _touch(tmp_path, "src/app/main.py")
    _touch(tmp_path, "other/main.py")
    assert _text(_glob(tmp_path, {"pattern": "**/main.py", "path": "src"})) == "src/app/main.py"


def test_glob_walks_into_literal_leading_directories(tmp_path: Path) -> None:
    _touch(tmp_path, "src/x/t.py")
    _touch(tmp_path, "lib/x/t.py")
    assert _text(_glob(tmp_path, {"pattern": "src/**/t.py"})) == "src/x/t.py"


def test_glob_takes_an_absolute_pattern(tmp_path: Path) -> None:
    _touch(tmp_path, "d/f.log")
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    output = _glob(elsewhere, {"pattern": f"{tmp_path}/**/*.log"})
    assert _text(output) == str(tmp_path / "d" / "f.log")


def test_glob_lists_at_most_500_and_counts_the_rest(tmp_path: Path) -> None:
    for n in range(505):
        _touch(tmp_path, f"f{n:03}.txt")
    lines = _text(_glob(tmp_path, {"pattern": "*.txt"})).splitlines()
    assert len(lines) == 501
    assert lines[0] == "f000.txt"
    assert lines[-1] == "[5 more files not shown: narrow the pattern or the path]"


def test_glob_with_no_match_says_so_without_error(tmp_path: Path) -> None:
    output = _glob(tmp_path, {"pattern": "**/*.rs"})
    assert not output.is_error
    assert _text(output) == "No files match '**/*.rs' under the working directory."


def test_glob_in_a_missing_directory_is_an_error(tmp_path: Path) -> None:
    output = _glob(tmp_path, {"pattern": "*", "path": "gone"})
    assert output.is_error
    assert "does not exist" in _text(output)


def test_glob_with_an_unbalanced_brace_is_an_error(tmp_path: Path) -> None:
    output = _glob(tmp_path, {"pattern": "*.{py"})
    assert output.is_error
    assert "unbalanced" in _text(output)


def test_glob_answers_bad_input_with_an_error_naming_the_field(tmp_path: Path) -> None:
    output = _glob(tmp_path, {"pattern": ["*"]})
    assert output.is_error
    assert "$.pattern" in _text(output)


def test_glob_regex_grammar() -> None:
    cases: list[tuple[str, str, bool]] = [
        ("**/*.py", "a.py", True),
        ("**/*.py", "a/b/c.py", True),
        ("*.py", "a/b.py", False),
        ("src/**", "src/a/b", True),
        ("a/**/b", "a/b", True),
        ("a/**/b", "a/x/y/b", True),
        ("?.txt", "ab.txt", False),
        ("[ab].txt", "b.txt", True),
        ("[!ab].txt", "b.txt", False),
        ("[!ab].txt", "c.txt", True),
        ("*.{py,md}", "x.md", True),
        ("*.{py,md}", "x.rs", False),
        ("[[]x", "[x", True),
        ("a[b", "a[b", True),
        ("*.py", ".hidden.py", True),
        ("x*", "x/y", False),
    ]
    for pattern, path, expected in cases:
        assert (glob_regex(pattern).fullmatch(path) is not None) is expected, (pattern, path)
