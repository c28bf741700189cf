"""The shared data of a benchmark (``../shared`` or ``$OPENXIV_SHARED``, `SharedData`) and its
gold query sets: the dev topic queries and the full-text known-item queries."""

from __future__ import annotations

import gzip
import itertools
import json
import subprocess
from pathlib import Path
from typing import Any

from harness.server import OPENXIV, env
from openxiv.corpus.shared import SharedData
from openxiv.indexer.encoders.embed import paper_text

__all__ = [
    "GOLD",
    "KNOWN_ITEM_FILE",
    "TOPIC_FILES",
    "SharedData",
    "cs_papers",
    "load_gold",
    "load_jsonl",
    "load_queries",
    "shared",
    "small_corpus",
    "topic_queries",
]

TOPIC_FILES: tuple[str, ...] = SharedData.TOPIC_SETS
"""The dev topic query sets (Recall@10/@100, nDCG@10)."""
KNOWN_ITEM_FILE = "fulltext_known_item_dev.jsonl"
"""The dev known-item queries (sentences and keyword bags of one paper; MRR@10, success@k)."""
GOLD = (*TOPIC_FILES, KNOWN_ITEM_FILE)


def shared() -> SharedData:
    """The shared data, or exit with what is missing."""
    data = SharedData.default()
    if not data.available:
        raise SystemExit(data.missing_message())
    return data


def load_jsonl(path: Path) -> list[dict[str, Any]]:
    with path.open(encoding="utf-8") as fh:
        return [json.loads(line) for line in fh if line.strip()]


def topic_queries() -> list[str]:
    """The text of every dev topic query, in file order."""
    data = SharedData.default()
    return [q["query"] for name in TOPIC_FILES for q in load_jsonl(data.gold(name))]


def load_queries(data: SharedData, n: int) -> list[str]:
    """The first ``n`` topic and known-item queries, interleaved (deterministic)."""
    lists = [[q["query"] for q in load_jsonl(data.gold(name))] for name in GOLD]
    out: list[str] = []
    i = 0
    while len(out) < n and any(i < len(q) for q in lists):
        out.extend(q[i] for q in lists if i < len(q))
        i += 1
    return out[:n]


def load_gold() -> list[dict[str, Any]]:
    """Every dev topic query (``qid``, ``query``, ``relevant``), in file order."""
    data = SharedData.default()
    return [q for name in TOPIC_FILES for q in load_jsonl(data.gold(name))]


def cs_papers() -> tuple[list[str], list[str]]:
    """Unique ids and paper texts of the cs listing, in file order (first occurrence wins)."""
    ids: list[str] = []
    texts: list[str] = []
    seen: set[str] = set()
    with gzip.open(SharedData.default().listing("cs"), "rt", encoding="utf-8") as fh:
        for line in fh:
            obj = json.loads(line)
            if obj["id"] in seen:
                continue
            seen.add(obj["id"])
            ids.append(obj["id"])
            texts.append(paper_text(obj.get("title"), obj.get("abstract")))
    return ids, texts


def _head(src: Path, dest: Path, n: int) -> Path:
    with gzip.open(src, "rt", encoding="utf-8") as fin, dest.open("w", encoding="utf-8") as fout:
        fout.writelines(itertools.islice(fin, n))
    return dest


def small_corpus(work: Path, papers: int, plaintext: int) -> tuple[Path, Path, Path]:
    """(db, index root, embedding cache) of a small real corpus under ``work``, built once."""
    shared = SharedData.default()
    db, root, cache = work / "corpus.sqlite", work / "index", work / "embcache.sqlite"
    if not db.exists():
        (work / "input").mkdir(parents=True, exist_ok=True)
        inputs = [
            _head(shared.listing("cs"), work / "input" / f"listing-cs-{papers}.jsonl", papers),
            _head(shared.plaintext, work / "input" / f"plaintext-{plaintext}.jsonl", plaintext),
        ]
        cmd = [OPENXIV, "ingest", "--db", str(db), "--no-progress", *map(str, inputs)]
        subprocess.run(cmd, env=env(), check=True)
    if not (root / "CURRENT").exists():
        cmd = [OPENXIV, "index", "build", "--db", str(db), "--index", str(root), "--embed", "papers"]
        subprocess.run([*cmd, "--cache", str(cache), "--no-progress"], env=env(), check=True)
    return db, root, cache
