"""What the tests install once per machine, outside .venv: Synapse's own virtualenv for the
Matrix tests, the npm MCP servers, the TypeScript ACP SDK, a package of real skills, the real
published plugins (ECC from npm, gemini-mcp-connect from PyPI) and the virtualenv that
gemini-mcp-connect's server runs in. Each is made under a file lock
in the gitignored .cache/, so parallel test processes (xdist's workers) and the background
job `scripts/test` starts make it once between them; a second run finds it and installs
nothing (ADR-0041).

Standard library only: `scripts/test` runs this file with the machine's python3 before
.venv exists (`python3 tests/support/installs.py`), so the installs run beside .venv's
instead of inside the tests; a test that needs one waits on its lock. Run as a script it
makes them all at once and exits 0 whatever happens: a test that finds one missing makes it
again and says why it could not.
"""

from __future__ import annotations

import fcntl
import json
import shutil
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
CACHE = REPO / ".cache"

SYNAPSE_VENV = REPO / ".synapse-venv"
SYNAPSE_STAMP = SYNAPSE_VENV / ".installed"
SYNAPSE_LOCK = CACHE / "synapse-venv.lock"
SYNAPSE = "matrix-synapse"

NPM_MCP = CACHE / "npm-mcp"
MCP_SERVERS = {
    "@modelcontextprotocol/server-everything": "2026.8.31",
    "@modelcontextprotocol/server-filesystem": "2026.8.31",
}
"""The npm MCP servers the tests run, pinned so a fresh machine runs what this one did."""
NPM_ACP = CACHE / "npm-acp"
ACP_SDK = {"@agentclientprotocol/sdk": "2.4.0"}
"""The TypeScript ACP client's SDK, pinned."""

NPM_SKILLS = CACHE / "npm-skills"
SKILLS_PACKAGE = ("claude-code-skills", "0.5.0")
"""An npm package (MIT) that ships 1,128 Agent Skills as their authors wrote them, among them
anthropics/skills' own (Apache-2.0, each with its LICENSE.txt): the tests read real skills
nobody here wrote from it, unpacked (never installed: no dependency, no script of it runs)."""

NPM_PLUGINS = CACHE / "npm-plugins"
ECC_PACKAGE = ("ecc-universal", "2.0.0")
"""A real Claude Code plugin (MIT; plugin `ecc`: 197 skills, commands, 29 command hooks, and a
`.mcp.json` its manifest opts out of with `"mcpServers": {}`), unpacked as npm ships it: the
plugin tests make it a local git repository and `bingo plugin add` it (nothing of it is
committed here, no dependency of it installed)."""

PYPI_PLUGINS = CACHE / "pypi-plugins"
GEMINI_PACKAGE = ("gemini-mcp-connect", "1.0.0")
"""A real Claude Code plugin published on PyPI (MIT; plugin `gemini-bridge`) whose `.mcp.json`
starts its server as `python ./gemini_bridge_mcp.py`, a path relative to where the host runs:
its source distribution, unpacked (nothing of it installed or committed here)."""

GEMINI_VENV = CACHE / "gemini-venv"
GEMINI_SERVER_NEEDS = ("mcp==1.30.0", "google-genai==3.6.1")
"""What gemini-mcp-connect's server imports, pinned: `mcp.server.fastmcp` (gone in mcp 2.x) and
google-genai (which it calls Gemini's API with). A virtualenv of its own, so its `python` can
be put first on the PATH of the bingo that starts that server, as its `.mcp.json` expects."""

PIP_TIMEOUT = 900
NPM_TIMEOUT = 300


def synapse(python: str = sys.executable) -> str | None:
    """Make `.synapse-venv` with Synapse in it, once; why it cannot be made, or None."""
    if SYNAPSE_STAMP.exists():
        return None
    CACHE.mkdir(parents=True, exist_ok=True)
    with SYNAPSE_LOCK.open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if SYNAPSE_STAMP.exists():
            return None
        why = _install(SYNAPSE_VENV, (SYNAPSE,), python)
        if why is not None:
            return why
        SYNAPSE_STAMP.write_text(SYNAPSE + "\n", encoding="utf-8")
        return None


