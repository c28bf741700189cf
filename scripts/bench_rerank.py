"""Fine rerank (``use_fine_rerank``): quality and latency of the stage on the dev sets, and the rule's
choice of its depth N and first-stage weight by 2-fold cross-validation.

The first stage is the service's default ranking (``Settings.from_env()``) of ``--index``. For each
query its first ``max(--depths)`` hits are scored by the reranker as the serving stage scores them
(`openxiv.service.fine_rerank.hit_texts`: title + abstract, and title + evidence passage for a
full-text hit; a hit's score is the better of the two), once; every variant's order is derived from
those scores with `openxiv.indexer.engine.rerank.mixed` (the serving stage's order key):

- depth N in ``--depths`` and first-stage weight in ``--weights`` (0: the cross-encoder alone);
- topic: Recall@10, Recall@100, nDCG@10 on ``topic_queries_dev`` + ``topic_queries_more_dev``;
- known items: MRR@10, success@1/@10 per kind on every ``--known-every``-th paper of
  ``fulltext_known_item_dev`` (both its queries);
- the rule (the project's, as ``bench_query_kind``): for each fold (even / odd positions of every
  query set) the (N, weight) with the most topic R@10 + nDCG@10 among those that keep the known
  items on the other fold (success@10 floors and MRR@10 margin of `harness.quality.keeps_known_items`
  against the first stage), or the first stage when none beats it; the held-out folds' numbers, and
  whether their topic R@10 + nDCG@10 differs from the first stage's beyond noise (a paired bootstrap
  over the topic queries); with ``--rule-depths`` the rule again among those depths only (the ones
  whose latency fits the budget); ``--no-passages``: the same from each hit's title + abstract score
  alone (``OPENXIV_RERANK_PASSAGES=false``);
- latency: the stage's own time (reading the texts + scoring) for the first N places, p50 / p95 over
  the topic queries, with the load average of the run (2 shared cores).

Scores are kept in ``--cache`` (one file per reranker fingerprint and index), so the report can be
redone without scoring again.

    .venv/bin/python scripts/bench_rerank.py --index data/index --reranker shipped
    .venv/bin/python scripts/bench_rerank.py --index data/index --reranker shipped --rule-depths 10 \
        --section "Fine rerank: the longer run (issue 37)"
"""

from __future__ import annotations

import argparse
import os
import pickle
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np

from openxiv.corpus.settings.model import Settings
from openxiv.corpus.shared import SharedData
from openxiv.evaluator.ranked import score_ranked
from openxiv.evaluator.stats import paired_bootstrap_test
from openxiv.indexer.encoders.cross_encoder import resolve_reranker
from openxiv.indexer.engine.rerank import mixed
from openxiv.indexer.snapshot import open_index
from openxiv.service.fine_rerank import hit_texts

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.data import KNOWN_ITEM_FILE, TOPIC_FILES, load_jsonl
from harness.quality import evaluate, keeps_known_items
from harness.report import load_average, write_section
from harness.timing import percentile

SECTION = "Fine rerank"
COLS: tuple[str, ...] = ("topic R@10", "topic R@100", "topic nDCG@10", "exact MRR@10", "exact S@1")
COLS += ("exact S@10", "kw MRR@10", "kw S@1", "kw S@10")
Variant = tuple[int, float] | None
"""(depth N, first-stage weight); None: the first stage."""


def scored(index: Any, reranker: Any, queries: list[dict[str, Any]], cuts: list[int]) -> list[dict[str, Any]]:
    """Per query: the first stage's hits (ids, scores) to the deepest cut, each hit's reranker score
    (best over its texts; ``ce_abstract``: of its title + abstract alone), and the stage's
    milliseconds for the first ``cut`` places, per cut."""
    out = []
    for n, q in enumerate(queries):
        texts_of = hit_texts(index, True, q["query"])
        hits = index.backend.search(q["query"], top_k=max(cuts)).hits
        best, abstract = np.full(len(hits), -1e30), np.full(len(hits), -1e30)
        row: dict[str, Any] = {"qid": q["qid"], "ids": [h.arxiv_id for h in hits], "ms": {}}
        row["first"] = np.array([h.score for h in hits], dtype=np.float64)
        done, spent = 0, 0.0
        for cut in sorted({min(c, len(hits)) for c in cuts}):
            t0 = time.perf_counter()
            texts = texts_of(hits[done:cut])
            flat = reranker.score(q["query"], [t for ts in texts for t in ts])
            spent += (time.perf_counter() - t0) * 1000
            row["ms"][cut] = spent
            k = 0
            for i, ts in enumerate(texts, start=done):
                best[i], abstract[i] = max(flat[k : k + len(ts)]), flat[k]
                k += len(ts)
            done = cut
        row["ce"], row["ce_abstract"] = best, abstract
        out.append(row)
        if n % 20 == 0:
            print(f"  {n}/{len(queries)} scored", flush=True)
    return out


