"""The references use case: a paper's bibliography, and the papers that cite it (no HTTP here).

Every front answers through it: ``GET /arxiv/?type=references|cited_by`` and
``/v1/papers/{id}/references|cited_by`` (HTTP), the MCP tools ``references`` and ``cited_by``,
``openxiv paper ID --references/--cited-by`` and the web page's ``expand``. It reads the snapshot's
reference table (`openxiv.indexer.tables.references`, written at build) and the titles of the papers
that are in the corpus from the snapshot's store; a reference outside the corpus says so
(``in_corpus: false``) and keeps its printed text.

Bibliographies come from unArXive inputs (as they come) and from the plain texts and PDFs, whose
reference lists the readers parse (`openxiv.corpus.bibliography`); the index build resolves each
entry to a corpus paper by the arXiv id it prints, its DOI or its title and year
(`openxiv.indexer.building.resolve`), and keeps the body sentence that cites it (``context``). A
corpus paper without one has an empty list and ``has_bibliography: false``; a snapshot built before
references were stored is a 409 that names it and says to rebuild. Counts are within this corpus:
``cited_by`` lists the corpus papers whose bibliography the corpus holds, never the wider world.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from openxiv.indexer import layout
from openxiv.indexer.snapshot import OpenIndex
from openxiv.indexer.tables.references import ReferenceTable
from openxiv.service.errors import Conflict, NotFound
from openxiv.service.experiments.context import beyond_cutoff, within_cutoff
from openxiv.service.experiments.context import current as current_call
from openxiv.service.holder import IndexHolder
from openxiv.service.reading import check_id
from openxiv.service.views import abs_url

__all__ = [
    "REF_KINDS",
    "CitedByResponse",
    "CitingPaper",
    "ReferenceOut",
    "ReferencesResponse",
    "before_cutoff",
    "cited_by",
    "cited_by_text",
    "reference_op",
    "references",
    "references_text",
]

REF_KINDS = ("references", "cited_by")
"""The operations of ``GET /arxiv/?type=...`` answered here."""

NO_BIBLIOGRAPHY = (
    "this paper has no bibliography in the corpus: references come from full texts (unArXive, plain "
    "text, PDF) with a reference list (docs/corpus.md, «References»)"
)
CITED_BY_NOTE = (
    "counted within this corpus: the corpus papers whose bibliography (unArXive, plain text or PDF) "
    "resolves an entry to this paper"
)


class ReferenceOut(BaseModel):
    position: int = Field(description="0-based place in the paper's bibliography.")
    arxiv_id: str | None = Field(
        description="The cited paper's arXiv id; null when the entry resolves to none."
    )
    in_corpus: bool = Field(description="The cited paper is in this corpus (then `title` is its title).")
    title: str | None = Field(description="The cited paper's title when it is in the corpus, else null.")
    text: str | None = Field(description="The entry as the paper prints it.")
    url: str | None = Field(description="arXiv abstract page of the cited paper, when resolved.")
    context: str | None = Field(
        default=None, description="The sentence of the citing paper's body that cites this entry, when found."
    )


class ReferencesResponse(BaseModel):
    arxiv_id: str
    title: str | None
    has_bibliography: bool = Field(description="False: the corpus holds no bibliography of this paper.")
    count: int = Field(description="Entries in the bibliography.")
    resolved: int = Field(description="Entries that resolve to an arXiv id.")
    in_corpus: int = Field(description="Resolved entries whose paper is in this corpus.")
    references: list[ReferenceOut]
    note: str | None = None


class CitingPaper(BaseModel):
    arxiv_id: str
    title: str | None
    url: str
    context: str | None = Field(
        default=None, description="The sentence of the citing paper that cites this one, when found."
    )


class CitedByResponse(BaseModel):
    arxiv_id: str
    title: str | None = Field(description="Null when the cited paper is not in this corpus.")
    in_corpus: bool
    count: int = Field(description="Corpus papers citing it: an in-corpus count, not a global one.")
    cited_by: list[CitingPaper] = Field(description="Corpus papers whose bibliography cites it, in id order.")
    note: str | None = Field(
        default=None, description="Counted within this corpus, from the bibliographies it holds."
    )


def table_of(index: OpenIndex) -> ReferenceTable:
    """The snapshot's reference table; `Conflict` (409) naming a snapshot built before them."""
    table = ReferenceTable.load(Path(index.path) / layout.REFERENCES)
    if table is None or index.manifest.references is None:
        raise Conflict(
            f"snapshot {Path(index.path).name} was built before references were stored: it has no "
            f"references table; rebuild it with `openxiv index build` to serve references and cited_by"
        )
    return table


