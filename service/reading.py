"""The reading use case: one paper, one of its sections, or its whole text (no HTTP here).

Every front reads through it: ``GET /arxiv/?type=head|brief|section|raw|preview|json`` and
``/v1/papers/...`` (the HTTP routes), the web page, the MCP tools and ``openxiv paper`` (through
`Library`). `read` borrows the snapshot the holder serves now and answers one operation as its
response model (`openxiv.service.views` builds them); `load_paper` and `find_section` are its steps,
each an `ApiError` naming the problem (a malformed id is a 400, an unknown paper or section a 404
that says what exists).
"""

from __future__ import annotations

import re
import unicodedata
from typing import Any

from openxiv.corpus.ids import InvalidArxivId, canonical_id
from openxiv.corpus.records import Paper, Section
from openxiv.indexer.snapshot import OpenIndex
from openxiv.service import views
from openxiv.service.errors import BadRequest, NotFound
from openxiv.service.holder import IndexHolder
from openxiv.service.models import PreviewResponse, RawResponse, SectionResponse, V1Paper, V1Section
from openxiv.service.text import match_section, section_label, with_abstract
from openxiv.service.titles import titled

__all__ = [
    "KINDS",
    "PREVIEW_CHARS",
    "check_id",
    "find_section",
    "load_paper",
    "paper_op",
    "raw_markdown",
    "read",
    "v1_paper",
    "v1_section",
]

KINDS = ("head", "brief", "section", "raw", "preview", "json")
"""The reading operations of ``GET /arxiv/?type=...`` (``retrieve`` is a search)."""
_INDEX = re.compile(r"-?[0-9]+")
PREVIEW_CHARS = 10_000
"""What ``preview`` shows unless asked otherwise."""


def check_id(arxiv_id: str) -> str:
    """The canonical id, or a `BadRequest` naming the malformed id. The id is NFKC-normalised first:
    full-width digits and letters (``１５０２.０３１６７``, what some input methods type) are the
    ASCII ones; other digits (``١٥٠٢``) are refused."""
    text = unicodedata.normalize("NFKC", arxiv_id).strip()
    if not text.isascii():
        raise BadRequest(f"arxiv_id: {arxiv_id!r} is not an arXiv id (ids are written in ASCII)")
    try:
        return canonical_id(text)
    except InvalidArxivId as exc:
        raise BadRequest(f"arxiv_id: {arxiv_id!r} is not an arXiv id ({exc})") from exc


def load_paper(index: OpenIndex, arxiv_id: str) -> Paper:
    canonical = check_id(arxiv_id)
    paper = index.store.get_paper(canonical)
    if paper is None:
        raise NotFound(f"paper {canonical} is not in this corpus")
    return titled(index.store, paper)


def find_section(index: OpenIndex, paper: Paper, name: str) -> Section:
    """The section ``name`` asks for (`openxiv.service.text.match_section` over the abstract and the
    paper's sections: printed numbers and names first), else the one whose ``idx`` it is (0-based;
    the abstract's is -1)."""
    sections = index.store.sections(paper.arxiv_id)
    listed = with_abstract(paper, sections)
    pos = match_section(name, [s.name for s in listed], [s.number for s in listed], by_index=False)
    if pos is not None:
        return listed[pos]
    wanted = name.strip()
    if _INDEX.fullmatch(wanted):
        for s in listed:
            if s.idx == int(wanted):
                return s
    if not sections:
        what = "only its abstract (section=Abstract)" if listed else "no abstract either"
        raise NotFound(f"paper {paper.arxiv_id} has no full text in this corpus, so no sections; {what}")
    names = "; ".join(s.name for s in sections) + ("; and Abstract" if len(listed) > len(sections) else "")
    raise NotFound(f"paper {paper.arxiv_id} has no section {name!r}; its sections are: {names}")


def raw_markdown(paper: Paper, sections: list[Section]) -> str:
    """The paper as markdown: ``# title``, ``## Abstract``, then ``## <number> <name>`` per section."""
    parts = [f"# {paper.title or paper.arxiv_id}"]
    if paper.abstract:
        parts.append(f"## Abstract\n\n{paper.abstract.strip()}")
    for s in sections:
        heading = section_label(s.number, s.name)
        parts.append(f"## {heading}\n\n{s.text.strip()}")
    return "\n\n".join(parts) + "\n"


def paper_op(index: OpenIndex, kind: str, arxiv_id: str, section: str | None, characters: int) -> Any:
    """One paper operation (``head``, ``brief``, ``json``, ``section``, ``raw``, ``preview``) on an
    open snapshot, as its response model."""
    paper = load_paper(index, arxiv_id)
    if kind == "head":
        return views.head(paper, index.store.sections(paper.arxiv_id))
    if kind == "brief":  # the sections only make the tldr of a paper without an abstract
        return views.brief(paper, [] if paper.abstract else index.store.sections(paper.arxiv_id))
    if kind == "json":
        return views.paper_json(paper, index.store.sections(paper.arxiv_id))
    if kind == "section":
        if section is None or not section.strip():
            raise BadRequest("section: required for type=section (a section name or 0-based index)")
        found = find_section(index, paper, section)
        return SectionResponse(arxiv_id=paper.arxiv_id, name=found.name, idx=found.idx, content=found.text)
    raw = raw_markdown(paper, index.store.sections(paper.arxiv_id))
    if kind == "raw":
        return RawResponse(arxiv_id=paper.arxiv_id, raw=raw)
    return PreviewResponse(
        arxiv_id=paper.arxiv_id,
        content=raw[:characters],
        is_truncated=len(raw) > characters,
        total_characters=len(raw),
    )


def read(
    holder: IndexHolder, kind: str, arxiv_id: str, section: str | None = None, characters: int = PREVIEW_CHARS
) -> Any:
    """`paper_op` on the snapshot ``holder`` serves now: shared by ``GET /arxiv/``, the MCP tools
    and ``openxiv paper``."""
    with holder.acquire() as index:
        return paper_op(index, kind, arxiv_id, section, characters)


def v1_paper(holder: IndexHolder, arxiv_id: str) -> V1Paper:
    """``GET /v1/papers/{id}``: the paper's metadata and section list."""
    with holder.acquire() as index:
        paper = load_paper(index, arxiv_id)
        sections = index.store.sections(paper.arxiv_id)
    return views.v1_paper(paper, sections)


def v1_section(holder: IndexHolder, arxiv_id: str, name: str) -> V1Section:
    """``GET /v1/papers/{id}/sections/{name}``: one section's text."""
    with holder.acquire() as index:
        paper = load_paper(index, arxiv_id)
        found = find_section(index, paper, name)
    return views.v1_section(paper, found)
