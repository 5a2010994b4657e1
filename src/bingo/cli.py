"""The `bingo` command line: arguments in, one exit status out.

Owns argument parsing and the last line of defence: every failure becomes one line on stderr
and an exit status (0 done, 1 the turn failed, 2 bad usage or settings); a traceback never
reaches the person. What a run does is `app.py`'s.

argparse is the parser of record, but it is imported only for a command line the quick
reader cannot take as it stands (`--help`, an unknown or abbreviated option, `--opt=value`,
a second prompt, a value that looks like an option): the plain shapes people type are read
without it, into the same Options, because its import is a measurable share of a cold
`bingo -p "/command"`. That is why it runs past ~480 lines: every option is declared twice
(the quick reader's table and argparse's, with its help), and the checks of which options go
together are one place for both.
"""

from __future__ import annotations

import gc
import os
import sys
import types

from .kernel.errors import BingoError, UsageError

# `import httpx` imports its command-line client, and with it click, rich and pygments,
# wherever those are installed; bingo never runs that client (ADR-0043). An empty module
# in its place has no `main`, so httpx takes the ImportError it expects without them.
sys.modules.setdefault("httpx._main", types.ModuleType("httpx._main"))

TYPE_CHECKING = False  # not typing's: the start of a run does not import typing for it
if TYPE_CHECKING:
    import argparse
    from collections.abc import Iterable, Sequence
    from typing import NoReturn, TypeAlias

    from .app import Options

    _Line: TypeAlias = tuple[frozenset[str], dict[str, str], tuple[str, ...], str | None]
    """A plain command line, read without argparse: the switches, the valued options, the
    `--allow` rules and the prompt."""

__all__ = ["CHANNELS", "launch", "main", "parse", "run"]

CHANNELS = ("matrix",)
"""The IM channels `--channel` takes (INTERFACE.md §7b)."""


_FLAGS = {
    "-p": "print_mode",
    "--print": "print_mode",
    "-c": "continue_latest",
    "--continue": "continue_latest",
    "--trust": "trust",
    "--acp": "acp",
    "--call": "check_call",
    "--json": "check_json",
    "--no-sandbox": "no_sandbox",
}
"""The switches the quick reader knows, by spelling, and the Options field each sets."""
_VALUED = {
    "--resume": "resume",
    "--provider": "provider",
    "--model": "model",
    "--allow": "allow",
    "--channel": "channel",
    "--check-plugin": "check_plugin",
    "--output-format": "output_format",
    "--json-schema": "json_schema",
    "--max-turns": "max_turns",
}
"""The options taking a value (the next argument), and the Options field each sets."""


def _read(argv: Sequence[str]) -> _Line | None:
    """A plain command line, as argparse would read it; None when the line needs argparse
    (which then says what is wrong, or prints help)."""
    switches: set[str] = set()
    values: dict[str, str] = {}
    allow: list[str] = []
    prompt: str | None = None
    words = iter(argv)
    for word in words:
        if word in _FLAGS:
            switches.add(_FLAGS[word])
        elif word in _VALUED:
            value = next(words, None)
            if value is None and _VALUED[word] == "resume":
                values["resume"] = ""  # `--resume` last, with no id: choose from a list
                continue
            if value is None or (value.startswith("-") and _VALUED[word] != "max_turns"):
                return None
            if _VALUED[word] == "allow":
                allow.append(value)
            else:
                values[_VALUED[word]] = value  # the last one given wins, as with argparse
        elif word.startswith("-") or prompt is not None:
            return None
        else:
            prompt = word
    return frozenset(switches), values, tuple(allow), prompt


def _quick(argv: Sequence[str]) -> Options | None:
    """The Options for a plain command line; None when the line needs argparse."""
    from .app import Options

    line = _read(argv)
    if line is None:
        return None
    switches, values, allow, prompt = line
    return Options(
        prompt=prompt,
        print_mode="print_mode" in switches,
        continue_latest="continue_latest" in switches,
        resume=values.get("resume"),
        provider=values.get("provider"),
        model=values.get("model"),
        allow=allow,
        trust="trust" in switches,
        channel=values.get("channel"),
        acp="acp" in switches,
        check_plugin=values.get("check_plugin"),
        check_call="check_call" in switches,
        check_json="check_json" in switches,
        no_sandbox="no_sandbox" in switches,
        output_format=values.get("output_format", "text"),
        json_schema=values.get("json_schema"),
        max_turns=_turns(values.get("max_turns")),
    )


FORMATS = ("text", "json", "stream-json")
"""What `--output-format` takes (INTERFACE.md §13)."""


