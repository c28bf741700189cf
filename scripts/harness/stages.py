"""Where the CPU of one ``POST /search`` goes, in process (no HTTP) on a real snapshot, from the
engine's own stage timings (``timings_ms`` of each search: the backend's ``encode``, ``bm25``,
``dense``, ``filter``, ``feedback``, ``fuse`` and ``total``, and the service's ``hydrate``).

Every stage runs on this thread (no overlap helper thread, one encoder thread as ``openxiv serve``
runs it), so the stages add up to the request. The stage timings are wall clock, which a loaded
machine inflates; the thread's CPU time is measured over all requests and shared out over the stages
in proportion to their wall time, so the table is in thread CPU ms as before and its total holds on
a shared machine. The JSON encoding is timed here; ``other`` is what no stage covers (the DeepXiv
response models, the loops in `openxiv.service.search`)."""

from __future__ import annotations

import time
from collections import defaultdict
from pathlib import Path

from openxiv.corpus.settings.model import get_settings
from openxiv.service import search
from openxiv.service.holder import IndexHolder
from openxiv.service.launch import limit_threads
from openxiv.service.spec import SearchSpec

STAGES = (
    ("encode", "query encoding"),
    ("backend_rest", "BM25 + dense search + filter (the query's own passes)"),
    ("feedback", "pseudo-relevance feedback: expanded query's BM25 pass + confidence"),
    ("fusion", "fusion, the prior and paging (and the head a confident query keeps)"),
    ("hydrate", "hydration: store reads (papers, passages, lead sections), evidence, tldr"),
    ("json", "JSON encoding"),
    ("other", "other (response models, loops)"),
)
OWN_PASSES = ("bm25", "dense", "filter")
"""The engine's timings that `STAGES`' ``backend_rest`` sums."""


def stage_ms(index_root: Path, queries: list[str], warmup: int = 10) -> dict[str, float]:
    """Mean thread-CPU ms per request of each of `STAGES` (plus ``total``), over ``queries``, one
    request at a time on this thread: the thread's CPU shared out by the stages' wall time."""
    settings = get_settings().replace(serve_overlap=False)
    limit_threads(settings)
    holder = IndexHolder(index_root, settings)
    holder.load()
    summed: dict[str, float] = defaultdict(float)

    def one(q: str) -> None:
        response, timings = search.deepxiv_search(holder, SearchSpec(queries=(q,)), settings=settings)
        t = time.perf_counter()
        search.search_json(response)
        summed["json"] += (time.perf_counter() - t) * 1000
        for k, v in timings.items():
            summed[k] += v

    try:
        for q in queries[:warmup]:
            one(q)
        summed.clear()
        t, cpu = time.perf_counter(), time.thread_time()
        for q in queries:
            one(q)
        wall, cpu = (time.perf_counter() - t) * 1000, (time.thread_time() - cpu) * 1000
    finally:
        holder.close()
    n = len(queries)
    wall_ms = {
        "encode": summed["encode"] / n,
        "backend_rest": sum(summed[k] for k in OWN_PASSES) / n,
        "feedback": summed["feedback"] / n,
        "fusion": (summed["total"] - sum(summed[k] for k in ("encode", "feedback", *OWN_PASSES))) / n,
        "hydrate": summed["hydrate"] / n,
        "json": summed["json"] / n,
    }
    wall_ms["other"] = max(0.0, wall / n - sum(wall_ms.values()))
    share = cpu / wall if wall > 0 else 0.0
    return {**{k: v * share for k, v in wall_ms.items()}, "total": cpu / n}


def stage_table(ms: dict[str, float]) -> str:
    rows = [f"| {label} | {ms.get(name, 0.0):.2f} |" for name, label in STAGES]
    head = [
        "| stage (in process, one thread; thread CPU per request, shared out by stage timings) | ms |",
        "|---|---:|",
    ]
    return "\n".join([*head, *rows, f"| **total** | **{ms['total']:.2f}** |"])
