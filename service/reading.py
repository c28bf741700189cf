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
from openxiv.service.citations import citation_counts
from openxiv.service.errors import BadRequest, NotFound
from openxiv.service.experiments.context import beyond_cutoff
from openxiv.service.holder import IndexHolder
from openxiv.service.models import PreviewResponse, RawResponse, SectionResponse, V1Paper, V1Section
from openxiv.service.text import (
    asked_index,
    match_section,
    section_label,
    served_text,
    sub_sections,
    with_abstract,
)
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
    if paper is None or beyond_cutoff(canonical, paper.date):
        raise NotFound(f"paper {canonical} is not in this corpus")
    return titled(index.store, paper)


def find_section(index: OpenIndex, paper: Paper, name: str) -> Section:
    """The section ``name`` asks for (`openxiv.service.text.match_section` over the abstract and the
    paper's sections: printed numbers and names first); a printed number that only has sub-sections
    (``4`` where the paper prints 4.1 and 4.2) serves them together (`_together`); a 0-based ``idx``
    (the abstract's is -1) only when asked for as one (``idx:4``, ``#4``), or as a bare integer no printed
    number can mean (negative, or on a paper that prints no section numbers at all). Anything else is a 404 listing what exists."""
    sections = index.store.sections(paper.arxiv_id)
    listed = with_abstract(paper, sections)
    numbers = [s.number for s in listed]
    pos = match_section(name, [s.name for s in listed], numbers, by_index=False)
    if pos is not None:
        return listed[pos]
    wanted = name.strip()
    group = sub_sections(wanted, numbers)
    if group:
        return _together(wanted.rstrip(".):"), [listed[i] for i in group])
    idx = asked_index(wanted)
    if idx is None and _INDEX.fullmatch(wanted) and (int(wanted) < 0 or not any(numbers)):
        idx = int(wanted)  # no printed number can mean it: -1 (the abstract), or a paper that numbers none
    for s in listed if idx is not None else ():
        if s.idx == idx:
            return s
    if not sections:
        what = "only its abstract (section=Abstract)" if listed else "no abstract either"
        raise NotFound(f"paper {paper.arxiv_id} has no full text in this corpus, so no sections; {what}")
    if _INDEX.fullmatch(wanted) and any(numbers):
        printed = ", ".join(n for n in numbers if n)
        raise NotFound(
            f"paper {paper.arxiv_id} prints no section numbered {wanted!r}; its printed numbers are: "
            f"{printed} (a 0-based position is asked as idx:{wanted})"
        )
    names = "; ".join(s.name for s in sections) + ("; and Abstract" if len(listed) > len(sections) else "")
    raise NotFound(f"paper {paper.arxiv_id} has no section {name!r}; its sections are: {names}")


def _together(number: str, parts: list[Section]) -> Section:
    """The sub-sections printed under ``number`` as one section: numbered ``number``, named after its
    direct sub-sections, its text each part under its printed heading; ``idx`` is the first part's."""
    depth = number.count(".") + 1
    direct = [p for p in parts if p.number is not None and p.number.rstrip(".").count(".") == depth] or parts
    text = "\n\n".join(f"{section_label(p.number, p.name)}\n\n{p.text.strip()}" for p in parts)
    return Section(idx=parts[0].idx, name="; ".join(p.name for p in direct), text=text, number=number)


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
        sections = [] if paper.abstract else index.store.sections(paper.arxiv_id)
        return views.brief(paper, sections, citation_counts(index, [paper.arxiv_id])[paper.arxiv_id])
    if kind == "json":
        return views.paper_json(paper, index.store.sections(paper.arxiv_id))
    if kind == "section":
        if section is None or not section.strip():
            raise BadRequest("section: required for type=section (a printed number, a name, or idx:N)")
        found = find_section(index, paper, section)
        return SectionResponse(
            arxiv_id=paper.arxiv_id, name=found.name, idx=found.idx, number=found.number, content=found.text
        )
    raw = served_text(
        raw_markdown(paper, index.store.sections(paper.arxiv_id))
    )  # a preview counts what it serves
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
