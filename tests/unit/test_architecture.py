"""The shape of the package: imports point one way, and every package exports what it has."""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
import tempfile
import types
from pathlib import Path

SRC = Path(__file__).resolve().parents[2] / "src" / "bingo"

# wire ← endpoint ← kernel ← sandbox ← (store, checkpoint, providers, tools, bridge, bring) ← surfaces ← run ← checkup ← app ← cli
LAYER = {
    "wire": 0,
    "endpoint": 0.5,
    "kernel": 1,
    "sandbox": 1.5,
    "store": 2,
    "checkpoint": 2,
    "providers": 2,
    "tools": 2,
    "bridge": 2,
    "bring": 2,
    "surfaces": 3,
    "run": 3.5,
    "checkup": 3.75,
    "packages": 3.8,
    "app": 4,
    "cli": 5,
}

LEAVES = {"kernel.errors", "kernel.log"}
"""Modules of a higher floor that a lower one may import: the words every floor speaks (the
errors bingo raises, and how a foreign value is cut before it is logged). Each imports
nothing of bingo's, which `test_a_leaf_imports_nothing_of_bingo` keeps so: through a leaf,
no floor reaches the one above it."""


def _package_of(path: Path) -> str:
    rel = path.relative_to(SRC)
    return rel.parts[0].removesuffix(".py") if rel.parts else ""


def _imported_modules(path: Path) -> set[str]:
    """The modules of bingo that `path` imports, dotted below `bingo` (`kernel.errors`);
    `from ..kernel import errors` counts as `kernel.errors` when that is a module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    rel = path.relative_to(SRC)
    depth = len(rel.parts) - 1  # how many packages deep the module sits below bingo
    found: set[str] = set()

    def add(target: list[str], names: list[str]) -> None:
        for name in names:
            below = SRC.joinpath(*target, name)
            if below.with_suffix(".py").is_file() or (below / "__init__.py").is_file():
                found.add(".".join([*target, name]))
            else:
                found.add(".".join(target))

    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom):
            names = [alias.name for alias in node.names]
            if node.level == 0 and node.module and node.module.startswith("bingo."):
                add(node.module.split(".")[1:], names)
            elif node.level > 0:
                up = node.level - 1
                parts = list(rel.parts[:-1])
                base = parts[: len(parts) - up] if up <= len(parts) else []
                target = base + (node.module.split(".") if node.module else [])
                if target:
                    add(target, names)
                elif node.level > depth:
                    found.update(name.removesuffix(".py") for name in names)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith("bingo."):
                    found.add(alias.name.removeprefix("bingo."))
    return {module for module in found if module.split(".")[0] in LAYER}


def test_imports_point_one_way() -> None:
    wrong: list[str] = []
    for path in sorted(SRC.rglob("*.py")):
        own = _package_of(path)
        if own not in LAYER:
            continue
        for module in _imported_modules(path):
            other = module.split(".")[0]
            if other == own or module in LEAVES:
                continue
            if LAYER[other] > LAYER[own] or (LAYER[other] == LAYER[own]):
                wrong.append(f"{path.relative_to(SRC)} imports bingo.{other}")
    assert wrong == []


def test_a_leaf_imports_nothing_of_bingo() -> None:
    for leaf in sorted(LEAVES):
        assert _imported_modules(SRC.joinpath(*leaf.split(".")).with_suffix(".py")) == set(), leaf


def _isort_key(name: str) -> tuple[int, str]:
    # isort / ruff RUF022 order: CONSTANTS, then Classes, then functions.
    return (0 if name.isupper() else 1 if name[:1].isupper() else 2, name)


def test_every_package_exports_a_sorted_complete_all() -> None:
    problems: list[str] = []
    for init in sorted(SRC.rglob("__init__.py")):
        dotted = "bingo." + ".".join(init.parent.relative_to(SRC).parts) if init.parent != SRC else "bingo"
        dotted = dotted.rstrip(".")
        module = importlib.import_module(dotted)
        exported = getattr(module, "__all__", None)
        if exported is None:
            if any(
                not n.startswith("_")
                for n, v in vars(module).items()
                if not isinstance(v, types.ModuleType) and n not in ("annotations",)
            ):
                problems.append(f"{dotted} has no __all__")
            continue
        if list(exported) != sorted(exported, key=_isort_key):
            problems.append(f"{dotted}.__all__ is not sorted")
        public = {
            name
            for name, value in vars(module).items()
            if not name.startswith("_")
            and name not in ("annotations", "TYPE_CHECKING")
            and not (isinstance(value, types.ModuleType) and name not in exported)
        }
        missing = public - set(exported)
        if missing:
            problems.append(f"{dotted}.__all__ misses {sorted(missing)}")
        extra = [n for n in exported if not hasattr(module, n)]
        if extra:
            problems.append(f"{dotted}.__all__ names what it lacks: {extra}")
    assert problems == []


def test_a_plugin_host_with_no_plugin_and_the_sandboxs_probe_import_no_process_module() -> None:
    # A run with no plugin makes a PluginHost all the same, and the sandbox's probe runs at
    # every start: neither may import what starting a process takes (ADR-0043). The `-p`
    # path as a whole is held by tests/e2e/test_first_request.py.
    code = (
        "import asyncio, sys\n"
        "from pathlib import Path\n"
        "from bingo.bridge.host import PluginHost\n"
        "from bingo.kernel.notices import Notices\n"
        "from bingo.kernel.registry import Registry\n"
        "from bingo.kernel.settings import Settings\n"
        "from bingo.sandbox._mechanism import probe\n"
        "probe()\n"
        "async def main():\n"
        "    notices = Notices()\n"
        "    host = PluginHost(sources=[], registry=Registry(notices), notices=notices, settings=Settings(),\n"
        "                      data_dir=Path(sys.argv[1]), cwd=Path(sys.argv[1]))\n"
        "    async with host:\n"
        "        await host.start()\n"
        "        host.warm('hi')\n"
        "asyncio.run(main())\n"
        "print(sorted(m for m in sys.modules if m.startswith('bingo.')))\n"
    )
    with tempfile.TemporaryDirectory() as where:
        done = subprocess.run(
            [sys.executable, "-c", code, where], capture_output=True, text=True, timeout=60, check=True
        )
    loaded = set(ast.literal_eval(done.stdout))
    process_modules = {
        "bingo.bridge._plugin",
        "bingo.bridge._transport",
        "bingo.bridge.process",
        "bingo.bridge._cache",
        "bingo.bridge._mcp_http",
        "bingo.sandbox.janitor._client",
    }
    assert "bingo.bridge.host" in loaded
    assert sorted(loaded & process_modules) == []