def ranked(row: dict[str, Any], v: Variant) -> list[tuple[str, float]]:
    ids = row["ids"]
    order = list(range(len(ids)))
    if v is not None:
        d = min(v[0], len(ids))
        head = np.argsort(-mixed(row["ce"][:d], row["first"][:d], v[1]), kind="stable")
        order = [int(i) for i in head] + order[d:]
    return [(ids[i], float(len(ids) - r)) for r, i in enumerate(order)]


def summary(rows: list[dict[str, Any]], qs: dict[str, dict[str, Any]], v: Variant) -> dict[str, float]:
    out: dict[str, float] = {}
    for kind, ks, metrics in (
        ("topic", (10, 100), ("recall@10", "recall@100", "ndcg@10")),
        ("exact", (1, 10), ("mrr@10", "success@1", "success@10")),
        ("keywords", (1, 10), ("mrr@10", "success@1", "success@10")),
    ):
        sub = [r for r in rows if qs[r["qid"]]["set"] == kind]
        if not sub:
            continue
        m = evaluate([qs[r["qid"]] for r in sub], {r["qid"]: ranked(r, v) for r in sub}, ks)
        prefix = {"topic": "topic", "exact": "exact", "keywords": "kw"}[kind]
        for name in metrics:
            out[f"{prefix}_{name}"] = m.get(name, 0.0)
    return out


def cells(s: dict[str, float]) -> str:
    keys: tuple[str, ...] = ("topic_recall@10", "topic_recall@100", "topic_ndcg@10", "exact_mrr@10")
    keys += ("exact_success@1",)
    keys += ("exact_success@10", "kw_mrr@10", "kw_success@1", "kw_success@10")
    return " | ".join(f"{s[k]:.3f}" for k in keys)


def choose(rows: list[dict[str, Any]], qs: dict[str, dict[str, Any]], grid: list[Variant]) -> Variant:
    """The rule on ``rows``: the best topic R@10 + nDCG@10 keeping the known items, if it beats the
    first stage's; else the first stage (None)."""
    base = summary(rows, qs, None)
    best: tuple[float, Variant] = (base["topic_recall@10"] + base["topic_ndcg@10"] + 1e-9, None)
    for v in grid:
        s = summary(rows, qs, v)
        if keeps_known_items(s, base) and s["topic_recall@10"] + s["topic_ndcg@10"] > best[0]:
            best = (s["topic_recall@10"] + s["topic_ndcg@10"], v)
    return best[1]


def name(v: Variant) -> str:
    if v is None:
        return "first stage (default ranking)"
    return f"rerank top {v[0]}, " + ("cross-encoder alone" if v[1] == 0 else f"first-stage weight {v[1]:g}")


def topic_gain(rows: list[dict[str, Any]], qs: dict[str, dict[str, Any]], v: Variant) -> dict[str, float]:
    """Per topic query of ``rows``: its R@10 + nDCG@10 under ``v`` (what the rule maximises)."""
    sub = [r for r in rows if qs[r["qid"]]["set"] == "topic"]
    qrels = {r["qid"]: {str(d): 1 for d in qs[r["qid"]]["relevant"]} for r in sub}
    rep = score_ranked(qrels, {r["qid"]: ranked(r, v) for r in sub}, ks=(10, 100), n_boot=1)
    return {row["item_id"]: row["recall@10"] + row["ndcg@10"] for row in rep.per_item}


