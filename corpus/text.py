"""The text rules an index build needs: sentence splitting and the extractive tldr.

The index build stores every abstract's sentences (`openxiv.indexer.building.sentences`) and every
paper's tldr (`openxiv.indexer.building.tldrs`); the service shows the same sentences and tldrs
(`openxiv.service`). Both sides take them from here, so the rules live below the indexer, and a
stored table is used only while this module's source is the one it was made with (their ``rules``
digests cover this file).

Everything here is extractive and deterministic: nothing is generated, summarised by a model or
invented. Definitions (also in ``docs/service.md``):

- **sentences**: split after ``.``, ``!`` or ``?`` (plus closing quotes/brackets) followed by white
  space and a capital letter, digit, quote or bracket; never after a known abbreviation (``e.g.``,
  ``i.e.``, ``et al.``, ``Fig.``, ``Eq.``, ``vs.``...) or a single-letter initial (``J. Smith``).
  Decimals (``3.5``) never split because no space follows the dot.
- **tldr**: the first *real sentence* of the abstract (a leading ``Abstract``/``Introduction``
  label removed), plus the next one when the first is
  shorter than `TLDR_MIN_CHARS`; for a paper without abstract, the same over its first non-empty
  section (`paper_tldr`). A real sentence (`is_boilerplate` is false) has at least 3 words, ends with ``.``,
  ``!`` or ``?``, is mostly letters, has lower-case words, and is no page furniture: no e-mail
  address or URL, no report number or arXiv id, no TeX residue (``at 11pt``), no affiliation
  (``Department of ...``), no "preprint"/"submitted to"/"typeset"/"Keywords:" line, no note about
  the paper (``Contributed paper to ...``, ``To appear in ...``, ``Supported by ...``). No real sentence: no tldr.
- **TeX residue** (`without_residue`): the plain texts keep citations and references as
  ``[\\cite=key]``/``[\\ref=key]`` and formulas as ``[formula]`` (unarXive texts ``[cite]``,
  ``[formula]``, ``[figure]``, ``[table]``); a tldr and a hit's evidence show
  each run of them as ``…`` (``described in [\\cite=a], [\\cite=b]`` reads ``described in …``). The
  sentences are chosen as before; only the text shown changes.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from functools import lru_cache
from itertools import islice

from openxiv.corpus.records import Paper, Section

__all__ = [
    "TLDR_MAX_CHARS",
    "TLDR_MIN_CHARS",
    "is_boilerplate",
    "paper_tldr",
    "real_sentences",
    "shorten",
    "split_sentences",
    "tldr",
    "tldr_of",
    "without_residue",
]

TLDR_MIN_CHARS = 120
"""A first sentence shorter than this gets the second sentence appended in the tldr."""
TLDR_MAX_CHARS = 600
"""A tldr longer than this is cut at a word boundary and ends with an ellipsis."""

_ABBREVIATION_WORDS = """e.g i.e et al etc cf vs fig figs eq eqs eqn sec secs ref refs no nos tab resp approx
    dr mr mrs ms prof st jr sr vol pp ch app def thm lem prop cor viz al ca inc ltd co corp"""
_ABBREVIATIONS = frozenset(_ABBREVIATION_WORDS.split())
_BOUNDARY = re.compile(r"[.!?][\"'”’)\]]*\s+(?=[\"'“‘(\[]?[A-Z0-9])")
_LAST_WORD = re.compile(r"([A-Za-z][A-Za-z.]*)[.!?]?$")
_SPACE = re.compile(r"\s+")


def _is_abbreviation(text_before: str) -> bool:
    m = _LAST_WORD.search(text_before)
    if not m:
        return False
    word = m.group(1).lower().rstrip(".")
    if word in _ABBREVIATIONS:
        return True
    # "et al." appears as the word "al"; a single letter is an initial ("J. Smith", "Fig. 3a.")
    return len(word) == 1 and word.isalpha()


def split_sentences(text: str) -> list[str]:
    """Sentences of ``text`` with white space normalised (see the module docstring for the rules)."""
    return list(_split_cached(text or ""))


@lru_cache(maxsize=4096)
def _split_cached(text: str) -> tuple[str, ...]:
    text = _SPACE.sub(" ", text).strip()
    if not text:
        return ()
    out: list[str] = []
    start = 0
    for m in _BOUNDARY.finditer(text):
        end = m.start() + 1
        # include closing quotes/brackets that belong to the sentence
        while end < len(text) and text[end] in "\"'”’)]":
            end += 1
        piece = text[start:end]
        if _is_abbreviation(text[max(start, m.start() - 24) : m.start() + 1]):
            continue
        if piece.strip():
            out.append(piece.strip())
        start = m.end()
    rest = text[start:].strip()
    if rest:
        out.append(rest)
    return tuple(out)


def shorten(text: str, limit: int) -> str:
    if len(text) <= limit:
        return text
    cut = text[:limit].rsplit(" ", 1)[0]
    return cut.rstrip(" ,;:") + " …"


_FURNITURE = re.compile(
    r"@|https?://|www\.|\b\d+(?:\.\d+)?(?:pt|in|cm|mm|ex|em)\b|\b[a-z\-]+/\d{7}\b|\barxiv:\s?\d"
    r"|(?-i:\b[A-Z]{2,}(?:-[A-Z]+)*[-/ ]\d{2,}[-/]\d)|\bpreprint\b|\bsubmitted to\b|\btypeset\b"
    r"|\be-?mail\b|\bpacs\b|\bpublishing\b|\bkeywords?\s*:|\[formula\]\s*\[formula\]",
    re.I,
)
_INSTITUTION = re.compile(
    r"(?:department|dipartimento|institut[eo]?|universit[yéàä]\w*|laborato\w+|faculty|school of"
    r"|college|observatory|centre|academy)\b",
    re.I,
)
_NOTE = re.compile(
    r"^(?:contributed|invited|talk (?:given|presented)|presented at|to appear|to be published|published in"
    r"|proceedings|based on (?:a|an|the) (?:talk|lecture)|this paper was submitted|dedicated to|supported by"
    r"|work supported|this work (?:was|is) supported)\b",
    re.I,
)
_INITIALLED = re.compile(r"\b[A-Z]\.\s?(?:[A-Z]\.\s?)*[A-Z][a-z]+")
_LABEL = re.compile(r"^(?:abstract|introduction|summary)\s*[.:—-]?\s+(?=\S)", re.I)
_MIN_WORDS = 3


def is_boilerplate(sentence: str) -> bool:
    """Not a real sentence of the paper (see the module docstring)."""
    words = sentence.split()
    if len(words) < _MIN_WORDS or sentence.rstrip("\"'”’)]")[-1:] not in (".", "!", "?"):
        return True
    letters = sum(ch.isalpha() for ch in sentence)
    if letters < 0.6 * len(sentence.replace(" ", "")):
        return True
    lower = sum(w[:1].islower() for w in words)
    if lower < 0.3 * len(words):
        return True  # a header, a list of names or an address, not prose
    if _FURNITURE.search(sentence) or _NOTE.match(sentence) or sentence[0].islower():
        return True  # a lower-case start is a fragment (``and and estimator of ...``)
    if _INSTITUTION.search(sentence):  # an affiliation, or authors and affiliation run into prose
        return lower < 0.6 * len(words) or bool(_INITIALLED.search(sentence))
    return False


@lru_cache(maxsize=8192)
def tldr(text: str | None) -> str | None:
    """First real sentence (plus the next when it is short); ``None`` when there is none."""
    # lazily: only the first two real sentences are ever used, and testing every sentence of a long
    # abstract or section for boilerplate was most of a search hit's hydration time
    return tldr_of(islice(real_sentences(text), 2))


def real_sentences(text: str | None) -> Iterator[str]:
    """The real sentences of ``text`` (a leading label removed; `is_boilerplate` ones skipped), lazily."""
    labelled = (_LABEL.sub("", s) for s in _split_cached(text or ""))
    return (s for s in labelled if not is_boilerplate(s))


_MARKER = r"(?:\[\\[A-Za-z]+\*?=[^\]\n]*\]|\[(?:formula|cite|figure|table)\])"
_RESIDUE = re.compile(rf"{_MARKER}(?:[ \t]*,?[ \t]*{_MARKER})*")
"""A run of ``[\\cite=...]``, ``[\\ref=...]`` (any ``[\\command=...]``) and ``[formula]`` markers (and the
unarXive reader's ``[cite]``, ``[figure]``, ``[table]``)."""


def without_residue(text: str) -> str:
    """``text`` with each run of TeX residue markers shown as ``…`` (see the module docstring)."""
    return _RESIDUE.sub("…", text) if "[" in text else text


def tldr_of(sentences: Iterable[str]) -> str | None:
    """The tldr made of the first two of ``sentences`` (real ones): the first, plus the second when
    the first is short; TeX residue shown as ``…`` (`without_residue`)."""
    first_two = list(islice(sentences, 2))
    if not first_two:
        return None
    out = first_two[0]
    if len(out) < TLDR_MIN_CHARS and len(first_two) > 1:
        out = f"{out} {first_two[1]}"
    return shorten(without_residue(out), TLDR_MAX_CHARS)


def paper_tldr(paper: Paper, sections: list[Section] | None = None) -> str | None:
    """Extractive tldr: the abstract's first real sentence, else that of the first section that
    has one (`tldr` skips page headers, affiliations and TeX residue); ``None`` without one."""
    for text in (paper.abstract, *(s.text for s in sections or ())):
        if text and text.strip():
            found = tldr(text)
            if found:
                return found
    return None
