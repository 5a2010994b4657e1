"""`kernel.files`: what bingo opens on someone's behalf is a regular file, opened without
blocking, never of /proc or /sys; a layer's file is read only inside its layer."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import pytest

from bingo.kernel.files import LayerFile, LeftOut, NotRegular, inside, open_regular, read_layer_file


def test_a_regular_file_opens_and_a_fifo_a_device_and_proc_do_not(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x")
    fd, info = open_regular(tmp_path / "a.txt")
    os.close(fd)
    assert info.st_size == 1
    os.mkfifo(tmp_path / "pipe")
    with pytest.raises(NotRegular) as fifo:
        open_regular(tmp_path / "pipe")  # at once: no writer is waited for
    assert fifo.value.what == "a FIFO (a named pipe)"
    with pytest.raises(NotRegular) as device:
        open_regular("/dev/null")
    assert device.value.what == "a character device"
    for pseudo in ("/proc/self/environ", "/proc/self/status"):
        with pytest.raises(NotRegular) as proc:
            open_regular(pseudo)
        assert proc.value.what.startswith("a file of /proc or /sys")
    with pytest.raises(NotRegular) as directory:
        open_regular(tmp_path)
    assert directory.value.what == "a directory"


def test_a_link_is_followed_only_when_asked(tmp_path: Path) -> None:
    (tmp_path / "a.txt").write_text("x")
    (tmp_path / "link").symlink_to("a.txt")
    os.close(open_regular(tmp_path / "link")[0])
    with pytest.raises(OSError) as refused:
        open_regular(tmp_path / "link", follow=False)
    assert refused.value.errno == errno.ELOOP
    (tmp_path / "env").symlink_to("/proc/self/environ")
    with pytest.raises(NotRegular):
        open_regular(tmp_path / "env")  # the link's target decides, not its name


def test_inside_follows_links_on_both_sides(tmp_path: Path) -> None:
    (tmp_path / "p" / "src").mkdir(parents=True)
    (tmp_path / "p" / "out").symlink_to(tmp_path)
    assert inside(tmp_path / "p" / "src", tmp_path / "p")
    assert inside(tmp_path / "p", tmp_path / "p")
    assert not inside(tmp_path / "p" / "out" / "x", tmp_path / "p")
    assert not inside(tmp_path / "p2", tmp_path / "p")  # a prefix of the name is not a parent


def test_a_layer_file_is_read_bounded_or_left_out_with_the_reason(tmp_path: Path) -> None:
    layer = tmp_path / "layer"
    layer.mkdir()
    (layer / "ok.md").write_text("hello world")
    assert read_layer_file(layer / "ok.md", layer=layer, limit=5, layer_name="the project") == LayerFile(
        layer / "ok.md", b"hello", 11
    )
    assert read_layer_file(layer / "none.md", layer=layer, limit=5, layer_name="the project") is None
    (tmp_path / "out.md").write_text("secret")
    (layer / "out.md").symlink_to(tmp_path / "out.md")
    assert read_layer_file(layer / "out.md", layer=layer, limit=5, layer_name="the project") == LeftOut(
        layer / "out.md", f"it is a link to {tmp_path / 'out.md'}, outside the project; only files inside it are read"
    )
    os.mkfifo(layer / "pipe.md")
    assert read_layer_file(layer / "pipe.md", layer=layer, limit=5, layer_name="the project") == LeftOut(
        layer / "pipe.md", "it is a FIFO (a named pipe), not a regular file"
    )


def test_a_terminal_is_refused_at_once_not_read_until_a_key_is_pressed() -> None:
    leader, follower = os.openpty()
    try:
        with pytest.raises(NotRegular) as tty:
            open_regular(os.ttyname(follower))
        assert tty.value.what == "a character device"
    finally:
        os.close(leader)
        os.close(follower)
