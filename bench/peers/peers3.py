#!/usr/bin/env python3
"""bingo side by side with real agent CLIs, on one fake model and the same MCP servers.

    python3 peers3.py versions
    python3 peers3.py perf [--runs 10] [--hosts bingo,claude,...] [--scenarios hi,mcp1,mcp10,mcp50] [--out F]
    python3 peers3.py reliability [--hosts ...] [--faults crash,junk,hang,diestart,big,kill] [--hang-cap 150] [--out F]
    python3 peers3.py report PERF.json [REL.json]        Markdown tables on stdout

Stdlib only. The work directory ($BENCH_WORK, default $TMPDIR/peers3-work) holds each
host's HOME and project per scenario, the fake model's log and request bodies, the MCP
servers' logs and every run's stdout/stderr. See README.md for the environment variables
that locate the hosts (hosts.py).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import hosts as H

HERE = Path(__file__).resolve().parent
PAGE = os.sysconf("SC_PAGE_SIZE")


def marker(n, server="bench0"):
    return f"BENCHCALL tool={server}_echo server={server} n={n}"


SCENARIOS = {
    "hi": ([], "hi"),
    "mcp1": ([("bench0", "ok")], marker(1)),
    "mcp10": ([(f"bench{i}", "ok") for i in range(10)], marker(1)),
    "mcp50": ([("bench0", "ok")], marker(50)),
}
FAULTS = {
    "crash": ([("bench0", "crash")], marker(2)),
    "crashwait": ([("bench0", "crash")], marker(2) + " wait=3"),
    "junk": ([("bench0", "junk")], marker(1)),
    "hang": ([("bench0", "hang")], marker(1)),
    "diestart": ([("bench0", "diestart")], marker(1)),
    "big": ([("bench0", "big")], marker(1)),
    "big15": ([("bench0", "big15")], marker(1)),
    "kill": ([("bench0", "slow")], marker(1)),
}


# --------------------------------------------------------------------------- fake model
class Fake:
    def __init__(self, work: Path):
        self.work = work
        pf = work / "fake.port"
        pf.unlink(missing_ok=True)
        self.proc = subprocess.Popen(
            [
                sys.executable,
                str(HERE / "fake_model.py"),
                "--port",
                "0",
                "--port-file",
                str(pf),
                "--log",
                str(work / "fake.jsonl"),
                "--bodies",
                str(work / "bodies"),
            ],
            stdout=subprocess.DEVNULL,
            stderr=open(work / "fake.err", "w"),
        )
        for _ in range(200):
            if pf.exists():
                break
            time.sleep(0.02)
        self.url = f"http://127.0.0.1:{pf.read_text().strip()}"

    def _get(self, path):
        with urllib.request.urlopen(self.url + path, timeout=10) as r:
            return json.loads(r.read())

    def tag(self, t):
        self._get(f"/_ctl/tag?tag={t}")

    def log(self, t):
        return self._get(f"/_ctl/log?tag={t}")

    def stop(self):
        self.proc.terminate()
        self.proc.wait(5)


# --------------------------------------------------------------------------- processes
def _stat(pid):
    try:
        with open(f"/proc/{pid}/stat", "rb") as f:
            s = f.read().decode(errors="replace")
    except OSError:
        return None
    rp = s.rfind(")")
    fields = s[rp + 2 :].split()
    return {"comm": s[s.find("(") + 1 : rp], "state": fields[0], "ppid": int(fields[1]), "rss": int(fields[21]) * PAGE}


def _cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace").strip()
    except OSError:
        return ""


def alive(pid):
    st = _stat(pid)
    return st is not None and st["state"] not in ("Z", "X")


def tree(root):
    """{pid: stat} of root and all its descendants now."""
    stats = {}
    for p in os.listdir("/proc"):
        if p.isdigit():
            st = _stat(int(p))
            if st:
                stats[int(p)] = st
    kids = {}
    for pid, st in stats.items():
        kids.setdefault(st["ppid"], []).append(pid)
    out, todo = {}, [root]
    while todo:
        p = todo.pop()
        if p in stats and p not in out:
            out[p] = stats[p]
            todo.extend(kids.get(p, []))
    return out


def read_jsonl(path):
    rows = []
    try:
        with open(path) as f:
            for line in f:
                try:
                    rows.append(json.loads(line))
                except ValueError:
                    pass
    except OSError:
        pass
    return rows


def run_once(
    host,
    home,
    proj,
    servers,
    prompt,
    fake,
    tag,
    mcplog,
    state,
    out_dir,
    timeout=120.0,
    interval=0.05,
    kill_on_recv=False,
    mode=None,
):
    """One host process to exit: wall time, RSS of its tree, the model's and MCP logs.
    `mode`: written to the state directory's `mode` file, which servers configured with
    mode "file" read when they start."""
    mcplog.unlink(missing_ok=True)
    if state.exists():
        for f in state.iterdir():
            f.unlink()
    state.mkdir(parents=True, exist_ok=True)
    if mode:
        (state / "mode").write_text(mode)
    fake.tag(tag)
    argv = host.argv(prompt, home, proj, servers)
    env = host.env(home)
    fo, fe = open(out_dir / f"{tag}.out", "wb"), open(out_dir / f"{tag}.err", "wb")
    t0 = time.monotonic()
    p = subprocess.Popen(
        argv, cwd=proj, env=env, stdin=subprocess.DEVNULL, stdout=fo, stderr=fe, start_new_session=True
    )
    done = threading.Event()
    res = {}

    def waiter():
        _, status, ru = os.wait4(p.pid, 0)
        res["t_end"] = time.monotonic()
        res["status"] = status
        res["maxrss_kb"] = ru.ru_maxrss
        p.returncode = os.waitstatus_to_exitcode(status)
        done.set()

    threading.Thread(target=waiter, daemon=True).start()
    CURRENT["pid"] = p.pid
    peak, peak_n, seen = 0, 0, {}
    killed = None
    while not done.wait(interval):
        t = tree(p.pid)
        for pid, st in t.items():
            seen.setdefault(pid, st["comm"])
        rss = sum(st["rss"] for st in t.values())
        peak, peak_n = max(peak, rss), max(peak_n, len(t))
        now = time.monotonic()
        if kill_on_recv and killed is None and any(e.get("event") == "recv" for e in read_jsonl(mcplog)):
            time.sleep(0.3)  # let the call be well under way
            before = tree(p.pid)
            os.kill(p.pid, signal.SIGKILL)
            killed = {"t": time.monotonic(), "tree": {pid: _cmdline(pid)[:160] for pid in before if pid != p.pid}}
        if now - t0 > timeout:
            res["timed_out"] = True
            before = tree(p.pid)
            res["tree_at_timeout"] = {pid: _cmdline(pid)[:160] for pid in before}
            os.kill(p.pid, signal.SIGKILL)
            break
    done.wait(10)
    fo.close()
    fe.close()
    wall = res.get("t_end", time.monotonic()) - t0
    # whatever of the tree outlives the host
    time.sleep(0.0 if not kill_on_recv else 5.0)
    mcp = read_jsonl(mcplog)
    server_pids = sorted({e["pid"] for e in mcp if e.get("event") == "start"})
    if kill_on_recv and killed:
        survivors = {pid: cmd for pid, cmd in killed["tree"].items() if alive(pid)}
        res["after_kill_5s_alive"] = survivors
        res["mcp_orphans"] = [pid for pid in server_pids if alive(pid)]
    else:
        time.sleep(0.5)
        res["mcp_leftover"] = [pid for pid in server_pids if alive(pid)]
        res["leftover"] = {pid: _cmdline(pid)[:160] for pid in seen if pid != p.pid and alive(pid)}
    # clean up what is ours: the tree we saw and the servers the log names
    for pid in set(seen) | set(server_pids):
        if pid != p.pid and alive(pid):
            cmd = _cmdline(pid)
            if cmd:
                try:
                    os.kill(pid, signal.SIGKILL)
                except OSError:
                    pass
    reqs = [r for r in fake.log(tag) if r.get("method") == "POST"]
    res.update(
        {
            "host": host.name,
            "tag": tag,
            "rc": p.returncode,
            "wall": wall,
            "peak_tree_rss": peak,
            "peak_tree_procs": peak_n,
            "procs_seen": len(seen),
            "t0": t0,
            "argv0": os.path.basename(argv[0]),
            "requests": reqs,
            "mcp": mcp,
            "servers_started": len(server_pids),
            "killed": bool(killed),
        }
    )
    res.update(derive(res))
    res["stdout"] = (out_dir / f"{tag}.out").read_bytes()[-2000:].decode(errors="replace")
    res["stderr"] = (out_dir / f"{tag}.err").read_bytes()[-3000:].decode(errors="replace")
    return res


CURRENT = {"pid": None}


def _on_term(signum, frame):
    """SIGTERM/SIGINT of the harness: end the host under test and what it started, by pid."""
    pid = CURRENT.get("pid")
    if pid and alive(pid):
        t = tree(pid)
        for q in t:
            try:
                os.kill(q, signal.SIGKILL)
            except OSError:
                pass
    raise SystemExit(1)


def derive(r):
    """Per-call host time from the two logs: model answer sent -> MCP call received
    (dispatch), MCP answer sent -> next model request received (return)."""
    reqs = sorted(r["requests"], key=lambda x: x["t_recv"])
    mcp = r["mcp"]
    recv = {e.get("text"): e["t"] for e in mcp if e.get("event") == "recv"}
    text_of = {(e["pid"], e.get("id")): e.get("text") for e in mcp if e.get("event") == "recv"}
    sent = {text_of.get((e["pid"], e.get("id"))): e["t"] for e in mcp if e.get("event") == "sent"}
    busy = sum(e.get("busy", 0) for e in mcp if e.get("event") == "sent")
    dispatch, ret = [], []
    for q in reqs:
        if q.get("action") == "tool" and q.get("call_index"):
            key = f"call-{q['call_index']}"
            if key in recv:
                dispatch.append(recv[key] - q["t_done"])
            if key in sent:
                nxt = [x for x in reqs if x["t_recv"] > sent[key]]
                if nxt:
                    ret.append(nxt[0]["t_recv"] - sent[key])
    out = {
        "n_requests": len(reqs),
        "server_busy": busy,
        "dispatch": dispatch,
        "return": ret,
        "tool_calls_answered": len(sent),
    }
    if reqs:
        out["to_first_request"] = reqs[0]["t_recv"] - r["t0"]
        if "t_end" in r:
            out["exit_after_last_answer"] = r["t_end"] - reqs[-1]["t_done"]
        out["final_action"] = reqs[-1].get("action")
        main = max(reqs, key=lambda x: x.get("bytes", 0))
        out["req_bytes_total"] = sum(x.get("bytes", 0) for x in reqs)
        out["first_main"] = {
            k: main.get(k) for k in ("bytes", "n_tools", "system_bytes", "tools_bytes", "api", "model", "path")
        }
    starts = [e["t"] for e in mcp if e.get("event") == "start"]
    if starts:
        out["first_server_start"] = min(starts) - r["t0"]
    return out


# --------------------------------------------------------------------------- commands
def make_hosts(names, work, url):
    return [H.ALL[n](work, url) for n in names]


def prep(host, scen, servers, work, fake_url):
    home = work / "homes" / f"{host.name}-{scen}"
    proj = work / "projects" / f"{host.name}-{scen}"
    for d in (home, proj):
        if d.exists():
            subprocess.run(["rm", "-rf", str(d)], check=True)
        d.mkdir(parents=True)
    seed = os.environ.get("BENCH_PROJECT")
    if seed:
        # A person's project rather than an empty directory (a .gitignore, files that
        # bingo's checkpoint reads): the same copy for every host.
        shutil.copytree(seed, proj, symlinks=True, dirs_exist_ok=True)
    mcplog = work / "mcplogs" / f"{host.name}-{scen}.jsonl"
    state = work / "state" / f"{host.name}-{scen}"
    mcplog.parent.mkdir(parents=True, exist_ok=True)
    state.mkdir(parents=True, exist_ok=True)
    host.setup(home, proj, servers, mcplog, state)
    return home, proj, mcplog, state


def work_dir():
    # Neither under /tmp (bingo's sandbox gives a confined server a temporary directory of
    # its own; the person's settings grant it this one to write its log in) nor inside a git
    # repository (whose root would be every project's).
    w = Path(os.environ.get("BENCH_WORK") or "/var/tmp/bingo-peers-work")
    w.mkdir(parents=True, exist_ok=True)
    (w / "out").mkdir(exist_ok=True)
    return w


def cmd_versions(args):
    work = work_dir()
    for h in make_hosts(args.hosts.split(","), work, "http://127.0.0.1:9"):
        print(f"{h.name}\t{h.version()}")


def cmd_perf(args):
    work = work_dir()
    fake = Fake(work)
    results = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "runs": args.runs, "scenarios": {}}
    try:
        hs = make_hosts(args.hosts.split(","), work, fake.url)
        results["versions"] = {h.name: h.version() for h in hs}
        for scen in args.scenarios.split(","):
            servers, prompt = SCENARIOS[scen]
            active = [h for h in hs if h.mcp or not servers]
            ctx = {h.name: prep(h, scen, servers, work, fake.url) for h in active}
            rows = []
            for h in active:  # warm-up: first-ever run fills caches (not counted)
                home, proj, mcplog, state = ctx[h.name]
                r = run_once(
                    h,
                    home,
                    proj,
                    servers,
                    prompt,
                    fake,
                    f"{h.name}-{scen}-warm",
                    mcplog,
                    state,
                    work / "out",
                    timeout=min(args.timeout, 90),
                )
                r["warmup"] = True
                rows.append(r)
                print(
                    f"[{scen}] warm {h.name}: {r['wall']:.2f}s rc={r['rc']} final={r.get('final_action')}",
                    file=sys.stderr,
                    flush=True,
                )
            runs = args.runs if scen != "mcp50" else (args.runs50 or args.runs)
            for i in range(runs):
                for h in active:
                    home, proj, mcplog, state = ctx[h.name]
                    r = run_once(
                        h,
                        home,
                        proj,
                        servers,
                        prompt,
                        fake,
                        f"{h.name}-{scen}-{i}",
                        mcplog,
                        state,
                        work / "out",
                        timeout=args.timeout,
                    )
                    r["round"] = i
                    rows.append(r)
                    print(
                        f"[{scen}] {i} {h.name}: {r['wall']:.3f}s rc={r['rc']} rss={r['peak_tree_rss'] / 2**20:.0f}M "
                        f"srv={r['servers_started']} calls={r['tool_calls_answered']}",
                        file=sys.stderr,
                        flush=True,
                    )
            results["scenarios"][scen] = rows
            Path(args.out).write_text(json.dumps(results))
    finally:
        fake.stop()
        Path(args.out).write_text(json.dumps(results))


def cmd_reliability(args):
    work = work_dir()
    fake = Fake(work)
    results = {"started": time.strftime("%Y-%m-%d %H:%M:%S"), "faults": {}}
    try:
        hs = [h for h in make_hosts(args.hosts.split(","), work, fake.url) if h.mcp]
        results["versions"] = {h.name: h.version() for h in hs}
        for fault in args.faults.split(","):
            servers, prompt = FAULTS[fault]
            rows = []
            for h in hs:
                scen = f"rel-{fault}"
                # the server's mode comes from a file, so the host's configuration is the same
                # bytes in the warm-up (healthy server: fills bingo's and pi-mcp-adapter's
                # declaration caches, as a server that worked yesterday would have) and in the
                # measured run (broken server)
                cfg = [(n, "file") for n, _ in servers]
                home, proj, mcplog, state = prep(h, scen, cfg, work, fake.url)
                run_once(
                    h,
                    home,
                    proj,
                    cfg,
                    marker(1),
                    fake,
                    f"{h.name}-{scen}-warm",
                    mcplog,
                    state,
                    work / "out",
                    timeout=60,
                    mode="ok",
                )
                timeout = args.hang_cap if fault == "hang" else 120
                r = run_once(
                    h,
                    home,
                    proj,
                    cfg,
                    prompt,
                    fake,
                    f"{h.name}-{scen}",
                    mcplog,
                    state,
                    work / "out",
                    timeout=timeout,
                    kill_on_recv=(fault == "kill"),
                    mode=servers[0][1],
                )
                r["fault"] = fault
                rows.append(r)
                print(
                    f"[{fault}] {h.name}: {r['wall']:.2f}s rc={r['rc']} final={r.get('final_action')} "
                    f"srv={r['servers_started']} answered={r['tool_calls_answered']} "
                    f"to={r.get('timed_out', False)} orphans={r.get('mcp_orphans', r.get('mcp_leftover'))}",
                    file=sys.stderr,
                    flush=True,
                )
            results["faults"][fault] = rows
            Path(args.out).write_text(json.dumps(results))
    finally:
        fake.stop()
        Path(args.out).write_text(json.dumps(results))


# --------------------------------------------------------------------------- report
def _med(xs):
    return statistics.median(xs) if xs else float("nan")


def cmd_report(args):
    import report

    report.main(args.files)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    sub = ap.add_subparsers(dest="cmd", required=True)
    allhosts = "bingo,claude,codex,opencode,gemini,pi"
    v = sub.add_parser("versions")
    v.add_argument("--hosts", default=allhosts + ",codex-npm")
    p = sub.add_parser("perf")
    p.add_argument("--runs", type=int, default=10)
    p.add_argument("--runs50", type=int, default=0, help="runs for mcp50 (default: --runs)")
    p.add_argument("--hosts", default=allhosts)
    p.add_argument("--scenarios", default="hi,mcp1,mcp10,mcp50")
    p.add_argument("--timeout", type=float, default=180)
    p.add_argument("--out", default="results/perf.json")
    r = sub.add_parser("reliability")
    r.add_argument("--hosts", default=allhosts)
    r.add_argument("--faults", default="crash,crashwait,junk,hang,diestart,big,kill")
    r.add_argument("--hang-cap", type=float, default=150)
    r.add_argument("--out", default="results/reliability.json")
    rep = sub.add_parser("report")
    rep.add_argument("files", nargs="+")
    a = ap.parse_args()
    signal.signal(signal.SIGTERM, _on_term)
    signal.signal(signal.SIGINT, _on_term)
    if getattr(a, "out", None):
        Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    {"versions": cmd_versions, "perf": cmd_perf, "reliability": cmd_reliability, "report": cmd_report}[a.cmd](a)


if __name__ == "__main__":
    main()
