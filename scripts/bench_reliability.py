"""Operate openxiv as a careless operator and a hostile client would, against real processes, and
write the figures to the `## Reliability` section of BENCHMARKS.md (issue 8).

Probes (every loop bounded in count and time; loopback only):

a. fuzz: a derandomized schemathesis run over every operation of the live `/openapi.json`
   (`--examples` per operation and mode, valid and invalid data): status counts, 5xx, dropped
   connections, each distinct bad answer with its request;
b. load: 8 clients `POST /search` for `--load-seconds` while `openxiv index build` runs back to back
   on the served root and the server is reloaded every 5 s;
c. hostile: lone surrogates, year-0001 dates, huge and deep JSON, over-long queries, 50 queries x 50
   authors (the worst request found; its time), unknown endpoints: status, time, keep-alive kept;
d. slow: `--slow` connections sending headers or a body one piece every 2 s for `--slow-seconds`:
   how many the server still holds at the end, and whether normal requests meanwhile succeed;
e. kill: kill -9 of `openxiv index build` (cold embedding cache) at each stage it announces, then
   `CURRENT`, the snapshot, `serve` and the cache are checked; kill -9 of `openxiv ingest` twice
   mid-run, then `PRAGMA integrity_check` and the papers against an uninterrupted run after a re-run;
f. concurrent: two `openxiv index build` on one root (the second starts when the first embeds);
g. mcp: `openxiv mcp --transport http`: `--slow` trickling connections to `/mcp` as in d, then a
   flood of `--mcp-flood` `initialize` calls that never close their session, then new agents;
h. input: `openxiv ingest` of a folder with a mode-000 sub-folder and broken and looping links, and
   of `--bad-lines` invalid JSON lines (peak RSS): what is reported, what is lost.

By default everything runs on a small real corpus built under `--work` from the shared data (3,000
cs listing papers + 200 plain-text full texts, `--embed papers`). `--full INDEX` points a, c and d at
a whole-corpus index instead (b, e and f always rebuild, so they use the small corpus).

    .venv/bin/python scripts/bench_reliability.py                    # rewrites `## Reliability`
    .venv/bin/python scripts/bench_reliability.py --full data/index --no-write
    .venv/bin/python scripts/bench_reliability.py --only fuzz hostile --examples 20 --no-write
"""

from __future__ import annotations

import argparse
import gzip
import itertools
import json
import os
import secrets
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "service" / "http"))  # fuzz_api.py
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # live_index.py
from fuzz_api import fuzz
from harness.data import SharedData, small_corpus
from harness.reliability_kill import concurrent_builds, kill_builds, kill_ingest
from harness.reliability_mcp import (
    McpServer,
    probe_bad_lines,
    probe_mcp_flood,
    probe_mcp_slow,
    probe_unreadable_folder,
)
from harness.reliability_probes import load_during_rebuilds, probe_hostile, probe_slow
from harness.report import BENCH_DIR, write_section
from harness.server import Server

PROBES = ("fuzz", "load", "hostile", "slow", "kill", "concurrent", "mcp", "input")


def names(n: int) -> tuple[list[str], list[str]]:
    """Real author names and categories from the listing (for the hostile filter requests)."""
    authors: list[str] = []
    cats: set[str] = set()
    with gzip.open(SharedData.default().listing("cs"), "rt", encoding="utf-8") as fh:
        for line in itertools.islice(fh, 5000):
            rec = json.loads(line)
            authors.extend(a for a in rec.get("authors", []) if a not in authors)
            cats.update(rec.get("categories", []))
            if len(authors) >= n and len(cats) >= n:
                break
    return authors[:n], sorted(cats)[:n]


