"""Small text helpers for responses: token estimate, evidence sentence, section lookup.

The sentence and tldr rules an index build also needs live in `openxiv.corpus.text` (definitions
there and in ``docs/service.md``). Everything here is extractive and deterministic:

- **token_count**: words × 1.3 (rounded), an estimate of subword tokens; no tokenizer is run.

Which passage or sentence is a hit's evidence is decided by the indexer with the index's own
analyzer (`openxiv.indexer.engine.evidence`); `sentence_with_context` only shows the chosen sentence.
"""

from __future__ import annotations

from collections.abc import Sequence

from openxiv.corpus.normalize import heading_key
from openxiv.corpus.text import TLDR_MAX_CHARS, TLDR_MIN_CHARS, shorten

__all__ = [
    "clean_section_name",
    "match_section",
    "section_label",
    "sentence_with_context",
    "token_count",
]


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
    return shorten(out, 4 * TLDR_MAX_CHARS)


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
