# Shared by scripts/walkthrough and scripts/test: make .venv with bingo installed in it.
# Sourced, not run. Installs only what is missing, so a second run is quick.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
extras=${1:-}
# .venv, and uv (from PyPI; the `test` extra names it too) in it first, so that uv installs the
# rest, here and in the tests' own virtualenvs (tests/support/installs.py), in a third of pip's
# time (ADR-0041); where it cannot be had, pip installs everything as before.
if [ ! -x .venv/bin/python ]; then
  python3 -m venv --without-pip .venv
fi
if [ ! -x .venv/bin/uv ]; then
  # (grep drops pip's warnings about package-index locations this machine does not have)
  if .venv/bin/python -m pip --version >/dev/null 2>&1; then
    .venv/bin/python -m pip install --quiet --disable-pip-version-check uv 2>&1 | grep -v "^WARNING: Location" >&2 || true
  else
    python3 -m pip --python .venv/bin/python install --quiet --disable-pip-version-check uv 2>&1 | grep -v "^WARNING: Location" >&2 || true
  fi
fi
stamp=.venv/.installed${extras:+-$extras}
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  # uv installs (with pip, for whoever uses .venv's pip later) and compiles the bytecode, as pip
  # does; pip where uv could not be had or failed.
  if [ ! -x .venv/bin/uv ] || ! .venv/bin/uv pip install --quiet --python .venv/bin/python --compile-bytecode \
    pip -e ".${extras:+[$extras]}"; then
    .venv/bin/python -m pip --version >/dev/null 2>&1 || .venv/bin/python -m ensurepip --upgrade >/dev/null
    .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip 2>&1 | grep -v "^WARNING: Location" >&2 || true
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".${extras:+[$extras]}" 2>&1 | grep -v "^WARNING: Location" >&2 || true
  fi
  .venv/bin/bingo --help >/dev/null
  touch "$stamp"
fi
