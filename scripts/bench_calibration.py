"""Passage calibration (issue 37): how the BM25 passage side is scaled before it meets paper texts,
measured on the dev sets in the shipped ranking and in ``bm25`` mode, and the default chosen by rule.

Each variant (one factor per query, ``idf`` at several scales and the ``fixed`` 0.8 of before issue
37; or ``quantile``, graded per paper by rank) runs the 103 dev topic queries (Recall@10/@100/@1000),
the 600 full-text known items (MRR@10, success@1/@10 per kind) and the short dev queries' coverage
bias (`harness.coverage`: the full-text share of the first 10 hits over their share among the papers
whose text holds every query word, the issue's measure; 1 is fair).

    .venv/bin/python scripts/bench_calibration.py --index data/index [--variants 'idf x1.0' quantile]
    .venv/bin/python scripts/bench_calibration.py --index data/index --definitions
    .venv/bin/python scripts/bench_calibration.py --index data/index --explain before.tsv after.tsv

The rule: eligible are the variants of the shipped ranking that keep the known items with
bench_quality's margins against the shipped default (`REFERENCE`), lose no topic Recall@100 against
it (beyond bench_quality's noise) and put a 2025–26 paper first on each of the issue's examples (its
target); among them the coverage bias nearest 1 decides, by 2-fold cross-validation over the short
queries (even / odd positions: each fold's pick is scored on the other fold, the held-out estimate);
the default is the pick on all of them. The topic queries' own 2-fold pick by Recall@100 is reported
beside it: they cannot see fairness, since no paper with a full text is ever relevant to them.
``--definitions`` prints the issue's examples' matching papers under each reading of the measure;
``--explain`` sorts two check_search_identical runs' bodies by whether ``quantile`` maps the request.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import re
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from openxiv.corpus.settings.model import Settings
from openxiv.evaluator.ranked import score_query
from openxiv.indexer.snapshot import open_index

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.calibration_diff import explain_diff, explain_digests
from harness.coverage import (
    EXAMPLES,
    TextMatch,
    coverage_bias,
    definitions,
    short_queries,
    text_match,
)
from harness.data import KNOWN_ITEM_FILE, TOPIC_FILES, SharedData, load_jsonl
from harness.quality import RECALL_NOISE, evaluate, keeps_known_items, run_queries
from harness.report import write_section
from harness.timing import percentile

SECTION = "Passage calibration graded by rank (issue 37)"
"""Written after the first round's section, «Passage calibration (issue 37)», which it leaves alone."""
BEFORE = "fixed 0.8"
"""The ranking before issue 37."""
REFERENCE = "idf x1.0"
"""The shipped default the rule compares against (`passage_norm=idf`, scale 1.0, since issue 37's
first round)."""
VARIANTS: dict[str, dict[str, Any]] = {
    BEFORE: {"passage_norm": "fixed"},
    **{f"idf x{x}": {"passage_norm": "idf", "passage_norm_scale": x} for x in (1.0, 1.1, 1.2, 1.3, 1.5, 1.7)},
    "quantile": {"passage_norm": "quantile", "passage_norm_scale": 1.0},
}
BM25_VARIANTS = (BEFORE, "idf x1.0", "quantile")
"""Also run in ``bm25`` mode (papers + passages, no dense side, no feedback or prior)."""
KS = (10, 100, 1000)


def measure(backend: Any, mode: str | None, gold: Path, match: TextMatch) -> dict[str, Any]:
    topics = [q for f in TOPIC_FILES for q in load_jsonl(gold / f)]
    known = load_jsonl(gold / KNOWN_ITEM_FILE)
    trun, _ = run_queries(backend, topics, mode, max(KS))
    row: dict[str, Any] = {f"topic_{k}": v for k, v in evaluate(topics, trun, KS).items() if "recall" in k}
    row["per_topic_recall@100"] = [
        score_query([d for d, _ in trun[q["qid"]]], set(q["relevant"]), (100,))["recall@100"] for q in topics
    ]
    krun, _ = run_queries(backend, known, mode, 10)
    for kind, short in (("exact", "exact"), ("keywords", "kw")):
        subset = [q for q in known if q["kind"] == kind]
        got = evaluate(subset, {q["qid"]: krun[q["qid"]] for q in subset}, (1, 10))
        row.update({f"{short}_mrr@10": got["mrr@10"], f"{short}_success@1": got["success@1"]})
        row[f"{short}_success@10"] = got["success@10"]
    row["bias"] = coverage_bias(backend, short_queries(gold), match, mode)
    return row


