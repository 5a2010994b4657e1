"""How each agent host is installed, configured and run against the fake model.

Every host gets its own HOME under the work directory (one per host and scenario, kept
across the runs of that scenario so that a warm-up run fills its caches), the fake
model's base URL, a fake API key, its telemetry and update checks turned off, and the MCP
servers of the scenario in its own configuration format. Paths come from the environment:

  PEERS_NPM        npm prefix the peers were installed into (node_modules/.bin inside)
  BINGO            the bingo executable (default: `bingo` on PATH)
  PI_MCP_ADAPTER   pi-mcp-adapter's index.ts (optional; without it pi runs no MCP rows)
  BENCH_PYTHON     the interpreter that runs mcp_server.py (default: python3)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

HERE = Path(__file__).resolve().parent
MCP_SERVER = HERE / "mcp_server.py"
FAKE_KEY = "sk-fake-bench"


def npm_bin(name: str) -> str:
    prefix = os.environ.get("PEERS_NPM")
    if prefix:
        p = Path(prefix) / "node_modules" / ".bin" / name
        if p.exists():
            return str(p)
    return shutil.which(name) or name


def codex_native() -> str:
    """The Rust binary the npm wrapper (codex.js, a node launcher) starts."""
    prefix = os.environ.get("PEERS_NPM")
    if prefix:
        for p in (Path(prefix) / "node_modules" / "@openai").glob("codex-*/vendor/*/bin/codex"):
            return str(p)
    return npm_bin("codex")


def server_specs(servers: list[tuple[str, str]], log: Path, state: Path):
    """[(name, mode)] -> [(name, command, args, env)] for mcp_server.py."""
    py = os.environ.get("BENCH_PYTHON", "python3")
    return [
        (
            n,
            py,
            [str(MCP_SERVER), n] + ([m] if m != "file" else []),
            {"BENCH_MCP_LOG": str(log), "BENCH_MCP_STATE_DIR": str(state)},
        )
        for n, m in servers
    ]


class Host:
    name = "?"
    api = "?"
    mcp = True

    def __init__(self, work: Path, url: str):
        self.work, self.url = work, url

    def version(self) -> str:
        try:
            out = subprocess.run(
                self.version_argv(),
                capture_output=True,
                text=True,
                timeout=60,
                env=dict(os.environ, HOME=str(self.work / "version-home")),
            )
            return ((out.stdout.strip() or out.stderr.strip()).splitlines() or ["?"])[-1]
        except Exception as e:  # noqa: BLE001
            return f"? ({e})"

    def setup(self, home: Path, proj: Path, servers, log: Path, state: Path) -> None:
        raise NotImplementedError

    def argv(self, prompt: str, home: Path, proj: Path, servers) -> list[str]:
        raise NotImplementedError

    def env(self, home: Path) -> dict:
        env = {
            k: v
            for k, v in os.environ.items()
            if not k.startswith(
                ("ANTHROPIC_", "OPENAI_", "GEMINI_", "GOOGLE_", "CLAUDE", "CODEX", "OPENCODE", "PI_", "BINGO")
            )
            # A person's machine caches bytecode; without it every start compiles afresh.
            and k != "PYTHONDONTWRITEBYTECODE"
        }
        env.update(
            {
                "HOME": str(home),
                "NO_COLOR": "1",
                "TERM": "dumb",
                "XDG_CONFIG_HOME": str(home / ".config"),
                "XDG_DATA_HOME": str(home / ".local/share"),
                "XDG_CACHE_HOME": str(home / ".cache"),
                "XDG_STATE_HOME": str(home / ".local/state"),
            }
        )
        return env


class Bingo(Host):
    name, api = "bingo", "anthropic"

    def exe(self):
        return os.environ.get("BINGO") or shutil.which("bingo") or "bingo"

    def version_argv(self):
        return [self.exe(), "--version"]

    def env(self, home):
        e = super().env(home)
        e.update({"BINGO_HOME": str(home / ".bingo"), "ANTHROPIC_BASE_URL": self.url, "ANTHROPIC_API_KEY": FAKE_KEY})
        return e

    def setup(self, home, proj, servers, log, state):
        (home / ".bingo").mkdir(parents=True, exist_ok=True)
        allow = [f"plugin__{n}__*" for n, _ in servers]
        # The servers' logs are outside the project: the person's settings let a confined
        # process write there (INTERFACE.md §9), so the sandbox stays on as a person runs it.
        settings = {"permissions": {"allow": allow}, "sandbox": {"write": [str(self.work)]}}
        (home / ".bingo" / "settings.json").write_text(json.dumps(settings))
        if servers:
            cfg = {
                "mcpServers": {
                    n: {"command": c, "args": a, "env": e} for n, c, a, e in server_specs(servers, log, state)
                }
            }
            (proj / ".mcp.json").write_text(json.dumps(cfg, indent=1))
            subprocess.run(
                [self.exe(), "--trust"], cwd=proj, env=self.env(home), capture_output=True, timeout=60, check=True
            )

    def argv(self, prompt, home, proj, servers):
        return [self.exe(), "-p", prompt]


class BingoAt(Bingo):
    """bingo from another source tree, by the same interpreter: `$BINGO_BEFORE_SRC` (a
    `src` directory, e.g. `git archive <commit> src | tar -x -C /tmp/before`) first on
    PYTHONPATH. For a before/after pair in one interleaved run."""

    name = "bingo-before"

    def python(self):
        return os.environ.get("BINGO_PYTHON") or str(Path(self.exe()).parent / "python")

    def env(self, home):
        e = super().env(home)
        e["PYTHONPATH"] = os.environ["BINGO_BEFORE_SRC"]
        return e

    def argv(self, prompt, home, proj, servers):
        return [self.python(), "-m", "bingo", "-p", prompt]


class Floor(Bingo):
    """The raw floor (floor.py): a bare Python with httpx sending bingo's own first request
    (the body bingo sent in this scenario's warm-up, or else in `hi`'s) to the same server;
    for a tool call, the MCP server spawned and asked, one durable SQLite append, the next
    request. Run with bingo's interpreter. Listed after `bingo`, whose warm-up records the
    body."""

    name = "floor"

    def python(self):
        return os.environ.get("BINGO_PYTHON") or str(Path(self.exe()).parent / "python")

    def env(self, home):
        e = super().env(home)
        scen = home.name.split("-", 1)[1]
        bodies = self.work / "bodies"
        mine = bodies / f"bingo-{scen}-warm.json"
        e["FLOOR_BODY"] = str(mine if mine.exists() else bodies / "bingo-hi-warm.json")
        return e

    def setup(self, home, proj, servers, log, state):
        if servers:
            cfg = {
                "mcpServers": {
                    n: {"command": c, "args": a, "env": e} for n, c, a, e in server_specs(servers, log, state)
                }
            }
            (proj / ".mcp.json").write_text(json.dumps(cfg, indent=1))

    def version_argv(self):
        return [self.python(), "-c", "import httpx; print('python + httpx', httpx.__version__)"]

    def argv(self, prompt, home, proj, servers):
        return [self.python(), str(HERE / "floor.py"), "-p", prompt]


class Claude(Host):
    name, api = "claude", "anthropic"

    def version_argv(self):
        return [npm_bin("claude"), "--version"]

    def env(self, home):
        e = super().env(home)
        e.update(
            {
                "ANTHROPIC_BASE_URL": self.url,
                "ANTHROPIC_API_KEY": FAKE_KEY,
                "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1",
                "DISABLE_AUTOUPDATER": "1",
                "DISABLE_TELEMETRY": "1",
                "DISABLE_ERROR_REPORTING": "1",
                "DISABLE_BUG_COMMAND": "1",
            }
        )
        return e

    def setup(self, home, proj, servers, log, state):
        cfg = {
            "mcpServers": {n: {"command": c, "args": a, "env": e} for n, c, a, e in server_specs(servers, log, state)}
        }
        (home / "mcp.json").write_text(json.dumps(cfg, indent=1))

    def argv(self, prompt, home, proj, servers):
        a = [npm_bin("claude"), "-p", prompt, "--mcp-config", str(home / "mcp.json"), "--strict-mcp-config"]
        if servers:
            a += ["--allowedTools", ",".join(f"mcp__{n}" for n, _ in servers)]
        return a


class Codex(Host):
    name, api = "codex", "responses"
    wrapper = False  # True: run through the npm launcher (node codex.js) instead of the binary

    def exe(self):
        return npm_bin("codex") if self.wrapper else codex_native()

    def version_argv(self):
        return [self.exe(), "--version"]

    def env(self, home):
        e = super().env(home)
        e.update({"FAKE_API_KEY": FAKE_KEY, "CODEX_HOME": str(home / ".codex")})
        return e

    def setup(self, home, proj, servers, log, state):
        (home / ".codex").mkdir(parents=True, exist_ok=True)
        lines = [
            'model = "fake-model"',
            'model_provider = "fake"',
            'approval_policy = "never"',
            'sandbox_mode = "read-only"',
            "check_for_update_on_startup = false",
            "",
            "[model_providers.fake]",
            'name = "fake"',
            f'base_url = "{self.url}/v1"',
            'env_key = "FAKE_API_KEY"',
            'wire_api = "responses"',
            "request_max_retries = 0",
            "stream_max_retries = 0",
            "",
            "[analytics]",
            "enabled = false",
            "[feedback]",
            "enabled = false",
            "",
        ]
        for n, c, a, e in server_specs(servers, log, state):
            lines += [
                f"[mcp_servers.{n}]",
                f"command = {json.dumps(c)}",
                f"args = {json.dumps(a)}",
                "env = { " + ", ".join(f"{k} = {json.dumps(v)}" for k, v in e.items()) + " }",
                'default_tools_approval_mode = "approve"',
                "",
            ]
        (home / ".codex" / "config.toml").write_text("\n".join(lines))

    def argv(self, prompt, home, proj, servers):
        return [self.exe(), "exec", "--skip-git-repo-check", prompt]


class CodexNpm(Codex):
    name, wrapper = "codex-npm", True


class OpenCode(Host):
    name, api = "opencode", "chat"

    def version_argv(self):
        return [npm_bin("opencode"), "--version"]

    def env(self, home):
        e = super().env(home)
        e.update(
            {
                "OPENCODE_DISABLE_AUTOUPDATE": "1",
                "OPENCODE_DISABLE_MODELS_FETCH": "1",
                "OPENCODE_DISABLE_DEFAULT_PLUGINS": "1",
                "OPENCODE_DISABLE_LSP_DOWNLOAD": "1",
                "OPENCODE_DISABLE_SHARE": "1",
            }
        )
        return e

    def setup(self, home, proj, servers, log, state):
        d = home / ".config" / "opencode"
        d.mkdir(parents=True, exist_ok=True)
        cfg = {
            "$schema": "https://opencode.ai/config.json",
            "provider": {
                "fake": {
                    "npm": "@ai-sdk/openai-compatible",
                    "name": "fake",
                    "options": {"baseURL": self.url + "/v1", "apiKey": FAKE_KEY},
                    "models": {
                        "fake-model": {
                            "name": "fake-model",
                            "tool_call": True,
                            "limit": {"context": 200000, "output": 8192},
                        }
                    },
                }
            },
            "model": "fake/fake-model",
            "small_model": "fake/fake-model",
            "autoupdate": False,
            "share": "disabled",
            "mcp": {
                n: {"type": "local", "command": [c] + a, "environment": e, "enabled": True}
                for n, c, a, e in server_specs(servers, log, state)
            },
        }
        (d / "opencode.json").write_text(json.dumps(cfg, indent=1))

    def argv(self, prompt, home, proj, servers):
        return [npm_bin("opencode"), "run", prompt]


class Gemini(Host):
    name, api = "gemini", "gemini"

    def version_argv(self):
        return [npm_bin("gemini"), "--version"]

    def env(self, home):
        e = super().env(home)
        e.update({"GEMINI_API_KEY": FAKE_KEY, "GOOGLE_GEMINI_BASE_URL": self.url, "GEMINI_TELEMETRY_ENABLED": "false"})
        return e

    def setup(self, home, proj, servers, log, state):
        (home / ".gemini").mkdir(parents=True, exist_ok=True)
        cfg = {
            "security": {"auth": {"selectedType": "gemini-api-key"}, "folderTrust": {"enabled": False}},
            "privacy": {"usageStatisticsEnabled": False},
            "general": {"enableAutoUpdate": False, "enableAutoUpdateNotification": False},
            "telemetry": {"enabled": False},
            "mcpServers": {
                n: {"command": c, "args": a, "env": e, "trust": True}
                for n, c, a, e in server_specs(servers, log, state)
            },
        }
        (home / ".gemini" / "settings.json").write_text(json.dumps(cfg, indent=1))

    def argv(self, prompt, home, proj, servers):
        return [npm_bin("gemini"), "-p", prompt]


class Pi(Host):
    """pi has no MCP by design; with PI_MCP_ADAPTER set, the third-party pi-mcp-adapter
    extension (direct tools, lazy start) stands in for it in the MCP rows."""

    name, api = "pi", "anthropic"

    @property
    def mcp(self):
        return bool(os.environ.get("PI_MCP_ADAPTER"))

    def version_argv(self):
        return [npm_bin("pi"), "--version"]

    def env(self, home):
        e = super().env(home)
        e.update({"PI_OFFLINE": "1", "PI_SKIP_VERSION_CHECK": "1", "PI_TELEMETRY": "0"})
        return e

    def setup(self, home, proj, servers, log, state):
        d = home / ".pi" / "agent"
        d.mkdir(parents=True, exist_ok=True)
        (d / "models.json").write_text(
            json.dumps(
                {
                    "providers": {
                        "fake": {
                            "baseUrl": self.url,
                            "api": "anthropic-messages",
                            "apiKey": FAKE_KEY,
                            "models": [{"id": "fake-model", "contextWindow": 200000, "maxTokens": 8192}],
                        }
                    }
                },
                indent=1,
            )
        )
        if servers:
            cfg = {
                "mcpServers": {
                    n: {"command": c, "args": a, "env": e, "directTools": True}
                    for n, c, a, e in server_specs(servers, log, state)
                }
            }
            (proj / ".mcp.json").write_text(json.dumps(cfg, indent=1))

    def argv(self, prompt, home, proj, servers):
        a = [npm_bin("pi"), "-p", prompt, "--provider", "fake", "--model", "fake-model"]
        if servers and os.environ.get("PI_MCP_ADAPTER"):
            a += ["-e", os.environ["PI_MCP_ADAPTER"]]
        return a


def _trees() -> list[type[BingoAt]]:
    """`bingo@NAME` for each NAME=SRC of $BINGO_TREES (comma-separated): bingo from that
    source tree, as `bingo-before`, so that several trees are compared in one run."""
    made: list[type[BingoAt]] = []
    for item in filter(None, os.environ.get("BINGO_TREES", "").split(",")):
        label, _, src = item.partition("=")

        class Tree(BingoAt):
            name = f"bingo@{label}"

            def env(self, home, _src=src):
                e = Bingo.env(self, home)
                e["PYTHONPATH"] = _src
                return e

        made.append(Tree)
    return made


ALL = {h.name: h for h in (*_trees(), Bingo, BingoAt, Floor, Claude, Codex, CodexNpm, OpenCode, Gemini, Pi)}
