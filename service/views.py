"""Every mapping of a paper record to an API model, written once (no HTTP, no store access here).

Routes read what a response needs from the store (the paper, its sections) and hand it to one
function here; the DeepXiv-compatible shapes (`deepxiv_hit`, `head`, `brief`, `paper_json`) and the
v1 shapes (`v1_hit`, `v1_paper`, `v1_section`) are all built from the same `Paper`, so a metadata
field added to the record reaches every answer that declares it.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Any, TypeVar

from pydantic import BaseModel

from openxiv.corpus.categories import split_categories
from openxiv.corpus.records import Paper, Section
from openxiv.corpus.text import paper_tldr, tldr
from openxiv.indexer.backend import PaperHit
from openxiv.service.models import (
    Author,
    BriefResponse,
    Content,
    Evidence,
    HeadResponse,
    HeadSection,
    Hit,
    PaperJson,
    V1Hit,
    V1Paper,
    V1Section,
    V1SectionSummary,
)
from openxiv.service.text import token_count, with_abstract
from openxiv.service.titles import with_title

__all__ = [
    "ResolvedHit",
    "abs_url",
    "authors_of",
    "brief",
    "head",
    "iso",
    "paper_json",
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


def authors_of(paper: Paper) -> list[Author]:
    return [Author(name=a) for a in paper.authors]


def iso(paper: Paper) -> str | None:
    d = paper.date
    return d.isoformat() if d else None


_PAPER_ATTRS = frozenset(f.name for f in fields(Paper)) | {"date", "date_precision"}
"""What a `Paper` offers an answer by name: its fields and its served date."""

M = TypeVar("M", bound=BaseModel)


def _from_paper(model: type[M], paper: Paper, **values: Any) -> M:
    """``model`` made of ``values`` plus, for each of its other fields named like an attribute of
    `Paper`, that attribute (pydantic turns the tuples into lists). This is the one place paper
    metadata is copied into an answer: a field added to both reaches it without another line.

    What is served is not always what is stored: a paper is served with a title and its source
    (`openxiv.service.titles.with_title`; the use cases already filled them in from the store), and
    its stored categories as arXiv categories and subject classes (`split_categories`)."""
    paper = with_title(paper)
    taken = {
        name: getattr(paper, name) for name in (model.model_fields.keys() & _PAPER_ATTRS) - values.keys()
    }
    if "categories" in taken:
        taken["categories"], classes = split_categories(paper.categories)
        if "subject_classes" in model.model_fields and "subject_classes" not in values:
            taken["subject_classes"] = classes
    return model(**taken, **values)


def _token_count(paper: Paper, sections: list[Section]) -> int:
    """Estimate for the whole text: abstract and every section."""
    return token_count(paper.abstract) + sum(token_count(s.text) for s in sections)


def _section_summary(s: Section) -> dict[str, Any]:
    """What a paper's section list says of each section (`HeadSection`, `V1SectionSummary`)."""
    return {
        "idx": s.idx,
        "name": s.name,
        "number": s.number,
        "tldr": tldr(s.text),
        "token_count": token_count(s.text),
    }


# ------------------------------------------------------------------------------- search hits
@dataclass(frozen=True)
class ResolvedHit:
    """A backend hit joined with its paper, evidence and tldr (what `openxiv.service.hydration.hydrate`
    makes of it, and what the hit views below are built from)."""

    hit: PaperHit
    paper: Paper
    evidence: Evidence | None
    tldr: str | None
    citations: int | None = None
    """In-corpus citation count (`openxiv.indexer.snapshot.OpenIndex.citation_count`)."""


def to_deepxiv_hit(r: ResolvedHit, contents: bool) -> Hit:
    p = r.paper
    content = None
    if contents:
        ev = r.evidence
        content = [Content(section_title=ev.section, section_contents=[ev.text])] if ev else []
    return _from_paper(
        Hit,
        p,
        score=round(float(r.hit.score), 6),
        tldr=r.tldr,
        authors=authors_of(p),
        url=abs_url(p.arxiv_id),
        date=iso(p),
        citation_count=r.citations,
        contents=content,
    )


def to_v1_hit(r: ResolvedHit, rank: int) -> V1Hit:
    return _from_paper(
        V1Hit,
        r.paper,
        rank=rank,
        score=round(float(r.hit.score), 6),
        tldr=r.tldr,
        url=abs_url(r.paper.arxiv_id),
        evidence=r.evidence,
        signals=dict(r.hit.signals),
        citation_count=r.citations,
    )


# ------------------------------------------------------------------------------- papers
def head(paper: Paper, sections: list[Section]) -> HeadResponse:
    return _from_paper(
        HeadResponse,
        paper,
        authors=authors_of(paper),
        publish_at=iso(paper),
        token_count=_token_count(paper, sections),
        sections=[HeadSection(**_section_summary(s)) for s in with_abstract(paper, sections)],
        url=abs_url(paper.arxiv_id),
    )


def brief(paper: Paper, sections: list[Section], citations: int | None = None) -> BriefResponse:
    """``sections``: only read when the paper has no abstract (its tldr then comes from them);
    ``citations``: its in-corpus citation count."""
    return _from_paper(
        BriefResponse,
        paper,
        tldr=paper_tldr(paper, sections),
        publish_at=iso(paper),
        src_url=pdf_url(paper.arxiv_id),
        authors=authors_of(paper),
        year=paper.date.year if paper.date else None,
        citations=citations,
        citation_count=citations,
    )


def paper_json(paper: Paper, sections: list[Section]) -> PaperJson:
    return _from_paper(
        PaperJson,
        paper,
        authors=authors_of(paper),
        sections=[{"idx": s.idx, "name": s.name, "number": s.number, "text": s.text} for s in sections],
    )


def v1_paper(paper: Paper, sections: list[Section]) -> V1Paper:
    return _from_paper(
        V1Paper,
        paper,
        tldr=paper_tldr(paper, sections),
        url=abs_url(paper.arxiv_id),
        pdf_url=pdf_url(paper.arxiv_id),
        token_count=_token_count(paper, sections),
        sections=[V1SectionSummary(**_section_summary(s)) for s in sections],
    )


def v1_section(paper: Paper, s: Section) -> V1Section:
    return V1Section(
        arxiv_id=paper.arxiv_id,
        idx=s.idx,
        name=s.name,
        number=s.number,
        token_count=token_count(s.text),
        text=s.text,
    )
