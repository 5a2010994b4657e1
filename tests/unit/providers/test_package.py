"""The providers package: a complete, sorted `__all__`, and an import that costs no httpx."""

from __future__ import annotations

import subprocess
import sys

import bingo.providers


def test_all_is_sorted_and_every_name_resolves() -> None:
    names = bingo.providers.__all__
    assert names == sorted(names)
    for name in names:
        assert getattr(bingo.providers, name) is not None


def test_every_public_name_is_in_all() -> None:
    public = {
        name
        for name, value in vars(bingo.providers).items()
        if not name.startswith("_") and not isinstance(value, type(bingo.providers))
    }
    assert public == set(bingo.providers.__all__)


def test_importing_the_package_does_not_import_httpx() -> None:
    code = "import sys, bingo.providers; print('httpx' in sys.modules)"
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=5, check=True)
    assert done.stdout.strip() == "False"
