"""Markdown tables from peers3.py's perf and reliability JSON (python3 peers3.py report F...)."""

from __future__ import annotations

import json
import statistics
import sys

HOST_ORDER = ["floor", "bingo", "bingo-before", "claude", "codex", "codex-npm", "opencode", "gemini", "pi"]


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


def f(x, unit="s", nd=3):
    if x is None:
        return "–"
    if unit == "ms":
        return f"{x * 1000:.{nd}f}"
    if unit == "MB":
        return f"{x / 2**20:.0f}"
    return f"{x:.{nd}f}"


def ratio(x, b):
    return "–" if x is None or not b else f"{x / b:.2f}×"


def hosts_in(rows):
    names = {r["host"] for r in rows}
    return [h for h in HOST_ORDER if h in names] + sorted(h for h in names if h not in HOST_ORDER)


def measured(rows, host):
    return [r for r in rows if r["host"] == host and not r.get("warmup")]


def per_round_ratio(rows, host, key, base="bingo"):
    """Median over rounds of host/bingo within the same round."""
    b = {r["round"]: r[key] for r in measured(rows, base) if r["rc"] == 0}
    rs = [r[key] / b[r["round"]] for r in measured(rows, host) if r["rc"] == 0 and b.get(r["round"])]
    return med(rs)


def perf_tables(d):
    out = []
    out.append(
        f"Runs per host per scenario: {d['runs']} (interleaved A B C … A B C …, after one "
        f"unmeasured warm-up run each); started {d['started']}.\n"
    )
    out.append("| host | version |\n|---|---|")
    for h, v in d.get("versions", {}).items():
        out.append(f"| {h} | {v} |")
    out.append("")
    names = {
        "hi": "a. cold one-shot `hi` to exit",
        "mcp1": "b. one MCP tool call (1 stdio server)",
        "mcp10": "c. one MCP tool call, 10 servers configured",
        "mcp50": "d. 50 sequential MCP tool calls (1 server)",
    }
    for scen, rows in d["scenarios"].items():
        hs = hosts_in(rows)
        if not hs:
            continue
        out.append(f"### {names.get(scen, scen)}\n")
        bwall = med([r["wall"] for r in measured(rows, "bingo") if r["rc"] == 0])
        head = (
            "| host | ok runs | wall median s | wall min s | ratio of medians to bingo | median per-round "
            "ratio | first model request s |"
        )
        sep = "|---|---|---|---|---|---|---|"
        if scen == "hi":
            head += " peak tree RSS MB (median) | max single-process RSS MB | processes in tree |"
            sep += "---|---|---|"
        else:
            head += (
                " servers started | processes in tree (peak) | dispatch ms: model answer → "
                "MCP call (1st) | return ms: MCP answer → next model request |"
            )
            sep += "---|---|---|---|"
        if scen == "mcp50":
            head += " host ms per call ((wall − server time) / 50) | marginal ms per call vs. b |"
            sep += "---|---|"
        out.append(head)
        out.append(sep)
        b1 = None
        if scen == "mcp50" and "mcp1" in d["scenarios"]:
            b1 = {h: med([r["wall"] for r in measured(d["scenarios"]["mcp1"], h) if r["rc"] == 0]) for h in hs}
        for h in hs:
            ms = measured(rows, h)
            ok = [r for r in ms if r["rc"] == 0 and r.get("final_action") == "text"]
            walls = [r["wall"] for r in ok]
            w = med(walls)
            row = (
                f"| {h} | {len(ok)}/{len(ms)} | {f(w)} | {f(min(walls) if walls else None)} | "
                f"{ratio(w, bwall)} | {f(per_round_ratio(rows, h, 'wall'), nd=2)}× | "
                f"{f(med([r.get('to_first_request') for r in ok]))} |"
            )
            if scen == "hi":
                row += (
                    f" {f(med([r['peak_tree_rss'] for r in ok]), 'MB')} | "
                    f"{f(med([r['maxrss_kb'] * 1024 for r in ok]), 'MB')} | "
                    f"{med([r['peak_tree_procs'] for r in ok])} |"
                )
            else:
                row += (
                    f" {med([r['servers_started'] for r in ok])} | {med([r['peak_tree_procs'] for r in ok])} | "
                    f"{f(med([r['dispatch'][0] for r in ok if r['dispatch']]), 'ms', 1)} | "
                    f"{f(med([x for r in ok for x in r['return']]), 'ms', 1)} |"
                )
            if scen == "mcp50":
                per = med([(r["wall"] - r["server_busy"]) / 50 for r in ok])
                marg = (w - b1[h]) / 49 if (w is not None and b1 and b1.get(h)) else None
                row += f" {f(per, 'ms', 1)} | {f(marg, 'ms', 1)} |"
            out.append(row)
        out.append("")
        if scen == "mcp50":
            out.append("Per-call breakdown over calls 2..50 (medians over every call of every run):\n")
            out.append(
                "| host | dispatch ms (model answer sent → MCP call received) | return ms (MCP answer "
                "sent → next model request received) | sum ms |"
            )
            out.append("|---|---|---|---|")
            for h in hs:
                ok = [r for r in measured(rows, h) if r["rc"] == 0]
                dsp = med([x for r in ok for x in r["dispatch"][1:]])
                rt = med([x for r in ok for x in r["return"][1:]])
                out.append(
                    f"| {h} | {f(dsp, 'ms', 1)} | {f(rt, 'ms', 1)} | "
                    f"{f((dsp or 0) + (rt or 0), 'ms', 1) if dsp is not None else '–'} |"
                )
            out.append("")
    # request sizes for "hi"
    if "hi" in d["scenarios"]:
        rows = d["scenarios"]["hi"]
        out.append("### What each host sends the model for `hi`\n")
        out.append(
            "| host | API | model requests | bytes of all requests | main request bytes | ≈ tokens "
            "(bytes/4) | system prompt bytes | tools | tools JSON bytes |"
        )
        out.append("|---|---|---|---|---|---|---|---|---|")
        for h in hosts_in(rows):
            ok = [r for r in measured(rows, h) if r["rc"] == 0 and r.get("first_main")]
            if not ok:
                continue
            r = ok[-1]
            m = r["first_main"]
            out.append(
                f"| {h} | {m['api']} | {r['n_requests']} | {r['req_bytes_total']} | {m['bytes']} | "
                f"{m['bytes'] // 4} | {m['system_bytes']} | {m['n_tools']} | {m['tools_bytes']} |"
            )
        out.append("")
    return "\n".join(out)