def _folds(n: int) -> list[tuple[list[int], list[int]]]:
    """2-fold cross-validation by even / odd positions: (choose on, score on), both ways."""
    even, odd = list(range(0, n, 2)), list(range(1, n, 2))
    return [(even, odd), (odd, even)]


def cross_validated(rows: dict[str, dict[str, Any]], eligible: list[str]) -> tuple[list[str], float]:
    """Each fold's pick (most mean topic R@100 on the other fold's queries) and the held-out R@100."""
    picks, held = [], []
    for train, test in _folds(len(next(iter(rows.values()))["per_topic_recall@100"])):
        pick = max(
            eligible, key=lambda v: (statistics.mean(rows[v]["per_topic_recall@100"][i] for i in train), v)
        )
        picks.append(pick)
        held += [rows[pick]["per_topic_recall@100"][i] for i in test]
    return picks, statistics.mean(held)


def _bias_on(row: dict[str, Any], idx: list[int]) -> float:
    """The coverage bias of ``row`` over the measured short queries at positions ``idx``."""
    measured = [r for r in row["bias"]["rows"] if r["base"] is not None]
    base = statistics.mean(measured[i]["base"] for i in idx)
    return statistics.mean(measured[i]["top"] for i in idx) / base if base else float("inf")


def fairest(rows: dict[str, dict[str, Any]], eligible: list[str]) -> tuple[list[str], list[float]]:
    """Each fold's pick (coverage bias nearest 1, as ``|log bias|``, on one half of the short queries;
    ties to the earlier variant) and its bias on the other half."""
    picks, held = [], []
    for train, test in _folds(next(iter(rows.values()))["bias"]["queries"]):
        pick = min(eligible, key=lambda v: abs(math.log(max(_bias_on(rows[v], train), 1e-9))))
        picks.append(pick)
        held.append(_bias_on(rows[pick], test))
    return picks, held


def _opening(bias: dict[str, Any]) -> str:
    """The opening reading's ratio (`harness.coverage`), or "-" for a row measured before it existed."""
    return f"{bias['opening']['ratio']:.2f}" if "opening" in bias else "-"


def table(rows: dict[str, dict[str, Any]]) -> str:
    head = (
        "| ranking | calibration | topic R@10 | topic R@100 | topic R@1000 | exact MRR@10 | exact S@1 | exact S@10 "
        "| keywords MRR@10 | keywords S@1 | keywords S@10 | coverage bias | full-text share top 10 / matching "
        "| coverage bias (index match) | coverage bias (opening) | first hit on-topic |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|\n"
    )
    body = ""
    for name, r in rows.items():
        b = r["bias"]
        body += (
            f"| {r['ranking']} | {name} | {r['topic_recall@10']:.3f} | {r['topic_recall@100']:.3f} | "
            f"{r['topic_recall@1000']:.3f} | {r['exact_mrr@10']:.3f} | {r['exact_success@1']:.3f} | "
            f"{r['exact_success@10']:.3f} | {r['kw_mrr@10']:.3f} | {r['kw_success@1']:.3f} | "
            f"{r['kw_success@10']:.3f} | {b['ratio']:.2f} | {b['top_share']:.3f} / {b['base_share']:.3f} | "
            f"{b['index']['ratio']:.2f} | {_opening(b)} | {b['first_on_topic']:.3f} |\n"
        )
    return head + body


def examples(rows: dict[str, dict[str, Any]], names: list[str], titles: Any) -> str:
    """The issue's example queries: the first hit and the full-text shares, per variant."""
    lines = []
    for q in EXAMPLES:
        cells = []
        for name in names:
            r = next(x for x in rows[name]["bias"]["rows"] if x["query"] == q)
            cells.append(
                f"{name}: {r['first']} «{titles(r['first'])}» (top 10 {r['top']:.1f} vs {r['base']:.2f})"
            )
        lines.append(f"- **{q}** — " + "; ".join(cells))
    return "\n".join(lines)


