"""Reader for plain-text full texts: JSON lines ``{"id": ..., "text": ...}``.

The text is the paper with blocks separated by blank lines: the title first, then headings and
paragraphs. The structure is recovered from the blocks:

- the title and the authors come from the opening blocks (`plaintext_opening`: TeX residue and
  page headers skipped; no title rather than a heading, paragraph, name list or affiliation);
- a *heading* is a short one-line block (at most 12 words and 120 characters) that does not end
  with a period, starts with a capital letter or a digit, is mostly letters, and is followed by
  another block; everything else is paragraph text of the current section;
- an ``Abstract`` heading's first paragraph becomes the abstract (the paragraphs after it, up to the
  next heading, stay full text), and so does a paragraph that opens with
  ``Abstract:`` or ``Abstract.`` (otherwise the abstract stays ``None``);
- a References / Bibliography section stays out of the sections (and the passages): its blocks
  are the paper's bibliography (`openxiv.corpus.bibliography`: entries, arXiv ids, and each entry's
  citing sentence from the body's ``[\\cite=key]`` and numeric markers).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from openxiv.corpus.bibliography import entries_from_blocks, references_of, with_contexts
from openxiv.corpus.normalize import normalize_whitespace
from openxiv.corpus.readers.jsonl import parse_id, read_json_records
from openxiv.corpus.readers.plaintext_opening import (
    SECTION_NUMBER,
    TRAILING_FUNCTION_WORDS,
    is_junk,
    is_page_header,
)
from openxiv.corpus.readers.plaintext_title import split_opening
from openxiv.corpus.readers.unarxive import UNTITLED
from openxiv.corpus.records import PaperRecord, ReadError, SectionRecord

__all__ = [
    "FORMAT",
    "is_heading",
    "is_junk",
    "is_page_header",
    "parse_plaintext",
    "read_plaintext",
    "split_paper",
    "split_text",
    "split_with_bibliography",
]

FORMAT = "plaintext"

_REFERENCES = re.compile(
    r"^(?:\d+\.?\s*)?(?:references?(?: and notes)?|bibliography|literature cited)\.?$", re.I
)
_ABSTRACT = re.compile(r"^abstract[.:]?$", re.I)
_ABSTRACT_RUN_IN = re.compile(r"^abstract\s*[.:]\s+(?=\S)", re.I)


def is_heading(block: str) -> bool:
    """Shape test for a heading (position is checked by the caller)."""
    if "\n" in block or len(block) > 120 or block.endswith((".", ",", ";", ":")) or "[formula]" in block:
        return False
    words = block.split()
    if not 1 <= len(words) <= 12 or not (block[0].isupper() or block[0].isdigit()):
        return False
    if any(("/" in w or "@" in w or "=" in w) for w in words):
        return False
    if words[-1].lower() in TRAILING_FUNCTION_WORDS:
        return False
    letters = sum(ch.isalpha() for ch in block)
    return letters >= 0.6 * len(block.replace(" ", ""))


def split_text(text: str) -> tuple[str | None, str | None, list[SectionRecord]]:
    """``(title, abstract, sections)`` recovered from the blank-line-separated blocks of ``text``."""
    title, abstract, _authors, sections = split_paper(text)
    return title, abstract, sections


def split_paper(text: str) -> tuple[str | None, str | None, list[str], list[SectionRecord]]:
    """``(title, abstract, authors, sections)`` recovered from the blocks of ``text``."""
    title, abstract, authors, sections, _bibliography = split_with_bibliography(text)
    return title, abstract, authors, sections


def split_with_bibliography(
    text: str,
) -> tuple[str | None, str | None, list[str], list[SectionRecord], list[str]]:
    """`split_paper` and the blocks of the reference sections it leaves out (the bibliography)."""
    title, authors, blocks = split_opening(text)
    sections: list[SectionRecord] = []
    name: str = UNTITLED
    number: str | None = None
    paras: list[str] = []

    def close() -> None:
        if paras:
            sections.append(SectionRecord(name=name, text="\n\n".join(paras), number=number))

    for i, block in enumerate(blocks):
        followed = i + 1 < len(blocks) and not blocks[i + 1].startswith("[formula]")
        if followed and is_heading(block) and not is_junk(block):
            close()
            heading = normalize_whitespace(block) or block
            m = SECTION_NUMBER.match(heading)
            number = m.group(1).rstrip(".") if m and len(heading) > m.end() else None
            name = heading[m.end() :] if number and m else heading
            paras = []
        elif not (name == UNTITLED and is_junk(block)):  # TeX residue before the first heading
            paras.append(" ".join(block.split()))
    close()

    abstract: str | None = None
    kept: list[SectionRecord] = []
    bibliography: list[str] = []
    for sec in sections:
        if abstract is None and _ABSTRACT.match(sec.name):
            # no heading after the abstract: its first paragraph is the abstract, the rest is text
            first, _, rest = sec.text.partition("\n\n")
            abstract = " ".join(first.split())
            if rest.strip():
                kept.append(SectionRecord(name=UNTITLED, text=rest))
        elif _REFERENCES.match(sec.name):
            bibliography.extend(sec.text.split("\n\n"))
        else:
            kept.append(sec)
    if abstract is None and kept:
        abstract, kept[0] = _run_in_abstract(kept[0])
    return title, abstract, authors, [s for s in kept if s.text.strip()], bibliography


def _run_in_abstract(sec: SectionRecord) -> tuple[str | None, SectionRecord]:
    """An ``Abstract: ...`` paragraph of the first section becomes the abstract."""
    paras = sec.text.split("\n\n")
    for i, para in enumerate(paras[:6]):
        m = _ABSTRACT_RUN_IN.match(para)
        if m:
            rest = paras[:i] + paras[i + 1 :]
            return para[m.end() :].strip(), SectionRecord(sec.name, "\n\n".join(rest), sec.number)
    return None, sec


def parse_plaintext(obj: dict[str, Any], source: str) -> PaperRecord:
    arxiv_id, version = parse_id(obj.get("id"))
    text = obj.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ValueError("missing text")
    title, abstract, authors, sections, bibliography = split_with_bibliography(text)
    if not title and not any(s.text for s in sections):
        raise ValueError("missing title and text")
    entries = entries_from_blocks(bibliography)
    refs = with_contexts(
        references_of(entries, arxiv_id), entries, (p for s in sections for p in s.text.split("\n\n"))
    )
    return PaperRecord(
        arxiv_id=arxiv_id,
        source=source,
        version=version,
        title=title,
        title_source="text" if title else None,  # none: the store derives one (openxiv.corpus.titles)
        abstract=abstract,
        authors=authors,
        sections=sections,
        references=refs,
    )


def read_plaintext(path: str | Path) -> Iterator[PaperRecord | ReadError]:
    """Every line of a plain-text JSONL file, through the shared line loop (per-line errors, limits)."""
    return read_json_records(path, FORMAT, parse_plaintext)