def _turns(value: str | None) -> int | None:
    """`--max-turns`'s value; UsageError when it is not a whole number of 1 or more."""
    if value is None:
        return None
    try:
        turns = int(value)
    except ValueError:
        turns = 0
    if turns < 1:
        raise UsageError(f"--max-turns takes a whole number of 1 or more, not {value!r}", "write --max-turns 10")
    return turns


def _did_you_mean(message: str, options: Iterable[str]) -> str:
    """` (did you mean --allow?)` for an argparse complaint about a mistyped flag, else ''."""
    import difflib

    if not message.startswith("unrecognized arguments: "):
        return ""
    spelled = sorted(option for option in options if option.startswith("--"))
    for word in message.removeprefix("unrecognized arguments: ").split():
        close = (
            difflib.get_close_matches(word.split("=", 1)[0], spelled, n=1, cutoff=0.6) if word.startswith("--") else []
        )
        if close:
            return f" (did you mean {close[0]}?)"
    return ""


_EPILOG = """\
a model: ANTHROPIC_API_KEY, or OPENAI_API_KEY and/or OPENAI_BASE_URL (Ollama, vLLM, ...),
  or a plugin that provides one (--provider); slash commands need none
settings: ~/.bingo/settings.json, then <project>/.bingo/settings.json and settings.local.json
  ($BINGO_HOME replaces ~/.bingo)
plugins: ~/.bingo/plugins/<name>/, <project>/.bingo/plugins/<name>/, <project>/.mcp.json
remote MCP servers that sign in: bingo mcp login NAME, bingo mcp logout NAME
in a session: /help lists every command; Ctrl-C interrupts; Ctrl-D or /exit ends it
docs: README.md and docs/ in bingo's repository"""
"""What --help says below the flags: where a newcomer's next questions are answered."""


