"""Verdicts: each claim of an answer against the stored text of the papers it is credited to.

Quoted claims get one verdict each:

| verdict | meaning | faithful |
|---|---|---|
| ``exact`` | the quote is in a cited paper, character for character | yes |
| ``normalised`` | the quote's words are in a cited paper (case, accents, punctuation, spacing aside) | yes |
| ``fuzzy`` | a cited paper has a close span (similarity ≥ ``fuzzy_min``), not the same words | with ``accept`` |
| ``misattributed`` | in another paper the answer cites (any paper, with ``search_corpus``), not the cited | no |
| ``not_found`` | no span of the cited paper comes close | no |
| ``not_in_corpus`` | no cited paper is in the corpus (nothing to check against) | not counted |
| ``uncited`` | the quote is credited to no paper | not counted |

A citation without a quote (a claim sentence) is ``cited`` when its paper is in the corpus, else
``not_in_corpus``; its ``similarity`` is the best fuzzy window of the sentence in the paper, shown
as information (a paraphrase is not a quote).
"""

from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass
from typing import Protocol

from openxiv.corpus.records import Paper, Section
from openxiv.evaluator.grounding.claims import Claim
from openxiv.evaluator.grounding.text import Field, Match, PaperText, normal_words

__all__ = ["CHECKED", "FAITHFUL", "Checked", "Library", "check_claims"]

FAITHFUL = frozenset({"exact", "normalised"})
CHECKED = frozenset({"exact", "normalised", "fuzzy", "misattributed", "not_found"})
"""Verdicts that count in the faithfulness rates (the quote could be looked for in a cited paper)."""


class PaperSource(Protocol):
    def get_paper(self, arxiv_id: str) -> Paper | None: ...
    def sections(self, arxiv_id: str) -> list[Section]: ...
    def papers_containing(self, needle: str, limit: int = 5) -> list[str]: ...


class Library:
    """Papers' stored texts read through the corpus store, the last ``keep`` kept tokenised."""

    def __init__(self, store: PaperSource, keep: int = 64, search_corpus: bool = False) -> None:
        self.store = store
        self.keep = keep
        self.search_corpus = search_corpus
        """Look for a quote found in no cited paper in every stored text (`Store.papers_containing`)."""
        self._cache: OrderedDict[str, PaperText | None] = OrderedDict()

    def containing(self, needle: str) -> list[str]:
        """Papers whose stored text holds ``needle`` verbatim (a scan of the corpus)."""
        return self.store.papers_containing(needle)

    def text(self, arxiv_id: str) -> PaperText | None:
        if arxiv_id in self._cache:
            self._cache.move_to_end(arxiv_id)
            return self._cache[arxiv_id]
        paper = self.store.get_paper(arxiv_id)
        text = None
        if paper is not None:
            fields = [Field("title", paper.title or ""), Field("abstract", paper.abstract or "")]
            fields += [
                Field(s.name or f"section {s.idx}", s.text, s.idx) for s in self.store.sections(arxiv_id)
            ]
            text = PaperText(arxiv_id, [f for f in fields if f.text])
        self._cache[arxiv_id] = text
        if len(self._cache) > self.keep:
            self._cache.popitem(last=False)
        return text


@dataclass
class Checked:
    claim: Claim
    verdict: str
    match: Match | None = None
    paper: str | None = None
    """The paper the match is in (a cited one, or for ``misattributed`` the one it was found in)."""
    not_in_corpus: tuple[str, ...] = ()
    abstract_only: bool = False
    """The paper looked in has no full text: only its title and abstract were searched."""

    @property
    def similarity(self) -> float | None:
        return None if self.match is None else self.match.similarity

    def faithful(self, accept: float | None) -> bool:
        if self.verdict in FAITHFUL:
            return True
        return (
            accept is not None
            and self.verdict == "fuzzy"
            and self.match is not None
            and (self.match.similarity >= accept)
        )


