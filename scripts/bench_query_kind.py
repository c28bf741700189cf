"""The query-kind rule (issue 26, `openxiv.indexer.engine.query_kind`): which queries may let
feedback and the category prior reorder their first page, chosen by 2-fold cross-validation.

Every dev query runs twice through the shipped ranking: with its first 10 places kept (today) and
with none kept (feedback and prior reorder the whole list). A rule picks one of the two per query
from its profile (words, BM25 best/10th, passage coverage, cosine of the 10th nearest paper
vector), so each rule's scores are exact
mixtures of the two runs. For each fold (even / odd positions of every query set) the rule is picked
on the other fold: the most topic Recall@10 + nDCG@10 among rules whose known items lose at most
``--mrr-drop`` MRR@10 per kind and no success@10 on that fold; ties go to the narrower rule.

    .venv/bin/python scripts/bench_query_kind.py --index data/index [--write]
"""

from __future__ import annotations

import argparse
import dataclasses
import itertools
import json
import os
import statistics
import sys
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")


from harness.data import SharedData

from openxiv.corpus.settings.model import Settings
from openxiv.evaluator.ranked import score_query
from openxiv.indexer.engine.query_kind import QueryKindConfig, QueryProfile, topic_query
from openxiv.indexer.snapshot import open_index

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.data import KNOWN_ITEM_FILE, TOPIC_FILES, load_jsonl
from harness.report import write_section

RATIOS = (1.1, 1.2, 1.3, 1.4, 1.6, 2.0, 1000.0)
COVERAGES = (0.5, 0.6, 0.8, 1.01)
WORDS = (8, 12, 16, 1000)
DENSE = (0.0, 0.5, 0.55, 0.6, 0.65, 0.7)
"""1000 / 1.01 / 1000 / 0.0: that signal is not asked."""
UNKEPT = {"prf_gate": 0.0, "prf_coverage": 10.0, "prior_head": 0}


def per_query(backend: Any, q: dict[str, Any], depth: int) -> dict[str, float]:
    ids = [h.arxiv_id for h in backend.search(q["query"], top_k=depth).hits]
    return score_query(ids, set(q["relevant"]), (1, 10, 100))


def collect(index: Path, settings: Settings) -> list[dict[str, Any]]:
    todo = queries()
    opened = open_index(index, settings)
    try:
        kept = opened.backend.tuned(kind_ratio=0.0)
        unkept = opened.backend.tuned(kind_ratio=0.0, **UNKEPT)
        out = []
        for i, q in enumerate(todo):
            depth = 100 if q["set"] == "topic" else 10
            p = kept.query_profile(q["query"])
            out.append(
                {
                    "qid": q["qid"],
                    "set": q["set"],
                    "profile": p,
                    "kept": per_query(kept, q, depth),
                    "unkept": per_query(unkept, q, depth),
                }
            )
            if i % 100 == 0:
                print(f"{i}/{len(todo)}", flush=True)
    finally:
        opened.close()
    return out