UV = REPO / ".venv" / "bin" / "uv"
"""uv, which scripts/test installs into .venv first (scripts/_env.sh): a virtualenv made and
filled by it takes a third of pip's time (ADR-0041); pip where it is not there or fails."""


def _install(where: Path, needs: tuple[str, ...], python: str) -> str | None:
    """A virtualenv made at `where` from `python`, `needs` installed in it from PyPI with their
    bytecode (each start of what it runs would compile its modules again where bytecode is not
    written); why not, or None."""
    shutil.rmtree(where, ignore_errors=True)  # what a failed attempt left
    if UV.exists():
        made = subprocess.run([str(UV), "venv", "--quiet", "--python", python, str(where)], capture_output=True)
        if made.returncode == 0:
            done = subprocess.run(
                [str(UV), "pip", "install", "--quiet", "--python", str(where / "bin" / "python"), "--compile-bytecode"]
                + list(needs),
                capture_output=True,
                text=True,
                timeout=PIP_TIMEOUT,
            )
            if done.returncode == 0:
                return None
        shutil.rmtree(where, ignore_errors=True)  # pip, from the start
    made = subprocess.run([python, "-m", "venv", str(where)], capture_output=True, text=True)
    if made.returncode != 0:
        return f"python -m venv failed: {made.stderr.strip()[-300:]}"
    pip = subprocess.run(
        [str(where / "bin" / "python"), "-m", "pip", "install", "--quiet", "--disable-pip-version-check", *needs],
        capture_output=True,
        text=True,
        timeout=PIP_TIMEOUT,
    )
    if pip.returncode != 0:
        lines = [line for line in pip.stderr.splitlines() if not line.startswith("WARNING: Location")]
        return f"pip install {' '.join(needs)} failed: {' '.join(lines)[-400:]}"
    return None


