"""Small text helpers for responses: token estimate, section names and lookup.

The sentence and tldr rules an index build also needs live in `openxiv.corpus.text` (definitions
there and in ``docs/service.md``). Everything here is extractive and deterministic:

- **token_count**: words × 1.3 (rounded), an estimate of subword tokens; no tokenizer is run.
- **ServedText**: the one cleaning rule of every text openxiv serves (abstracts, tldrs, evidence,
  find passages, section and paper text): TeX residue markers (``[\\cite=...]``, ``[formula]``, ...)
  shown as ``…`` (`openxiv.corpus.text.without_residue`). It is a pydantic type: the response models
  declare their text fields with it, so a text is cleaned where it is served, whoever built it;
  the web page, which renders stored text without a response model, calls `served_text`.

How a hit's evidence sentence is shown is `openxiv.service.hydration.sentence_with_context`.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Annotated

from pydantic import AfterValidator

from openxiv.corpus.normalize import heading_key
from openxiv.corpus.records import Paper, Section
from openxiv.corpus.text import without_residue

__all__ = [
    "ABSTRACT_IDX",
    "ServedText",
    "asked_index",
    "clean_section_name",
    "match_section",
    "section_label",
    "served_text",
    "sub_sections",
    "token_count",
    "with_abstract",
]

_INTEGER = re.compile(r"-?[0-9]+")
_ASKED_INDEX = re.compile(r"(?:idx|index)\s*[:=]\s*(-?[0-9]+)|#\s*(-?[0-9]+)", re.I)
ABSTRACT_IDX = -1
"""The ``idx`` of the abstract served as a section: before the paper's first section (0)."""


def served_text(text: str) -> str:
    """A text as openxiv serves it: TeX residue markers shown as ``…`` (the module docstring)."""
    return without_residue(text)


ServedText = Annotated[str, AfterValidator(served_text)]
"""A response model's text field: cleaned by `served_text` when the model is made."""


def token_count(text: str | None) -> int:
    """Estimated subword tokens: words × 1.3, rounded."""
    if not text:
        return 0
    return round(len(text.split()) * 1.3)


def section_label(number: str | None, name: str) -> str:
    """A section as people read it: ``"3.2 Attention"``, or the bare name when it has no number."""
    return f"{number} {name}" if number else name


def with_abstract(paper: Paper, sections: Sequence[Section]) -> list[Section]:
    """The sections a reader can ask for: the abstract first (named ``Abstract``, idx `ABSTRACT_IDX`)
    when the paper has one and no section of its own is named so, then the paper's sections."""
    if not paper.abstract or any(heading_key(s.name) == "abstract" for s in sections):
        return list(sections)
    return [Section(idx=ABSTRACT_IDX, name="Abstract", text=paper.abstract), *sections]


def clean_section_name(name: str) -> str:
    """Lower-case, white space normalised, leading numbering (``3.2``, ``IV.``, ``A.``) removed."""
    return heading_key(name, strip_number=True)


def _number_key(text: str) -> str:
    """A printed section number as compared: ``"3.2."`` -> ``"3.2"``, ``"IV"`` -> ``"iv"``."""
    return text.strip().rstrip(".):").lower()


def asked_index(query: str) -> int | None:
    """The 0-based position ``query`` asks for as one (``idx:4``, ``index=4``, ``#4``), else ``None``."""
    m = _ASKED_INDEX.fullmatch(query.strip())
    return int(m.group(1) or m.group(2)) if m else None


def sub_sections(query: str, numbers: Sequence[str | None]) -> list[int]:
    """Positions of the sections printed under the number ``query`` (``4`` -> "4.1", "4.2",
    "4.2.1", ...), in reading order; empty when ``query`` is not such a number."""
    key = _number_key(query)
    if not key or " " in key:
        return []
    return [i for i, n in enumerate(numbers) if n and _number_key(n).startswith(key + ".")]


def match_section(
    query: str, names: Sequence[str], numbers: Sequence[str | None] = (), *, by_index: bool = True
) -> int | None:
    """Position in ``names`` of the section ``query`` asks for, or ``None``.

    Printed numbers and names first, in order: the exact name (case-insensitive, white space
    normalised); ``"<number> <name>"`` as printed; the printed number alone (``3`` is the section
    printed "3 ...", ``3.2`` the one printed "3.2 ...", ``A`` appendix A; a trailing dot does not
    count); the names with leading numbering stripped on both sides; the stripped query as a
    substring of a stripped name (first in reading order). Only when none matches, and with
    ``by_index``, a bare integer is the 0-based index.
    """
    q = heading_key(query)
    if not q:
        return None
    lowered = [heading_key(n) for n in names]
    if q in lowered:
        return lowered.index(q)
    nums = [_number_key(n) if n else None for n in numbers] + [None] * (len(names) - len(numbers))
    for i, (n, num) in enumerate(zip(lowered, nums, strict=True)):
        if num and q in (f"{num} {n}", f"{num}. {n}"):
            return i
    if _number_key(q) in nums:
        return nums.index(_number_key(q))
    qc = clean_section_name(query)
    cleaned = [clean_section_name(n) for n in names]
    if qc and qc in cleaned:
        return cleaned.index(qc)
    if qc and not _INTEGER.fullmatch(qc):  # a number is not part of a name ("3" in "3D scenes")
        for i, c in enumerate(cleaned):
            if qc in c:
                return i
    if by_index and q.isdigit() and int(q) < len(names):
        return int(q)
    return None
