# Sourced by scripts/_env.sh and scripts/test, in the repository: make .venv and install uv
# (from PyPI; the `test` extra names it too) in it first, so that uv installs the rest, .venv's
# and the tests' own virtualenvs (tests/support/installs.py): in a third of pip's time
# (ADR-0041). Quick when done; where it cannot be had, pip installs everything as before.
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
