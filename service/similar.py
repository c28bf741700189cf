"""The similar-papers use case: papers nearest to one or more seed papers' own vectors (no HTTP here).

Every front calls `similar`: ``GET /arxiv/?type=similar`` (the DeepXiv ``retrieve`` shape) and
``GET /v1/similar`` (the ``/v1/search`` shape) and the MCP tool ``similar_papers`` through
`similar_async` (a model server awaited outside the compute slots, see there), ``openxiv similar``
and the Semantic Scholar ``recommendations`` directly. The ranking is the backend's (`openxiv.indexer.backend.SearchBackend.similar`: the
seeds' stored paper vectors, their mean for several, the seeds left out, the filters of a search
applied before the cut); hits are hydrated like search hits (`openxiv.service.hydration.hydrate`),
without evidence: there is no query to show evidence for.

Steering (issue 39): ``facet`` (`FACETS`: background, method, result) leans the ranking to the
seeds' sentences of that kind (`openxiv.corpus.facets` finds them by rules in each seed's abstract;
their encoding is added to the seeds' direction); ``negative_ids`` are papers ruled out, pushed away
from Rocchio-style and left out of the results (`openxiv.indexer.engine.similar`).

Errors: a malformed id, more than `MAX_SEEDS` seeds or negatives, a negative that is also a seed or
an unknown facet is a 400 naming its parameter, a seed or negative the corpus lacks a 404, a snapshot
without paper vectors a 409 (`Conflict`) that says how to build one with them.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import Any

import anyio.to_thread

from openxiv.corpus.facets import FACETS, facet_text
from openxiv.corpus.settings.model import Settings
from openxiv.indexer.backend import DeadlineExceeded, NoVectors, SearchFilters, SearchResult, UnknownPapers
from openxiv.indexer.encoders.vectors import EncoderUnavailable
from openxiv.indexer.snapshot import OpenIndex
from openxiv.service.errors import BadRequest, Conflict, NotFound
from openxiv.service.experiments.context import current as current_call
from openxiv.service.experiments.context import within_cutoff
from openxiv.service.holder import IndexHolder
from openxiv.service.hydration import hydrate
from openxiv.service.models import SearchResponse
from openxiv.service.params import OFFSET_MAX, TOP_K_MAX, check_range, split_list
from openxiv.service.reading import check_id
from openxiv.service.search import Outcome, OverBudget, deadline_for
from openxiv.service.search_async import prefetch_texts
from openxiv.service.views import to_deepxiv_hit

__all__ = [
    "FACETS",
    "MAX_SEEDS",
    "check_facet",
    "negative_ids",
    "seed_ids",
    "similar",
    "similar_async",
    "similar_response",
]

MAX_SEEDS = 20
"""Seed papers one request may give (their vectors are averaged)."""


def seed_ids(arxiv_id: str | list[str] | tuple[str, ...] | None, name: str = "arxiv_id") -> tuple[str, ...]:
    """The canonical seed ids from one id, a comma-separated list or repeated values; a `BadRequest`
    naming ``name`` when none is given, one is malformed or there are more than `MAX_SEEDS`."""
    given = split_list(arxiv_id, name)
    if not given:
        raise BadRequest(f"{name}: required (one arXiv id, or several comma-separated)")
    if len(given) > MAX_SEEDS:
        raise BadRequest(f"{name}: at most {MAX_SEEDS} seed papers, got {len(given)}")
    return tuple(dict.fromkeys(check_id(a) for a in given))


def negative_ids(
    value: str | list[str] | tuple[str, ...] | None, seeds: tuple[str, ...] = (), name: str = "negative_ids"
) -> tuple[str, ...]:
    """The canonical ids of the papers ruled out (none is fine); a `BadRequest` naming ``name`` when
    one is malformed, is also a seed, or there are more than `MAX_SEEDS`."""
    given = split_list(value, name)
    if len(given) > MAX_SEEDS:
        raise BadRequest(f"{name}: at most {MAX_SEEDS} papers, got {len(given)}")
    out = []
    for a in given:
        try:
            out.append(check_id(a))
        except BadRequest as exc:
            raise BadRequest(str(exc).replace("arxiv_id:", f"{name}:", 1)) from exc
    both = [a for a in out if a in seeds]
    if both:
        raise BadRequest(f"{name}: {', '.join(both)} is also a seed (arxiv_id)")
    return tuple(dict.fromkeys(out))


def check_facet(facet: str | None, name: str = "facet") -> str | None:
    """``facet`` in canonical spelling, ``None`` when not given; a `BadRequest` naming ``name`` for a
    facet other than `FACETS`."""
    if facet is None or not facet.strip():
        return None
    value = facet.strip().lower()
    if value not in FACETS:
        raise BadRequest(f"{name}: must be one of {', '.join(FACETS)}, got {facet!r}")
    return value


def _within_cutoff(
    index: OpenIndex, filters: SearchFilters | None, rank: Callable[[SearchFilters | None], SearchResult]
) -> SearchFilters | None:
    """``filters`` held to the tagged question's date ceiling (``--cutoffs``); the papers after it the
    page would have shown are counted as leaks (a second ranking, only when the ceiling narrows)."""
    state = current_call()
    if state is None or state.ceiling is None:
        return filters
    capped = state.capped(filters)
    if capped == (filters or SearchFilters()):
        return filters
    free = [h.arxiv_id for h in rank(filters).hits]
    papers = index.store.get_papers(free) if free else {}
    state.leak(aid for aid in free if aid in papers and state.after(papers[aid].date))
    return capped


@dataclass(frozen=True)
class _Ask:
    """One similar-papers request, checked (`similar`'s arguments)."""

    seeds: tuple[str, ...]
    settings: Settings
    top_k: int
    offset: int
    filters: SearchFilters | None
    facet: str | None
    negatives: tuple[str, ...]

    @classmethod
    def of(cls, seeds: tuple[str, ...], settings: Settings, **kw: Any) -> _Ask:
        check_range(kw["top_k"], kw.pop("top_k_name"), 1, TOP_K_MAX)
        check_range(kw["offset"], "offset", 0, OFFSET_MAX)
        return cls(seeds=seeds, settings=settings, **kw)


def _steering(index: OpenIndex, ask: _Ask) -> str | None:
    """The seeds and negatives checked against the corpus (a 404 for one it lacks, or one after a
    tagged question's ceiling), and the text the ranking leans to: the seeds' ``facet`` sentences
    (``None`` without a facet; empty when the seeds have none)."""
    seeds, negatives = ask.seeds, ask.negatives
    papers = within_cutoff(index.store.get_papers(list(seeds)))  # a tagged question's ceiling
    missing = [s for s in seeds if s not in papers]
    if missing:
        raise NotFound(f"arxiv_id: {', '.join(missing)} not in this corpus")
    ruled_out = within_cutoff(index.store.get_papers(list(negatives))) if negatives else {}
    absent = [n for n in negatives if n not in ruled_out]
    if absent:
        raise NotFound(f"negative_ids: {', '.join(absent)} not in this corpus")
    if ask.facet is None:
        return None
    return " ".join(facet_text(papers[s].abstract or papers[s].title or "", ask.facet) for s in seeds)


def _ranked(index: OpenIndex, ask: _Ask, toward: str | None) -> Outcome:
    """The page for ``ask`` on ``index``, leaning to ``toward`` (`_steering`); without the lean and
    with a note when the query encoder (a model server) cannot encode it."""
    notes: list[str] = []
    try:

        def rank(within: SearchFilters | None, steer: str | None = toward or None) -> SearchResult:
            return index.backend.similar(
                ask.seeds,
                top_k=ask.top_k,
                offset=ask.offset,
                filters=within,
                deadline=deadline_for(ask.settings),
                negative_ids=ask.negatives,
                toward=steer,
            )

        try:
            result = rank(_within_cutoff(index, ask.filters, rank))
        except EncoderUnavailable as exc:  # a model server down: the seeds' vectors still rank
            unsteered = partial(rank, steer=None)
            result = unsteered(_within_cutoff(index, ask.filters, unsteered))
            notes.append(f"facet: ignored, the query encoder is unavailable ({exc})")
    except NoVectors as exc:
        raise Conflict(str(exc)) from exc
    except UnknownPapers as exc:  # in the store but not the index: a snapshot at odds with itself
        raise NotFound(f"arxiv_id / negative_ids: {', '.join(exc.args[0])} not in this index") from exc
    except DeadlineExceeded as exc:
        raise OverBudget(f"request time budget exhausted while ranking similar papers ({exc})") from exc
    hits = hydrate(index, "", list(result.hits), contents=False)
    timings = {k: round(float(v), 3) for k, v in result.timings_ms.items()}
    label = "similar to " + ", ".join(ask.seeds) + (f" ({ask.facet})" if ask.facet else "")
    return Outcome(
        query=label + (", not " + ", ".join(ask.negatives) if ask.negatives else ""),
        hits=hits,
        total_count=result.total_count,
        timings_ms=timings,
        snapshot=Path(index.path).name,
        notes=notes,
    )


def _answer(index: OpenIndex, ask: _Ask) -> Outcome:
    return _ranked(index, ask, _steering(index, ask))


def similar(
    holder: IndexHolder,
    seeds: tuple[str, ...],
    *,
    settings: Settings,
    top_k: int = 10,
    offset: int = 0,
    filters: SearchFilters | None = None,
    top_k_name: str = "top_k",
    facet: str | None = None,
    negatives: tuple[str, ...] = (),
) -> Outcome:
    """The papers most similar to ``seeds`` (canonical ids, `seed_ids`) on the snapshot ``holder``
    serves now, leaning to their ``facet`` sentences (`check_facet`) and away from ``negatives``
    (`negative_ids`), as an `Outcome` whose ``query`` names the seeds."""
    ask = _Ask.of(
        seeds, settings, top_k=top_k, offset=offset, filters=filters, top_k_name=top_k_name,
        facet=facet, negatives=negatives,
    )  # fmt: skip
    with holder.acquire() as index:
        return _answer(index, ask)


async def similar_async(
    holder: IndexHolder,
    seeds: tuple[str, ...],
    *,
    settings: Settings,
    top_k: int = 10,
    offset: int = 0,
    filters: SearchFilters | None = None,
    top_k_name: str = "top_k",
    facet: str | None = None,
    negatives: tuple[str, ...] = (),
) -> Outcome:
    """`similar` on the event loop (the network fronts'), its compute in worker threads (the compute
    slots). With a ``facet`` on a snapshot whose query encoder is a model server, the facet text's
    vector is awaited between two slots, outside both (`openxiv.service.search_async.prefetch_texts`,
    as a search's query vector is): the seeds checked and the text found in one, the ranking in the
    other, which finds the vector (or the failure: the answer without the lean, as `similar`'s)."""
    ask = _Ask.of(
        seeds, settings, top_k=top_k, offset=offset, filters=filters, top_k_name=top_k_name,
        facet=facet, negatives=negatives,
    )  # fmt: skip
    with holder.acquire() as index:
        if facet is None:
            return await anyio.to_thread.run_sync(_answer, index, ask)
        toward = await anyio.to_thread.run_sync(_steering, index, ask)
        if toward:
            await prefetch_texts(index, [toward], settings)
        return await anyio.to_thread.run_sync(_ranked, index, ask, toward)


def similar_response(out: Outcome, warnings: list[str] | None = None) -> SearchResponse:
    """An `Outcome` of `similar` in the DeepXiv ``retrieve`` shape (no ``contents``)."""
    hits = [to_deepxiv_hit(h, contents=False) for h in out.hits]
    said = [*(warnings or []), *out.notes]
    return SearchResponse(total_count=out.total_count, result=hits, warnings=said or None)