def calibration_cost(backend: Any, gold: Path) -> str:
    """The calibrations' own time per query on every dev query: `passage_factor` (``idf``) and
    `quantile_hits` (``quantile``: every term's postings on both sides, the populations sorted; the
    BM25 scores it reads are the search's own and not timed)."""
    from openxiv.indexer.engine.passage_calibration import passage_factor, quantile_hits

    queries = [q["query"] for f in (*TOPIC_FILES, KNOWN_ITEM_FILE) for q in load_jsonl(gold / f)]
    queries += [sq.query for sq in short_queries(gold)]
    papers, passages = backend.bm25_papers, backend.passages
    idf_ms, q_ms = [], []
    for q in queries:
        t = time.perf_counter()
        passage_factor(q, papers, passages.sparse, 1.0, 0.8)
        idf_ms.append((time.perf_counter() - t) * 1000)
        scores, hits = papers.masked_scores(q), passages.search(q, 1)
        t = time.perf_counter()
        quantile_hits(q, scores, hits, papers, passages)
        q_ms.append((time.perf_counter() - t) * 1000)
    return (
        f"The calibrations' own cost over the {len(queries)} dev queries (1-minute load average "
        f"{os.getloadavg()[0]:.1f}): `idf` (`passage_factor`: the query's terms looked up in both vocabularies, "
        f"their document frequencies read) p50 {percentile(idf_ms, 50) * 1000:.0f} µs, p95 "
        f"{percentile(idf_ms, 95) * 1000:.0f} µs, no pass over papers or passages; `quantile` (`quantile_hits`: "
        f"the query terms' postings on both sides, then the two populations sorted) p50 "
        f"{percentile(q_ms, 50):.2f} ms, p95 {percentile(q_ms, 95):.2f} ms, which grows with the postings as "
        "BM25's own pass does."
    )


def examples_recent_first(row: dict[str, Any]) -> bool:
    """Whether each of the issue's `EXAMPLES` has a 2025–26 paper first (an id ``25MM.`` / ``26MM.``):
    the issue's target for them, the on-topic papers it names being recent abstracts."""
    firsts = {r["query"]: r["first"] or "" for r in row["bias"]["rows"]}
    return all(re.match(r"2[56]\d\d\.", firsts.get(q, "")) for q in EXAMPLES)


def verdict(rows: dict[str, dict[str, Any]]) -> tuple[str, str]:
    """The rule's text and the chosen variant."""
    shipped = {k: v for k, v in rows.items() if v["ranking"] == "shipped"}
    before_r100 = statistics.mean(shipped[REFERENCE]["per_topic_recall@100"])
    keeping = [
        n
        for n, r in shipped.items()
        if keeps_known_items(r, shipped[REFERENCE])
        and statistics.mean(r["per_topic_recall@100"]) >= before_r100 - RECALL_NOISE
    ]
    eligible = [n for n in keeping if examples_recent_first(shipped[n])] or [REFERENCE]
    picks, held = cross_validated(shipped, eligible)
    fair, fair_held = fairest(shipped, eligible)
    chosen = min(eligible, key=lambda v: abs(math.log(max(shipped[v]["bias"]["ratio"], 1e-9))))
    text = (
        f"Rule: eligible are the shipped-ranking variants that keep the known items (exact S@10 >= 0.985, "
        f"keywords >= 0.96, MRR@10 of each kind at most 0.02 below `{REFERENCE}`), lose no topic R@100 against "
        f"it beyond bench_quality's noise ({RECALL_NOISE}) ({', '.join(keeping)}), and put a 2025–26 paper "
        f"first on each of the issue's examples (its target): {', '.join(eligible)}. The topic queries cannot see "
        "fairness (every relevant paper is a recent abstract, no full text is ever relevant), so the coverage "
        f"bias picks among them: 2-fold CV over the short queries (even / odd) picks {' and '.join(fair)} "
        f"(held-out bias {fair_held[0]:.2f} and {fair_held[1]:.2f}; 1 is fair). For reference, 2-fold CV over "
        f"the topic queries by R@100 alone picks {' and '.join(picks)} (held-out topic R@100 {held:.3f}, "
        f"against {before_r100:.3f} for `{REFERENCE}`). On all the short queries the bias nearest 1 is "
        f"**{chosen}** ({shipped[chosen]['bias']['ratio']:.2f}): the default (`passage_norm`, "
        "`passage_norm_scale` in corpus/settings/model.py)."
    )
    return text, chosen