def _parser() -> argparse.ArgumentParser:
    import argparse

    class _Parser(argparse.ArgumentParser):
        def error(self, message: str) -> NoReturn:
            raise UsageError(message + _did_you_mean(message, self._option_string_actions), "see bingo --help")

    p = _Parser(
        prog="bingo",
        description="An agent host whose extensions are cross-process plugins.",
        epilog=_EPILOG,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("prompt", nargs="?", help="one turn, then exit; starting with / runs a slash command")
    p.add_argument(
        "-p", "--print", dest="print_mode", action="store_true", help="plain text output, nothing waits for a person"
    )
    p.add_argument(
        "-c", "--continue", dest="continue_latest", action="store_true", help="continue this project's latest session"
    )
    p.add_argument(
        "--resume",
        metavar="ID",
        nargs="?",
        const="",
        help="continue the session with this id (or unique prefix); with no ID, choose one of this project's from a list",
    )
    p.add_argument("--provider", metavar="ID", help="the model provider for this run")
    p.add_argument("--model", metavar="NAME", help="the model for this run")
    p.add_argument(
        "--allow",
        metavar="RULE",
        action="append",
        default=[],
        help="add a permissions.allow rule for this run (repeatable)",
    )
    p.add_argument(
        "--trust",
        action="store_true",
        help="trust what this project brings (.bingo/ plugins and settings, .mcp.json) as it is now, and exit",
    )
    p.add_argument(
        "--channel", metavar="NAME", help="run as a bot in an IM channel (matrix) instead of drawing a terminal"
    )
    p.add_argument(
        "--check-plugin",
        metavar="DIR",
        help="check the plugin in DIR (or each server of a .mcp.json, or of DIR's) as bingo would run it, one line per check, and exit (0: all pass)",
    )
    p.add_argument(
        "--call",
        dest="check_call",
        action="store_true",
        help="with --check-plugin: call each tool too, with an input made from its schema",
    )
    p.add_argument(
        "--json", dest="check_json", action="store_true", help="with --check-plugin: the report as one JSON document"
    )
    p.add_argument(
        "--acp",
        action="store_true",
        help="speak the Agent Client Protocol on stdio, for an editor, instead of drawing a terminal",
    )
    p.add_argument(
        "--no-sandbox",
        dest="no_sandbox",
        action="store_true",
        help="run this once without the sandbox: bash and every plugin reach what you can (bash is asked about again)",
    )
    p.add_argument(
        "--output-format",
        metavar="FORMAT",
        default="text",
        help="with -p: text (the default), json (one result object at the end) or stream-json (one JSON object per line as the run goes); docs/scripts.md",
    )
    p.add_argument(
        "--json-schema",
        metavar="SCHEMA",
        help="with --output-format json|stream-json: the answer must be JSON valid against this schema (inline JSON or a file)",
    )
    p.add_argument("--max-turns", metavar="N", help="at most N model requests in the run")
    p.add_argument("--version", action="store_true", help="print bingo's version and exit")
    return p


def parse(argv: Sequence[str]) -> Options:
    """Options from the command line; UsageError when they cannot be understood."""
    options = _quick(argv) or _parsed(argv)
    if options.continue_latest and options.resume is not None:
        raise UsageError("--continue and --resume cannot be used together", "pick one")
    if options.channel is not None:
        if options.channel not in CHANNELS:
            raise UsageError(f"there is no channel {options.channel!r}", f"the channels are: {', '.join(CHANNELS)}")
        if options.prompt is not None or options.continue_latest or options.resume is not None or options.print_mode:
            raise UsageError(
                "--channel takes no prompt, --print, --continue or --resume",
                "each room is its own session: write in the room",
            )
    if (options.check_call or options.check_json) and options.check_plugin is None:
        raise UsageError("--call and --json go with --check-plugin DIR", "write bingo --check-plugin DIR --call --json")
    if options.check_plugin is not None and (
        options.prompt is not None
        or options.continue_latest
        or options.resume is not None
        or options.channel is not None
        or options.trust
        or options.acp
    ):
        raise UsageError(
            "--check-plugin takes no prompt and no other mode", "write bingo --check-plugin DIR [--call] [--json]"
        )
    if options.trust and (
        options.prompt is not None
        or options.continue_latest
        or options.resume is not None
        or options.channel is not None
    ):
        # Trust trusts and exits (INTERFACE.md §1): a prompt given with it would be dropped unseen.
        raise UsageError(
            "--trust takes no prompt, --continue, --resume or --channel: it trusts the project and exits",
            'run bingo --trust first, then bingo "PROMPT"',
        )
    if options.acp and (
        options.prompt is not None
        or options.continue_latest
        or options.resume is not None
        or options.print_mode
        or options.channel is not None
        or options.trust
    ):
        raise UsageError(
            "--acp takes no prompt, --print, --continue, --resume, --channel or --trust",
            "the editor starts and loads sessions: add bingo --acp to its agent settings (docs/editors.md)",
        )
    return _for_scripts(options)


def _for_scripts(options: Options) -> Options:
    """`options` checked for the output for scripts (INTERFACE.md §13): a JSON format is a
    print run; UsageError for a format that is none, or a mode with no run to print."""
    import msgspec

    if options.output_format not in FORMATS:
        raise UsageError(
            f"--output-format takes text, json or stream-json, not {options.output_format!r}",
            "write --output-format json",
        )
    if options.json_schema is not None and options.output_format == "text":
        raise UsageError(
            "--json-schema goes with --output-format json or stream-json",
            "write bingo -p --output-format json --json-schema SCHEMA PROMPT",
        )
    scripted = options.output_format != "text" or options.max_turns is not None
    if scripted and (options.trust or options.acp or options.channel is not None or options.check_plugin is not None):
        raise UsageError(
            "--output-format, --json-schema and --max-turns go with a prompt, not with --trust, --acp, --channel or --check-plugin",
            'write bingo -p --output-format json "PROMPT"',
        )
    if options.output_format != "text" and not options.print_mode:
        options = msgspec.structs.replace(options, print_mode=True)  # nothing is drawn for a script
    return options


def _parsed(argv: Sequence[str]) -> Options:
    from .app import Options

    ns = _parser().parse_args(list(argv))
    if ns.version:
        raise _Version
    return Options(
        prompt=ns.prompt,
        print_mode=ns.print_mode,
        continue_latest=ns.continue_latest,
        resume=ns.resume,
        provider=ns.provider,
        model=ns.model,
        allow=tuple(ns.allow),
        trust=ns.trust,
        channel=ns.channel,
        acp=ns.acp,
        check_plugin=ns.check_plugin,
        check_call=ns.check_call,
        check_json=ns.check_json,
        no_sandbox=ns.no_sandbox,
        output_format=ns.output_format,
        json_schema=ns.json_schema,
        max_turns=_turns(ns.max_turns),
    )


class _Version(Exception):
    """The command line asks for the version (argparse read it: `--vers`, say)."""


def _version(argv: Sequence[str]) -> bool:
    """True when a plain command line asks for the version; argparse's reading of any other
    line raises _Version instead."""
    return "--version" in argv and _read([word for word in argv if word != "--version"]) is not None


STDIN_LIMIT = 1 << 20
"""The most a prompt on stdin may hold, in bytes (1 MiB): past it, a file's path in the
prompt is the way."""


def _read_stdin() -> str:
    """What a pipe or file on stdin holds, as text; UsageError past STDIN_LIMIT or when it
    is not UTF-8."""
    data = sys.stdin.buffer.read(STDIN_LIMIT + 1)
    if len(data) > STDIN_LIMIT:
        raise UsageError(
            "stdin holds more than 1 MiB, the most a prompt on stdin may be", "name the file in the prompt instead"
        )
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise UsageError("stdin is not UTF-8 text", "pipe text, or name the file in the prompt") from None


def _with_stdin(options: Options, text: str) -> Options:
    """`options` with stdin's `text` as the prompt (when none was given), or added to the
    prompt as a fenced block (INTERFACE.md §1); as they were when stdin was empty."""
    import msgspec

    if not text.strip():
        return options
    if options.prompt is None:
        return msgspec.structs.replace(options, prompt=text.strip())
    fence = "```"
    while fence in text:
        fence += "`"
    return msgspec.structs.replace(options, prompt=f"{options.prompt}\n\n{fence}\n{text.rstrip(chr(10))}\n{fence}")


def run(argv: Sequence[str]) -> int:
    """Run bingo; the exit status."""
    try:
        import asyncio

        if len(argv) > 1 and argv[0] == "mcp":  # `bingo mcp login NAME` (one word alone is a prompt)
            from .checkup import run_mcp

            return asyncio.run(run_mcp(list(argv[1:])))
        if len(argv) > 1 and argv[0] == "plugin":  # `bingo plugin add SOURCE` (INTERFACE §12)
            from .packages import run_plugin

            return run_plugin(list(argv[1:]))
        try:
            if _version(argv):
                raise _Version
            options = parse(argv)
        except _Version:
            from . import __version__

            print(f"bingo {__version__}")
            return 0
        if (
            not options.trust
            and options.channel is None
            and not options.acp
            and options.check_plugin is None
            and not sys.stdin.isatty()
        ):
            options = _with_stdin(options, _read_stdin())
        if options.acp and sys.stdin.isatty():
            # A person trying `bingo --acp` by hand: it waits for an editor's JSON, silently.
            print(
                "bingo: --acp waits for an editor's Agent Client Protocol messages on stdin: add bingo --acp to your editor's agent settings (docs/editors.md), or run bingo for the terminal",
                file=sys.stderr,
            )
        from .app import run_app

        if not gc.isenabled():  # main() held collections off while bingo imported itself
            gc.freeze()  # what start-up made lives for the run: no collection need scan it
            gc.enable()
        return asyncio.run(run_app(options))
    except BingoError as exc:
        from .surfaces import escape  # lazily, as cli.py imports everything

        print(escape(f"bingo: {exc.line()}"), file=sys.stderr)  # it may quote a name, a path, a value (§8)
        return exc.exit_code
    except KeyboardInterrupt:
        print("bingo: interrupted", file=sys.stderr)
        return 130
    except BrokenPipeError:
        # What reads stdout went away (`bingo -p /tools | head -1`): stop quietly, as a Unix
        # tool does on SIGPIPE, and let nothing flushed at exit fail again.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
        return 141
    except Exception as exc:  # boundary: the last line of defence
        from .surfaces import escape

        print(escape(f"bingo: internal error ({type(exc).__name__}: {exc}); {_log_internal_error()}"), file=sys.stderr)
        return 1


def _log_internal_error() -> str:
    """Log the exception being handled to bingo's log, never to stderr (logging's last
    resort when no handler is set yet would print its traceback there); where it went."""
    import logging

    root = logging.getLogger()
    if not root.handlers:  # it failed before the run set up its log
        from .kernel.home import bingo_home, data_dir
        from .kernel.log import LOG_BYTES, SizedFileHandler

        logs = data_dir(bingo_home(os.environ)) / "logs"
        try:
            logs.mkdir(parents=True, exist_ok=True)
            (logs / "bingo.log").open(
                "a", encoding="utf-8"
            ).close()  # writable, or no handler that would say so on stderr
            handler = SizedFileHandler(logs / "bingo.log", max_bytes=LOG_BYTES)
        except OSError:
            return "its details could not be logged"
        handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
        root.addHandler(handler)
    logging.getLogger("bingo").exception("internal error")
    return "details are in the log under ~/.bingo/data/logs/bingo.log"


def main() -> None:
    """The console script: `launch`, then exit without tearing the interpreter down (what
    needs closing is closed by then; tearing every module down is a share of a cold
    `bingo -p "/command"` that nobody waits for: ADR-0014)."""
    _exit(launch(sys.argv[1:]))


def launch(argv: Sequence[str]) -> int:
    """`run`, with no cyclic collection while bingo imports itself; the exit status."""
    gc.disable()  # imports make ~100k objects that all live: collecting them is ~5% of a start
    return run(argv)


def _exit(code: int) -> NoReturn:
    import logging

    janitor = sys.modules.get("bingo.sandbox.janitor._client")
    if janitor is not None:
        janitor.wind_down()  # nothing of this run's goes on after bingo exits
    logging.shutdown()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass  # a reader that went away, or a closed stream: nothing left to say there
    os._exit(code)
