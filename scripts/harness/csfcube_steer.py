"""Steered `similar` on CSFCube for ``scripts/bench_csfcube.py``: the facet rows (rules against the
collection's own labels), the rules' accuracy on labelled sentences, and negative seeds.

Negative seeds are measured as an agent would use them: for each query, the first two candidates of
plain `similar` that the experts graded 0 are ruled out (`negative_ids`); both rankings are then
scored on the pool without those two, so the rows differ only in how the rest is ordered.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from harness import csfcube as cc
from openxiv.corpus.facets import facet_text, sentence_facets

Ranking = dict[str, list[str]]
AS_FACET = {"objective": "background", "other": "background"}  # CSFCube's background takes both


def labelled(p: cc.Paper, facet: str) -> str:
    chosen = [s for k, s in p.sentences if AS_FACET.get(k, k) == facet]
    return " ".join(chosen) or p.abstract


def rule_accuracy(papers: list[cc.Paper]) -> tuple[float, int]:
    gold = [AS_FACET.get(k, k) for p in papers for k, _ in p.sentences]
    pred = [f for p in papers for f in sentence_facets([s for _, s in p.sentences])]
    return sum(g == f for g, f in zip(gold, pred, strict=True)) / len(gold), len(gold)


def facet_rows(
    coll: cc.Collection, be: Any, n: int, rank: Callable[[Callable[[str, str], list[str]]], Ranking]
) -> dict[str, dict[str, list[str]]]:
    def steered(text_of: Callable[[cc.Paper, str], str]) -> Callable[[str, str], list[str]]:
        def hits(key: str, bench_id: str) -> list[str]:
            q, facet = key.split("_")
            return [
                h.arxiv_id
                for h in be.similar((bench_id,), top_k=n - 1, toward=text_of(coll.papers[q], facet)).hits
            ]

        return hits

    return {  # the service's path: `openxiv.service.similar` gives the engine the same text
        "similar, facet sentences by rules (`facet=`)": rank(steered(lambda p, f: facet_text(p.abstract, f))),
        "similar, facet sentences as labelled": rank(steered(labelled)),
    }


def negative_rows(
    coll: cc.Collection, be: Any, n: int, ids: dict[str, str], plain: Ranking
) -> tuple[cc.Collection, Ranking, Ranking]:
    """The collection without each query's two ruled-out candidates, plain `similar` and `similar`
    with them as `negative_ids`, both on that collection."""
    back = {v: k for k, v in ids.items()}
    ruled: dict[str, list[str]] = {}
    for key, ranked in plain.items():
        ruled[key] = [c for c in ranked[:20] if coll.pools[key][c] == 0][:2]
    pools = {k: {c: g for c, g in pool.items() if c not in ruled[k]} for k, pool in coll.pools.items()}
    smaller = cc.Collection(coll.papers, pools, coll.splits)
    before = {k: [c for c in r if c not in ruled[k]] for k, r in plain.items()}
    after: Ranking = {}
    for key in coll.pools:
        q = key.split("_")[0]
        negs = tuple(ids[c] for c in ruled[key])
        hits = be.similar((ids[q],), top_k=n - 1 - len(negs), negative_ids=negs).hits
        keep = set(cc.candidates(smaller, key))
        ranked = [s for s in (back[h.arxiv_id] for h in hits) if s in keep]
        after[key] = list(dict.fromkeys(ranked + cc.candidates(smaller, key)))
    return smaller, before, after