def measure_all(opened: Any, gold: Path, names: list[str] | None = None) -> dict[str, dict[str, Any]]:
    """Every variant of the shipped ranking (or those ``names``), then `BM25_VARIANTS` in ``bm25`` mode."""
    backend = opened.backend
    match = text_match(opened, [sq.query for sq in short_queries(gold)])
    rows: dict[str, dict[str, Any]] = {}
    backend.search("warm up the encoder and the numba kernels", top_k=10)
    for name, changes in VARIANTS.items():
        if names and name not in names:
            continue
        rows[name] = {"ranking": "shipped", **measure(backend.tuned(**changes), None, gold, match)}
        print(name, json.dumps({k: v for k, v in rows[name].items() if not isinstance(v, (list, dict))}))
        print("   ", rows[name]["bias"]["ratio"], rows[name]["bias"]["first_on_topic"], flush=True)
    for name in BM25_VARIANTS:
        if names and name not in names:
            continue
        changes = VARIANTS[name]
        rows[f"{name} (bm25)"] = {"ranking": "bm25", **measure(backend.tuned(**changes), "bm25", gold, match)}
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--no-write", action="store_true")
    parser.add_argument("--json", type=Path, help="also write the rows to this JSON file")
    parser.add_argument(
        "--from-json", type=Path, help="report the rows of an earlier --json run, measure nothing"
    )
    parser.add_argument(
        "--diff",
        type=int,
        help="only count what changes on check_search_identical's requests (this many queries)",
    )
    parser.add_argument(
        "--definitions",
        action="store_true",
        help="only print the papers matching the issue's examples under each reading of the coverage measure",
    )
    parser.add_argument(
        "--explain",
        nargs=2,
        type=Path,
        metavar=("BEFORE", "AFTER"),
        help="explain two check_search_identical --out files by whether quantile maps each request",
    )
    parser.add_argument("--variants", nargs="*", help="measure only these variants (names of VARIANTS)")
    args = parser.parse_args()
    load = os.getloadavg()
    gold = SharedData.default().gold()
    opened = open_index(args.index, Settings.from_env())
    if args.definitions:
        try:
            match = text_match(opened, EXAMPLES)
            print(definitions(opened.backend, match, EXAMPLES))
        finally:
            opened.close()
        return
    if args.explain:
        try:
            print(explain_digests(opened.backend, args.explain[0], args.explain[1], args.diff or 300))
        finally:
            opened.close()
        return
    if args.diff:
        try:
            print(explain_diff(opened.backend, args.diff))
        finally:
            opened.close()
        return
    try:
        if args.from_json:
            rows = json.loads(args.from_json.read_text(encoding="utf-8"))
        else:
            rows = measure_all(opened, gold, args.variants)
        store = opened.store

        def title(arxiv_id: str | None) -> str:
            paper = store.get_paper(arxiv_id) if arxiv_id else None
            return getattr(paper, "title", "") or ""

        if args.json and not args.from_json:
            args.json.write_text(json.dumps(rows, indent=1, default=str) + "\n", encoding="utf-8")
        rule, chosen = verdict(rows)
        shown = examples(
            rows, list(dict.fromkeys(n for n in (BEFORE, "idf x1.0", chosen) if n in rows)), title
        )
        cost = calibration_cost(opened.backend, gold)
    finally:
        opened.close()
    text = (
        table(rows)
        + "\n"
        + rule
        + "\n\nThe issue's examples (first hit; full-text share of the top 10 vs among matching papers):\n\n"
        + shown
        + "\n\n"
        + cost
    )
    print(text)
    if args.no_write:
        return
    write_section(
        SECTION,
        "Whole shared corpus (101,029 papers, 12,174 with a full text). `shipped` is the default ranking "
        "(hybrid weighted, feedback, category prior, query kind) with only the passage calibration changed; "
        "`bm25` is BM25 over papers + passages alone. Coverage bias (scripts/harness/coverage.py): the "
        "full-text share of the first 10 hits over their share among the papers whose text holds every "
        "query word (the issue's measure), mean over the short dev queries that at least 10 papers match; "
        "`index match` counts the papers whose title + abstract or passages hold the words' stems; "
        "`opening` the papers whose title + abstract, or title + first passage for a paper without "
        "abstract, hold the words (a window of one length for every paper).\n\n"
        + text
        + "\n\nCommand: `.venv/bin/python scripts/bench_calibration.py --index data/index"
        + ("" if not args.variants else " --variants " + " ".join(f"'{v}'" for v in args.variants))
        + f"` (1-minute load "
        f"average {load[0]:.1f} at the start, {os.getloadavg()[0]:.1f} at the end)\n",
        after="Passage calibration (issue 37)",
    )


if __name__ == "__main__":
    main()
