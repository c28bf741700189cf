"""Synthetic evaluator inputs (a corpus of made-up papers, ranked runs and their qrels), seeded: what
``bench_evaluator.py`` times and ``check_eval_reports.py`` checks reports on."""

from __future__ import annotations

import json
import random
from pathlib import Path

WORDS = [
    "neural",
    "sparse",
    "graph",
    "vision",
    "language",
    "model",
    "retrieval",
    "agent",
    "diffusion",
    "token",
    "attention",
    "robust",
]


def _id(rng: random.Random) -> str:
    return f"{rng.randint(15, 25):02d}{rng.randint(1, 12):02d}.{rng.randint(0, 99999):05d}"


def _spell(rng: random.Random, i: str) -> str:
    return rng.choice([i, f"{i}v2", f"arXiv:{i}", f"https://arxiv.org/abs/{i}v1", f"10.48550/arXiv.{i}"])


def _title(rng: random.Random) -> str:
    return " ".join(rng.choice(WORDS) for _ in range(rng.randint(6, 12))).capitalize()


def make_data(d: Path, n: int, seed: int) -> tuple[Path, Path, Path]:
    rng = random.Random(seed)
    gold: list[dict[str, object]] = []
    subs: list[list[dict[str, object]]] = [[], []]
    for k in range(n):
        deep = rng.random() < 0.3
        ids = [_id(rng)] if deep else [_id(rng) for _ in range(rng.randint(2, 20))]
        titles = [_title(rng) for _ in ids]
        q = f"synthetic question {k}"
        gold.append({"qid": f"q{k}", "question": q, "answer": titles, "arxiv_id": ids[0] if deep else ids})
        if rng.random() < 0.02:
            continue  # missing item
        for s, skill in enumerate((0.5, 0.4)):
            for p in range(2):
                preds: list[str] = []
                for i, t in zip(ids, titles, strict=True):
                    if rng.random() < skill:
                        preds.append(t if rng.random() < 0.05 else _spell(rng, i))
                preds += [_id(rng) for _ in range(rng.randint(0, 5))]
                if preds and rng.random() < 0.1:
                    preds.append(preds[0])  # duplicate
                if rng.random() < 0.05:
                    preds.append("2301.0001")  # malformed
                rng.shuffle(preds)
                subs[s].append({"qid": f"q{k}", "pass_id": p, "predictions": preds})
    paths = (d / "gold.jsonl", d / "a.jsonl", d / "b.jsonl")
    for path, rows in zip(paths, (gold, *subs), strict=True):
        path.write_text("\n".join(json.dumps(r) for r in rows) + "\n", encoding="utf-8")
    return paths


def make_ranked(d: Path, n: int, seed: int) -> tuple[Path, Path]:
    rng = random.Random(seed)
    with (d / "qrels.txt").open("w") as q, (d / "run.txt").open("w") as r:
        for k in range(n):
            rel = [f"d{rng.randint(0, 5000)}" for _ in range(rng.randint(1, 20))]
            for doc in rel:
                q.write(f"q{k} 0 {doc} 1\n")
            for rank in range(100):
                doc = rng.choice(rel) if rng.random() < 0.1 else f"d{rng.randint(0, 5000)}"
                r.write(f"q{k} Q0 {doc} {rank + 1} {round(100 - rank * 0.7, 1)} bench\n")
    return d / "qrels.txt", d / "run.txt"