def held_out(
    rows: list[dict[str, Any]], qs: dict[str, dict[str, Any]], grid: list[Variant]
) -> tuple[list[Variant], dict[str, float], dict[str, float], Variant, str]:
    """The rule by 2-fold CV: each fold's pick (chosen on the other fold), the mean of the held-out
    folds' numbers, the first stage's on the same folds, the pick on all queries, and how the
    held-out topic R@10 + nDCG@10 differs from the first stage's per query (paired bootstrap)."""
    by_set: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_set.setdefault(qs[r["qid"]]["set"], []).append(r)
    folds = [[r for s in by_set.values() for r in s[f::2]] for f in (0, 1)]
    picks = [choose(folds[1 - f], qs, grid) for f in (0, 1)]

    def mean(which: list[dict[str, float]]) -> dict[str, float]:
        return {k: statistics.mean(h[k] for h in which) for k in which[0]}

    held = mean([summary(folds[f], qs, picks[f]) for f in (0, 1)])
    mine = {k: x for f in (0, 1) for k, x in topic_gain(folds[f], qs, picks[f]).items()}
    base = {k: x for f in (0, 1) for k, x in topic_gain(folds[f], qs, None).items()}
    d = np.array([mine[k] - base[k] for k in sorted(mine)])
    lo, hi, p = paired_bootstrap_test([mine[k] for k in sorted(mine)], [base[k] for k in sorted(mine)])
    noise = (
        f"held-out topic R@10 + nDCG@10 minus the first stage's, per query: mean {d.mean():+.4f}, "
        f"95 % CI [{lo:+.4f}, {hi:+.4f}] (paired bootstrap, p {p:.2f}); better on "
        f"{int((d > 1e-9).sum())}, worse on {int((d < -1e-9).sum())} of {d.size} queries"
    )
    return picks, held, mean([summary(folds[f], qs, None) for f in (0, 1)]), choose(rows, qs, grid), noise


def report(rows: list[dict[str, Any]], qs: dict[str, dict[str, Any]], args: argparse.Namespace) -> list[str]:
    grid: list[Variant] = [(d, w) for d in args.depths for w in args.weights]
    picks, held, base_held, full, noise = held_out(rows, qs, grid)
    lines = ["| ranking | " + " | ".join(COLS) + " |", "|---|" + "---:|" * len(COLS)]
    shown: list[Variant] = [None, *[(d, 0.0) for d in args.depths]]
    shown += [(d, w) for d in args.depths for w in args.weights if w > 0 and (d, w) != full]
    for v in [*shown, *([full] if full is not None else [])]:
        tag = " (rule, all queries)" if v == full and v is not None else ""
        lines.append(f"| {name(v)}{tag} | {cells(summary(rows, qs, v))} |")
    lines.append(f"| the rule, 2-fold CV (held-out folds) | {cells(held)} |")
    said = [f"Picked per fold: {name(picks[0])} and {name(picks[1])}; on all queries: {name(full)}; {noise}."]
    fits = [d for d in args.depths if d in (args.rule_depths or [])]
    if fits and fits != args.depths:  # the rule again, among the depths the latency budget allows
        picks, held, _, full, noise = held_out(rows, qs, [(d, w) for d in fits for w in args.weights])
        depths = ", ".join(str(d) for d in fits)
        lines.append(f"| the rule within depth {depths}, 2-fold CV (held-out folds) | {cells(held)} |")
        said.append(
            f"Within depth {depths}: picked per fold {name(picks[0])} and {name(picks[1])}; "
            f"on all queries: {name(full)}; {noise}."
        )
    lines.append(f"| first stage, the same folds | {cells(base_held)} |")
    return [*lines, "", *said]


def latency(rows: list[dict[str, Any]]) -> list[str]:
    lat = ["| stage | places N | p50 ms | p95 ms |", "|---|---:|---:|---:|"]
    for cut in sorted({c for r in rows for c in r["ms"]}):
        ms = [r["ms"][cut] for r in rows if cut in r["ms"]]
        lat.append(
            f"| rerank (texts + cross-encoder) | {cut} | {percentile(ms, 50):.0f} | {percentile(ms, 95):.0f} |"
        )
    return lat


