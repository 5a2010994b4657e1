"""What the model is told of each built-in tool, as data: its description and its input's
JSON Schema (ADR-0043).

A run's first request carries every tool's spec; read from here, it imports no tool's module
and builds no schema (`msgspec.json.schema` over each input Struct cost more than the rest of
the tools' start). Each tool's module takes its spec from here and parses its input with its
own Struct; `tests/unit/tools/test_specs.py` holds each schema here equal to its Struct's
(`schema_of`), so the two cannot drift: change a Struct, then its schema here, as that test
prints it.
"""

from __future__ import annotations

from ..wire import Json, ToolSpec

__all__ = ["SPECS", "spec"]

_DATA: dict[str, tuple[str, dict[str, Json]]] = {
    "read": (
        (
            "Read a text file. Lines are numbered like `cat -n` (the number, a tab, the line). Shows 2000 "
            "lines from the start unless `offset` (1-based first line) and `limit` (line count) say "
            "otherwise; lines longer than 2000 characters are cut. When more lines remain, the output ends "
            "with the offset to read next. Binary files are refused. Use glob or grep first when you do not "
            "know the path."
        ),
        {
            "description": "Input of the read tool.",
            "type": "object",
            "properties": {
                "path": {
                    "description": "The file to read: absolute, or relative to the working directory.",
                    "type": "string",
                },
                "offset": {
                    "description": "The 1-based number of the first line to show.",
                    "type": "integer",
                    "minimum": 1,
                    "default": 1,
                },
                "limit": {
                    "description": "How many lines to show (default 2000).",
                    "type": "integer",
                    "minimum": 1,
                    "default": 2000,
                },
            },
            "required": ["path"],
        },
    ),
    "glob": (
        (
            "Find files whose paths match a glob pattern. `*` and `?` match within one path segment, `**` "
            "matches any number of directories, `[abc]` a class and `{a,b}` alternatives; `*.py` matches only"
            " at the top of `path`, `**/*.py` at any depth. Lists files (not directories), most recently "
            "modified first, at most 500; says how many more there were. `.git` is never searched."
        ),
        {
            "description": "Input of the glob tool.",
            "type": "object",
            "properties": {
                "pattern": {
                    "description": "A glob over paths relative to `path`, e.g. `**/*.py` or `src/**/test_*.{py,txt}`.",
                    "type": "string",
                },
                "path": {
                    "description": "The directory to search (default: the working directory).",
                    "type": "string",
                    "default": "",
                },
            },
            "required": ["pattern"],
        },
    ),
    "grep": (
        (
            "Search the contents of text files for a regular expression (RE2 syntax, as ripgrep's: no"
            " look-around or backreferences). Answers `file:line:text`, one"
            " line per matching line, ordered by file path then line number, at most 500 lines (it says how "
            "many more matched). Searches `path` (a file, or a directory walked recursively; default the "
            "working directory), skipping `.git` and binary files. `glob` restricts which files are searched;"
            " `ignoreCase` makes the match case-insensitive."
        ),
        {
            "description": "Input of the grep tool.",
            "type": "object",
            "properties": {
                "pattern": {
                    "description": "A regular expression (RE2 syntax, as ripgrep's: no look-around or backreferences).",
                    "type": "string",
                },
                "path": {
                    "description": "A file or directory to search (default: the working directory).",
                    "type": "string",
                    "default": "",
                },
                "glob": {
                    "description": (
                        "Only search files matching this glob, e.g. `*.py` (matched against the file name) or "
                        "`src/**/*.ts` (a pattern with `/` is matched against the path)."
                    ),
                    "type": "string",
                    "default": "",
                },
                "ignoreCase": {
                    "description": "Match letters without regard to case.",
                    "type": "boolean",
                    "default": False,
                },
            },
            "required": ["pattern"],
        },
    ),
    "bash": (
        (
            "Run a command with `/bin/bash -c` in the working directory. stdin is empty; stdout and stderr "
            "are merged. The answer is the output followed by the exit code; a non-zero exit is reported as "
            "an error. Output longer than 30000 characters keeps its first and last 15000 and says how much "
            "was cut. The command is killed after `timeout` seconds (default 120, at most 600); when it ends,"
            " every process it started is ended too, so nothing keeps running in the background. When bingo's"
            " sandbox is in force the command runs confined: it writes only in the project (not its .bingo/, "
            ".git/hooks or .git/config) and its own TMPDIR, cannot read secrets (~/.ssh, cloud credentials, "
            "API keys in the environment), and reaches the network only by HTTP(S) through bingo's proxy, to "
            "hosts the person grants."
        ),
        {
            "description": "Input of the bash tool.",
            "type": "object",
            "properties": {
                "command": {
                    "description": "The command line, run by `bash -c`.",
                    "type": "string",
                },
                "timeout": {
                    "description": "Seconds before the command is killed (default 120, at most 600).",
                    "type": "number",
                    "exclusiveMinimum": 0,
                    "maximum": 600.0,
                    "default": 120.0,
                },
                "outsideSandbox": {
                    "description": (
                        "Run outside bingo's sandbox, with everything the person can reach. The person is always asked "
                        "(no rule allows it), and where nobody can be asked it is refused: use it only when the sandbox "
                        "is why the command cannot work, and give `reason`."
                    ),
                    "type": "boolean",
                    "default": False,
                },
                "reason": {
                    "description": "Why the command must run outside the sandbox (shown to the person).",
                    "anyOf": [
                        {
                            "type": "string",
                        },
                        {
                            "type": "null",
                        },
                    ],
                    "default": None,
                },
            },
            "required": ["command"],
        },
    ),
    "write": (
        (
            "Write a file's whole content: creates the file (and its directories), or replaces it. An "
            "existing file must have been read in this session and not changed on disk since; to change part "
            "of a file, use edit. Replacing keeps the file's mode, its line endings and whether it ends with "
            "a newline."
        ),
        {
            "description": "Input of the write tool.",
            "type": "object",
            "properties": {
                "path": {
                    "description": "The file to write: absolute, or relative to the working directory.",
                    "type": "string",
                },
                "content": {
                    "description": "The file's whole new content.",
                    "type": "string",
                },
            },
            "required": ["path", "content"],
        },
    ),
    "edit": (
        (
            "Replace an exact string in a text file. Read the file first: edit refuses a file you have not "
            "read in this session, or one that changed on disk since you read it. oldString must match the "
            "file exactly (whitespace and indentation included; leave out read's line-number prefix) and "
            "occur exactly once: include surrounding lines to make it unique, or pass replaceAll to change "
            "every occurrence. The file's line endings are kept. Use write to create a file or to replace all"
            " of it."
        ),
        {
            "description": "Input of the edit tool.",
            "type": "object",
            "properties": {
                "path": {
                    "description": "The file to change: absolute, or relative to the working directory. Read it first.",
                    "type": "string",
                },
                "oldString": {
                    "description": (
                        "The exact text to replace, as the file holds it: whitespace and indentation included, without "
                        "read's line-number prefix. It must occur once, unless replaceAll."
                    ),
                    "type": "string",
                },
                "newString": {
                    "description": "The text to put in its place (different from oldString).",
                    "type": "string",
                },
                "replaceAll": {
                    "description": "Replace every occurrence of oldString, not just one.",
                    "type": "boolean",
                    "default": False,
                },
            },
            "required": ["path", "oldString", "newString"],
        },
    ),
}

SPECS: dict[str, ToolSpec] = {
    name: ToolSpec(name=name, description=description, input_schema=schema)
    for name, (description, schema) in _DATA.items()
}
"""Each built-in tool's spec, by name (not `skill`'s, whose description is the run's skills)."""


def spec(name: str) -> ToolSpec:
    """The spec of built-in tool `name`."""
    return SPECS[name]
