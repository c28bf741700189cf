"""Semantic Scholar paper ids as openxiv reads them, and the ids openxiv gives out.

A paper's ``paperId`` here is its canonical arXiv id (``1706.03762``, ``hep-th/9901001``), so an id a
client got back from any call can be sent again. Accepted spellings of a paper id: that id (any arXiv
spelling), ``ARXIV:<id>``, ``URL:<arxiv.org abs or pdf URL>`` and ``CorpusId:<n>`` for the numbers
`corpus_id` gives. Ids of other catalogues (``DOI:``, ``MAG:``, ``ACL:``, ``PMID:``, ``PMCID:``, S2's
own 40-hex ids) name no paper this server can find: not found, as S2 answers an unknown id.

``corpusId`` is a number made from a new-style arXiv id (``YYMM.NNNNN`` -> ``YYMM * 100000 + NNNNN``:
one number per id, since a month's ids all have the same number of digits) and null for old-style
ids, which no such number can stand for.
"""

from __future__ import annotations

import re

from openxiv.corpus.ids import InvalidArxivId, canonical_id

__all__ = ["UnknownId", "arxiv_of", "corpus_id"]

_NEW = re.compile(r"^(\d{4})\.(\d{4,5})$")
_URL = re.compile(r"arxiv\.org/(?:abs|pdf)/(.+?)(?:\.pdf)?/?$", re.IGNORECASE)
_OTHER = ("DOI:", "MAG:", "ACL:", "PMID:", "PMCID:", "SHA:")


class UnknownId(LookupError):
    """An id of a form that names no paper of this corpus (``args[0]``: the id as given)."""


def corpus_id(arxiv_id: str) -> int | None:
    """The ``corpusId`` of a canonical arXiv id (`None` for an old-style id)."""
    m = _NEW.match(arxiv_id)
    return int(m.group(1)) * 100_000 + int(m.group(2)) if m else None


def _from_corpus_id(number: str) -> str:
    value = int(number)
    month, serial = divmod(value, 100_000)
    if not 100 <= month <= 9912:
        raise UnknownId(f"CorpusId:{number}")
    # ids of 2015 on have five digits, earlier ones four
    return f"{month:04d}.{serial:05d}" if month >= 1501 else f"{month:04d}.{serial:04d}"


def arxiv_of(paper_id: str) -> str:
    """The canonical arXiv id ``paper_id`` names; `UnknownId` when it names none."""
    given = paper_id.strip()
    upper = given.upper()
    if upper.startswith(_OTHER) or re.fullmatch(r"[0-9a-f]{40}", given):
        raise UnknownId(given)
    try:
        if upper.startswith("CORPUSID:") and given[9:].strip().isdigit():
            return _from_corpus_id(given[9:].strip())
        if upper.startswith("ARXIV:"):
            return canonical_id(given[6:].strip())
        if upper.startswith("URL:"):
            m = _URL.search(given[4:].strip())
            if m is None:
                raise UnknownId(given)
            return canonical_id(m.group(1))
        return canonical_id(given)
    except InvalidArxivId as exc:
        raise UnknownId(given) from exc