def queries(known_every: int) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    gold = SharedData.default().gold()
    topics = [{**q, "set": "topic"} for f in TOPIC_FILES for q in load_jsonl(gold / f)]
    known = [q for i, q in enumerate(load_jsonl(gold / KNOWN_ITEM_FILE)) if (i // 2) % known_every == 0]
    return topics, [{**q, "set": q["kind"]} for q in known]


def command(args: argparse.Namespace) -> str:
    """The run's command line, paths as in the repository."""
    words = ["scripts/bench_rerank.py --index data/index", f"--reranker {args.reranker}"]
    words.append("--depths " + " ".join(str(d) for d in args.scored_depths))
    words += [f"--known-every {args.known_every}", f"--known-depth {args.known_depth}"]
    if args.rule_depths:
        words.append("--rule-depths " + " ".join(str(d) for d in args.rule_depths))
    if args.no_passages:
        words.append("--no-passages")
    if args.section != SECTION:
        words.append(f'--section "{args.section}"')
    return " ".join(words)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--reranker", default="shipped", help="what OPENXIV_RERANK would name")
    ap.add_argument("--depths", type=int, nargs="+", default=[10, 20, 30, 50])
    ap.add_argument("--weights", type=float, nargs="+", default=[0.0, 0.5, 1.0, 2.0, 4.0])
    ap.add_argument("--known-every", type=int, default=3, help="every n-th known-item paper (both kinds)")
    ap.add_argument("--known-depth", type=int, default=30, help="places scored for a known-item query")
    ap.add_argument(
        "--rule-depths",
        type=int,
        nargs="+",
        help="also the rule among these depths only (the latency budget's)",
    )
    ap.add_argument(
        "--no-passages",
        action="store_true",
        help="rank by the title + abstract scores alone (OPENXIV_RERANK_PASSAGES=false; same scoring run)",
    )
    ap.add_argument("--section", default=SECTION, help="the BENCHMARKS.md section written")
    ap.add_argument("--cache", type=Path, default=Path("runs/bench_rerank"))
    ap.add_argument("--no-write", action="store_true")
    args = ap.parse_args()
    settings = Settings.from_env()
    topics, known = queries(args.known_every)
    qs = {q["qid"]: q for q in [*topics, *known]}
    reranker = resolve_reranker(args.reranker)
    assert reranker is not None, "--reranker none: nothing to measure"
    args.cache.mkdir(parents=True, exist_ok=True)
    cache = (
        args.cache
        / f"{reranker.fingerprint}-{args.index.resolve().name}-{max(args.depths)}-{args.known_every}.pkl"
    )
    load0 = load_average()
    if cache.exists():
        saved = pickle.loads(cache.read_bytes())
    else:
        with open_index(args.index, settings) as index:
            index.backend.search("warm up the encoder", top_k=10)
            reranker.score("warm up", ["the cross-encoder"])
            print(f"topic queries: {len(topics)}", flush=True)
            trows = scored(index, reranker, topics, args.depths)
            print(f"known items: {len(known)}", flush=True)
            krows = scored(index, reranker, known, [d for d in args.depths if d <= args.known_depth])
        omp = os.environ.get("OMP_NUM_THREADS", "unset")  # the scoring's threads (the report may be redone)
        saved = {"rows": trows + krows, "load": (load0, load_average()), "omp": omp}
        cache.write_bytes(pickle.dumps(saved))
    rows = saved["rows"]
    if args.no_passages:  # a hit's score of its title + abstract, its passage's left out
        rows = [{**r, "ce": r["ce_abstract"]} for r in rows]
    args.scored_depths = list(args.depths)
    known_depth = max(d for d in args.depths if d <= args.known_depth)
    args.depths = [d for d in args.depths if d <= known_depth]  # a rule's N is judged on both kinds
    body = "\n".join(
        [
            f"`{command(args)}` on the whole shared corpus; reranker `{reranker.name}` "
            f"(`{reranker.fingerprint}`). Topic: the {len(topics)} dev queries; known items: "
            f"{len(known)} dev queries (both kinds of every {args.known_every}th paper).",
            "",
            *report(rows, qs, args),
            "",
            *latency([r for r in rows if qs[r["qid"]]["set"] == "topic"]),
            *(["", "(Times of the scoring run: the passages were scored too.)"] if args.no_passages else []),
            "",
            f"Load average (1 / 5 / 15 min) at the start {saved['load'][0]}, at the end "
            f"{saved['load'][1]}, on 2 cores shared with other work; `OMP_NUM_THREADS` "
            f"{saved.get('omp', os.environ.get('OMP_NUM_THREADS', 'unset'))}.",
        ]
    )
    print(body)
    if not args.no_write:
        write_section(args.section, body)


if __name__ == "__main__":
    main()