def run_probes(args: argparse.Namespace, work: Path) -> dict[str, Any]:
    db, root, cache = small_corpus(work, args.papers, args.plaintext)
    out: dict[str, Any] = {"corpus": {"db": str(db), "index": str(root)}}
    serve_root = args.full or root
    if {"fuzz", "hostile", "slow"} & set(args.only):
        server = Server(serve_root, work / "serve.log")
        out["serve"] = {"index": str(serve_root), "startup_s": round(server.startup_s, 1)}
        try:
            if "fuzz" in args.only:
                print("(a) fuzz", flush=True)
                r = fuzz(server.url, args.examples)
                out["fuzz"] = {
                    "examples": args.examples,
                    "requests": r.requests,
                    "seconds": round(r.seconds, 1),
                    "statuses": dict(sorted(r.statuses.items())),
                    "5xx": r.server_errors,
                    "resets": r.resets,
                    "operations": dict(r.per_operation),
                    "findings": [vars(f) for f in r.findings],
                }
            if "hostile" in args.only:
                print("(c) hostile requests", flush=True)
                authors, cats = names(50)
                out["hostile"] = probe_hostile(server.port, authors, cats, timeout=args.request_timeout)
            if "slow" in args.only:
                print("(d) slow connections", flush=True)
                out["slow"] = probe_slow(server.url, server.port, args.slow, args.slow_seconds)
        finally:
            server.stop()
    if "load" in args.only:
        print("(b) load during rebuilds and reloads", flush=True)
        load_root = work / "load" / "index"
        shutil.rmtree(load_root.parent, ignore_errors=True)
        shutil.copytree(root, load_root)
        server = Server(load_root, work / "load" / "serve.log", admin_token=secrets.token_urlsafe(16))
        try:
            out["load"] = load_during_rebuilds(server, db, cache, args.load_seconds)
        finally:
            server.stop()
    if "kill" in args.only:
        print("(e) kill -9 of index build and ingest", flush=True)
        out["kill_build"] = kill_builds(db, root, work / "kill-build")
        astro = SharedData.default().listing("astro")
        out["kill_ingest"] = kill_ingest(db, astro, work / "kill-ingest", delays=(3.0, 8.0))
    if "concurrent" in args.only:
        print("(f) two builds on one root", flush=True)
        out["concurrent"] = concurrent_builds(db, root, work / "concurrent")
    if "mcp" in args.only:
        print("(g) MCP streamable HTTP: slow connections, session flood", flush=True)
        mcp = McpServer(serve_root, work / "mcp.log")
        try:
            out["mcp_slow"] = probe_mcp_slow(mcp, args.slow, args.slow_seconds)
            out["mcp_flood"] = probe_mcp_flood(mcp, args.mcp_flood)
        finally:
            mcp.stop()
    if "input" in args.only:
        print("(h) ingest: unreadable folder parts, bad-line flood", flush=True)
        out["unreadable"] = probe_unreadable_folder(SharedData.default().listing("cs"), work)
        out["bad_lines"] = probe_bad_lines(work, args.bad_lines)
    return out


def _statuses(d: dict[Any, int]) -> str:
    return ", ".join(f"{k}: {v:,}" for k, v in d.items()) or "none"


def _cell(text: Any) -> str:
    return str(text).replace("|", "\\|").replace("\n", " ")


def _incomplete(c: dict[str, Any]) -> str:
    bad = c.get("incomplete_snapshots", {})
    return "; ".join(f"`{k}` lacks {', '.join(v)}" for k, v in bad.items()) or "none"


