"""bingo's own log: `cut` keeps a foreign value short and says its length; the handler sets
its file aside by size during a run, keeping one old file."""

from __future__ import annotations

import logging
from pathlib import Path

from bingo.kernel.log import FOREIGN_MAX, RECORD_MAX, SizedFileHandler, cut


def test_a_short_value_is_kept_whole() -> None:
    assert cut("notice/odd") == "notice/odd"
    assert cut(b"a line\xff") == "a line\ufffd"
    assert cut("x" * FOREIGN_MAX) == "x" * FOREIGN_MAX


def test_a_long_value_is_cut_and_says_its_length_in_bytes() -> None:
    assert cut("x" * (8 * 1024 * 1024)) == "x" * FOREIGN_MAX + "… (8388608 bytes, cut)"
    assert cut(b"y" * (FOREIGN_MAX + 1)) == "y" * FOREIGN_MAX + f"… ({FOREIGN_MAX + 1} bytes, cut)"
    # Text is measured as UTF-8: what a person would find on disk or on the wire.
    assert cut("é" * 10, limit=4) == "éééé… (20 bytes, cut)"


def _logger(path: Path, max_bytes: int) -> tuple[logging.Logger, SizedFileHandler]:
    handler = SizedFileHandler(path, max_bytes=max_bytes)
    handler.setFormatter(logging.Formatter("%(message)s"))
    logger = logging.getLogger(f"test-log-{path}")
    logger.propagate = False
    logger.handlers[:] = [handler]
    logger.setLevel(logging.INFO)
    return logger, handler


def test_the_file_is_set_aside_past_its_bound_during_a_run_keeping_one_old_file(tmp_path: Path) -> None:
    path = tmp_path / "bingo.log"
    logger, handler = _logger(path, max_bytes=1000)
    try:
        for n in range(500):
            logger.info("record %03d %s", n, "z" * 80)
    finally:
        handler.close()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["bingo.log", "bingo.log.1"]
    # Each file is past its bound by one record at most.
    assert path.stat().st_size <= 1000 + 100 and (tmp_path / "bingo.log.1").stat().st_size <= 1000 + 100
    assert path.read_text(encoding="utf-8").endswith("record 499 " + "z" * 80 + "\n")


def test_nothing_is_written_until_the_first_record(tmp_path: Path) -> None:
    _, handler = _logger(tmp_path / "bingo.log", max_bytes=1000)
    handler.close()
    assert list(tmp_path.iterdir()) == []


def test_a_record_left_whole_by_its_site_is_cut_by_the_handler(tmp_path: Path) -> None:
    path = tmp_path / "bingo.log"
    logger, handler = _logger(path, max_bytes=10 * RECORD_MAX)
    try:
        logger.info("%s", "q" * (RECORD_MAX * 3))
    finally:
        handler.close()
    assert path.read_text(encoding="utf-8") == "q" * RECORD_MAX + f"… ({RECORD_MAX * 3} bytes, cut)\n"
