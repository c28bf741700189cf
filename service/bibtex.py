"""The BibTeX use case: a citation entry for any paper of the corpus (no HTTP here).

Every front calls `bibtex`: ``GET /v1/bibtex`` and ``/v1/papers/{id}/bibtex``, ``GET
/arxiv/?type=bibtex``, the MCP tool ``bibtex``, ``openxiv bibtex`` and the Semantic
Scholar-compatible field ``citationStyles``. `bibtex_entry` is the pure rule:

- the entry type is ``@article`` when the paper has a journal reference (then ``journal``), else
  ``@misc`` (arXiv's own export uses ``@misc`` with ``eprint``);
- the key is the first author's last name, the year and the first word of the title that is not a
  stop word, folded to ASCII letters (``vaswani2017attention``), with the arXiv id when a part is
  missing;
- ``title``, ``author`` (the names as the corpus holds them, joined by ``and``), ``year``,
  ``eprint``, ``archivePrefix = {arXiv}``, ``primaryClass``, ``doi`` when known, ``url``. TeX's
  special characters in the values are escaped and the title's capitals kept with braces.
"""

from __future__ import annotations

import re

from pydantic import BaseModel, Field

from openxiv.corpus.normalize import normalize_name, normalize_title
from openxiv.corpus.records import Paper
from openxiv.service.errors import BadRequest
from openxiv.service.holder import IndexHolder
from openxiv.service.reading import load_paper
from openxiv.service.views import abs_url

__all__ = ["MAX_BIBTEX_IDS", "BibtexEntry", "BibtexResponse", "bibtex", "bibtex_entry", "bibtex_key"]

MAX_BIBTEX_IDS = 50
"""Papers one request may ask BibTeX for."""

_SKIP = frozenset(
    [
        "a",
        "an",
        "the",
        "on",
        "of",
        "in",
        "for",
        "to",
        "and",
        "with",
        "from",
        "by",
        "at",
        "is",
        "are",
        "towards",
        "toward",
        "via",
    ]
)
_SPECIAL = re.compile(r"([&%$#_])")


class BibtexEntry(BaseModel):
    arxiv_id: str
    key: str = Field(description="The citation key (`vaswani2017attention`).")
    bibtex: str = Field(description="The entry, ready to paste into a .bib file.")


class BibtexResponse(BaseModel):
    status: str = "success"
    result: list[BibtexEntry]

    def text(self) -> str:
        """Every entry, separated by a blank line (a .bib file)."""
        return "\n\n".join(e.bibtex for e in self.result) + "\n"


def _escape(text: str) -> str:
    """``text`` as a BibTeX value: one line, TeX's special characters escaped, braces balanced."""
    out = _SPECIAL.sub(r"\\\1", " ".join(text.split()))
    out = out.replace("~", r"\~{}").replace("^", r"\^{}")
    if out.count("{") != out.count("}"):
        out = out.replace("{", "").replace("}", "")
    return out


def bibtex_key(paper: Paper) -> str:
    """``lastname`` + ``year`` + first title word, ASCII letters and digits only."""
    first = normalize_name(paper.authors[0]).split() if paper.authors else []
    last = re.sub(r"[^a-z]", "", first[-1]) if first else ""
    year = str(paper.date.year) if paper.date else ""
    words = [re.sub(r"[^a-z0-9]", "", w) for w in normalize_title(paper.title).split()]
    word = next((w for w in words if w and w not in _SKIP), "")
    if not (last and year and word):
        return f"arxiv{re.sub(r'[^0-9A-Za-z]', '', paper.arxiv_id)}"
    return f"{last}{year}{word}"


def bibtex_entry(paper: Paper) -> str:
    """The BibTeX entry of ``paper`` (the module's rules)."""
    kind = "article" if paper.journal_ref else "misc"
    fields: list[tuple[str, str]] = [("title", "{" + _escape(paper.title or paper.arxiv_id) + "}")]
    if paper.authors:
        fields.append(("author", " and ".join(_escape(a) for a in paper.authors)))
    if paper.journal_ref:
        fields.append(("journal", _escape(paper.journal_ref)))
    if paper.date:
        fields.append(("year", str(paper.date.year)))
    fields += [("eprint", paper.arxiv_id), ("archivePrefix", "arXiv")]
    if paper.categories:
        fields.append(("primaryClass", paper.categories[0]))
    if paper.doi:
        fields.append(("doi", _escape(paper.doi)))
    fields.append(("url", abs_url(paper.arxiv_id)))
    body = ",\n".join(f"  {name} = {{{value}}}" for name, value in fields)
    return f"@{kind}{{{bibtex_key(paper)},\n{body}\n}}"


def bibtex(holder: IndexHolder, arxiv_ids: tuple[str, ...], name: str = "arxiv_id") -> BibtexResponse:
    """The entries of ``arxiv_ids`` (any spelling), in the order given; a malformed id is a 400
    naming ``name``, a paper the corpus lacks a 404."""
    if not arxiv_ids:
        raise BadRequest(f"{name}: required (one arXiv id, or several comma-separated)")
    if len(arxiv_ids) > MAX_BIBTEX_IDS:
        raise BadRequest(f"{name}: at most {MAX_BIBTEX_IDS} papers, got {len(arxiv_ids)}")
    entries = []
    with holder.acquire() as index:
        for given in arxiv_ids:
            paper = load_paper(index, given)
            entries.append(
                BibtexEntry(arxiv_id=paper.arxiv_id, key=bibtex_key(paper), bibtex=bibtex_entry(paper))
            )
    return BibtexResponse(result=entries)