def report(r: dict[str, Any], cmd: str, load: tuple[float, float], label: str) -> str:
    parts = [
        f"{label}Machine: {os.cpu_count()} cores, load average (1 min) {load[0]:.1f} before / {load[1]:.1f} "
        f"after (other jobs share it). Served index for a, c, d: `{r.get('serve', {}).get('index', '-')}`. "
        f"Command: `{cmd}`.\n",
        "| probe | requests | statuses | 5xx (target 0) | resets (target 0) |\n|---|---:|---|---:|---:|",
    ]
    if "fuzz" in r:
        f = r["fuzz"]
        parts.append(
            f"| a. schemathesis, {len(f['operations'])} operations x 2 modes x {f['examples']} examples "
            f"({f['seconds']} s) | {f['requests']:,} | {_statuses(f['statuses'])} | {f['5xx']} | {f['resets']} |"
        )
    if "load" in r:
        ld = r["load"]
        parts.append(
            f"| b. {ld['clients']} clients for {ld['seconds']:.0f} s; builds (exit codes) {ld['builds']}; "
            f"reloads {_statuses(ld['reloads'])} | {ld['requests']:,} | {_statuses(ld['statuses'])} | {ld['5xx']} | {ld['resets']} |"
        )
    if "hostile" in r:
        h = r["hostile"]
        st: dict[str, int] = {}
        for row in h:
            st[str(row["status"])] = st.get(str(row["status"]), 0) + 1
        parts.append(
            f"| c. hostile requests | {len(h)} | {_statuses(st)} | "
            f"{sum(1 for x in h if (x['status'] or 0) >= 500)} | {sum(1 for x in h if not x['kept'])} dropped |"
        )
    parts += _issue21_rows(r)
    parts.append("")
    if r.get("fuzz", {}).get("findings"):
        parts.append("Fuzz findings (distinct bad answers):\n")
        parts += [
            f"- {x['kind']} {x['status']} on `{x['operation']}`: `{_cell(x['request'])[:300]}` -> `{_cell(x['response'])[:200]}`"
            for x in r["fuzz"]["findings"]
        ]
        parts.append("")
    if "hostile" in r:
        worst = max(r["hostile"], key=lambda x: x["ms"] or 0)
        parts.append(
            f"c. Hostile requests, one connection each, then `GET /healthz` on the same connection "
            f'("kept"). Worst request: **{worst["name"]}**, {worst["ms"]:,.0f} ms.\n'
        )
        parts.append(
            "| request | bytes | status | ms | connection kept | answer |\n|---|---:|---:|---:|---|---|"
        )
        parts += [
            f"| {x['name']} | {x['bytes']:,} | {x['status']} | {x['ms']:,.0f} | {'yes' if x['kept'] else 'no'} | `{_cell(x['detail'])[:90]}` |"
            for x in r["hostile"]
        ]
        parts.append("")
    if "slow" in r:
        s = r["slow"]
        parts.append(
            f"d. Slow connections: {s['connections']} connections (half trickling headers, half a body), one piece "
            f"every 2 s for {s['hold_s']:.0f} s: **{s['held_to_the_end']} still held at the end** "
            f"(target 0), {s['closed_by_server']} closed by the server (first after {s['first_close_s']} s). Normal "
            f"requests meanwhile: {_statuses(s['normal_requests'])}; p50 {s['normal_p50_ms']} ms, max {s['normal_max_ms']} ms.\n"
        )
    if "kill_build" in r:
        parts.append(
            "e. kill -9 of `openxiv index build` (cold embedding cache) when it announces each stage "
            "(+2 s into embedding), then: what `CURRENT` names, whether that snapshot is complete and "
            "`openxiv serve` answers on it, leftover `.tmp-*` directories, the cache's integrity.\n"
        )
        parts.append(
            "| killed at | reached | exit | CURRENT moved | complete | serves | tmp dirs | cache |\n|---|---|---:|---|---|---|---:|---|"
        )
        parts += [
            f"| {k['point']} | {k.get('reached', '-')} | {k['exit']} | {k['current_changed']} | {k['complete']} | "
            f"{_cell(k['serves'])} | {k['tmp_dirs']} | {k['cache_integrity']} |"
            for k in r["kill_build"]
        ]
        ok = sum(1 for k in r["kill_build"] if k["complete"] and k["serves"] == "yes")
        parts.append(f"\nPoints survived (complete snapshot that serves): {ok} of {len(r['kill_build'])}.\n")
    if "kill_ingest" in r:
        ki = r["kill_ingest"]
        kills = "; ".join(
            f"after {k['after_s']:.0f} s (running: {k['was_running']}): integrity {k['integrity']}, {k['papers']:,} papers"
            for k in ki["kills"]
        )
        parts.append(
            f"kill -9 of `openxiv ingest {ki['source']}` on the small corpus ({ki['papers_before']:,} papers): {kills}. "
            f"Runs left marked unfinished: {ki['runs_left_unfinished']}. Re-run: exit {ki['rerun_exit']}, "
            f"{ki['papers_after_rerun']:,} papers, integrity {ki['integrity_after_rerun']}; an uninterrupted run gives "
            f"{ki['clean_run']['papers']:,} ({ki['clean_run']['seconds']} s). **Papers lost: {ki['lost']}** "
            f"(target 0), extra: {ki['extra']}.\n"
        )
    if "concurrent" in r:
        c = r["concurrent"]
        parts.append(
            f"f. Two `openxiv index build` on one root (cold cache; B started {c['b_started_after_s']} s after A): "
            f"A exit {c['a_exit']} (`{_cell(c['a_says'])}`), B exit {c['b_exit']} (`{_cell(c['b_says'])}`). "
            f"`CURRENT` moved: {c['current_changed']}; names a complete snapshot: **{c['complete']}** "
            f"(missing: {', '.join(c['missing']) or 'nothing'}); serves: {_cell(c['serves'])}. Published "
            f"snapshots with parts missing (each switched to by a build that exited 0, until the other "
            f"build switched again): **{_incomplete(c)}**.\n"
        )
    parts += _issue21_notes(r)
    return "\n".join(parts)


