"""The tables of BENCHMARKS.md «Scale (streaming build)» from the results of `bench_scale_steps.py`
(``WORK/results/<step>.json`` of each size), so the steps' module holds the measuring only."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any


def _out(work: Path, step: str) -> Path:
    return work / "results" / f"{step}.json"


SERVE_RUNS = (("serve-new", "cold"), ("serve-before-warm", "warm, before"), ("serve-new-warm", "warm"))
"""Serve results and their ``pages`` label: ``serve-before-warm`` is a warm run kept from the search
code before a change (its checkout named in BENCHMARKS.md's prose), set beside the current one."""


def render(works: list[Path]) -> str:
    lines = [
        "Issue 24: the streaming build against the previous build on the same synthetic corpora, and the",
        "serving latency of the streamed snapshot (`scripts/bench_scale_steps.py`; synthetic corpus and synthetic",
        "paper vectors from the embedding cache, as in «Scale» above; this 2-core machine was shared with",
        "other engineers' jobs during the runs, so wall times are inflated; load averages are given).",
        "",
        "| papers | build | wall s | peak RSS MiB | load avg (start) | snapshot MB |",
        "|---:|---|---:|---:|---:|---:|",
    ]
    for work in works:
        for tag in ("old", "new"):
            path = _out(work, f"build-{tag}")
            if path.exists():
                r = json.loads(path.read_text())
                lines.append(f"| {r['counts']['papers']:,} | {tag} | {r['seconds']:.0f} | {r['peak_rss_mib']:,.0f} | "
                             f"{r['loadavg_start'][0]:.1f} | {r['sizes']['total'] / 1e6:,.0f} |")  # fmt: skip
    lines += [
        "",
        "| papers | pages | mode | p50 ms | p95 ms | stage medians ms |",
        "|---:|---|---|---:|---:|---|",
    ]
    for work in works:
        for step, pages in SERVE_RUNS:
            path = _out(work, step)
            if not path.exists():
                continue
            r = json.loads(path.read_text())
            n = json.loads(_out(work, "build-new").read_text())["counts"]["papers"]
            rows = [(m, v) for m, v in r["modes"].items()] + [
                (f"{m} (masked search, deep 0)", v) for m, v in r["deep0"].items()
            ]
            rows += [(f"rrf + {name}", v) for name, v in r["filters"].items()]
            lines += [
                f"| {n:,} | {pages} | {m} | {v['p50']:.1f} | {v['p95']:.1f} | {_stages(v)} |" for m, v in rows
            ]
    lines += ["", "| papers | pages | open s | in-process peak RSS MiB | serve --workers 1: startup s, RSS / PSS MiB | "
              "8 clients, --workers 2: req/s | p50 / p95 ms | server CPU ms / request | errors |",
              "|---:|---|---:|---:|---|---:|---|---:|---:|"]  # fmt: skip
    for work in works:
        for step, pages in SERVE_RUNS:
            path = _out(work, step)
            r = json.loads(path.read_text()) if path.exists() else {}
            if "clients_8" not in r:
                continue
            n = json.loads(_out(work, "build-new").read_text())["counts"]["papers"]
            w1, c8 = r["serve_workers_1"], r["clients_8"]
            lines.append(f"| {n:,} | {pages} | {r['open_s']:.1f} | {r['peak_rss_mib']:,.0f} | {w1['startup_s']:.1f} s, "
                         f"{w1['rss_sum_mib']:,.0f} / {w1['pss_sum_mib']:,.0f} | {c8['qps']:.1f} | {c8['p50']:.0f} / "
                         f"{c8['p95']:.0f} | {c8['server_cpu_ms']:.0f} | {c8['errors']} |")  # fmt: skip
    lines += _render_dense_oai(works)
    text = "\n".join(lines)
    # a table whose runs have not been made yet is left out (its header alone says nothing)
    return re.sub(r"\n\n\|[^\n]*\|\n\|[-:|]*\|(?=\n\n|$)", "", text)


def _stages(row: dict[str, Any]) -> str:
    """A mode's median stage times (`bench_scale_steps.py serve` records them since the 2.7M run)."""
    med = {k: v for k, v in row.get("stages_p50", {}).items() if k not in ("total", "filter") and v >= 0.05}
    return ", ".join(f"{k} {v:.0f}" for k, v in med.items())


def _stage_s(stages: dict[str, Any], name: str) -> str:
    """A build stage's wall time as the report records it (seconds, or a dict holding them)."""
    v = stages.get(name)
    if isinstance(v, dict):
        v = v.get("seconds", v.get("wall_s"))
    return "?" if v is None else f"stage {name} {float(v):.0f} s"


def _recall(value: float) -> str:
    """Three decimals, or four where three would round up to 1 (which reads as exact)."""
    return f"{value:.3f}" if value < 0.9995 else f"{value:.4f}"


def _render_dense_oai(works: list[Path]) -> list[str]:
    lines = ["", "| vectors | dense index | build s | peak RSS MiB | MB | p50 / p95 ms (top 100, 1 thread) | recall@100 vs exact |",
             "|---:|---|---:|---:|---:|---|---:|"]  # fmt: skip
    for work in works:
        path = _out(work, "dense")
        if not path.exists():  # a dense step stopped (or still running): the variants it finished
            path = _out(work, "dense.partial")
        if path.exists():
            r = json.loads(path.read_text())
            stages = (
                json.loads(_out(work, "build-new").read_text()).get("stages", {})
                if _out(work, "build-new").exists()
                else {}
            )
            for name, v in r["variants"].items():
                rec = _recall(v["recall100_vs_exact"]) if "recall100_vs_exact" in v else "1 (exact)"
                built = (
                    f"{v['build_s']:.0f}"
                    if "build_s" in v
                    else f"in the build ({_stage_s(stages, 'embed_papers')})"
                )
                peak = f"{v['peak_rss_mib']:,.0f}" if "peak_rss_mib" in v else "(the build's)"
                lines.append(f"| {r['vectors']:,} | {name} | {built} | {peak} | "
                             f"{v['bytes'] / 1e6:,.0f} | {v['p50']:.1f} / {v['p95']:.1f} | {rec} |")  # fmt: skip
    lines += ["", "| OAI lines | file MB | ingest s | papers/s | peak RSS MiB | DB MB | re-ingest s | re-ingest output |",
              "|---:|---:|---:|---:|---:|---:|---:|---|"]  # fmt: skip
    for work in works:
        path = _out(work, "oai")
        if path.exists():
            r = json.loads(path.read_text())
            i, again = r["ingest"], r["reingest"]
            lines.append(f"| {r['papers']:,} | {r['file_bytes'] / 1e6:,.0f} | {i['seconds']:.0f} | {i['papers_per_s']:,.0f} | "
                         f"{i['peak_rss_mib']:,.0f} | {i['db_bytes'] / 1e6:,.0f} | {again['seconds']:.0f} | "
                         f"{again['stdout_tail'].strip().split(': ')[-1]} |")  # fmt: skip
    return lines
