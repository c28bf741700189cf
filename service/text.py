"""Small text helpers for responses: token estimate, section names and lookup.

The sentence and tldr rules an index build also needs live in `openxiv.corpus.text` (definitions
there and in ``docs/service.md``). Everything here is extractive and deterministic:

- **token_count**: words × 1.3 (rounded), an estimate of subword tokens; no tokenizer is run.

How a hit's evidence sentence is shown is `openxiv.service.search.sentence_with_context`.
"""

from __future__ import annotations

from collections.abc import Sequence

from openxiv.corpus.normalize import heading_key

__all__ = [
    "clean_section_name",
    "match_section",
    "section_label",
    "token_count",
]


def token_count(text: str | None) -> int:
    """Estimated subword tokens: words × 1.3, rounded."""
    if not text:
        return 0
    return round(len(text.split()) * 1.3)


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