def _titles(index: OpenIndex, ids: list[str]) -> dict[str, str | None]:
    """The titles of the corpus papers ``ids``; a paper after a tagged question's ceiling is not one."""
    papers = within_cutoff(index.store.get_papers(ids)) if ids else {}
    return {aid: p.title for aid, p in papers.items()}


def before_cutoff(index: OpenIndex, ids: list[str]) -> list[str]:
    """``ids`` without the papers after the tagged question's date ceiling (each counted as a leak)."""
    state = current_call()
    if state is None or state.ceiling is None or not ids:
        return ids
    papers = index.store.get_papers(ids)
    kept = within_cutoff(papers)
    return [aid for aid in ids if aid not in papers or aid in kept]


def references(index: OpenIndex, arxiv_id: str) -> ReferencesResponse:
    """The bibliography of a corpus paper, each entry with its title when its paper is in the corpus."""
    table = table_of(index)
    canonical = check_id(arxiv_id)
    paper = index.store.get_paper(canonical)
    if paper is None or beyond_cutoff(canonical, paper.date):
        raise NotFound(f"paper {canonical} is not in this corpus")
    entries = table.entries(canonical) or []
    titles = _titles(index, sorted({c for c, _, _ in entries if c}))
    refs = [
        ReferenceOut(
            position=i,
            arxiv_id=cited,
            in_corpus=cited in titles,
            title=titles.get(cited) if cited else None,
            text=text,
            url=abs_url(cited) if cited else None,
            context=context,
        )
        for i, (cited, text, context) in enumerate(entries)
    ]
    return ReferencesResponse(
        arxiv_id=canonical,
        title=paper.title,
        has_bibliography=bool(entries),
        count=len(refs),
        resolved=sum(1 for r in refs if r.arxiv_id),
        in_corpus=sum(1 for r in refs if r.in_corpus),
        references=refs,
        note=None if entries else NO_BIBLIOGRAPHY,
    )


def cited_by(index: OpenIndex, arxiv_id: str) -> CitedByResponse:
    """The corpus papers that cite ``arxiv_id`` (which need not be in the corpus itself)."""
    table = table_of(index)
    canonical = check_id(arxiv_id)
    paper = index.store.get_paper(canonical)
    if paper is not None and beyond_cutoff(canonical, paper.date):
        paper = None
    citing = before_cutoff(index, table.cited_by(canonical))
    if paper is None and not citing:
        raise NotFound(f"paper {canonical} is not in this corpus and no paper of it cites it")
    titles = _titles(index, citing)
    return CitedByResponse(
        arxiv_id=canonical,
        title=paper.title if paper is not None else None,
        in_corpus=paper is not None,
        count=len(citing),
        cited_by=[
            CitingPaper(
                arxiv_id=c, title=titles.get(c), url=abs_url(c), context=table.context_of(c, canonical)
            )
            for c in citing
        ],
        note=CITED_BY_NOTE,
    )


def reference_op(
    holder: IndexHolder, kind: Literal["references", "cited_by"] | str, arxiv_id: str
) -> ReferencesResponse | CitedByResponse:
    """``references`` or ``cited_by`` on the snapshot ``holder`` serves now (every front calls this)."""
    with holder.acquire() as index:
        return references(index, arxiv_id) if kind == "references" else cited_by(index, arxiv_id)


def references_text(r: ReferencesResponse) -> str:
    """The bibliography for a reader (MCP tool result, ``openxiv paper --references``): one line per
    entry, the title and id of a paper in the corpus first, else the printed text."""
    head = f"References of {r.arxiv_id}: {r.title or ''}".rstrip()
    if not r.has_bibliography:
        return f"{head}\n{r.note}"
    lines = [
        head,
        f"{r.count} entries, {r.resolved} with an arXiv id, {r.in_corpus} of them in this corpus",
    ]
    for ref in r.references:
        if ref.in_corpus:
            lines.append(f"[{ref.position}] {ref.title} (arXiv {ref.arxiv_id}, in corpus)")
        elif ref.arxiv_id:
            lines.append(
                f"[{ref.position}] arXiv {ref.arxiv_id} (not in corpus): {ref.text or ''}".rstrip(": ")
            )
        else:
            lines.append(f"[{ref.position}] {ref.text}")
        if ref.context:
            lines.append(f"    cited as: {ref.context}")
    return "\n".join(lines)


def cited_by_text(r: CitedByResponse) -> str:
    """The citing papers for a reader: one line each, title and id."""
    where = "" if r.in_corpus else " (not in this corpus)"
    lines = [f"Cited by {r.count} paper(s) of this corpus: {r.arxiv_id}{where} {r.title or ''}".rstrip()]
    for c in r.cited_by:
        lines.append(f"- {c.title} (arXiv {c.arxiv_id})")
        if c.context:
            lines.append(f"    cited as: {c.context}")
    if r.note:
        lines.append(f"({r.note})")
    return "\n".join(lines)
