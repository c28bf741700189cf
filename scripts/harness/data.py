"""The shared data of a benchmark (``../shared`` or ``$OPENXIV_SHARED``, `SharedData`) and its
gold query sets: the dev topic queries and the full-text known-item queries."""

from __future__ import annotations

import gzip
import json
from pathlib import Path
from typing import Any

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
