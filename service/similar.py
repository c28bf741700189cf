"""The similar-papers use case: papers nearest to one or more seed papers' own vectors (no HTTP here).

Every front calls `similar`: ``GET /arxiv/?type=similar`` (the DeepXiv ``retrieve`` shape) and
``GET /v1/similar`` (the ``/v1/search`` shape), the MCP tool ``similar_papers`` and ``openxiv
similar``. The ranking is the backend's (`openxiv.indexer.backend.SearchBackend.similar`: the
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
from functools import partial
from pathlib import Path

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
from openxiv.service.views import to_deepxiv_hit

__all__ = ["FACETS", "MAX_SEEDS", "check_facet", "negative_ids", "seed_ids", "similar", "similar_response"]

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
    check_range(top_k, top_k_name, 1, TOP_K_MAX)
    check_range(offset, "offset", 0, OFFSET_MAX)
    with holder.acquire() as index:
        papers = within_cutoff(index.store.get_papers(list(seeds)))  # a tagged question's ceiling
        missing = [s for s in seeds if s not in papers]
        if missing:
            raise NotFound(f"arxiv_id: {', '.join(missing)} not in this corpus")
        ruled_out = within_cutoff(index.store.get_papers(list(negatives))) if negatives else {}
        absent = [n for n in negatives if n not in ruled_out]
        if absent:
            raise NotFound(f"negative_ids: {', '.join(absent)} not in this corpus")
        toward = None
        if facet is not None:
            toward = " ".join(facet_text(papers[s].abstract or papers[s].title or "", facet) for s in seeds)
        notes: list[str] = []
        try:

            def rank(within: SearchFilters | None, steer: str | None = toward or None) -> SearchResult:
                return index.backend.similar(
                    seeds,
                    top_k=top_k,
                    offset=offset,
                    filters=within,
                    deadline=deadline_for(settings),
                    negative_ids=negatives,
                    toward=steer,
                )

            try:
                result = rank(_within_cutoff(index, filters, rank))
            except EncoderUnavailable as exc:  # a model server down: the seeds' vectors still rank
                unsteered = partial(rank, steer=None)
                result = unsteered(_within_cutoff(index, filters, unsteered))
                notes.append(f"facet: ignored, the query encoder is unavailable ({exc})")
        except NoVectors as exc:
            raise Conflict(str(exc)) from exc
        except UnknownPapers as exc:  # in the store but not the index: a snapshot at odds with itself
            raise NotFound(f"arxiv_id / negative_ids: {', '.join(exc.args[0])} not in this index") from exc
        except DeadlineExceeded as exc:
            raise OverBudget(f"request time budget exhausted while ranking similar papers ({exc})") from exc
        hits = hydrate(index, "", list(result.hits), contents=False)
        snapshot = Path(index.path).name
    timings = {k: round(float(v), 3) for k, v in result.timings_ms.items()}
    label = "similar to " + ", ".join(seeds) + (f" ({facet})" if facet else "")
    return Outcome(
        query=label + (", not " + ", ".join(negatives) if negatives else ""),
        hits=hits,
        total_count=result.total_count,
        timings_ms=timings,
        snapshot=snapshot,
        notes=notes,
    )


def similar_response(out: Outcome, warnings: list[str] | None = None) -> SearchResponse:
    """An `Outcome` of `similar` in the DeepXiv ``retrieve`` shape (no ``contents``)."""
    hits = [to_deepxiv_hit(h, contents=False) for h in out.hits]
    said = [*(warnings or []), *out.notes]
    return SearchResponse(total_count=out.total_count, result=hits, warnings=said or None)