def _best(lib: Library, ids: list[str], quote: str, fuzzy_min: float) -> tuple[str | None, Match | None]:
    """The best match of ``quote`` over the papers ``ids`` (found first, then similarity)."""
    best: tuple[str | None, Match | None] = (None, None)
    for cid in ids:
        text = lib.text(cid)
        if text is None:
            continue
        m = text.find(quote, fuzzy_min)
        current = best[1]
        if current is None or (m.found(), m.similarity) > (current.found(), current.similarity):
            best = (cid, m)
    return best


def _check_quote(
    lib: Library, claim: Claim, others: list[str], fuzzy_min: float, accept: float | None
) -> Checked:
    if not claim.cited:
        pid, m = _best(lib, others, claim.text, fuzzy_min)
        if (m is None or not m.found()) and lib.search_corpus:
            pid, m = _uncited_source(lib, claim, fuzzy_min) or (pid, m)
        return Checked(claim, "uncited", m if m is not None and m.level != "none" else None, pid)
    inside = [c for c in claim.cited if lib.text(c) is not None]
    outside = tuple(c for c in claim.cited if c not in inside)
    if not inside:
        return Checked(claim, "not_in_corpus", not_in_corpus=outside)
    pid, m = _best(lib, inside, claim.text, fuzzy_min)
    assert pid is not None and m is not None
    text = lib.text(pid)
    abstract_only = text is not None and text.abstract_only
    if m.found():
        return Checked(claim, m.level, m, pid, outside, abstract_only)
    elsewhere = [o for o in others if o not in claim.cited]
    opid, om = _best(lib, elsewhere, claim.text, fuzzy_min)
    if om is not None and (
        om.found() or (accept is not None and om.level == "fuzzy" and om.similarity >= accept)
    ):
        return Checked(claim, "misattributed", om, opid, outside)
    if outside:  # the quote may come from the cited paper we do not hold
        return Checked(claim, "not_in_corpus", m if m.level != "none" else None, pid, outside, abstract_only)
    if m.level != "fuzzy" and lib.search_corpus:
        found = _uncited_source(lib, claim, fuzzy_min)
        if found is not None:
            return Checked(claim, "misattributed", found[1], found[0], outside)
    verdict = "fuzzy" if m.level == "fuzzy" else "not_found"
    return Checked(claim, verdict, m, pid, outside, abstract_only)


NEEDLE_WORDS = 8


def _uncited_source(lib: Library, claim: Claim, fuzzy_min: float) -> tuple[str, Match] | None:
    """A paper of the corpus nobody cited that holds the quote: the papers whose stored text has the
    quote's middle `NEEDLE_WORDS` words verbatim, each then checked with the whole quote."""
    words = claim.text.split()
    mid = max(0, (len(words) - NEEDLE_WORDS) // 2)
    for cid in lib.containing(" ".join(words[mid : mid + NEEDLE_WORDS])):
        text = lib.text(cid)
        if cid in claim.cited or text is None:
            continue
        m = text.find(claim.text, fuzzy_min)
        if m.found():
            return cid, m
    return None


def check_claims(
    lib: Library, claims: list[Claim], fuzzy_min: float = 0.8, accept: float | None = 0.9
) -> list[Checked]:
    """A verdict for every claim of one answer (``others``: every paper the answer cites)."""
    others: list[str] = []
    for c in claims:
        for cid in [*c.cited, *c.meta.get("sources", [])]:
            if cid not in others:
                others.append(cid)
    out = []
    for claim in claims:
        if claim.quoted:
            out.append(_check_quote(lib, claim, others, fuzzy_min, accept))
            continue
        inside = [c for c in claim.cited if lib.text(c) is not None]
        outside = tuple(c for c in claim.cited if c not in inside)
        if not inside:
            out.append(Checked(claim, "not_in_corpus", not_in_corpus=outside))
            continue
        pid, m = _best(lib, inside, claim.text, 0.0) if normal_words(claim.text) else (inside[0], None)
        out.append(Checked(claim, "cited", m, pid, outside))
    return out
