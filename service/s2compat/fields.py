"""The ``fields=`` vocabulary of Semantic Scholar's paper objects and a corpus paper rendered in it.

`parse_fields` checks a ``fields`` value against S2's paper fields (``authors.name``-style sub-fields
of ``authors``, ``citations``, ``references`` and ``embedding`` too) and answers a 400 naming the
ones it does not know, as S2 does. `PaperView` renders one paper with what this corpus knows:

- ``paperId``: the arXiv id; ``corpusId``: `openxiv.service.s2compat.ids.corpus_id`;
  ``externalIds``: ``{"ArXiv": id}`` (and ``"DOI"`` when known); ``url``: the arXiv abstract page;
- ``title``, ``abstract``, ``authors`` (``{"authorId": null, "name"}``: no author ids here),
  ``year``, ``publicationDate``, ``venue`` and ``journal`` (the journal reference, else arXiv),
  ``publicationTypes`` (``JournalArticle`` with a journal reference, else null);
- ``isOpenAccess`` (true) and ``openAccessPdf`` (the arXiv PDF); ``fieldsOfStudy`` and
  ``s2FieldsOfStudy`` from the arXiv archives; ``tldr`` (the snapshot's extractive tldr);
  ``citationStyles`` (``{"bibtex"}``, `openxiv.service.bibtex`); ``textAvailability``;
- ``referenceCount``, ``citationCount``, ``references`` and ``citations``: from the snapshot's
  references (`openxiv.service.references`), counted within this corpus;
- fields the corpus has nothing for (``influentialCitationCount``, ``publicationVenue``,
  ``embedding``, author details) are null.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from openxiv.corpus.records import Paper
from openxiv.service.bibtex import bibtex_entry
from openxiv.service.errors import BadRequest
from openxiv.service.s2compat.ids import corpus_id
from openxiv.service.views import abs_url, pdf_url

__all__ = [
    "AUTHOR_FIELDS",
    "PAPER_FIELDS",
    "REFERENCE_FIELDS",
    "Fields",
    "PaperView",
    "fields_of_study",
    "parse_fields",
]

PAPER_FIELDS = (
    "paperId", "corpusId", "externalIds", "url", "title", "abstract", "venue", "publicationVenue",
    "year", "referenceCount", "citationCount", "influentialCitationCount", "isOpenAccess",
    "openAccessPdf", "fieldsOfStudy", "s2FieldsOfStudy", "publicationTypes", "publicationDate",
    "journal", "citationStyles", "authors", "citations", "references", "embedding", "tldr",
    "textAvailability",
)  # fmt: skip
AUTHOR_FIELDS = (
    "authorId", "externalIds", "url", "name", "affiliations", "homepage", "paperCount",
    "citationCount", "hIndex",
)  # fmt: skip
REFERENCE_FIELDS = ("contexts", "intents", "contextsWithIntent", "isInfluential")
"""The fields of an edge of ``/references`` and ``/citations`` (beside the paper's)."""
_NESTED: dict[str, tuple[str, ...]] = {
    "authors": AUTHOR_FIELDS,
    "citations": PAPER_FIELDS,
    "references": PAPER_FIELDS,
    "embedding": ("specter_v1", "specter_v2"),
}
_FIELDS_OF_STUDY = {
    "cs": "Computer Science", "math": "Mathematics", "stat": "Mathematics", "q-bio": "Biology",
    "q-fin": "Economics", "econ": "Economics", "eess": "Engineering",
}  # fmt: skip
"""arXiv archives -> S2 fields of study; every other archive (astro-ph, hep-*, cond-mat, ...) is Physics."""


@dataclass(frozen=True)
class Fields:
    """A checked ``fields`` value: the paper fields, the sub-fields asked per nested field, and the
    edge fields of ``/references`` and ``/citations``."""

    top: tuple[str, ...]
    nested: dict[str, tuple[str, ...]] = field(default_factory=dict)
    edge: tuple[str, ...] = ()

    def wants(self, name: str) -> bool:
        return name in self.top


def parse_fields(value: str | None, *, default: tuple[str, ...] = ("title",), edges: bool = False) -> Fields:
    """``fields`` as asked (comma-separated; ``paperId`` always); a `BadRequest` listing the unknown
    ones. With ``edges`` the value may hold `REFERENCE_FIELDS` too."""
    asked = [f.strip() for f in (value or "").split(",") if f.strip()] or list(default)
    top: list[str] = ["paperId"]
    nested: dict[str, list[str]] = {}
    edge: list[str] = []
    bad = []
    for name in asked:
        base, _, sub = name.partition(".")
        if edges and not sub and base in REFERENCE_FIELDS:
            edge.append(base)
        elif base in PAPER_FIELDS and (not sub or sub in _NESTED.get(base, ())):
            if base not in top:
                top.append(base)
            if sub:
                nested.setdefault(base, []).append(sub)
        else:
            bad.append(name)
    if bad:
        raise BadRequest(f"fields: unrecognized or unsupported fields: [{', '.join(bad)}]")
    return Fields(tuple(top), {k: tuple(v) for k, v in nested.items()}, tuple(edge))


def fields_of_study(categories: tuple[str, ...] | list[str]) -> list[str]:
    """The S2 fields of study of arXiv categories, in the order of the categories, each once."""
    out: list[str] = []
    for c in categories:
        archive = c.split(".")[0]
        name = _FIELDS_OF_STUDY.get(archive, "Physics")
        if name not in out:
            out.append(name)
    return out


@dataclass
class PaperView:
    """How a request renders corpus papers: the snapshot's tldrs, references and citing papers
    (each a callable, so a request that does not ask for them reads nothing)."""

    tldr: Callable[[str], str | None] = lambda _: None
    references: Callable[[str], list[tuple[str | None, str | None]] | None] = lambda _: None
    cited_by: Callable[[str], list[str] | None] = lambda _: None
    titles: Callable[[list[str]], dict[str, Paper]] = lambda _: {}
    citation_count: Callable[[str], int | None] | None = None
    """The snapshot's in-corpus citation count when it keeps one; else the citing papers are counted."""

    def render(self, paper: Paper, fields: Fields) -> dict[str, Any]:
        """``paper`` with the ``fields`` asked, in S2's names."""
        values: dict[str, Callable[[], Any]] = {
            "paperId": lambda: paper.arxiv_id,
            "corpusId": lambda: corpus_id(paper.arxiv_id),
            "externalIds": lambda: {"ArXiv": paper.arxiv_id, **({"DOI": paper.doi} if paper.doi else {})},
            "url": lambda: abs_url(paper.arxiv_id),
            "title": lambda: paper.title,
            "abstract": lambda: paper.abstract,
            "venue": lambda: paper.journal_ref or "arXiv.org",
            "publicationVenue": lambda: None,
            "year": lambda: paper.date.year if paper.date else None,
            "referenceCount": lambda: _count(self.references(paper.arxiv_id)),
            "citationCount": lambda: self._citations(paper.arxiv_id),
            "influentialCitationCount": lambda: None,
            "isOpenAccess": lambda: True,
            "openAccessPdf": lambda: {
                "url": pdf_url(paper.arxiv_id),
                "status": "GREEN",
                "license": paper.license,
            },
            "fieldsOfStudy": lambda: fields_of_study(list(paper.categories)),
            "s2FieldsOfStudy": lambda: [
                {"category": f, "source": "external"} for f in fields_of_study(list(paper.categories))
            ],
            "publicationTypes": lambda: ["JournalArticle"] if paper.journal_ref else None,
            "publicationDate": lambda: paper.date.isoformat() if paper.date else None,
            "journal": lambda: (
                {"name": paper.journal_ref}
                if paper.journal_ref
                else {"name": "ArXiv", "volume": f"abs/{paper.arxiv_id}"}
            ),
            "citationStyles": lambda: {"bibtex": bibtex_entry(paper)},
            "authors": lambda: [_author(a, fields.nested.get("authors")) for a in paper.authors],
            "citations": lambda: self._linked(self.cited_by(paper.arxiv_id), fields, "citations"),
            "references": lambda: self._references(paper.arxiv_id, fields),
            "embedding": lambda: None,
            "tldr": lambda: _tldr(self.tldr(paper.arxiv_id)),
            "textAvailability": lambda: "fulltext" if paper.has_fulltext else "abstract",
        }
        return {name: values[name]() for name in fields.top}

    def _citations(self, arxiv_id: str) -> int | None:
        counted = self.citation_count(arxiv_id) if self.citation_count is not None else None
        return counted if counted is not None else _count(self.cited_by(arxiv_id))

    def _linked(self, ids: list[str] | None, fields: Fields, name: str) -> list[dict[str, Any]]:
        inner = Fields(("paperId", *[f for f in fields.nested.get(name, ("title",)) if f != "paperId"]))
        papers = self.titles(list(ids or []))
        return [self.render(papers[a], inner) for a in ids or [] if a in papers]

    def _references(self, arxiv_id: str, fields: Fields) -> list[dict[str, Any]]:
        entries = self.references(arxiv_id) or []
        inner = Fields(
            ("paperId", *[f for f in fields.nested.get("references", ("title",)) if f != "paperId"])
        )
        papers = self.titles(sorted({c for c, _ in entries if c}))
        return [
            self.render(papers[c], inner) if c in papers else outside(c, text, inner) for c, text in entries
        ]


def outside(arxiv_id: str | None, text: str | None, fields: Fields) -> dict[str, Any]:
    """A cited paper this corpus does not hold: its arXiv id when resolved, the printed entry as title."""
    known: dict[str, Any] = {
        "paperId": arxiv_id,
        "title": text,
        "externalIds": {"ArXiv": arxiv_id} if arxiv_id else None,
        "url": abs_url(arxiv_id) if arxiv_id else None,
        "corpusId": corpus_id(arxiv_id) if arxiv_id else None,
        "authors": [],
    }
    return {name: known.get(name) for name in fields.top}


def _count(items: list[Any] | None) -> int | None:
    return None if items is None else len(items)


def _author(name: str, sub: tuple[str, ...] | None) -> dict[str, Any]:
    wanted = sub or ("authorId", "name")
    return {f: (name if f == "name" else None) for f in ("authorId", *[s for s in wanted if s != "authorId"])}


def _tldr(text: str | None) -> dict[str, str] | None:
    return {"model": "openxiv-extractive", "text": text} if text else None