def reprofile(index: Path, settings: Settings, rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    text = {q["qid"]: q["query"] for q in queries()}
    opened = open_index(index, settings)
    try:
        return [{**r, "profile": opened.backend.query_profile(text[r["qid"]])} for r in rows]
    finally:
        opened.close()


def queries() -> list[dict[str, Any]]:
    gold = SharedData.default().gold()
    out = [{**q, "set": "topic"} for f in TOPIC_FILES for q in load_jsonl(gold / f)]
    return out + [{**q, "set": q["kind"]} for q in load_jsonl(gold / KNOWN_ITEM_FILE)]


def summary(rows: list[dict[str, Any]], cfg: QueryKindConfig | None) -> dict[str, float]:
    """Mean metrics when ``cfg`` decides per query (``None``: every query keeps its first page)."""

    def pick(r: dict[str, Any]) -> dict[str, float]:
        return r["unkept"] if cfg is not None and topic_query(r["profile"], cfg) else r["kept"]

    out: dict[str, float] = {}
    for s, metrics in (
        ("topic", ("recall@10", "recall@100", "ndcg@10")),
        ("exact", ("mrr@10", "success@1", "success@10")),
        ("keywords", ("mrr@10", "success@1", "success@10")),
    ):
        sub = [pick(r) for r in rows if r["set"] == s]
        for m in metrics:
            out[f"{s} {m}"] = statistics.mean(x[m] for x in sub) if sub else 0.0
        sel = [r for r in rows if r["set"] == s]
        out[f"{s} topic share"] = (
            statistics.mean(cfg is not None and topic_query(r["profile"], cfg) for r in sel) if sel else 0.0
        )
    return out


def grid() -> list[QueryKindConfig]:
    return [QueryKindConfig(*x) for x in itertools.product(RATIOS, COVERAGES, WORDS, DENSE)]


def choose(rows: list[dict[str, Any]], mrr_drop: float) -> QueryKindConfig:
    base = summary(rows, None)

    def ok(s: dict[str, float]) -> bool:
        return all(
            s[f"{k} mrr@10"] >= base[f"{k} mrr@10"] - mrr_drop - 1e-9
            and s[f"{k} success@10"] >= base[f"{k} success@10"] - 1e-9
            for k in ("exact", "keywords")
        )

    scored = [(cfg, summary(rows, cfg)) for cfg in grid()]
    good = [(c, s) for c, s in scored if ok(s)]
    best = max(
        good,
        key=lambda cs: (
            round(cs[1]["topic recall@10"] + cs[1]["topic ndcg@10"], 9),
            -cs[0].ratio,
            -cs[0].coverage,
            -cs[0].max_words,
            cs[0].dense,
        ),
    )
    return best[0]


def fmt(cfg: QueryKindConfig | None) -> str:
    if cfg is None:
        return "kept for all"
    return f"ratio<{cfg.ratio}, coverage<{cfg.coverage}, words<={cfg.max_words}, dense10>={cfg.dense}"


def report(rows: list[dict[str, Any]], mrr_drop: float) -> str:
    # even / odd positions within each query set
    by_set: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_set.setdefault(r["set"], []).append(r)
    folds = [[r for s in by_set.values() for r in s[f::2]] for f in (0, 1)]
    held: list[dict[str, Any]] = []
    picks = []
    for train, test in ((folds[0], folds[1]), (folds[1], folds[0])):
        cfg = choose(train, mrr_drop)
        picks.append(cfg)
        held.append({"n": len(test), "cv": summary(test, cfg), "base": summary(test, None)})
    full = choose(rows, mrr_drop)
    cols = [
        "topic recall@10",
        "topic recall@100",
        "topic ndcg@10",
        "exact mrr@10",
        "exact success@1",
        "exact success@10",
        "keywords mrr@10",
        "keywords success@1",
        "keywords success@10",
        "topic topic share",
        "exact topic share",
        "keywords topic share",
    ]

    def cv_mean(key: str, which: str) -> float:
        return statistics.mean(h[which][key] for h in held)  # folds are equal-sized per set (+-1)

    lines = ["| ranking | " + " | ".join(cols) + " |", "|---|" + "---:|" * len(cols)]
    for name, s in (
        ("first 10 kept for every query (shipped)", summary(rows, None)),
        ("first 10 kept for no query", summary(rows, QueryKindConfig(1e9, 1e9, 10**9, 0.0))),
        (f"query-kind rule, all queries: {fmt(full)}", summary(rows, full)),
    ):
        lines.append(f"| {name} | " + " | ".join(f"{s[c]:.3f}" for c in cols) + " |")
    lines.append(
        "| query-kind rule, 2-fold CV (held-out folds) | "
        + " | ".join(f"{cv_mean(c, 'cv'):.3f}" for c in cols)
        + " |"
    )
    lines.append(
        "| first 10 kept, the same folds | " + " | ".join(f"{cv_mean(c, 'base'):.3f}" for c in cols) + " |"
    )
    return "\n".join(lines) + (
        f"\n\nPicked per fold: {fmt(picks[0])} and {fmt(picks[1])}; on all queries: {fmt(full)}. "
        f"Constraint: known-item MRR@10 per kind at most {mrr_drop} below the kept ranking and no "
        "success@10 lost, on the choosing fold; objective topic R@10 + nDCG@10."
    )


SECTION = "Query kind (issue 26)"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--index", type=Path, required=True)
    ap.add_argument("--mrr-drop", type=float, default=0.005)
    ap.add_argument("--write", action="store_true", help="write the section into BENCHMARKS.md")
    ap.add_argument("--runs", type=Path, help="per-query results: read when present, else written")
    ap.add_argument("--reprofile", action="store_true", help="recompute the profiles of the --runs file")
    ap.add_argument("--section", default=SECTION, help="the BENCHMARKS.md section --write writes")
    ap.add_argument("--about", default="the default index", help="what --index is, in that section's text")
    args = ap.parse_args()
    load = os.getloadavg()[0]
    if args.runs and args.runs.exists():
        rows = [{**r, "profile": QueryProfile(**r["profile"])} for r in json.loads(args.runs.read_text())]
        if args.reprofile:  # the runs stay, the profiles are computed again (a new signal)
            rows = reprofile(args.index, Settings.from_env(), rows)
            args.runs.write_text(
                json.dumps([{**r, "profile": dataclasses.asdict(r["profile"])} for r in rows])
            )
    else:
        rows = collect(args.index, Settings.from_env())
        if args.runs:
            args.runs.write_text(
                json.dumps([{**r, "profile": dataclasses.asdict(r["profile"])} for r in rows])
            )
    text = report(rows, args.mrr_drop)
    print(text)
    if args.write:
        cmd = ".venv/bin/python scripts/bench_query_kind.py --index data/index --write"
        if args.section != SECTION:
            cmd = cmd.replace("data/index", "<index>") + f' --section "{args.section}" --about "{args.about}"'
        write_section(
            args.section,
            "Dev query sets as in «Retrieval quality», shipped ranking (weighted 1:0.3 + feedback + "
            f"category prior) on {args.about}; known-item columns MRR@10 / S@1 / S@10, "
            "`topic share` = share of that set the rule calls topic.\n\n"
            + text
            + f"\n\nCommand: `{cmd}` (1-minute load average {load:.1f}).\n",
            after="Retrieval quality" if args.section == SECTION else SECTION,
        )


if __name__ == "__main__":
    main()
