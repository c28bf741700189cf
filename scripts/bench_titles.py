"""Exact-title known items (issue 21 item 6b): does a query equal to a paper's title rank it first?

The title set is drawn from the index's own corpus by a seeded recipe (nothing hand-picked):

- ``famous``: the papers whose PDFs are in ``../shared/data/pdfs`` (well-known papers gathered by
  other projects' test fixtures: "Attention Is All You Need", "Deep Residual Learning for Image
  Recognition", ...), where the corpus holds them with a title;
- ``short common``: ``--short`` titles of 2 to 6 words every one of which is among the
  ``--common`` most frequent words of all normalised titles (seeded draw): titles that longer
  titles holding the same words outscore;
- ``random``: ``--random`` titles of any length (seeded draw).

A query is the title as stored; its relevant papers are every paper with the same normalised title
(`openxiv.corpus.normalize.normalize_title`). The set is scored with bench_quality's measures
(MRR@10, success@1, success@10, `openxiv.evaluator.ranked`) in the default ranking without and with
the exact-title pin (`openxiv.indexer.engine.tiling.pin`), next to ``bm25`` and ``dense``; the dev
sets' topic and known-item numbers of the default ranking are measured both ways too (they must not
move). Writes ``## Retrieval quality: exact titles`` of BENCHMARKS.md (after ``## Retrieval quality``).

    .venv/bin/python scripts/bench_titles.py --index data/index [--no-write] [--set-out titles.jsonl]
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from openxiv.corpus.settings.model import Settings
from openxiv.evaluator.shared import SharedData
from openxiv.indexer import layout
from openxiv.indexer.snapshot import open_index

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench_md import load_average, write_section
from bench_quality import KNOWN_ITEM_FILE, TOPIC_FILES, evaluate, load_jsonl, run_queries

SEED = 21


def title_set(
    corpus: Path, n_short: int, n_random: int, n_common: int, seed: int = SEED
) -> list[dict[str, Any]]:
    """The title known-item queries (``qid``, ``query``, ``relevant``, ``kind``) of ``corpus``."""
    con = sqlite3.connect(f"file:{corpus}?mode=ro", uri=True)
    try:
        rows = con.execute(
            "SELECT arxiv_id, title, title_norm FROM papers WHERE title_norm IS NOT NULL AND title_norm != '' "
            "ORDER BY arxiv_id"
        ).fetchall()
    finally:
        con.close()
    ids: dict[str, list[str]] = defaultdict(list)
    written: dict[str, str] = {}
    norm_of: dict[str, str] = {}
    for aid, title, norm in rows:
        ids[norm].append(aid)
        written.setdefault(norm, title)
        norm_of[aid] = norm
    norms = sorted(ids)
    words = Counter(w for n in norms for w in set(n.split()))
    common = {w for w, _ in words.most_common(n_common)}
    famous_ids = sorted({p.stem.split("v")[0] for p in SharedData.default().pdfs.rglob("*.pdf")})
    famous = sorted({norm_of[a] for a in famous_ids if a in norm_of})
    rng = random.Random(seed)
    pool = [n for n in norms if 2 <= len(n.split()) <= 6 and set(n.split()) <= common and n not in famous]
    short = sorted(rng.sample(pool, min(n_short, len(pool))))
    rest = [n for n in norms if n not in famous and n not in short]
    randoms = sorted(rng.sample(rest, min(n_random, len(rest))))
    out: list[dict[str, Any]] = []
    for kind, chosen in (("famous", famous), ("short common", short), ("random", randoms)):
        for n in chosen:
            out.append({"qid": f"title-{len(out)}", "query": written[n], "relevant": ids[n], "kind": kind})
    return out


def score(backend: Any, queries: list[dict[str, Any]], mode: str | None) -> dict[str, dict[str, float]]:
    run = run_queries(backend, queries, mode, 10)[0]
    out = {}
    for kind in ("famous", "short common", "random", "all"):
        subset = [q for q in queries if kind in ("all", q["kind"])]
        if subset:
            out[kind] = evaluate(subset, {q["qid"]: run[q["qid"]] for q in subset}, (1, 10))
            out[kind]["n"] = len(subset)
    return out


def dev_numbers(backend: Any) -> dict[str, float]:
    """bench_quality's dev-set columns for the default ranking of ``backend``."""
    gold = SharedData.default().gold()
    topics = [q for f in TOPIC_FILES for q in load_jsonl(gold / f)]
    known = load_jsonl(gold / KNOWN_ITEM_FILE)
    got = evaluate(topics, run_queries(backend, topics, None, 100)[0], (10, 100))
    out = {"topic R@10": got["recall@10"], "topic R@100": got["recall@100"], "topic nDCG@10": got["ndcg@10"]}
    krun = run_queries(backend, known, None, 10)[0]
    for kind in ("exact", "keywords"):
        subset = [q for q in known if q["kind"] == kind]
        k = evaluate(subset, {q["qid"]: krun[q["qid"]] for q in subset}, (1, 10))
        out |= {f"{kind} MRR@10": k["mrr@10"], f"{kind} S@1": k["success@1"], f"{kind} S@10": k["success@10"]}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, required=True, help="index root or snapshot")
    parser.add_argument("--label", default="data/index", help="how the index is named in BENCHMARKS.md")
    parser.add_argument("--short", type=int, default=150, help="short titles of common words")
    parser.add_argument("--random", type=int, default=150, help="titles of any length")
    parser.add_argument(
        "--common", type=int, default=1000, help="most frequent title words counted as common"
    )
    parser.add_argument(
        "--no-dev", action="store_true", help="skip the dev sets (topic and full-text known items)"
    )
    parser.add_argument("--set-out", type=Path, help="also write the title set (JSONL)")
    parser.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    args = parser.parse_args()
    load0 = load_average()
    opened = open_index(args.index, Settings.from_env())
    try:
        queries = title_set(opened.path / layout.CORPUS, args.short, args.random, args.common)
        if args.set_out:
            args.set_out.write_text("".join(json.dumps(q) + "\n" for q in queries), encoding="utf-8")
        on = opened.backend
        off = on.tuned()
        off.titles = None  # the same ranking without the exact-title pin
        rows = []
        for label, backend, mode in (
            ("bm25", on, "bm25"),
            ("dense", on, "dense"),
            ("default, no exact-title pin (before)", off, None),
            ("default (after)", on, None),
        ):
            if mode == "dense" and not any(s.startswith("dense") for s in on.sides):
                continue
            rows.append((label, score(backend, queries, mode)))
            print(label, json.dumps(rows[-1][1]), flush=True)
        dev = {} if args.no_dev else {"before": dev_numbers(off), "after": dev_numbers(on)}
        papers = on.meta.n
    finally:
        opened.close()
    text = render(rows, dev, queries, args, papers, (load0, load_average()))
    print(text)
    if not args.no_write:
        write_section("Retrieval quality: exact titles", text, after="Retrieval quality")


