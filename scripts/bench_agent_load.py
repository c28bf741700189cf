"""`POST /search` latency while agent searches wait on a slow answer LLM (issue 36, item 1).

A scripted OpenAI-compatible chat server on loopback (`tests/service/http/chat_server.py`) answers
every chat request after ``--llm-delay`` seconds. `openxiv serve` runs with two compute slots
(``OPENXIV_SERVE_CONCURRENCY=2``, one per core of the reference machine) and that server as its
answer LLM. One client sends ``--searches`` `POST /search` requests one after another (real queries:
the dev topics' and known items' texts), three times:

1. alone (the baseline);
2. while ``--agents`` clients keep agent searches (``POST /arxiv/agent/search``, half of them the
   NDJSON stream) waiting on the LLM, each starting the next as soon as one ends;
3. alone again (the baseline's drift under the machine's other load).

p50/p95 of the `/search` requests of each run, and the ratio of run 2 to the mean of runs 1 and 3,
are printed and written to the `## Agent search beside POST /search` section of BENCHMARKS.md. Before
the fix, each agent search held a compute slot while it waited on the LLM: two of them made every
`/search` wait for an LLM answer.

    .venv/bin/python scripts/bench_agent_load.py --work data/bench/agent-load
    .venv/bin/python scripts/bench_agent_load.py --index data/index --agents 8 --no-write
    .venv/bin/python scripts/bench_agent_load.py --before <before>.json  # adds a run of older code

Each run's figures are kept in ``--work``/agent-load.json; ``--before`` shows such a file (made by
the same script with the code before the fix on ``PYTHONPATH``) as a second table.
"""

from __future__ import annotations

import argparse
import json
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # live_index.py
sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests" / "service" / "http"))  # chat_server
from chat_server import ChatServer
from harness.data import load_queries, shared, small_corpus
from harness.report import BENCH_DIR, load_average, write_section
from harness.timing import percentile
from live_index import LiveServer

TITLE = "Agent search beside POST /search"


def queries(n: int) -> list[str]:
    """``n`` real query texts (the dev topic and known-item queries, interleaved), repeated as needed."""
    texts = [q[:300] for q in load_queries(shared(), n)]
    return [texts[i % len(texts)] for i in range(n)]


def search_run(url: str, texts: list[str]) -> dict[str, float]:
    took: list[float] = []
    with httpx.Client(base_url=url, timeout=300) as client:
        for q in texts:
            t = time.perf_counter()
            r = client.post("/search", json={"query": q, "top_k": 10})
            took.append((time.perf_counter() - t) * 1000)
            r.raise_for_status()
    return {"n": len(took), "p50": percentile(took, 50), "p95": percentile(took, 95), "max": max(took)}


class Agents:
    """``n`` clients keeping agent searches in flight until stopped."""

    def __init__(self, url: str, n: int, text: str) -> None:
        self.url, self.text = url, text
        self.stop = threading.Event()
        self.done: list[int] = []
        self.threads = [threading.Thread(target=self._loop, args=(i,), daemon=True) for i in range(n)]

    def _loop(self, i: int) -> None:
        path = "/arxiv/agent/search/stream" if i % 2 else "/arxiv/agent/search"
        with httpx.Client(base_url=self.url, timeout=600) as client:
            while not self.stop.is_set():
                r = client.post(path, json={"query": self.text, "top_k": 5})
                self.done.append(r.status_code)

    def __enter__(self) -> Agents:
        for t in self.threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        for t in self.threads:
            t.join(timeout=900)


def measure(args: argparse.Namespace, root: Path) -> dict[str, Any]:
    texts = queries(args.searches)
    with ChatServer(
        lambda messages: "An answer from the sources [arXiv:1502.03167].", delay=args.llm_delay
    ) as chat:
        env = {
            "OPENXIV_ANSWER_BASE_URL": chat.base_url,
            "OPENXIV_ANSWER_MODEL": "slow-llm",
            "OPENXIV_ANSWER_TIMEOUT": str(args.llm_delay * 4),
            "OPENXIV_SERVE_CONCURRENCY": "2",
        }
        server = LiveServer(root, extra_env=env, log=Path(args.work) / "serve.log")
        try:
            search_run(server.url, texts[:5])  # warm-up
            load = [load_average()]
            alone = search_run(server.url, texts)
            with Agents(server.url, args.agents, texts[0]) as agents:
                deadline = time.monotonic() + 120
                while chat.waiting < min(args.agents, 8) and time.monotonic() < deadline:
                    time.sleep(0.1)
                in_flight = chat.waiting
                beside = search_run(server.url, texts)
            load.append(load_average())
            again = search_run(server.url, texts)
            load.append(load_average())
        finally:
            server.stop()
    base50 = (alone["p50"] + again["p50"]) / 2
    base95 = (alone["p95"] + again["p95"]) / 2
    return {
        "alone": alone, "beside": beside, "again": again, "load": load, "llm_in_flight": in_flight,
        "agent_statuses": sorted(set(agents.done)), "agent_requests": len(agents.done),
        "ratio_p50": beside["p50"] / base50, "ratio_p95": beside["p95"] / base95,
    }  # fmt: skip


