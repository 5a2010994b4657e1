"""Real Agent Skills nobody here wrote, for the tests of what people bring (INTERFACE.md
section 11): the skills directory of the npm package `tests/support/installs.SKILLS_PACKAGE`
(claude-code-skills 0.5.0, MIT), which ships 1,128 skills as their authors wrote them, CRLF
line ends included: among them anthropics/skills' own (brand-guidelines, internal-comms,
webapp-testing; Apache-2.0, each with its LICENSE.txt) and ux-ui-design-system, whose
1,189-character description is over section 11's 1,024. Fetched with `npm pack` and
unpacked once per machine under .cache/ (nothing of it is installed or run, nothing of it is
committed here); without npm these tests are skipped with the reason."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from tests.support import installs


def real_skills() -> Path:
    """The directory holding the real skills, one directory each."""
    if shutil.which("npm") is None:
        pytest.skip("npm is not installed: the tests of real skills fetch them from the npm registry")
    made = installs.npm_unpacked(installs.NPM_SKILLS, *installs.SKILLS_PACKAGE)
    assert not isinstance(made, str), made
    return made / "package" / "data" / "skills"
