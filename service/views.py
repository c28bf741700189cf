"""Every mapping of a paper record to an API model, written once (no HTTP, no store access here).

Routes read what a response needs from the store (the paper, its sections) and hand it to one
function here; the DeepXiv-compatible shapes (`deepxiv_hit`, `head`, `brief`, `paper_json`) and the
v1 shapes (`v1_hit`, `v1_paper`, `v1_section`) are all built from the same `Paper`, so a metadata
field added to the record reaches every answer that declares it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from openxiv.corpus.records import PaperView, SectionView
from openxiv.service.models import (
    Author,
    BriefResponse,
    Content,
    HeadResponse,
    HeadSection,
    Hit,
    PaperJson,
    V1Hit,
    V1Paper,
    V1Section,
    V1SectionSummary,
)
from openxiv.service.text import tldr, token_count

if TYPE_CHECKING:
    from openxiv.service.core import ResolvedHit

__all__ = [
    "abs_url",
    "authors_of",
    "brief",
    "head",
    "iso",
    "paper_json",
    "paper_tldr",
    "pdf_url",
    "to_deepxiv_hit",
    "to_v1_hit",
    "v1_paper",
    "v1_section",
]


def abs_url(arxiv_id: str) -> str:
    return f"https://arxiv.org/abs/{arxiv_id}"


def pdf_url(arxiv_id: str) -> str:
    return f"https://arxiv.org/pdf/{arxiv_id}"


def authors_of(paper: PaperView) -> list[Author]:
    return [Author(name=a) for a in paper.authors]


def iso(paper: PaperView) -> str | None:
    d = paper.date
    return d.isoformat() if d else None


def paper_tldr(paper: PaperView, sections: list[SectionView] | None = None) -> str | None:
    """Extractive tldr: the abstract's first real sentence, else that of the first section that
    has one (`text.tldr` skips page headers, affiliations and TeX residue); ``None`` without one."""
    for text in (paper.abstract, *(s.text for s in sections or ())):
        if text and text.strip():
            found = tldr(text)
            if found:
                return found
    return None


# ------------------------------------------------------------------------------- search hits
def to_deepxiv_hit(r: ResolvedHit, contents: bool) -> Hit:
    p = r.paper
    content = None
    if contents:
        ev = r.evidence
        content = [Content(section_title=ev.section, section_contents=[ev.text])] if ev else []
    return Hit(
        arxiv_id=p.arxiv_id,
        title=p.title,
        score=round(float(r.hit.score), 6),
        abstract=p.abstract,
        tldr=r.tldr,
        authors=authors_of(p),
        url=abs_url(p.arxiv_id),
        date=iso(p),
        citation_count=None,
        categories=list(p.categories),
        contents=content,
    )


def to_v1_hit(r: ResolvedHit, rank: int) -> V1Hit:
    p = r.paper
    return V1Hit(
        rank=rank,
        arxiv_id=p.arxiv_id,
        title=p.title,
        score=round(float(r.hit.score), 6),
        authors=list(p.authors),
        categories=list(p.categories),
        date=p.date,
        date_precision=p.date_precision,
        tldr=r.tldr,
        url=abs_url(p.arxiv_id),
        evidence=r.evidence,
        signals=dict(r.hit.signals),
    )


# ------------------------------------------------------------------------------- papers
def head(paper: PaperView, sections: list[SectionView]) -> HeadResponse:
    total = token_count(paper.abstract) + sum(token_count(s.text) for s in sections)
    return HeadResponse(
        arxiv_id=paper.arxiv_id,
        title=paper.title,
        abstract=paper.abstract,
        authors=authors_of(paper),
        categories=list(paper.categories),
        publish_at=iso(paper),
        token_count=total,
        sections=[_head_section(s) for s in sections],
        has_fulltext=paper.has_fulltext,
        url=abs_url(paper.arxiv_id),
    )


def _head_section(s: SectionView) -> HeadSection:
    return HeadSection(
        name=s.name, idx=s.idx, number=s.number, tldr=tldr(s.text), token_count=token_count(s.text)
    )


def brief(paper: PaperView, sections: list[SectionView]) -> BriefResponse:
    """``sections``: only read when the paper has no abstract (its tldr then comes from them)."""
    return BriefResponse(
        arxiv_id=paper.arxiv_id,
        title=paper.title,
        tldr=paper_tldr(paper, sections),
        publish_at=iso(paper),
        src_url=pdf_url(paper.arxiv_id),
        authors=authors_of(paper),
        abstract=paper.abstract,
        year=paper.date.year if paper.date else None,
    )


def paper_json(paper: PaperView, sections: list[SectionView]) -> PaperJson:
    return PaperJson(
        arxiv_id=paper.arxiv_id,
        version=paper.version,
        title=paper.title,
        abstract=paper.abstract,
        authors=authors_of(paper),
        categories=list(paper.categories),
        published=paper.published,
        updated=paper.updated,
        first_seen=paper.first_seen,
        comment=paper.comment,
        license=paper.license,
        journal_ref=paper.journal_ref,
        doi=paper.doi,
        sources=list(paper.sources),
        sections=[{"idx": s.idx, "name": s.name, "number": s.number, "text": s.text} for s in sections],
    )


def v1_paper(paper: PaperView, sections: list[SectionView]) -> V1Paper:
    return V1Paper(
        arxiv_id=paper.arxiv_id,
        version=paper.version,
        title=paper.title,
        abstract=paper.abstract,
        tldr=paper_tldr(paper, sections),
        authors=list(paper.authors),
        categories=list(paper.categories),
        date=paper.date,
        date_precision=paper.date_precision,
        published=paper.published,
        updated=paper.updated,
        first_seen=paper.first_seen,
        comment=paper.comment,
        license=paper.license,
        journal_ref=paper.journal_ref,
        doi=paper.doi,
        has_fulltext=paper.has_fulltext,
        url=abs_url(paper.arxiv_id),
        pdf_url=pdf_url(paper.arxiv_id),
        token_count=token_count(paper.abstract) + sum(token_count(s.text) for s in sections),
        sections=[
            V1SectionSummary(
                idx=s.idx, name=s.name, number=s.number, tldr=tldr(s.text), token_count=token_count(s.text)
            )
            for s in sections
        ],
    )


def v1_section(paper: PaperView, s: SectionView) -> V1Section:
    return V1Section(
        arxiv_id=paper.arxiv_id,
        idx=s.idx,
        name=s.name,
        number=s.number,
        token_count=token_count(s.text),
        text=s.text,
    )
