"""How a `bash` command line is read for a permission rule (ADR-0018).

Owns two readings of one command. `simple_commands` splits it into the simple commands a
pattern rule judges one by one (on `;`, `&`, `|`, `&&`, `||`, `|&` and newlines, outside
quotes, with comments dropped where bash drops them: a `#` that begins a word, to the end of
its line), or answers None when the command does something no pattern may allow: a command
or process substitution (`$( )`, backticks, `<( )`), `${ }` or `$[ ]`, parentheses (a
subshell, a function, arithmetic), a redirection other than duplicating a descriptor
(`2>&1`) or writing to `/dev/null`, a line continuation, a quote left open, or a simple
command whose first word (past its redirections) is an assignment (`X=1 cmd`) or a reserved
word (`time`, `!`, `if`, `{`, ...). Each simple command keeps its words, as written, and
which of them is the command's name, for the gate's word and path checks.
`pieces` is the wide reading a deny or ask rule looks through: every simple command, every
stretch between any operator character (quoted or not), each also without its leading
assignments, keywords and wrappers (`sudo`, `env`, ...) and without its quotes.

It is not a shell parser, and does not try to be one: where it is unsure it answers None,
which costs a question (a false ask), never a false allow. Nor is `pieces` a sandbox: a deny
pattern on bash catches the plain spellings of a command, not every spelling of it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

__all__ = ["Part", "pieces", "simple_commands"]

_BLANKS = " \t"
_SEPARATORS = ";&|\n"
_WORD_END = _BLANKS + _SEPARATORS + "<>()"
_EXPANSIONS = "({["
"""After `$`: a command substitution, a `${...}` expansion, an arithmetic `$[...]`."""
_DEVICE_NULL = "/dev/null"
_DUPLICATE = re.compile(r"[0-9]+-?|-")
"""What may follow `>&` or `<&`: a descriptor number (moved with `-`), or `-` (closed)."""
_DESCRIPTOR = re.compile(r"[0-9]+")
"""A word glued before `>` or `<` that bash reads as the descriptor redirected (`2>`)."""
_WRAPPERS = frozenset(
    {
        "!",
        "{",
        "if",
        "then",
        "else",
        "elif",
        "do",
        "while",
        "until",
        "time",
        "exec",
        "command",
        "builtin",
        "nohup",
        "nice",
        "sudo",
        "env",
        "xargs",
    }
)
"""Words a deny rule looks past at the start of a piece: `sudo rm x` is also `rm x`."""
_RESERVED = frozenset(
    {
        "!",
        "{",
        "}",
        "[[",
        "]]",
        "case",
        "coproc",
        "do",
        "done",
        "elif",
        "else",
        "esac",
        "fi",
        "for",
        "function",
        "if",
        "in",
        "select",
        "then",
        "time",
        "until",
        "while",
    }
)
"""Bash's reserved words: a simple command that starts with one is a compound command (or
`time`, `!`), whose command name is not its first word, so no allow pattern judges it."""
_ASSIGNMENT = re.compile(r"[A-Za-z_][A-Za-z0-9_]*=\S*")
_ASSIGNS = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\[[^\]]*\])?\+?=")
"""The start of a word bash reads as an assignment (`X=1`, `X+=1`, `a[0]=1`)."""
_OPERATORS = re.compile(r"\$\(|\$\{|\$\[|<\(|>\(|[;&|\n()`{}<>]")


@dataclass(frozen=True, slots=True)
class Part:
    """One simple command: its words as written (quotes kept), redirections included, and
    `command`, the first word that is no redirection (its name), or "" when it has none."""

    words: tuple[str, ...]
    command: str

    @property
    def text(self) -> str:
        """The words joined by one space: what a pattern is matched against."""
        return " ".join(self.words)


class _Unfit(Exception):
    """The command holds something no pattern rule may allow."""


class _Reader:
    """One pass over a command, collecting its simple commands word by word (blanks between
    words dropped, everything else kept as written) and noting which words redirect."""

    def __init__(self, command: str) -> None:
        self.text = command
        self.at = 0
        self.parts: list[Part] = []
        self._words: list[str] = []
        self._redirections: list[bool] = []
        self._word: list[str] = []
        self._redirecting = False

    def peek(self, ahead: int = 0) -> str:
        return self.text[self.at + ahead : self.at + ahead + 1]

    def put(self, text: str) -> None:
        self._word.append(text)

    def blank(self) -> None:
        if self._word:
            self._words.append("".join(self._word))
            self._redirections.append(self._redirecting)
        self._word, self._redirecting = [], False

    def end_part(self) -> None:
        self.blank()
        if self._words:
            command = next((w for w, r in zip(self._words, self._redirections) if not r), "")
            if _ASSIGNS.match(command) or command in _RESERVED:
                raise _Unfit  # `X=1 cmd` runs cmd; `time cmd`, `! cmd`, `if cmd` run cmd
            self.parts.append(Part(tuple(self._words), command))
        self._words, self._redirections = [], []

    def read(self) -> list[Part]:
        while self.at < len(self.text):
            self._step(self.text[self.at])
        self.end_part()
        return self.parts

    def _step(self, char: str) -> None:
        if char in _BLANKS:
            self.blank()
            self.at += 1
        elif char == "#" and not self._word:
            # A comment, as bash reads one: a `#` that begins a word, to the end of its
            # line. The newline after it still ends the simple command.
            end = self.text.find("\n", self.at)
            self.at = len(self.text) if end < 0 else end
        elif char in _SEPARATORS:
            if char == "&" and self.peek(1) == ">":
                self._redirection()
                return
            self.end_part()
            self.at += 1
        elif char == "\\":
            if self.peek(1) in ("", "\n"):
                # A line continuation joins what is around it after this reading: `$\<nl>(`.
                raise _Unfit
            self.put(self.text[self.at : self.at + 2])
            self.at += 2
        elif char == "'":
            end = self.text.find("'", self.at + 1)
            if end < 0:
                raise _Unfit
            self.put(self.text[self.at : end + 1])
            self.at = end + 1
        elif char == '"':
            self._double_quoted()
        elif char == "$":
            self._dollar()
        elif char in "`()":
            raise _Unfit
        elif char in "<>":
            self._redirection()
        else:
            self.put(char)
            self.at += 1

    def _dollar(self) -> None:
        after = self.peek(1)
        if after in _EXPANSIONS and after:
            raise _Unfit
        if after == "'":
            # ANSI-C quoting: a backslash escapes the quote; nothing inside is expanded.
            at = self.at + 2
            while at < len(self.text) and self.text[at] != "'":
                at += 2 if self.text[at] == "\\" else 1
            if at >= len(self.text):
                raise _Unfit
            self.put(self.text[self.at : at + 1])
            self.at = at + 1
            return
        self.put("$")
        self.at += 1

    def _double_quoted(self) -> None:
        at = self.at + 1
        while at < len(self.text) and self.text[at] != '"':
            char = self.text[at]
            if char == "\\":
                if self.text[at + 1 : at + 2] in ("", "\n"):
                    raise _Unfit
                at += 2
                continue
            if char == "`" or (char == "$" and self.text[at + 1 : at + 2] in tuple(_EXPANSIONS)):
                raise _Unfit  # substitutions run inside double quotes too
            at += 1
        if at >= len(self.text):
            raise _Unfit
        self.put(self.text[self.at : at + 1])
        self.at = at + 1

    def _redirection(self) -> None:
        """`2>&1`, `>&2`, `<&0`, `>&-` and `>/dev/null` (also `>>`, `&>`, `>|`); anything
        else that redirects is unfit. The word before the operator belongs to it only when
        it is a descriptor number (`2>`): `ls>x` is the word `ls`, then a redirection."""
        start = self.at
        for operator in ("&>>", "&>", ">>", ">|", ">&", "<&", ">"):
            if self.text.startswith(operator, start):
                break
        else:
            raise _Unfit  # `<`, `<<`, `<<<`, `<>`: input from files, here-documents
        if operator.startswith("&") or not _DESCRIPTOR.fullmatch("".join(self._word)):
            self.blank()
        self._redirecting = True
        self.at += len(operator)
        while self.peek() and self.peek() in _BLANKS:
            self.at += 1
        spaced = self.at > start + len(operator)
        target_start = self.at
        while self.at < len(self.text) and self.text[self.at] not in _WORD_END:
            self.at += 1
        target = self.text[target_start : self.at]
        if operator in (">&", "<&"):
            fits = _DUPLICATE.fullmatch(target) is not None
        else:
            fits = target == _DEVICE_NULL
        if not fits:
            raise _Unfit
        self.put(operator)
        if spaced:
            self.blank()
            self._redirecting = True
        self.put(target)


def simple_commands(command: str) -> tuple[Part, ...] | None:
    """The simple commands of `command`, or None when it holds something no pattern rule
    may allow (see the module docstring)."""
    try:
        return tuple(_Reader(command).read())
    except _Unfit:
        return None


def _unwrapped(piece: str) -> str:
    words = piece.split()
    while words and (words[0] in _WRAPPERS or _ASSIGNMENT.fullmatch(words[0])):
        words.pop(0)
    return " ".join(words)


def pieces(command: str) -> set[str]:
    """Every stretch of `command` a deny or ask pattern is matched against (see the module
    docstring): the whole command, its simple commands, what lies between any operator
    characters, each also unwrapped and unquoted."""
    found = {" ".join(command.split())}
    found.update(part.text for part in simple_commands(command) or ())
    found.update(" ".join(stretch.split()) for stretch in _OPERATORS.split(command))
    for piece in list(found):
        unwrapped = _unwrapped(piece)
        found.update({unwrapped, _unwrapped(re.sub(r"[\"'\\]", "", piece))})
    found.discard("")
    return found
