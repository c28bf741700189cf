"""A snapshot read in-process, without HTTP: what the MCP server and ``openxiv search``/``paper`` use.

`Library` wraps an `IndexHolder` (the one the HTTP service uses, so the same borrowing and reload
rules apply) and calls the service's use cases: `openxiv.service.search.deepxiv_search` (the ``POST
/search`` model) and `openxiv.service.reading.read` (the ``GET /arxiv/?type=...`` models), `openxiv.service.similar` and
`openxiv.service.find`. Parameters are checked by
`openxiv.service.params`; every problem is an `ApiError` (`BadRequest`, `NotFound`, ...) whose
message names the parameter, which the callers turn into a tool error or a CLI error.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel

from openxiv.corpus.settings.model import Settings
from openxiv.service.bibtex import BibtexResponse, bibtex
from openxiv.service.errors import BadRequest
from openxiv.service.find import FIND_TOP_K, find
from openxiv.service.holder import IndexHolder
from openxiv.service.models import SearchResponse
from openxiv.service.navigation import (
    AuthorPapersResponse,
    FacetsResponse,
    TitleMatchResponse,
    author_view,
    facets,
    match_title,
)
from openxiv.service.params import (
    OFFSET_MAX,
    TOP_K_MAX,
    FilterParams,
    check_mode,
    check_queries,
    check_range,
    check_sort,
    split_list,
)
from openxiv.service.passages import PassagesResponse, paper_id_list, passages
from openxiv.service.reading import PREVIEW_CHARS, read
from openxiv.service.references import CitedByResponse, ReferencesResponse, reference_op
from openxiv.service.search import deepxiv_search
from openxiv.service.search_async import deepxiv_search_async
from openxiv.service.similar import check_facet, seed_ids, similar, similar_async, similar_response
from openxiv.service.similar import negative_ids as ruled_out
from openxiv.service.spec import SearchSpec
from openxiv.service.tool_models import FindResponse

__all__ = ["Library"]

NO_FILTERS = FilterParams()


class Library:
    """One index root served in-process. `load` opens ``CURRENT``; `holder` reloads like the server."""

    def __init__(self, index_root: Path, settings: Settings, holder: IndexHolder | None = None) -> None:
        self.settings = settings
        self.holder = holder or IndexHolder(Path(index_root), settings)

    def load(self) -> None:
        self.holder.load()

    def close(self) -> None:
        self.holder.close()

    @property
    def snapshot(self) -> str | None:
        return self.holder.snapshot

    def search(
        self,
        query: str,
        *,
        top_k: int = 10,
        offset: int = 0,
        filters: FilterParams = NO_FILTERS,
        mode: str | None = None,
        contents: bool = True,
        top_k_name: str = "top_k",
        fine_rerank: bool = False,
        sort: str | None = None,
    ) -> SearchResponse:
        """One query in the ``POST /search`` response shape. ``top_k_name`` is the caller's name for
        the page size (the MCP tool calls it ``size``), so errors name what the caller sent."""
        spec = self._spec(query, top_k, offset, filters, mode, contents, top_k_name, fine_rerank, sort)
        response, _ = deepxiv_search(self.holder, spec, settings=self.settings)
        return response

    async def asearch(
        self,
        query: str,
        *,
        top_k: int = 10,
        offset: int = 0,
        filters: FilterParams = NO_FILTERS,
        mode: str | None = None,
        contents: bool = True,
        top_k_name: str = "top_k",
        fine_rerank: bool = False,
        sort: str | None = None,
    ) -> SearchResponse:
        """`search` on an event loop (the MCP server's): its compute in a worker thread, a model server
        awaited outside it (`openxiv.service.search_async`)."""
        spec = self._spec(query, top_k, offset, filters, mode, contents, top_k_name, fine_rerank, sort)
        response, _ = await deepxiv_search_async(self.holder, spec, settings=self.settings)
        return response

    def _spec(
        self,
        query: str,
        top_k: int,
        offset: int,
        filters: FilterParams,
        mode: str | None,
        contents: bool,
        top_k_name: str,
        fine_rerank: bool,
        sort: str | None = None,
    ) -> SearchSpec:
        check_range(top_k, top_k_name, 1, TOP_K_MAX)
        check_range(offset, "offset", 0, OFFSET_MAX)
        queries = check_queries(query, self.settings.max_query_chars)
        return SearchSpec(
            queries=tuple(queries),
            top_k=top_k,
            offset=offset,
            filters=filters.build(),
            mode=check_mode(mode),
            contents=contents,
            fine_rerank=fine_rerank,
            sort=check_sort(sort),
        )

    def paper(
        self, kind: str, arxiv_id: str, section: str | None = None, characters: int = PREVIEW_CHARS
    ) -> Any:
        """``head``, ``brief``, ``section``, ``raw``, ``preview`` or ``json`` of one paper (its model)."""
        if not arxiv_id or not arxiv_id.strip():
            raise BadRequest("arxiv_id: required (an arXiv id such as 1706.03762)")
        out: BaseModel = read(self.holder, kind, arxiv_id, section, characters)
        return out

    def references(self, kind: str, arxiv_id: str) -> ReferencesResponse | CitedByResponse:
        """``references`` or ``cited_by`` of one paper (`openxiv.service.references`)."""

        if not arxiv_id or not arxiv_id.strip():
            raise BadRequest("arxiv_id: required (an arXiv id such as 2212.11790)")
        return reference_op(self.holder, kind, arxiv_id)

    def similar(
        self,
        arxiv_ids: str | list[str],
        *,
        top_k: int = 10,
        offset: int = 0,
        filters: FilterParams = NO_FILTERS,
        top_k_name: str = "top_k",
        facet: str | None = None,
        negative_ids: str | list[str] | None = None,
    ) -> SearchResponse:
        """Papers similar to the seeds (`openxiv.service.similar`) in the ``POST /search`` shape,
        leaning to their ``facet`` sentences and away from ``negative_ids`` when given."""
        seeds, kw = self._similar_args(arxiv_ids, top_k, offset, filters, top_k_name, facet, negative_ids)
        return similar_response(similar(self.holder, seeds, settings=self.settings, **kw))

    async def asimilar(
        self,
        arxiv_ids: str | list[str],
        *,
        top_k: int = 10,
        offset: int = 0,
        filters: FilterParams = NO_FILTERS,
        top_k_name: str = "top_k",
        facet: str | None = None,
        negative_ids: str | list[str] | None = None,
    ) -> SearchResponse:
        """`similar` on an event loop (the MCP server's): its compute in worker threads, a model
        server (a facet's vector) awaited outside them (`openxiv.service.similar.similar_async`)."""
        seeds, kw = self._similar_args(arxiv_ids, top_k, offset, filters, top_k_name, facet, negative_ids)
        return similar_response(await similar_async(self.holder, seeds, settings=self.settings, **kw))

    @staticmethod
    def _similar_args(
        arxiv_ids: str | list[str],
        top_k: int,
        offset: int,
        filters: FilterParams,
        top_k_name: str,
        facet: str | None,
        negative_ids: str | list[str] | None,
    ) -> tuple[tuple[str, ...], dict[str, Any]]:
        seeds = seed_ids(arxiv_ids)
        kw = {
            "top_k": top_k,
            "offset": offset,
            "filters": filters.build(),
            "top_k_name": top_k_name,
            "facet": check_facet(facet),
            "negatives": ruled_out(negative_ids, seeds),
        }
        return seeds, kw

    def find(self, arxiv_id: str, query: str, top_k: int | None = None) -> FindResponse:
        """The best passages of one paper for ``query`` (`openxiv.service.find`)."""
        if not arxiv_id or not arxiv_id.strip():
            raise BadRequest("arxiv_id: required (an arXiv id such as 1706.03762)")
        top = FIND_TOP_K if top_k is None else top_k
        return find(self.holder, arxiv_id, query, max_query_chars=self.settings.max_query_chars, top_k=top)

    def passages(
        self,
        query: str,
        *,
        top_k: int = 10,
        offset: int = 0,
        filters: FilterParams = NO_FILTERS,
        paper_ids: str | list[str] | None = None,
        top_k_name: str = "top_k",
    ) -> PassagesResponse:
        """The top passages across papers for ``query`` (`openxiv.service.passages`)."""
        return passages(
            self.holder,
            query,
            settings=self.settings,
            top_k=top_k,
            offset=offset,
            filters=filters.build(),
            paper_ids=paper_id_list(paper_ids),
            top_k_name=top_k_name,
        )

    def facets(
        self, query: str | None, *, filters: FilterParams = NO_FILTERS, top_authors: int = 10
    ) -> FacetsResponse:
        """Counts by year, month, category and top authors (`openxiv.service.navigation.facets`)."""
        return facets(
            self.holder, query, settings=self.settings, filters=filters.build(), top_authors=top_authors
        )

    def match_title(self, title: str) -> TitleMatchResponse:
        """The paper of a pasted title, with a confidence (`openxiv.service.navigation.match_title`)."""
        return match_title(self.holder, title, settings=self.settings)

    def author(self, name: str, *, top_k: int = 20, offset: int = 0) -> AuthorPapersResponse:
        """An author's papers, newest first (`openxiv.service.navigation.author_view`)."""
        return author_view(self.holder, name, top_k=top_k, offset=offset)

    def bibtex(self, arxiv_ids: str | list[str]) -> BibtexResponse:
        """BibTeX entries of papers (`openxiv.service.bibtex`)."""
        return bibtex(self.holder, split_list(arxiv_ids, "arxiv_id"))
