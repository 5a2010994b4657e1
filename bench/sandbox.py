"""The sandbox's cost (issue 24, ADR-0030), measured side by side in one interleaved run:

  - a `bash` tool call (`BashTool.call` of `true`, to its answer): confined by a policy of
    section 9's shape (the secret paths of this machine's $HOME denied, a project with its
    protected paths writable, no network) against the direct, unconfined spawn;
  - a plugin's spawn to ready (`PluginProcess.spawn` of the bench child through the janitor,
    then its `initialize` answered): confined (its data directory writable) against not.

Both confined contenders run in the run's network namespace (when this machine can make one)
as bingo would once its proxy serves there. Prints its own two rows when run alone
(`python bench/sandbox.py [N]`); `bench/rows.py` puts them in the one table.
"""

from __future__ import annotations

import asyncio
import json
import os
import sys
import time
from pathlib import Path

from bingo.bridge.process import PluginLog, PluginProcess
from bingo.kernel.interfaces import ToolCall
from bingo.sandbox import Policy, probe, proxy_listener
from bingo.tools import BashTool

__all__ = ["interleaved", "rows_of"]

CHILD = Path(__file__).with_name("_child.py")
SECRETS = (
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".config/gcloud",
    ".kube",
    ".docker",
    ".netrc",
    ".npmrc",
    ".pypirc",
    ".git-credentials",
    ".config/gh",
    ".password-store",
    ".local/share/keyrings",
    ".mozilla",
    ".config/google-chrome",
    ".config/chromium",
    ".bingo",
)
"""INTERFACE.md section 9's secret paths, beneath this machine's $HOME."""
clock = time.perf_counter


def _policy(project: Path, writable: tuple[Path, ...], proxy: tuple[str, int] | None) -> Policy:
    home = Path.home().resolve()
    protected = tuple(project / p for p in (".bingo", ".mcp.json", ".git/hooks", ".git/config"))
    return Policy(
        denied=tuple(home / s for s in SECRETS), writable=(project, *writable), protected=protected, proxy=proxy
    )


async def interleaved(root: Path, rounds: int) -> dict[str, list[float]]:
    """Seconds per contender: `bash` direct and confined, plugin spawn to ready direct and
    confined; `rounds` of each, interleaved (who goes first rotates)."""
    project = (root / "project").resolve()
    (project / ".git" / "hooks").mkdir(parents=True, exist_ok=True)
    (project / ".git" / "config").write_text("[core]\n")
    data = (root / "data").resolve()
    data.mkdir(exist_ok=True)
    listener, _why = await proxy_listener() if probe().confines else (None, "")
    proxy = ("127.0.0.1", listener.getsockname()[1]) if listener is not None else None
    bash_policy = _policy(project, (), proxy)
    plugin_policy = _policy(project, (data,), proxy)
    direct, confined = BashTool(), BashTool(policy=bash_policy)
    log = PluginLog(root / "plugin.log")

    async def bash(tool: BashTool) -> float:
        call = ToolCall(call_id="b", input={"command": "true"}, cwd=str(project), session="s", turn=1)
        start = clock()
        output = await tool.call(call)
        elapsed = clock() - start
        if output.is_error:
            raise RuntimeError(f"bash failed in the bench: {output}")
        return elapsed

    async def plugin(policy: Policy | None) -> float:
        start = clock()
        process = await PluginProcess.spawn(
            [sys.executable, str(CHILD), "bench", "-"], env=dict(os.environ), cwd=project, log=log, policy=policy
        )
        async with process:
            message = {
                "jsonrpc": "2.0",
                "id": 1,
                "method": "initialize",
                "params": {"protocol": 5, "pluginRoot": "/", "config": {}, "env": {}},
            }
            process.stdin.write(json.dumps(message).encode() + b"\n")
            await process.stdin.drain()
            line = await process.stdout.readline()
            elapsed = clock() - start
            if not line:
                raise RuntimeError("the bench plugin did not answer initialize")
        return elapsed

    steps = {
        "bash direct": lambda: bash(direct),
        "bash confined": lambda: bash(confined),
        "plugin direct": lambda: plugin(None),
        "plugin confined": lambda: plugin(plugin_policy),
    }
    names = list(steps)
    samples: dict[str, list[float]] = {name: [] for name in names}
    for name in names:  # one untimed each: the janitor's start, the walk, the page cache
        await steps[name]()
    for r in range(rounds):
        for k in range(len(names)):
            name = names[(r + k) % len(names)]
            samples[name].append(await steps[name]())
    if listener is not None:
        listener.close()
    return samples


def rows_of(samples: dict[str, list[float]]) -> list[tuple[str, float, float, float, str, bool]]:
    """(what, confined p50, direct p50, ratio, target, met) for the table."""
    from statistics import median

    found: list[tuple[str, float, float, float, str, bool]] = []
    for what, key, target in (
        ("bash call p50: sandboxed / unsandboxed", "bash", 1.15),
        ("plugin spawn to ready p50: sandboxed / not", "plugin", 1.2),
    ):
        confined, direct = median(samples[f"{key} confined"]), median(samples[f"{key} direct"])
        found.append((what, confined, direct, confined / direct, f"≤ {target:g}×", confined / direct <= target))
    return found


def main() -> None:
    import tempfile

    rounds = int(sys.argv[1]) if len(sys.argv) > 1 else 60
    support = probe()
    if not support.confines:
        print("the sandbox cannot confine here: " + "; ".join(support.missing))
        return
    with tempfile.TemporaryDirectory(prefix="bingo-bench-sandbox-") as tmp:
        samples = asyncio.run(interleaved(Path(tmp), rounds))
    print(f"sandbox ({support.mechanism}), {rounds} rounds interleaved, medians:")
    for what, confined, direct, ratio, target, met in rows_of(samples):
        print(
            f"  {what}: {confined * 1e3:.2f} ms against {direct * 1e3:.2f} ms = {ratio:.2f}× ({target} {'✓' if met else '✗'})"
        )


if __name__ == "__main__":
    main()
