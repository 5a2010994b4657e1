"""Building a process's Policy and environment from the grants (INTERFACE.md §9)."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from bingo.kernel.errors import GateError
from bingo.kernel.notices import Notices
from bingo.kernel.sandboxing import Grant, PluginGrants, SandboxGrants
from bingo.sandbox import Build, Hosts, confined_environ, launcher_grants


@pytest.fixture
def world(tmp_path: Path) -> tuple[Path, Path, Path]:
    home = tmp_path / "home"
    bingo = home / ".bingo"
    project = tmp_path / "project"
    for path in (
        bingo / "plugins" / "wc",
        bingo / "plugins" / "other",
        bingo / "data" / "plugins" / "wc",
        bingo / "data" / "plugins" / "other",
        bingo / "data" / "logs",
        project / ".git" / "hooks",
    ):
        path.mkdir(parents=True)
    (bingo / "settings.json").write_text("{}")
    (bingo / "data" / "sessions.db").write_text("")
    return home, bingo, project


def test_bash_is_denied_the_secrets_and_bingos_home_and_writes_the_project_less_the_protected(
    world: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    home, bingo, project = world
    grants = SandboxGrants(deny=(Grant(str(tmp_path / "vault"), "x"),), write=(Grant(str(tmp_path / "out"), "x"),))
    policy = Build(grants=grants, home=home, bingo_home=bingo, project=project, proxy=("127.0.0.1", 5)).for_bash()
    for secret in (
        ".ssh",
        ".gnupg",
        ".aws",
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
    ):
        assert home.resolve() / secret in policy.denied
    assert bingo.resolve() in policy.denied and tmp_path.resolve() / "vault" in policy.denied
    assert project.resolve() in policy.writable and Path("/dev/null") in policy.writable
    assert tmp_path.resolve() / "out" in policy.writable
    for name in (".bingo", ".mcp.json", ".git/hooks", ".git/config", ".claude/skills", ".agents/skills"):
        assert project.resolve() / name in policy.protected
    assert policy.proxy == ("127.0.0.1", 5)


def test_a_plugin_reads_its_own_directory_and_writes_its_data_dir_and_nothing_else_of_bingos_home(
    world: tuple[Path, Path, Path], tmp_path: Path
) -> None:
    home, bingo, project = world
    grants = SandboxGrants(plugins={"wc": PluginGrants(write=(Grant(str(tmp_path), "x"),))})
    policy = Build(grants=grants, home=home, bingo_home=bingo, project=project, proxy=None).for_plugin(
        "wc", root=bingo / "plugins" / "wc", data_dir=bingo / "data" / "plugins" / "wc"
    )
    b = bingo.resolve()
    assert b not in policy.denied
    assert not any(p == b / "plugins" / "wc" or (b / "plugins" / "wc").is_relative_to(p) for p in policy.denied)
    assert not any((b / "data" / "plugins" / "wc").is_relative_to(p) for p in policy.denied)
    for other in (
        b / "settings.json",
        b / "plugins" / "other",
        b / "data" / "plugins" / "other",
        b / "data" / "logs",
        b / "data" / "sessions.db",
    ):
        assert other in policy.denied
    assert b / "data" / "plugins" / "wc" in policy.writable and tmp_path.resolve() in policy.writable


def test_the_environment_loses_its_secrets_keeps_what_is_kept_and_names_the_proxy(tmp_path: Path) -> None:
    environ = {
        "PATH": "/bin",
        "HOME": "/h",
        "ANTHROPIC_API_KEY": "a",
        "OPENAI_API_KEY": "o",
        "BINGO_MATRIX_TOKEN": "m",
        "MY_BOT": "b",
        "SSH_AUTH_SOCK": "/s",
        "GPG_AGENT_INFO": "g",
        "AWS_PROFILE": "p",
        "GH_TOKEN": "t",
        "DB_PASSWORD": "p",
        "X_SECRET": "s",
        "SIGNING_KEY": "k",
        "MYAPI_KEYS": "k",
        "NO_PROXY": "localhost",
        "HTTP_PROXY": "http://corp:3128",
    }
    env = confined_environ(
        environ,
        keep=["GH_TOKEN"],
        own={"SIGNING_KEY": "mine"},
        proxy=("127.0.0.1", 9),
        tmpdir=tmp_path,
        matrix_token="MY_BOT",
    )
    assert env["PATH"] == "/bin" and env["GH_TOKEN"] == "t" and env["SIGNING_KEY"] == "mine"
    for gone in (
        "ANTHROPIC_API_KEY",
        "OPENAI_API_KEY",
        "BINGO_MATRIX_TOKEN",
        "MY_BOT",
        "SSH_AUTH_SOCK",
        "GPG_AGENT_INFO",
        "AWS_PROFILE",
        "DB_PASSWORD",
        "X_SECRET",
        "MYAPI_KEYS",
        "NO_PROXY",
    ):
        assert gone not in env
    for name in ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "ALL_PROXY"):
        assert env[name] == "http://127.0.0.1:9"
    assert env["TMPDIR"] == str(tmp_path)


def test_npx_uvx_and_pipx_get_their_cache_and_registry(tmp_path: Path) -> None:
    npx = launcher_grants(["npx", "-y", "@modelcontextprotocol/server-everything"], {}, tmp_path)
    assert npx is not None and "registry.npmjs.org" in npx.hosts and (tmp_path / ".npm").resolve() in npx.write
    uvx = launcher_grants(["/usr/bin/uvx", "mcp-server-fetch"], {}, tmp_path)
    assert uvx is not None and "pypi.org" in uvx.hosts and (tmp_path / ".cache" / "uv").resolve() in uvx.write
    pipx = launcher_grants(["pipx", "run", "x"], {}, tmp_path)
    assert pipx is not None and "files.pythonhosted.org" in pipx.hosts
    assert launcher_grants(["python3", "server.py"], {}, tmp_path) is None


class _Said:
    def __init__(self) -> None:
        self.lines: list[str] = []
        self.notices = Notices()
        self.notices.listen(lambda notice: self.lines.append(notice.message))


def _hosts(said: _Said, granted: list[str]) -> Hosts:
    return Hosts(
        granted,
        notices=said.notices,
        user_settings="~/.bingo/settings.json",
        local_settings="p/.bingo/settings.local.json",
    )


def test_granted_hosts_pass_and_a_plugins_own_only_for_it() -> None:
    said = _Said()
    hosts = _hosts(said, ["*.npmjs.org"])
    assert (
        not hosts.granted("bash", "npmjs.org")
        and not hosts.granted("bash", "evilnpmjs.org")
        and hosts.granted("bash", "A.NPMJS.org")
    )
    hosts.grant("wc", ["example.org"])
    assert asyncio.run(hosts.decide("bash", "registry.npmjs.org", 443))
    assert asyncio.run(hosts.decide("wc", "example.org", 443))
    assert not asyncio.run(hosts.decide("bash", "example.org", 443))
    assert said.lines == [
        'the sandbox refused bash a connection to example.org:443: it is no granted host and nobody can be asked; grant it with sandbox.network.allow ("example.org") in ~/.bingo/settings.json'
    ]


def test_one_question_per_host_and_always_is_remembered() -> None:
    said = _Said()
    hosts = _hosts(said, [])
    asked: list[str] = []
    saved: list[tuple[str, str]] = []

    async def ask(question: str, choices: list[str]) -> str:
        asked.append(question)
        await asyncio.sleep(0)
        return "a"

    hosts.ask, hosts.remember = ask, lambda who, host: saved.append((who, host))

    async def many() -> list[bool]:
        return list(await asyncio.gather(*(hosts.decide("bash", "pypi.org", 443) for _ in range(5))))

    assert asyncio.run(many()) == [True] * 5
    assert asked == ["bash wants to reach pypi.org:443 (yes: this once; always: saved in p/.bingo/settings.local.json)"]
    assert saved == [("bash", "pypi.org")]


def test_nobody_to_ask_refuses_with_the_line() -> None:
    said = _Said()
    hosts = _hosts(said, [])

    async def ask(question: str, choices: list[str]) -> str:
        raise GateError("nobody")

    hosts.ask = ask
    assert not asyncio.run(hosts.decide("wc", "evil.test", 80))
    assert not asyncio.run(hosts.decide("wc", "evil.test", 80))
    assert len(said.lines) == 1 and "plugins.wc.sandbox.network" in said.lines[0]


def test_a_host_grant_that_is_no_host_is_one_notice_when_the_sandbox_is_made(tmp_path: Path) -> None:
    from bingo.sandbox import Sandbox

    said = _Said()
    grants = SandboxGrants(
        hosts=(
            Grant("pypi.org:443", "~/.bingo/settings.json", "sandbox.network.allow"),
            Grant("PyPI.org", "x", "sandbox.network.allow"),
        )
    )
    box = Sandbox(
        grants, home=tmp_path, bingo_home=tmp_path / ".bingo", project=tmp_path, environ={}, notices=said.notices
    )
    assert box.hosts.granted("bash", "pypi.org")
    assert len(said.lines) == 1
    assert said.lines[0].startswith(
        "~/.bingo/settings.json: sandbox.network.allow holds 'pypi.org:443', which names a port"
    )


def test_where_it_cannot_confine_on_says_so_once_and_required_is_exit_2(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from bingo.kernel.errors import SettingsError
    from bingo.sandbox import Sandbox, _runtime  # pyright: ignore[reportPrivateUsage]

    monkeypatch.setattr(_runtime, "probe", lambda: (None, "Landlock is not enabled in this kernel", ()))
    said = _Said()
    box = Sandbox(
        SandboxGrants(),
        home=tmp_path,
        bingo_home=tmp_path / ".bingo",
        project=tmp_path,
        environ={},
        notices=said.notices,
    )
    box.start()
    assert not box.in_force
    assert said.lines == [
        'the sandbox is not in force: Landlock is not enabled in this kernel; bash is asked about every call and plugins run unconfined (sandbox.mode "required" makes this an error)'
    ]
    required = Sandbox(
        SandboxGrants(mode="required", mode_from="~/.bingo/settings.json"),
        home=tmp_path,
        bingo_home=tmp_path / ".bingo",
        project=tmp_path,
        environ={},
        notices=said.notices,
    )
    with pytest.raises(SettingsError) as caught:
        required.start()
    assert caught.value.exit_code == 2
    assert (
        "the sandbox is required (sandbox.mode in ~/.bingo/settings.json) and this system cannot confine: Landlock is not enabled"
        in caught.value.line()
    )
    off = Sandbox(
        SandboxGrants(mode="off", mode_from="--no-sandbox"),
        home=tmp_path,
        bingo_home=tmp_path / ".bingo",
        project=tmp_path,
        environ={},
        notices=said.notices,
    )
    off.start()
    assert not off.in_force and len(said.lines) == 1  # off: nothing to say


def test_a_network_namespace_refused_when_made_is_said_once_with_what_is_weaker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The kernel's settings allow user namespaces, a container's seccomp profile refuses them
    # when made: the probe at start cannot know, so the first proxy's listener says it.
    import asyncio

    from bingo.sandbox import Sandbox, _run, _runtime  # pyright: ignore[reportPrivateUsage]

    monkeypatch.setattr(_runtime, "probe", lambda: ("Landlock ABI 7 + seccomp + a network namespace", None, ()))
    said = _Said()
    box = Sandbox(
        SandboxGrants(),
        home=tmp_path,
        bingo_home=tmp_path / ".bingo",
        project=tmp_path,
        environ={},
        notices=said.notices,
    )
    box.start()
    assert box.in_force and said.lines == []

    async def refused() -> tuple[None, str]:
        return None, "unshare was refused (Operation not permitted)"

    monkeypatch.setattr(_run, "proxy_listener", refused)
    monkeypatch.setattr(
        _runtime,
        "probe",
        lambda: (
            "Landlock ABI 7 + seccomp + Landlock TCP rules",
            None,
            ("without a user namespace, protected paths are kept by ...",),
        ),
    )

    async def twice() -> None:
        async with box:
            await box.for_bash()
            await box.for_bash()

    asyncio.run(twice())
    assert said.lines == [
        "the sandbox's network namespace could not be made (unshare was refused (Operation not permitted)): processes are "
        "confined without it; weaker here: without a user namespace, protected paths are kept by ..."
    ]
    assert (
        box.state()
        == "in force: Landlock ABI 7 + seccomp + Landlock TCP rules; weaker here: without a user namespace, protected paths are kept by ..."
    )
