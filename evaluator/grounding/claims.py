"""Quotes and citations out of an answer: what `openxiv eval grounding` checks.

An answer is read into `Claim`s, each a quoted span (or, for a citation without a quote, the claim's
sentence) and the arXiv ids it is credited to:

* **text** (a report, an LLM answer): quoted spans are ``"…"``, ``“…”``, ``«…»`` of at least
  `MIN_QUOTE_WORDS` words, and markdown blockquote lines (``> …``); citations are ``arXiv:ID``,
  arxiv.org abs/pdf links and bracketed bare ids (``[2301.00001]``). A quote is credited to the
  nearest citation (group) after it in the same sentence, else the nearest before it, else the
  citations of its paragraph (a blockquote under a line that names the paper, as openxiv's own
  extractive answer writes it), else to nothing (``uncited``). An ellipsis inside a quote marks an
  omission: each part is checked on its own.
* **agent search responses** (``sources[].evidence``): each source's evidence text is a quote
  credited to that source; the answer text is read as above unless the extractive model wrote it
  (its blocks repeat the sources).
* **AutoResearchBench inference outputs**: each final candidate's ``retrieval_evidence`` is a quote
  credited to its ``arxiv_id``.
* **explicit claims** (``claims: [{quote, arxiv_id, expected?}]``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from openxiv.corpus.ids import try_canonical_id

__all__ = ["MIN_QUOTE_WORDS", "Claim", "citations_in", "claims_from_text", "split_omissions"]

MIN_QUOTE_WORDS = 4
"""Shorter quoted strings are names and scare quotes ("attention"), not evidence."""

_ID = r"(?:\d{4}\.\d{4,5}(?:v\d+)?|[a-z][a-z\-]*(?:\.[A-Z]{2})?/\d{7}(?:v\d+)?)"
CITATION = re.compile(
    rf"(?:arxiv:\s*|https?://(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/)({_ID})(?:\.pdf)?|\[({_ID})\]",
    re.IGNORECASE,
)
QUOTE = re.compile(r"\"([^\"\n]{3,}?)\"|“([^”]{3,}?)”|«([^»]{3,}?)»")
BLOCKQUOTE = re.compile(r"^[ \t]*>[ \t]?(.+)$", re.MULTILINE)
SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[A-Z\[(\"“])|\n")
OMISSION = re.compile(r"\s*(?:…|\.\.\.|\[\.\.\.\]|\[…\])\s*")
_GROUP_GAP = re.compile(r"^[\s,;]*(?:and\s+)?$")


@dataclass
class Claim:
    """One checkable statement of an answer."""

    text: str
    """The quoted span (``quoted``), else the sentence that carries the citations."""
    cited: list[str]
    """Canonical arXiv ids the answer credits it to (may be empty)."""
    quoted: bool = True
    origin: str = "text"
    """``text``, ``source`` (an agent search source), ``candidate`` (an ARB candidate), ``claim``."""
    section_hint: str | None = None
    """The section the answer says the quote comes from, when it says one."""
    expected: str | None = None
    """The verdict a planted set expects (only read from explicit claims)."""
    meta: dict[str, Any] = field(default_factory=dict)


def citations_in(text: str) -> list[tuple[int, int, str]]:
    """``(start, end, canonical id)`` of every arXiv citation in ``text``."""
    out = []
    for m in CITATION.finditer(text):
        canonical = try_canonical_id(m.group(1) or m.group(2))
        if canonical:
            out.append((m.start(), m.end(), canonical))
    return out


def split_omissions(quote: str) -> list[str]:
    """The parts of a quote between ellipses, each long enough to check (``[]`` when none is)."""
    parts = [p.strip(" \"'“”") for p in OMISSION.split(quote)]
    return [p for p in parts if len(p.split()) >= MIN_QUOTE_WORDS]


def _groups(cites: list[tuple[int, int, str]], text: str) -> list[tuple[int, int, list[str]]]:
    """Citations next to each other (``[arXiv:A; arXiv:B]``, ``A, B``) form one group."""
    groups: list[tuple[int, int, list[str]]] = []
    for start, end, cid in cites:
        if groups and _GROUP_GAP.match(text[groups[-1][1] : start].replace("]", "").replace("[", "")):
            s, _, ids = groups[-1]
            groups[-1] = (s, end, [*ids, cid] if cid not in ids else ids)
        else:
            groups.append((start, end, [cid]))
    return groups


def _sentences(text: str, masked: str) -> list[tuple[int, int]]:
    """Sentence spans of ``text``, cut on ``masked`` (quotes blanked so their periods do not cut)."""
    spans, start = [], 0
    for m in SENTENCE_END.finditer(masked):
        spans.append((start, m.start()))
        start = m.end()
    spans.append((start, len(text)))
    return spans


def _credit(qs: int, qe: int, groups: list[tuple[int, int, list[str]]], sent: tuple[int, int]) -> list[str]:
    inside = [g for g in groups if sent[0] <= g[0] < sent[1]]
    after = [g for g in inside if g[0] >= qe]
    if after:
        return after[0][2]
    before = [g for g in inside if g[1] <= qs]
    return before[-1][2] if before else []


def _paragraph_claims(par: str) -> list[Claim]:
    cites = citations_in(par)
    groups = _groups(cites, par)
    quotes: list[tuple[int, int, str, bool]] = []
    for m in QUOTE.finditer(par):
        body = next(g for g in m.groups() if g is not None)
        quotes.append((m.start(), m.end(), body, False))
    for m in BLOCKQUOTE.finditer(par):
        if not any(s <= m.start(1) < e for s, e, _, _ in quotes):
            quotes.append((m.start(1), m.end(1), m.group(1), True))
    masked = list(par)
    for s, e, _, _ in quotes:
        masked[s:e] = "x" * (e - s)
    sentences = _sentences(par, "".join(masked))
    par_ids = list(dict.fromkeys(c for _, _, c in cites))
    claims: list[Claim] = []
    quoted_sentences: set[int] = set()
    for qs, qe, body, block in sorted(quotes):
        k = next(i for i, (s, e) in enumerate(sentences) if s <= qs <= e)
        ids = _credit(qs, qe, groups, sentences[k]) or (par_ids if block or len(par_ids) == 1 else [])
        body, hint = _strip_citations(body), None
        if block:
            body, hint = _section_suffix(body)
        for part in split_omissions(body):
            claims.append(Claim(part, ids, section_hint=hint, meta={"offset": qs, "block": block}))
            quoted_sentences.add(k)  # a sentence with a checked quote is not also a citation claim
    block_ids = {i for c in claims if c.meta.get("block") for i in c.cited}
    for k, (s, e) in enumerate(sentences):
        ids = list(dict.fromkeys(c for cs, _, c in cites if s <= cs < e))
        if ids and k not in quoted_sentences and not set(ids) <= block_ids:  # not a blockquote's heading
            sentence = _strip_citations(par[s:e]).strip(" -*>")
            if len(sentence.split()) >= MIN_QUOTE_WORDS:
                claims.append(Claim(sentence, ids, quoted=False, meta={"offset": s}))
    return claims


_BRACKETED = re.compile(r"\s*[\[(][^\[\]()]*?(?:" + CITATION.pattern + r")[^\[\]()]*[\])]", re.IGNORECASE)


def _strip_citations(text: str) -> str:
    """The text without its citations: brackets holding one go whole (``[arXiv:A; arXiv:B]``,
    ``(arXiv:A, 2024)``), bare ones alone; no space is left before punctuation."""
    text = CITATION.sub("", _BRACKETED.sub("", text))
    return re.sub(r"\s+([.,;:!?])", r"\1", " ".join(text.split())).strip()


_SECTION_SUFFIX = re.compile(r"^(.*?)\s*\(([^()]{1,80})\)\s*$", re.DOTALL)


def _section_suffix(body: str) -> tuple[str, str | None]:
    """A blockquote's trailing ``(Section name)``, as openxiv's extractive answer writes it."""
    m = _SECTION_SUFFIX.match(body)
    if (
        m
        and len(m.group(2).split()) <= 8
        and (m.group(1).endswith(("…", ".", "...")) or m.group(2)[:1].isupper())
    ):
        return m.group(1), m.group(2)
    return body, None


def claims_from_text(text: str) -> list[Claim]:
    """Every quote and every cited sentence of a text answer, paragraph by paragraph."""
    claims: list[Claim] = []
    for par in re.split(r"\n[ \t]*\n", text):
        if par.strip():
            claims.extend(_paragraph_claims(par))
    return claims
