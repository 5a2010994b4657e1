# Shared by scripts/walkthrough and scripts/test: make .venv with bingo installed in it.
# Sourced, not run. Installs only what is missing, so a second run is quick.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
extras=${1:-}
source scripts/_uv.sh
stamp=.venv/.installed${extras:+-$extras}
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  # uv installs (with pip, for whoever uses .venv's pip later) and compiles the bytecode, as pip
  # would: a third of pip's time (ADR-0041). pip does it where uv could not be had or failed.
  if [ ! -x .venv/bin/uv ] || ! .venv/bin/uv pip install --quiet --python .venv/bin/python --compile-bytecode \
    pip -e ".${extras:+[$extras]}"; then
    .venv/bin/python -m pip --version >/dev/null 2>&1 || .venv/bin/python -m ensurepip --upgrade >/dev/null
    # (grep drops pip's warnings about package-index locations this machine does not have)
    .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip 2>&1 | grep -v "^WARNING: Location" >&2 || true
    .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".${extras:+[$extras]}" 2>&1 | grep -v "^WARNING: Location" >&2 || true
  fi
  .venv/bin/bingo --help >/dev/null
  touch "$stamp"
fi