def per_round(rows, host, value, base):
    """Median over rounds of value(host run) / value(base run) in the same round."""
    b = {r["round"]: value(r) for r in measured(rows, base) if r["rc"] == 0}
    rs = [
        value(r) / b[r["round"]]
        for r in measured(rows, host)
        if r["rc"] == 0 and b.get(r["round"]) and value(r) is not None
    ]
    return med(rs)


def targets(d):
    """Issue 27's rows, every host beside the floor (floor.py) measured in the same run:
    medians, and the median of per-round ratios to the floor."""
    out = ["| row | target | " + " | ".join(hosts_in([r for rows in d["scenarios"].values() for r in rows])) + " |"]
    hs = hosts_in([r for rows in d["scenarios"].values() for r in rows])
    out.append("|---|---|" + "---|" * len(hs))
    sc = d["scenarios"]

    def cell(rows, h, pick, unit="ms", base=None):
        ok = [r for r in measured(rows, h) if r["rc"] == 0]
        xs = [x for r in ok for x in pick(r)]
        v = med(xs)
        text = f(v, unit, 1) if unit != "MB" else f(v, "MB")
        if base and h != base and v is not None:
            one = lambda r: med(pick(r))  # noqa: E731
            q = per_round(rows, h, one, base)
            text += f" ({q:.2f}×)" if q else ""
        return text

    if "hi" in sc:
        rows = sc["hi"]
        out.append(
            "| `-p hi` launch → first model request, ms (× floor, per round) | ≤ 1.2× floor | "
            + " | ".join(cell(rows, h, lambda r: [r.get("to_first_request")], base="floor") for h in hs)
            + " |"
        )
        out.append(
            "| `-p hi` to exit, ms | | "
            + " | ".join(cell(rows, h, lambda r: [r["wall"]], base="floor") for h in hs)
            + " |"
        )
        out.append(
            "| `-p hi` peak RSS of the process tree, MB | ≤ 40 | "
            + " | ".join(cell(rows, h, lambda r: [r["peak_tree_rss"]], "MB") for h in hs)
            + " |"
        )
        out.append(
            "| `-p hi` peak RSS of the host process (wait4), MB | ≤ 40 | "
            + " | ".join(cell(rows, h, lambda r: [r["maxrss_kb"] * 1024], "MB") for h in hs)
            + " |"
        )
    if "mcp1" in sc:
        rows = sc["mcp1"]
        out.append(
            "| first call of a run to a declared server: answer → MCP call, ms | ≤ 10 | "
            + " | ".join(cell(rows, h, lambda r: r["dispatch"][:1]) for h in hs)
            + " |"
        )
    if "mcp50" in sc:
        rows = sc["mcp50"]
        out.append(
            "| between steps: MCP answer → next model request, calls 2..50, ms | ≤ 3 | "
            + " | ".join(cell(rows, h, lambda r: r["return"][1:]) for h in hs)
            + " |"
        )
        out.append(
            "| answer → MCP call, calls 2..50, ms | ≤ 2 | "
            + " | ".join(cell(rows, h, lambda r: r["dispatch"][1:]) for h in hs)
            + " |"
        )
        out.append(
            "| 50-call turn to exit, ms | | "
            + " | ".join(cell(rows, h, lambda r: [r["wall"]], base="floor") for h in hs)
            + " |"
        )
    return "\n".join(out) + "\n"


