"""The pin is checked once per start (ADR-0048): discovery hashes each recorded package, and
`package_parts` (what bring loads skills, commands and hooks from) takes that verdict rather
than hashing it again; one byte changed is still caught, at this start and the next."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from bingo.bridge import _package, discover
from bingo.bridge._package import Installed, digest_of, package_parts, write_record


def _installed(home: Path, name: str) -> Path:
    root = home / "plugins" / name
    (root / ".claude-plugin").mkdir(parents=True)
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps({"name": name}), encoding="utf-8")
    (root / "commands").mkdir()
    (root / "commands" / "hi.md").write_text("Say hi\n", encoding="utf-8")
    return root


def _record(home: Path, *roots: Path) -> None:
    record: dict[str, Installed] = {}
    for root in roots:
        digest = digest_of(root)
        assert digest is not None
        record[root.name] = Installed(source=str(root), version="", kind="claude", digest=digest)
    write_record(home / "plugins", record)


def test_each_package_is_hashed_once_per_start_and_one_byte_changed_is_still_caught(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home" / ".bingo"
    alpha, beta = _installed(home, "alpha"), _installed(home, "beta")
    _record(home, alpha, beta)
    hashed: list[str] = []
    real = _package._fingerprint  # pyright: ignore[reportPrivateUsage]

    def counting(root: Path) -> tuple[str | None, dict[str, str]]:
        hashed.append(root.name)
        return real(root)

    monkeypatch.setattr(_package, "_fingerprint", counting)

    # One start: discovery, then bring's parts.
    discover(home=home, project=tmp_path / "project")
    parts = package_parts(home, None)
    assert sorted(hashed) == ["alpha", "beta"]  # once each, not twice
    assert [root.name for root, _ in parts] == ["alpha", "beta"]

    # One byte changed after add: the next start refuses it in both places.
    with (beta / "commands" / "hi.md").open("ab") as file:
        file.write(b"!")
    hashed.clear()
    sources = {source.name: source for source in discover(home=home, project=tmp_path / "project")}
    assert sources["beta"].problem is not None and "files changed since" in sources["beta"].problem
    assert [root.name for root, _ in package_parts(home, None)] == ["alpha"]
    assert sorted(hashed) == ["alpha", "beta"]

    # A verdict serves one start: a later look (no discovery before it) hashes again.
    hashed.clear()
    assert [root.name for root, _ in package_parts(home, None)] == ["alpha"]
    assert sorted(hashed) == ["alpha", "beta"]
