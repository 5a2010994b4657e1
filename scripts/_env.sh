# Shared by scripts/walkthrough and scripts/test: make .venv with bingo installed in it.
# Sourced, not run. Installs only what is missing, so a second run is quick.
set -euo pipefail
root=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
cd "$root"
extras=${1:-}
if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
stamp=.venv/.installed${extras:+-$extras}
if [ ! -f "$stamp" ] || [ pyproject.toml -nt "$stamp" ]; then
  # (grep drops pip's warnings about package-index locations this machine does not have)
  .venv/bin/python -m pip install --quiet --disable-pip-version-check --upgrade pip 2>&1 | grep -v "^WARNING: Location" >&2 || true
  .venv/bin/python -m pip install --quiet --disable-pip-version-check -e ".${extras:+[$extras]}" 2>&1 | grep -v "^WARNING: Location" >&2 || true
  .venv/bin/bingo --help >/dev/null
  touch "$stamp"
fi