def rel_tables(d):
    out = [
        "| fault | host | rc | wall s | survived (exit 0, final answer) | servers started | calls answered "
        "| what the model got as the tool result | host output (tail) | leftover / orphans |",
        "|---|---|---|---|---|---|---|---|---|---|",
    ]
    for fault, rows in d["faults"].items():
        for r in rows:
            reqs = sorted(r["requests"], key=lambda x: x["t_recv"])
            res = [q for q in reqs if q.get("results")]
            got = res[-1].get("last_result", "")[:160].replace("\n", " ").replace("|", "/") if res else "(no result)"
            if res and res[-1].get("last_result_len", 0) > 1000:
                got = f"{res[-1]['last_result_len']} chars: " + got[:80]
            txt = (
                (r.get("stdout", "")[-160:] + " // " + r.get("stderr", "")[-200:]).replace("\n", " ").replace("|", "/")
            )
            orphans = r.get("mcp_orphans", r.get("mcp_leftover"))
            extra = r.get("after_kill_5s_alive")
            lo = f"{len(orphans or [])} MCP"
            if extra:
                lo += f"; alive 5 s after SIGKILL: {list(extra.values())}"
            elif r.get("leftover"):
                lo += f"; left: {list(r['leftover'].values())}"
            ok = r["rc"] == 0 and r.get("final_action") == "text"
            out.append(
                f"| {fault} | {r['host']} | {r['rc']}{' (timed out)' if r.get('timed_out') else ''} | "
                f"{r['wall']:.1f} | {'yes' if ok else 'no'} | {r['servers_started']} | "
                f"{r['tool_calls_answered']} | {got} | {txt[-300:]} | {lo} |"
            )
    return "\n".join(out)


def main(files):
    for fn in files:
        d = json.load(open(fn))
        if "scenarios" in d:
            print(targets(d))
            print(perf_tables(d))
        if "faults" in d:
            print(rel_tables(d))


if __name__ == "__main__":
    main(sys.argv[1:])
