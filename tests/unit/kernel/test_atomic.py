"""`write_atomic`: a new file or a replacement, never through a link, never outside the
root it is kept to, its mode kept or the umask's, and no temporary left behind."""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Iterator
from pathlib import Path

import pytest

from bingo.kernel.atomic import write_atomic


@pytest.fixture
def umask_077() -> Iterator[None]:
    old = os.umask(0o077)
    try:
        yield
    finally:
        os.umask(old)


def test_a_new_file_gets_what_the_umask_leaves(tmp_path: Path, umask_077: None) -> None:
    write_atomic(tmp_path / "new.txt", b"x")
    assert stat.S_IMODE((tmp_path / "new.txt").stat().st_mode) == 0o600
    assert os.listdir(tmp_path) == ["new.txt"]


def test_a_replaced_file_keeps_its_mode(tmp_path: Path, umask_077: None) -> None:
    path = tmp_path / "run.sh"
    path.write_bytes(b"old")
    path.chmod(0o751)
    write_atomic(path, b"new")
    assert path.read_bytes() == b"new" and stat.S_IMODE(path.stat().st_mode) == 0o751


def test_a_link_at_the_target_is_refused_and_its_target_untouched(tmp_path: Path) -> None:
    (tmp_path / "theirs.txt").write_bytes(b"theirs")
    (tmp_path / "link.txt").symlink_to(tmp_path / "theirs.txt")
    with pytest.raises(OSError) as refused:
        write_atomic(tmp_path / "link.txt", b"mine")
    assert refused.value.errno == errno.ELOOP
    assert (tmp_path / "theirs.txt").read_bytes() == b"theirs" and (tmp_path / "link.txt").is_symlink()
    assert sorted(os.listdir(tmp_path)) == ["link.txt", "theirs.txt"]


def test_a_directory_linked_out_of_the_root_is_refused(tmp_path: Path) -> None:
    project, elsewhere = tmp_path / "p", tmp_path / "elsewhere"
    project.mkdir()
    elsewhere.mkdir()
    (project / ".bingo").symlink_to(elsewhere)
    with pytest.raises(OSError) as refused:
        write_atomic(project / ".bingo" / "settings.local.json", b"{}", within=project)
    assert refused.value.errno == errno.EXDEV
    assert os.listdir(elsewhere) == []
    write_atomic(project / "inside.json", b"{}", within=project)
    assert (project / "inside.json").read_bytes() == b"{}"
