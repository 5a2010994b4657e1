"""The checker's verdicts: one `Check` per line, the `Report` of a run, and its two forms.

Owns what a check says (its id, its group, pass / fail / warn / skip, one line of what was
found, and the fix when it failed) and the text and JSON of a whole report. The text is
escaped by the caller, which prints it (INTERFACE.md §8); the JSON is ASCII, so nothing a
plugin said reaches a terminal live from it either. It decides no verdict.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Literal

import msgspec

__all__ = ["DATA_DIR", "MARKS", "Check", "Live", "McpJsonReport", "Report", "Status"]

Status = Literal["pass", "fail", "warn", "skip"]

MARKS: dict[Status, str] = {"pass": "✓", "fail": "✗", "warn": "!", "skip": "-"}
"""The mark that begins each line of the text form."""


class Check(msgspec.Struct, frozen=True, kw_only=True):
    """One check: `id` names it (`start.protocol`, `call.count.display`), `title` is what it
    checks, in words; `detail` what it found; `fix`, for a failure or a warning, what to do."""

    id: str
    group: str
    status: Status
    title: str
    detail: str = ""
    fix: str = ""

    def line(self) -> str:
        """The text form: `✓ group: title (detail)`, `✗ group: title: detail; fix: fix`."""
        said = f"{MARKS[self.status]} {self.group}: {self.title}"
        if self.status in ("pass", "skip"):
            return f"{said} ({self.detail})" if self.detail else said
        if self.detail:
            said += f": {self.detail}"
        if self.fix:
            said += f"; fix: {self.fix}"
        return said


@dataclass(slots=True)
class Live:
    """The checks of a live run, by group, as they are made."""

    start: list[Check] = field(default_factory=list[Check])
    declarations: list[Check] = field(default_factory=list[Check])
    behaviour: list[Check] = field(default_factory=list[Check])
    calls: list[Check] = field(default_factory=list[Check])

    def all(self) -> list[Check]:
        return [*self.start, *self.declarations, *self.behaviour, *self.calls]

    def skip_rest(self, why: str) -> None:
        """One line for the behaviour that was not checked, and why."""
        self.behaviour.append(
            Check(
                id="behaviour",
                group="behaviour",
                status="skip",
                title="its behaviour on the wire",
                detail=f"not checked: {why}",
            )
        )


DATA_DIR = "a temporary directory, removed afterwards"
"""What the checked plugin's `dataDir` is: a check changes none of the person's data."""


class Report(msgspec.Struct, kw_only=True):
    """Every check of one run of the checker, in order."""

    plugin: str
    directory: str
    called: bool
    checks: list[Check] = msgspec.field(default_factory=list[Check])
    seconds: float = 0.0
    mcp: bool = False
    """An MCP server's report: `--call` calls only the tools that say they only read."""
    started: bool = False
    """Whether a process (or a connection) was started, with the throw-away dataDir."""

    @property
    def ok(self) -> bool:
        """True when no check failed (a warning is no failure)."""
        return all(check.status != "fail" for check in self.checks)

    def add(self, check: Check) -> None:
        self.checks.append(check)

    def counts(self) -> dict[Status, int]:
        counted: dict[Status, int] = {"pass": 0, "fail": 0, "warn": 0, "skip": 0}
        for check in self.checks:
            counted[check.status] += 1
        return counted

    def summary(self) -> str:
        """The last line: how many checks, and how they went."""
        c = self.counts()
        parts = [f"{c['pass']} passed", f"{c['fail']} failed"]
        if c["warn"]:
            parts.append(f"{c['warn']} warning{'s' if c['warn'] != 1 else ''}")
        if c["skip"]:
            parts.append(f"{c['skip']} not run")
        verdict = "ready" if self.ok else "not ready"
        return f"{self.plugin}: {len(self.checks)} checks, {', '.join(parts)} in {self.seconds:.1f} s: {verdict}"

    def text(self) -> str:
        """The report as lines, one per check, and the summary."""
        lines = [check.line() for check in self.checks]
        if self.started:
            lines.append(f"  dataDir: {DATA_DIR}")
        if not self.called and self.mcp and self.started:
            lines.append(
                "  (no tool was called: pass --call to call each tool that says it only reads, with an input made from its schema)"
            )
        elif not self.called and not self.mcp:
            lines.append("  (no tool was called: pass --call to call each tool with an input made from its schema)")
        lines.append(self.summary())
        return "\n".join(lines) + "\n"

    def json(self) -> str:
        """The report as one JSON document, for an author's CI."""
        # ASCII only: a plugin's words may hold C1 controls or bidirectional overrides, which
        # JSON leaves as they are and a terminal showing the document would obey (§8).
        return json.dumps(self.document(), ensure_ascii=True) + "\n"

    def document(self) -> dict[str, object]:
        """The report as a JSON value."""
        return {
            "plugin": self.plugin,
            "directory": self.directory,
            "ok": self.ok,
            "called": self.called,
            "dataDir": DATA_DIR if self.started else None,
            "seconds": round(self.seconds, 3),
            "counts": self.counts(),
            "checks": [msgspec.structs.asdict(check) for check in self.checks],
        }


class McpJsonReport(msgspec.Struct, kw_only=True):
    """The check of a `.mcp.json`: the file's own checks, then one report per server."""

    path: str
    checks: list[Check] = msgspec.field(default_factory=list[Check])
    servers: list[Report] = msgspec.field(default_factory=list[Report])
    seconds: float = 0.0

    @property
    def ok(self) -> bool:
        """True when no check of the file or of any server failed."""
        return all(check.status != "fail" for check in self.checks) and all(report.ok for report in self.servers)

    def summary(self) -> str:
        ready = sum(1 for report in self.servers if report.ok)
        count = len(self.servers)
        said = f"{count} server{'s' if count != 1 else ''}, {ready} ready, {count - ready} not ready"
        return f"{self.path}: {said} in {self.seconds:.1f} s: {'ready' if self.ok else 'not ready'}"

    def text(self) -> str:
        """The file's lines, a block per server (a heading, its lines, its summary), and
        the summary of the whole."""
        blocks = ["\n".join(check.line() for check in self.checks)]
        for report in self.servers:
            blocks.append(f"mcpServers.{report.plugin}:\n" + report.text().rstrip("\n"))
        blocks.append(self.summary())
        return "\n\n".join(blocks) + "\n"

    def json(self) -> str:
        """The check as one JSON document: the file's, and each server's report."""
        document = {
            "file": self.path,
            "ok": self.ok,
            "seconds": round(self.seconds, 3),
            "checks": [msgspec.structs.asdict(check) for check in self.checks],
            "servers": [report.document() for report in self.servers],
        }
        return json.dumps(document, ensure_ascii=True) + "\n"
