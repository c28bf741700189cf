"""Synthetic corpora at scale for ``bench_scale.py`` and ``bench_scale_steps.py``: real records
recombined (`Source`), synthetic vectors under real cache keys, per-query timing of a backend, and
the memory of ``openxiv serve`` (RSS, PSS, shared) after a few searches."""

from __future__ import annotations

import json
import random
import sqlite3
import time
from collections.abc import Iterator
from datetime import date
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from harness.server import Server
from openxiv.corpus.records import PaperRecord, SectionRecord
from openxiv.indexer.backend import SearchBackend, SearchFilters

MIB = 2**20


class Source:
    """Real material to recombine: titles, abstracts, authors, categories; full texts' sections;
    paper vectors from the embedding cache."""

    def __init__(self, db: Path, fulltexts: int) -> None:
        con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        rows = con.execute(
            "SELECT id, title, abstract, authors_json, categories_json FROM papers "
            "WHERE title IS NOT NULL AND abstract IS NOT NULL AND abstract != '' ORDER BY id"
        ).fetchall()
        self.titles = [r[1] for r in rows]
        self.abstracts = [r[2] for r in rows]
        self.authors = [json.loads(r[3]) for r in rows]
        self.categories = [json.loads(r[4]) or ["cs.LG"] for r in rows]
        ft_ids = [
            r[0]
            for r in con.execute("SELECT id FROM papers WHERE has_fulltext ORDER BY id LIMIT ?", (fulltexts,))
        ]
        self.sections: list[list[SectionRecord]] = []
        for pid in ft_ids:
            secs = con.execute(
                "SELECT name, text, number FROM sections WHERE paper_id=? ORDER BY idx", (pid,)
            ).fetchall()
            if secs:
                self.sections.append([SectionRecord(name=n, text=t, number=num) for n, t, num in secs])
        con.close()

    def records(self, n: int, fulltext_share: float, seed: int) -> Iterator[PaperRecord]:
        rng = random.Random(seed)
        m = len(self.titles)
        for i in range(n):
            a, b = rng.randrange(m), rng.randrange(m)
            month = i // 99_000
            yymm = f"{15 + month // 12:02d}{month % 12 + 1:02d}"
            day = date(2015 + month // 12, month % 12 + 1, 1 + i % 28)
            secs = self.sections[rng.randrange(len(self.sections))] if rng.random() < fulltext_share else []
            yield PaperRecord(
                arxiv_id=f"{yymm}.{i % 99_000 + 1:05d}",
                title=self.titles[a],
                abstract=self.abstracts[b],
                authors=list(self.authors[a]),
                categories=list(self.categories[b]),
                published=day,
                source="bench_scale",
                sections=list(secs),
            )


def real_vectors(cache: Path, fingerprint: str, limit: int) -> np.ndarray:
    con = sqlite3.connect(f"file:{cache}?mode=ro", uri=True)
    blobs = con.execute("SELECT vec FROM vectors WHERE model=? LIMIT ?", (fingerprint, limit)).fetchall()
    con.close()
    return np.stack([np.frombuffer(b, dtype="<f4") for (b,) in blobs])


def fill_cache(db: Path, cache_path: Path, encoder: Any, base: np.ndarray, seed: int) -> int:
    """Synthetic vectors for every paper text of ``db`` under its real cache key."""
    from openxiv.corpus.store import Store
    from openxiv.indexer.building.embcache import EmbeddingCache, cache_keys
    from openxiv.indexer.encoders.embed import paper_text
    from openxiv.indexer.encoders.vectors import normalize_rows

    rng = np.random.default_rng(seed)
    done = 0
    with Store.open_readonly(db) as store, EmbeddingCache(cache_path) as cache:
        chunk: list[str] = []

        def flush() -> None:
            nonlocal done
            if not chunk:
                return
            pick = base[rng.integers(0, len(base), len(chunk))]
            vecs = normalize_rows(pick + rng.normal(0, 0.02, pick.shape).astype(np.float32))
            cache.put_many(cache_keys(encoder, chunk), vecs)
            done += len(chunk)
            chunk.clear()

        for d in store.iter_papers():
            chunk.append(paper_text(d.title, d.abstract))
            if len(chunk) >= 20_000:
                flush()
        flush()
    return done


def time_queries(
    backend: SearchBackend,
    queries: list[str],
    mode: str,
    filters: SearchFilters | None = None,
    stages: list[dict[str, float]] | None = None,
) -> list[float]:
    """Milliseconds of each query, one at a time; ``stages`` collects each one's ``timings_ms``."""
    backend.search(queries[0], top_k=10, mode=mode, filters=filters)  # warm (and the filter mask)
    out = []
    for q in queries:
        t = time.perf_counter()
        res = backend.search(q, top_k=10, mode=mode, filters=filters)
        out.append((time.perf_counter() - t) * 1000)
        if stages is not None:
            stages.append(dict(res.timings_ms))
    return out


def smaps_rollup(pid: int) -> dict[str, int]:
    out = {}
    with open(f"/proc/{pid}/smaps_rollup", encoding="ascii") as fh:
        for line in fh:
            parts = line.split()
            if len(parts) >= 3 and parts[1].isdigit():
                out[parts[0].rstrip(":")] = int(parts[1]) * 1024
    return out


def serve_memory(root: Path, workers: int, queries: list[str]) -> dict[str, Any]:
    server = Server(root, workers=workers)
    try:
        with httpx.Client(base_url=server.url, timeout=120) as client:
            for q in queries:
                client.post("/search", json={"query": q, "top_k": 10})
        procs = []
        for p in server.processes():
            s = smaps_rollup(p.pid)
            procs.append({"pid": p.pid, "rss_mib": s["Rss"] / MIB, "pss_mib": s["Pss"] / MIB,
                          "shared_mib": (s.get("Shared_Clean", 0) + s.get("Shared_Dirty", 0)) / MIB})  # fmt: skip
        return {
            "workers": workers,
            "startup_s": server.startup_s,
            "processes": procs,
            "rss_sum_mib": sum(p["rss_mib"] for p in procs),
            "pss_sum_mib": sum(p["pss_mib"] for p in procs),
        }
    finally:
        server.stop()