def _issue21_rows(r: dict[str, Any]) -> list[str]:
    """Table rows of probes g and h: requests, statuses, 5xx, resets (and what was lost)."""
    rows = []
    if "mcp_slow" in r:
        s = r["mcp_slow"]
        n = s["connections"]
        rows.append(
            f"| g. MCP: {n} slow connections to /mcp for {s['hold_s']:.0f} s, normal `initialize` meanwhile | "
            f"{n + sum(s['normal_requests'].values()):,} | {_statuses(s['normal_requests'])}; held at the end: "
            f"{s['held_to_the_end']} | {sum(v for k, v in s['normal_requests'].items() if k.startswith('5'))} | "
            f"{sum(v for k, v in s['normal_requests'].items() if not k.isdigit())} |"
        )
    if "mcp_flood" in r:
        f = r["mcp_flood"]
        rows.append(
            f"| g. MCP: session flood, {f['requests']:,} `initialize` ({f['seconds']} s); new agents served "
            f"{f['new_agents_ok']} of {f['new_agents']} (lost {f['new_agents'] - f['new_agents_ok']}) | "
            f"{f['requests'] + f['new_agents']:,} | {_statuses(f['statuses'])} | {f['5xx']} | {f['resets']} |"
        )
    if "unreadable" in r:
        u = r["unreadable"]
        rows.append(
            f"| h. ingest of a folder with {u['unreadable']} unreadable parts (mode-000 folder, broken link, "
            f"link loops): exit {u['exit']}, reported {u['reported']}, **lost {u['lost']}** | 1 | - | - | - |"
        )
    if "bad_lines" in r:
        b = r["bad_lines"]
        rows.append(
            f"| h. ingest of {b['bad_lines']:,} bad lines ({b['file_mb']} MB gzip): exit {b['exit']}, peak RSS "
            f"{b['peak_rss_mb']} MB, {b['seconds']} s, reported {b['report_lines']:,}, **lost {b['lost']}** | 1 | - | - | - |"
        )
    return rows


def _issue21_notes(r: dict[str, Any]) -> list[str]:
    if "mcp_flood" not in r:
        return []
    f, s = r["mcp_flood"], r.get("mcp_slow", {})
    return [
        f"g. `openxiv mcp --transport http` with the default `OPENXIV_MCP_MAX_SESSIONS` (1000): slow "
        f"connections {s.get('held_to_the_end', '-')} held at the end of {s.get('connections', '-')} (first "
        f"closed after {s.get('first_close_s', '-')} s). Session flood: RSS {f['rss_before_mb']} MB before, "
        f"{f['rss_after_mb']} MB after; the flood's first session answers {f['oldest_session_status']} "
        f"afterwards (evicted: 404), new agents served {f['new_agents_ok']} of {f['new_agents']}.\n"
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--work", type=Path, default=BENCH_DIR / "reliability", help="scratch directory")
    ap.add_argument("--full", type=Path, default=None, metavar="INDEX", help="whole-corpus index for a, c, d")
    ap.add_argument("--papers", type=int, default=3000, help="cs listing papers in the small corpus")
    ap.add_argument("--plaintext", type=int, default=200, help="plain-text full texts in the small corpus")
    ap.add_argument("--only", nargs="+", choices=PROBES, default=list(PROBES))
    ap.add_argument("--examples", type=int, default=50, help="fuzz examples per operation and mode")
    ap.add_argument("--load-seconds", type=float, default=30.0)
    ap.add_argument("--slow", type=int, default=200, help="slow connections")
    ap.add_argument("--slow-seconds", type=float, default=30.0)
    ap.add_argument("--request-timeout", type=float, default=300.0, help="per hostile request")
    ap.add_argument("--mcp-flood", type=int, default=10_000, help="initialize calls in the MCP session flood")
    ap.add_argument("--bad-lines", type=int, default=200_000, help="invalid lines in the bad-line flood")
    ap.add_argument("--label", default="", help="text put before the section (e.g. 'Before the fixes.')")
    ap.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    args = ap.parse_args()

    work = args.work.resolve()
    work.mkdir(parents=True, exist_ok=True)
    os.environ["OPENXIV_DATA_DIR"] = str(work)  # the children export/read the ONNX model here
    load_before = os.getloadavg()[0]
    t = time.monotonic()
    results = run_probes(args, work)
    results["seconds"] = round(time.monotonic() - t, 1)
    (work / "reliability.json").write_text(json.dumps(results, indent=2, default=str) + "\n")
    cmd = ".venv/bin/python scripts/bench_reliability.py " + " ".join(sys.argv[1:])
    label = f"{args.label.strip()} " if args.label else ""
    body = report(results, cmd.strip(), (load_before, os.getloadavg()[0]), label)
    body += f"\nWhole run: {results['seconds'] / 60:.1f} min; raw figures in `{work / 'reliability.json'}`.\n"
    print(body)
    if not args.no_write:
        if set(args.only) <= {"mcp", "input"}:  # only the issue-21 probes: their own section beside
            write_section("Reliability: MCP transport and ingest input", body, after="Reliability")
        else:
            write_section("Reliability", body)


if __name__ == "__main__":
    main()
