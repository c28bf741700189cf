"""Reader for plain-text full texts: JSON lines ``{"id": ..., "text": ...}``.

The text is the paper with blocks separated by blank lines: the title first, then headings and
paragraphs. The structure is recovered from the blocks:

- leading junk is skipped: LaTeX layout residue (``=``, ``1.25in .125in .25in``, ``.5pt``,
  ``hyperref``), lone punctuation, theorem-environment names (``Lemma Corollary``);
- the title is the first remaining block, unless it is itself a heading (``Introduction``) or a
  paragraph, in which case the title is unknown (``None``);
- a *heading* is a short one-line block (at most 12 words and 120 characters) that does not end
  with a period, starts with a capital letter or a digit, is mostly letters, and is followed by
  another block; everything else is paragraph text of the current section;
- an ``Abstract`` heading's text becomes the abstract (otherwise the abstract stays ``None``);
- a References / Bibliography section is dropped, so reference lists stay out of the passages.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from openxiv.corpus.readers._jsonl import iter_json_lines, parse_id
from openxiv.corpus.readers.unarxive import UNTITLED
from openxiv.corpus.records import PaperRecord, ReadError, SectionRecord
from openxiv.corpus.titles import normalize_whitespace

__all__ = ["FORMAT", "is_heading", "is_junk", "parse_plaintext", "read_plaintext", "split_text"]

FORMAT = "plaintext"

_UNIT = re.compile(
    r"^[-+=.,;:{}()\[\]\\0-9]*(?:in|cm|mm|pt|em|ex|truecm|truein|truept|sp|bp|pc|true)?[-+=.,;:{}()\[\]0-9]*$",
    re.IGNORECASE,
)
_THEOREM_WORDS = {
    "lemma", "corollary", "proposition", "theorem", "definition", "remark", "example", "conjecture",
    "claim", "notation", "assumption", "problem", "question", "fact", "exercise", "note",
    "observation", "hypothesis", "proof", "algorithm", "condition", "property", "case", "step",
    "construction", "result", "criterion", "axiom", "principle", "summary", "conclusion",
}  # fmt: skip
_TEX_WORDS = {"hyperref", "amsmath", "amssymb", "graphicx", "epsfig", "psfig", "revtex", "aastex"}
_REFERENCES = re.compile(
    r"^(?:\d+\.?\s*)?(?:references?(?: and notes)?|bibliography|literature cited)\.?$", re.I
)
_ABSTRACT = re.compile(r"^abstract[.:]?$", re.I)
_SECTION_NUMBER = re.compile(r"^(\d+(?:\.\d+)*\.?|[IVX]+\.?|[A-Z]\.)\s+(?=[A-Z])")
_REPORT_NUMBER = re.compile(r"^[A-Z]{2,}(?:-[A-Z]+)*(?:/\d|-\d| \d{2,4}[-/]\d)")
_TRAILING_FUNCTION_WORDS = {
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "of", "on", "or",
    "that", "the", "to", "where", "which", "with", "we", "get", "obtain", "find", "have", "has",
}  # fmt: skip
_NON_TITLES = {"introduction", "abstract", "contents", "preface", "summary", "overview"}


def is_junk(block: str) -> bool:
    """LaTeX residue or punctuation that cannot be a title or a heading."""
    words = block.split()
    if not words or not any(ch.isalpha() for ch in block) or block[0] in "=,.;:{}\\":
        return True
    if all(
        _UNIT.match(w) or w.endswith(".sty") or w.lower() in _TEX_WORDS or w.startswith("\\") for w in words
    ):
        return True
    return all(w.lower().strip(".,;:") in _THEOREM_WORDS for w in words)


def is_heading(block: str) -> bool:
    """Shape test for a heading (position is checked by the caller)."""
    if "\n" in block or len(block) > 120 or block.endswith((".", ",", ";", ":")) or "[formula]" in block:
        return False
    words = block.split()
    if not 1 <= len(words) <= 12 or not (block[0].isupper() or block[0].isdigit()):
        return False
    if any(("/" in w or "@" in w or "=" in w) for w in words):
        return False
    if words[-1].lower() in _TRAILING_FUNCTION_WORDS:
        return False
    letters = sum(ch.isalpha() for ch in block)
    return letters >= 0.6 * len(block.replace(" ", ""))


def split_text(text: str) -> tuple[str | None, str | None, list[SectionRecord]]:
    """``(title, abstract, sections)`` recovered from the blank-line-separated blocks of ``text``."""
    blocks = [b.strip() for b in re.split(r"\n\s*\n", text) if b.strip()]
    while blocks and is_junk(blocks[0]):
        blocks.pop(0)
    title: str | None = None
    if blocks:
        first = normalize_whitespace(blocks[0]) or ""
        stripped = _SECTION_NUMBER.sub("", first).lower().strip(".: ")
        if (
            len(first) <= 300
            and not first.endswith(".")
            and stripped not in _NON_TITLES
            and not _REPORT_NUMBER.match(first)
        ):
            title = first
            blocks.pop(0)

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
            m = _SECTION_NUMBER.match(heading)
            number = m.group(1).rstrip(".") if m and len(heading) > m.end() else None
            name = heading[m.end() :] if number and m else heading
            paras = []
        else:
            paras.append(" ".join(block.split()))
    close()

    abstract: str | None = None
    kept: list[SectionRecord] = []
    for sec in sections:
        if abstract is None and _ABSTRACT.match(sec.name):
            abstract = " ".join(sec.text.split())
        elif not _REFERENCES.match(sec.name):
            kept.append(sec)
    return title, abstract, kept


def parse_plaintext(obj: dict[str, Any], source: str) -> PaperRecord:
    arxiv_id, version = parse_id(obj.get("id"))
    text = obj.get("text")
    if not isinstance(text, str) or not text.strip():
        raise ValueError("missing text")
    title, abstract, sections = split_text(text)
    if not title and not any(s.text for s in sections):
        raise ValueError("missing title and text")
    return PaperRecord(
        arxiv_id=arxiv_id, source=source, version=version, title=title, abstract=abstract, sections=sections
    )


def read_plaintext(path: str | Path) -> Iterator[PaperRecord | ReadError]:
    path = Path(path)
    for item in iter_json_lines(path):
        if isinstance(item, ReadError):
            yield item
            continue
        lineno, obj = item
        try:
            yield parse_plaintext(obj, f"{FORMAT}:{path.name}:{lineno}")
        except ValueError as exc:
            yield ReadError(path.name, f"line {lineno}", str(exc))