def render(
    rows: list[tuple[str, dict[str, dict[str, float]]]],
    dev: dict[str, dict[str, float]],
    queries: list[dict[str, Any]],
    args: argparse.Namespace,
    papers: int,
    load: tuple[str, str],
) -> str:
    kinds = [k for k in ("famous", "short common", "random", "all") if k in rows[0][1]]
    counts = ", ".join(f"{k} {rows[0][1][k]['n']}" for k in kinds)
    head = "| ranking | " + " | ".join(f"{k} MRR@10 | {k} S@1" for k in kinds) + " |\n"
    head += "|---|" + "---:|---:|" * len(kinds) + "\n"
    body = "".join(
        f"| {label} | "
        + " | ".join(f"{r[k]['mrr@10']:.3f} | {r[k]['success@1']:.3f}" for k in kinds)
        + " |\n"
        for label, r in rows
    )
    text = (
        f"Title known items on `{args.label}` ({papers:,} papers): {len(queries)} queries ({counts}), each "
        f"a paper's title as stored; relevant: every paper with the same normalised title. Recipe "
        f"(scripts/bench_titles.py, seed {SEED}): the papers of `../shared/data/pdfs` the corpus holds "
        f"(famous), a draw of titles of 2–6 words all among the {args.common:,} most frequent title words "
        f"(short common), a draw of any titles (random).\n\n" + head + body
    )
    if dev:
        cols = list(dev["before"])
        text += (
            "\nThe dev sets (bench_quality's rule: topic and full-text known-item numbers must not move), "
            "default ranking without and with the pin:\n\n| ranking | "
            + " | ".join(cols)
            + " |\n|---|"
            + "---:|" * len(cols)
            + "\n"
            + "".join(
                f"| {side} | " + " | ".join(f"{dev[side][c]:.3f}" for c in cols) + " |\n"
                for side in ("before", "after")
            )
        )
    return text + (
        f"\nLoad average (1/5/15 min) {load[0]} at the start, {load[1]} at the end. Command: "
        f"`.venv/bin/python scripts/bench_titles.py --index {args.label} --short {args.short} "
        f"--random {args.random} --common {args.common}`\n"
    )


if __name__ == "__main__":
    main()