def venv(where: Path, needs: tuple[str, ...], python: str = sys.executable) -> Path | str:
    """A virtualenv at `where` with the pinned `needs` installed from PyPI, made once (a stamp
    names what it holds); its directory, or why it cannot be made."""
    stamp = where / ".installed"
    wanted = "\n".join(needs) + "\n"

    def made() -> bool:
        try:
            return stamp.read_text(encoding="utf-8") == wanted
        except OSError:
            return False

    if made():
        return where
    CACHE.mkdir(parents=True, exist_ok=True)
    with (CACHE / f"{where.name}.lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if made():
            return where
        shutil.rmtree(where, ignore_errors=True)
        why = _install(where, needs, python)
        if why is not None:
            return why
        stamp.write_text(wanted, encoding="utf-8")
        return where


def npm_package(where: Path, package: str) -> Path:
    """The directory of npm package `package` installed in `where`."""
    return where / "node_modules" / package


def _installed(where: Path, packages: dict[str, str]) -> bool:
    for name, version in packages.items():
        try:
            manifest = json.loads((npm_package(where, name) / "package.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return False
        if manifest.get("version") != version:
            return False
    return True


def npm(where: Path, packages: dict[str, str]) -> str | None:
    """Install the pinned `packages` into `where` unless they are there; why not, or None
    (also when npm is missing: the tests that need it say so themselves)."""
    if _installed(where, packages):
        return None
    npm_ = shutil.which("npm")
    if npm_ is None:
        return "npm is not installed"
    where.mkdir(parents=True, exist_ok=True)
    with (where / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if _installed(where, packages):
            return None
        wanted = [f"{name}@{version}" for name, version in packages.items()]
        done = subprocess.run(
            [npm_, "install", "--prefix", str(where), "--no-audit", "--no-fund", "--no-save", "--silent", *wanted],
            capture_output=True,
            text=True,
            timeout=NPM_TIMEOUT,
        )
        if done.returncode != 0:
            return f"npm install failed: {done.stderr[-2000:]}"
        return None


def npm_unpacked(where: Path, package: str, version: str) -> Path | str:
    """npm package `package`@`version` fetched with `npm pack` and unpacked (its files only:
    no dependency installed, no script run) into `where`/`package`-`version`, unless it is
    there already; that directory, or why not."""
    target = where / f"{package}-{version}"
    stamp = target / ".unpacked"
    if stamp.exists():
        return target
    npm_ = shutil.which("npm")
    if npm_ is None:
        return "npm is not installed"
    where.mkdir(parents=True, exist_ok=True)
    with (where / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.exists():
            return target
        done = subprocess.run(
            [npm_, "pack", f"{package}@{version}", "--pack-destination", str(where), "--silent"],
            capture_output=True,
            text=True,
            timeout=NPM_TIMEOUT,
        )
        if done.returncode != 0:
            return f"npm pack failed: {done.stderr[-2000:]}"
        import tarfile

        tarball = where / done.stdout.strip().splitlines()[-1]
        shutil.rmtree(target, ignore_errors=True)
        with tarfile.open(tarball) as archive:
            archive.extractall(target, filter="data")  # an archive's paths never leave target
        tarball.unlink()
        stamp.touch()
        return target


def pypi_unpacked(where: Path, package: str, version: str, python: str = sys.executable) -> Path | str:
    """PyPI package `package`==`version`'s source distribution, fetched with `pip download`
    (no dependency, nothing built or installed) and unpacked into `where`/`package`-`version`,
    unless it is there already; the directory holding its files, or why not."""
    target = where / f"{package}-{version}"
    stamp = target / ".unpacked"
    if stamp.exists():
        return target
    where.mkdir(parents=True, exist_ok=True)
    with (where / ".lock").open("w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.exists():
            return target
        download = where / "download"
        shutil.rmtree(download, ignore_errors=True)
        done = subprocess.run(
            [python, "-m", "pip", "download", "--quiet", "--disable-pip-version-check", "--no-deps"]
            + ["--no-binary", ":all:", "--dest", str(download), f"{package}=={version}"],
            capture_output=True,
            text=True,
            timeout=PIP_TIMEOUT,
        )
        if done.returncode != 0:
            return f"pip download failed: {done.stderr[-2000:]}"
        import tarfile

        [archive_path] = download.glob("*.tar.gz")
        shutil.rmtree(target, ignore_errors=True)
        with tarfile.open(archive_path) as archive:
            archive.extractall(target, filter="data")  # an archive's paths never leave target
        shutil.rmtree(download, ignore_errors=True)
        stamp.touch()
        return target


def _why(made: Path | str) -> str | None:
    return made if isinstance(made, str) else None


def main() -> int:
    """Make them all at once; say what failed (the tests try again), exit 0."""
    jobs = {
        "synapse": synapse,
        "npm-mcp": lambda: npm(NPM_MCP, MCP_SERVERS),
        "npm-acp": lambda: npm(NPM_ACP, ACP_SDK),
        "npm-skills": lambda: _why(npm_unpacked(NPM_SKILLS, *SKILLS_PACKAGE)),
        "npm-plugins": lambda: _why(npm_unpacked(NPM_PLUGINS, *ECC_PACKAGE)),
        "pypi-plugins": lambda: _why(pypi_unpacked(PYPI_PLUGINS, *GEMINI_PACKAGE)),
        "gemini-venv": lambda: _why(venv(GEMINI_VENV, GEMINI_SERVER_NEEDS)),
    }
    with ThreadPoolExecutor(len(jobs)) as pool:
        results = {name: pool.submit(job) for name, job in jobs.items()}
        for name, result in results.items():
            try:
                why = result.result()
            except Exception as exc:  # a timeout, say: the tests try again
                why = f"{type(exc).__name__}: {exc}"
            if why is not None:
                print(f"installs: {name}: {why}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
