"""What a passage calibration changes in the requests `check_search_identical.py` sends (issue 37),
for `bench_calibration.py`: each page ranked both ways (`explain_diff`), or two of its digest runs
sorted by whether ``quantile`` maps each request (`explain_digests`)."""

from __future__ import annotations

import statistics
from pathlib import Path
from typing import Any

import numpy as np

from harness.coverage import full_text_mask
from harness.data import SharedData, load_queries
from harness.requests import FILTERS, MODES, PAGES

__all__ = ["NO_PASSAGES", "explain_diff", "explain_digests"]

NO_PASSAGES = ("bm25_papers", "dense")
"""Modes without a passage side, added to check_search_identical's: the calibration cannot touch them."""


def explain_diff(backend: Any, n: int) -> str:
    """What the calibration changes in the requests `check_search_identical.py` sends (its queries,
    modes, filters and pages; plus `NO_PASSAGES`): each page ranked with ``fixed`` and with the
    shipped calibration, by mode, counted as identical (papers and scores), the same papers in the
    same order with other scores, the same papers reordered, or other papers; with the full-text
    share of the pages before and after."""
    from openxiv.service.params import build_filters

    before = backend.tuned(passage_norm="fixed")
    full = full_text_mask(backend)
    counts: dict[str, dict[str, int]] = {}
    shares: dict[str, list[float]] = {}
    for i, q in enumerate(load_queries(SharedData.default(), n)):
        top_k, offset = PAGES[i % len(PAGES)]
        for mode in (*MODES, *NO_PASSAGES):
            for cats in FILTERS:
                filters = build_filters(categories=list(cats) or None)
                pages = [
                    [
                        (h.arxiv_id, h.score)
                        for h in b.search(q, top_k=top_k, offset=offset, filters=filters, mode=mode).hits
                    ]
                    for b in (before, backend)
                ]
                ids = [[a for a, _ in p] for p in pages]
                kind = (
                    "identical"
                    if pages[0] == pages[1]
                    else "same papers and order, other scores"
                    if ids[0] == ids[1]
                    else "reordered"
                    if set(ids[0]) == set(ids[1])
                    else "other papers"
                )
                c = counts.setdefault(mode or "default (weighted)", {})
                c[kind] = c.get(kind, 0) + 1
                if mode in NO_PASSAGES:
                    continue
                for label, page_ids in zip(("before", "after"), ids, strict=True):
                    rows = [backend.meta.row_of(a) for a in page_ids]
                    shares.setdefault(label, []).append(
                        float(np.mean([full[r] for r in rows])) if rows else 0.0
                    )
    lines = [
        f"- `{mode}`: " + ", ".join(f"{k} {v}" for k, v in sorted(c.items())) for mode, c in counts.items()
    ]
    return (
        "\n".join(lines)
        + f"\n\nFull-text share of the pages with a passage side: {statistics.mean(shares['before']):.3f} "
        f"before, {statistics.mean(shares['after']):.3f} after."
    )


def explain_digests(backend: Any, before: Path, after: Path, n: int) -> str:
    """Which of check_search_identical's requests differ between two of its runs (``before``,
    ``after``: ``--out`` files over the same requests), against whether the ``quantile`` calibration
    maps the request's passage side (`quantile_hits` under its filter: both populations large enough)
    or falls back to the ``idf`` factor, which the ranking before it used too."""
    from openxiv.indexer.engine.passage_calibration import quantile_hits
    from openxiv.service.params import build_filters

    a = before.read_text(encoding="utf-8").splitlines()
    b = after.read_text(encoding="utf-8").splitlines()
    papers, passages = backend.bm25_papers, backend.passages
    counts: dict[tuple[str, str, str], int] = {}
    requests = [
        (q, mode, cats) for q in load_queries(SharedData.default(), n) for mode in MODES for cats in FILTERS
    ]
    assert len(requests) == len(a) == len(b), "run both files with the same --queries"
    mapped: dict[tuple[str, tuple[str, ...]], bool] = {}
    for (q, mode, cats), x, y in zip(requests, a, b, strict=True):
        assert x.split("\t")[1:] == y.split("\t")[1:], "the two files list other requests"
        key = (q, cats)
        if key not in mapped:
            allowed = backend.meta.mask(build_filters(categories=list(cats) or None))
            scores = papers.masked_scores(q, allowed)
            hits = passages.search(q, 1, allowed)
            mapped[key] = quantile_hits(q, scores, hits, papers, passages) is not None
        kind = (
            mode or "default",
            "identical" if x == y else "differs",
            "mapped" if mapped[key] else "idf factor",
        )
        counts[kind] = counts.get(kind, 0) + 1
    lines = [f"- `{m}` {same}, {how}: {c}" for (m, same, how), c in sorted(counts.items())]
    return (
        f"{len(a)} bodies; queries mapped by rank: {sum(mapped.values())} of {len(mapped)} (query, filter)\n"
        + "\n".join(lines)
    )
