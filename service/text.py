"""Small text helpers for responses: sentence splitting, extractive tldr, section lookup.

Everything here is extractive and deterministic: nothing is generated, summarised by a model or
invented. Definitions (also in ``docs/service.md``):

- **sentences**: split after ``.``, ``!`` or ``?`` (plus closing quotes/brackets) followed by white
  space and a capital letter, digit, quote or bracket; never after a known abbreviation (``e.g.``,
  ``i.e.``, ``et al.``, ``Fig.``, ``Eq.``, ``vs.``...) or a single-letter initial (``J. Smith``).
  Decimals (``3.5``) never split because no space follows the dot.
- **tldr**: the first *real sentence* of the abstract (a leading ``Abstract``/``Introduction``
  label removed), plus the next one when the first is
  shorter than `TLDR_MIN_CHARS`; for a paper without abstract, the same over its first non-empty
  section. A real sentence (`is_boilerplate` is false) has at least 3 words, ends with ``.``,
  ``!`` or ``?``, is mostly letters, has lower-case words, and is no page furniture: no e-mail
  address or URL, no report number or arXiv id, no TeX residue (``at 11pt``), no affiliation
  (``Department of ...``), no "preprint"/"submitted to"/"typeset"/"Keywords:" line, no note about
  the paper (``Contributed paper to ...``, ``To appear in ...``, ``Supported by ...``). No real sentence: no tldr.
- **token_count**: words × 1.3 (rounded), an estimate of subword tokens; no tokenizer is run.

Which passage or sentence is a hit's evidence is decided by the indexer with the index's own
analyzer (`openxiv.indexer.evidence`); `sentence_with_context` only shows the chosen sentence.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator, Sequence
from functools import lru_cache
from itertools import islice

from openxiv.corpus.normalize import heading_key

__all__ = [
    "TLDR_MIN_CHARS",
    "clean_section_name",
    "is_boilerplate",
    "match_section",
    "real_sentences",
    "section_label",
    "sentence_with_context",
    "split_sentences",
    "tldr",
    "tldr_of",
    "token_count",
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


def _cut(text: str, limit: int) -> str:
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


def tldr_of(sentences: Iterable[str]) -> str | None:
    """The tldr made of the first two of ``sentences`` (real ones): the first, plus the second when
    the first is short."""
    first_two = list(islice(sentences, 2))
    if not first_two:
        return None
    out = first_two[0]
    if len(out) < TLDR_MIN_CHARS and len(first_two) > 1:
        out = f"{out} {first_two[1]}"
    return _cut(out, TLDR_MAX_CHARS)


def token_count(text: str | None) -> int:
    """Estimated subword tokens: words × 1.3, rounded."""
    if not text:
        return 0
    return round(len(text.split()) * 1.3)


def sentence_with_context(sentences: Sequence[str], i: int, min_chars: int = TLDR_MIN_CHARS) -> str:
    """Sentence ``i``, with the next one appended when it is shorter than ``min_chars``, cut to a
    readable length (how abstract evidence is shown; which sentence is the indexer's choice)."""
    out = sentences[i]
    if len(out) < min_chars and i + 1 < len(sentences):
        out = f"{out} {sentences[i + 1]}"
    return _cut(out, 4 * TLDR_MAX_CHARS)


def section_label(number: str | None, name: str) -> str:
    """A section as people read it: ``"3.2 Attention"``, or the bare name when it has no number."""
    return f"{number} {name}" if number else name


def clean_section_name(name: str) -> str:
    """Lower-case, white space normalised, leading numbering (``3.2``, ``IV.``, ``A.``) removed."""
    return heading_key(name, strip_number=True)


def match_section(query: str, names: Sequence[str], numbers: Sequence[str | None] = ()) -> int | None:
    """Position in ``names`` of the section ``query`` asks for, or ``None``.

    In order: exact name (case-insensitive, white space normalised); ``"<number> <name>"`` as
    printed; the names with leading numbering stripped on both sides; the stripped query as a
    substring of a stripped name (first in reading order); a bare integer as the 0-based index.
    """
    q = heading_key(query)
    if not q:
        return None
    lowered = [heading_key(n) for n in names]
    if q in lowered:
        return lowered.index(q)
    nums = list(numbers) + [None] * (len(names) - len(numbers))
    for i, (n, num) in enumerate(zip(lowered, nums, strict=True)):
        if num and q in (f"{num} {n}".lower(), f"{num}. {n}".lower()):
            return i
    qc = clean_section_name(query)
    cleaned = [clean_section_name(n) for n in names]
    if qc and qc in cleaned:
        return cleaned.index(qc)
    if qc:
        for i, c in enumerate(cleaned):
            if qc in c:
                return i
    if q.isdigit() and int(q) < len(names):
        return int(q)
    return None