def table(out: dict[str, Any]) -> list[str]:
    rows = [
        "| run | `/search` requests | p50 ms | p95 ms | max ms |",
        "|---|---:|---:|---:|---:|",
    ]
    names = {
        "alone": "1. alone",
        "beside": f"2. beside {out['agents']} agent searches waiting on the LLM",
        "again": "3. alone again",
    }
    for key, name in names.items():
        r = out[key]
        rows.append(f"| {name} | {r['n']} | {r['p50']:.1f} | {r['p95']:.1f} | {r['max']:.1f} |")
    return rows


def ratios(out: dict[str, Any]) -> str:
    a, b = out["alone"], out["again"]
    noise50 = max(a["p50"], b["p50"]) / min(a["p50"], b["p50"])
    noise95 = max(a["p95"], b["p95"]) / min(a["p95"], b["p95"])
    return (
        f"Run 2 against the mean of runs 1 and 3: **p50 x{out['ratio_p50']:.2f}, p95 x{out['ratio_p95']:.2f}**; "
        f"the noise, runs 1 and 3 against each other (nothing changed between them): p50 x{noise50:.2f}, "
        f"p95 x{noise95:.2f}. "
        f"LLM calls in flight when run 2 started: {out['llm_in_flight']}; agent searches answered "
        f"meanwhile: {out['agent_requests']} (statuses {out['agent_statuses']}). Load average "
        f"{out['load'][0]} before, {out['load'][2]} at the end."
    )


def render(args: argparse.Namespace, out: dict[str, Any], before: dict[str, Any] | None, command: str) -> str:
    older = (
        [
            "",
            f"Before the fix (main's code, the same script with it on `PYTHONPATH`, {before['searches']} "
            "`/search` requests per run):",
            "",
            *table(before),
            "",
            ratios(before),
        ]
        if before
        else []
    )
    return "\n".join(
        [
            f"`POST /search` one request at a time while {args.agents} clients keep agent searches "
            f"(half blocking, half NDJSON streams) waiting on a scripted OpenAI-compatible LLM on "
            f"loopback that answers after {args.llm_delay:g} s; `openxiv serve` with 2 compute slots "
            f"(`OPENXIV_SERVE_CONCURRENCY=2`) and the default `OPENXIV_ANSWER_CONCURRENCY` (8). "
            f"Index: {args.label}. Load average (1/5/15 min) {out['load'][0]} before, "
            f"{out['load'][1]} after run 2, {out['load'][2]} at the end (2 cores, shared).",
            "",
            *table(out),
            "",
            ratios(out),
            *older,
            "",
            "Before the fix (issue 36), an agent search held a compute slot while it waited on the LLM: "
            "with two of them on a 2-core server, `POST /search` waited up to the LLM's answer (28 s "
            "measured by the issue). Now the search part takes a slot and the LLM call is awaited "
            "outside it (`service/agent_search.py`); `tests/service/http/test_agent_search_slots.py` "
            "checks the same without timing.",
            "",
            f"Command: `{command}`",
        ]
    )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--index", type=Path, help="an index root to serve (default: a small corpus under --work)"
    )
    ap.add_argument("--work", type=Path, default=BENCH_DIR / "agent-load")
    ap.add_argument("--agents", type=int, default=6, help="agent-search clients in run 2")
    ap.add_argument("--searches", type=int, default=200, help="/search requests per run")
    ap.add_argument("--llm-delay", type=float, default=20.0, help="seconds the LLM takes per answer")
    ap.add_argument("--before", type=Path, help="agent-load.json of a run of the code before the fix")
    ap.add_argument("--no-write", action="store_true")
    ap.add_argument("--replay", action="store_true", help="render --work's stored run again, measure nothing")
    args = ap.parse_args()
    args.work.mkdir(parents=True, exist_ok=True)
    if args.index is not None:
        root = args.index
        args.label = f"`{args.index}`"
    else:
        _, root, _ = small_corpus(args.work, 3000, 200)
        args.label = (
            "a small real corpus (3,000 cs listing papers + 200 plain-text full texts, `--embed papers`)"
        )
    stored = args.work / "agent-load.json"
    if args.replay:
        out = json.loads(stored.read_text())
        args.agents, args.llm_delay, args.label = out["agents"], out["llm_delay"], out["label"]
    else:
        shown = [a if not a.startswith("/") else "<" + Path(a).name + ">" for a in sys.argv[1:]]
        command = " ".join([".venv/bin/python scripts/bench_agent_load.py", *shown])
        out = measure(args, root) | {
            "agents": args.agents, "searches": args.searches, "llm_delay": args.llm_delay,
            "label": args.label, "command": command,
        }  # fmt: skip
        stored.write_text(json.dumps(out, indent=1))
    command = out.get("command", "")
    before = json.loads(args.before.read_text()) if args.before else None
    text = render(args, out, before, command)
    print(text)
    if not args.no_write:
        write_section(TITLE, text, after="Search service")


if __name__ == "__main__":
    main()
