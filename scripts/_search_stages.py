"""Where the CPU of one ``POST /search`` goes, measured in process (no HTTP) on a real snapshot.

Each stage is wrapped with a thread-CPU timer (``time.thread_time``), so the numbers hold on a
shared machine where wall clocks wander: query encoding, the rest of the backend (BM25, dense
search, filters, fusion), the store reads of hydration (papers, passages, lead sections), the
evidence choice, the tldr, the response models and the JSON encoding. Inside the backend, the
pseudo-relevance feedback (the expanded query's own BM25 pass over the papers, and the confidence
test) and the fusion are timed apart from the query's own BM25 and dense passes. ``other`` is what the
wrappers do not cover (the loops in `openxiv.service.search`, pydantic's response model).
"""

from __future__ import annotations

import time
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

from openxiv.corpus.settings.model import get_settings
from openxiv.indexer.engine import hybrid
from openxiv.service import search
from openxiv.service.holder import IndexHolder
from openxiv.service.launch import limit_threads
from openxiv.service.spec import SearchSpec

STAGES = (
    ("encode", "query encoding"),
    ("backend_rest", "BM25 + dense search + filter (the query's own passes)"),
    ("feedback", "pseudo-relevance feedback: expanded query's BM25 pass + confidence"),
    ("fusion", "fusion (and the head a confident query keeps)"),
    ("get_papers", "store: papers (one query)"),
    ("get_passages", "store: evidence passages (one query)"),
    ("lead_sections", "store: lead sections of papers without abstract (one query)"),
    ("evidence", "evidence choice (abstract sentences analyzed)"),
    ("tldr", "tldr computed per hit (0 when the snapshot stores tldrs: then a lookup, in other)"),
    ("to_hit", "response models (pydantic)"),
    ("json", "JSON encoding"),
    ("other", "other (loops, response assembly)"),
)


_HYBRID = {"feedback_list": "feedback", "fuse": "fusion", "fuse_with_extra": "fusion", "keep_head": "fusion"}
"""Functions the backend calls by module name, and the stage each one counts in."""


def _timed(cpu: dict[str, float], name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
    def run(*args: Any, **kwargs: Any) -> Any:
        t = time.thread_time()
        try:
            return fn(*args, **kwargs)
        finally:
            cpu[name] += time.thread_time() - t

    return run


def stage_cpu_ms(index_root: Path, queries: list[str], warmup: int = 10) -> dict[str, float]:
    """Mean thread-CPU ms per request of each of `STAGES` (plus ``total``), over ``queries``."""
    # every stage on this thread, so its thread CPU counts them all (not encoding on the helper
    # thread a lone search hands it to, `openxiv.indexer.engine.overlap`)
    settings = get_settings().replace(serve_overlap=False)
    # one encoder thread, as `openxiv serve` runs it: with a pool, part of the encoding would run on
    # ONNX Runtime's other threads, which this thread's CPU clock does not see
    limit_threads(settings)
    holder = IndexHolder(index_root, settings)
    holder.load()
    cpu: dict[str, float] = defaultdict(float)

    def one(q: str) -> None:
        response, _ = search.deepxiv_search(holder, SearchSpec(queries=(q,)), settings=settings)
        search.search_json(response)

    try:
        for q in queries[:warmup]:
            one(q)
        with holder.acquire() as index:
            store, backend, encoder = index.store, index.backend, index.backend.encoder
            saved_search = {
                n: getattr(search, n) for n in ("_evidence", "paper_tldr", "to_deepxiv_hit", "search_json")
            }
            saved_hybrid = {n: getattr(hybrid, n) for n in _HYBRID}
            encoder.encode_query = _timed(cpu, "encode", encoder.encode_query)
            backend.search = _timed(cpu, "backend", backend.search)
            backend._confident_head = _timed(cpu, "feedback", backend._confident_head)
            for name, stage in _HYBRID.items():
                setattr(hybrid, name, _timed(cpu, stage, saved_hybrid[name]))
            for name in ("get_papers", "get_passages", "lead_sections"):
                setattr(store, name, _timed(cpu, name, getattr(store, name)))
            search._evidence = _timed(cpu, "evidence", saved_search["_evidence"])  # type: ignore[assignment]
            search.paper_tldr = _timed(cpu, "tldr", saved_search["paper_tldr"])
            search.to_deepxiv_hit = _timed(cpu, "to_hit", saved_search["to_deepxiv_hit"])
            search.search_json = _timed(cpu, "json", saved_search["search_json"])
            try:
                t = time.thread_time()
                for q in queries:
                    one(q)
                total = time.thread_time() - t
            finally:
                for name in ("encode_query",):
                    vars(encoder).pop(name, None)
                for name in ("search", "_confident_head"):
                    vars(backend).pop(name, None)
                for name, fn in saved_hybrid.items():
                    setattr(hybrid, name, fn)
                for name in ("get_papers", "get_passages", "lead_sections"):
                    vars(store).pop(name, None)
                for name, fn in saved_search.items():
                    setattr(search, name, fn)
    finally:
        holder.close()
    n = len(queries)
    out = {name: cpu[name] / n * 1000 for name, _ in STAGES if name in cpu}
    out["backend_rest"] = (cpu["backend"] - cpu["encode"] - cpu["feedback"] - cpu["fusion"]) / n * 1000
    out["total"] = total / n * 1000
    out["other"] = out["total"] - sum(v for k, v in out.items() if k != "total")
    return out


def stage_table(ms: dict[str, float]) -> str:
    rows = [f"| {label} | {ms.get(name, 0.0):.2f} |" for name, label in STAGES]
    head = ["| stage (in process, thread CPU per request) | ms |", "|---|---:|"]
    return "\n".join([*head, *rows, f"| **total** | **{ms['total']:.2f}** |"])
