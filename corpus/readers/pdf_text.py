"""The text of the PDF reader's lines: the document's vocabulary and lines joined into paragraphs.

`join_text` makes paragraphs of `openxiv.corpus.readers.pdf_layout.Line` records (one block is one
paragraph, a block continuing a sentence is joined to the one before) and repairs hyphenation at
line ends with `vocabulary`, the words the document itself writes (docs/pdf.md).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from openxiv.corpus.readers.line_sub import sub_marked_lines
from openxiv.corpus.readers.pdf_layout import Line

__all__ = ["join_text", "vocabulary"]

_HYPHENATED = re.compile(r"([A-Za-z]+)-$")
_LEAD_WORD = re.compile(r"^([a-z]+)")
_WORDS = re.compile(r"[a-z]+")
_SPLIT_WORD = re.compile(r"[A-Za-z]+-\n[a-z]+")
_LINE_END_HYPHEN = re.compile(r"-\n")
_SENTENCE_END = (".", "!", "?", ":", ";", '"', "”", ")", "]")


def vocabulary(lines: Iterable[Line]) -> set[str]:
    """Lower-case words of the document, to decide whether a line-end hyphen is a soft one."""
    # the fragments of a word split at a line-end hyphen are not words; a split spans the hyphen's
    # line and the next one, so only those lines need the substitution
    text = sub_marked_lines(
        _SPLIT_WORD, " ", "\n".join(ln.text for ln in lines), _LINE_END_HYPHEN, lambda m: m.end()
    )
    return set(_WORDS.findall(text.lower()))


def _join_pair(left: str, right: str, vocab: set[str]) -> str:
    """``left`` and ``right`` as one text; ``left``'s line-end hyphen dropped when it is a soft one."""
    m = _HYPHENATED.search(left[-40:])
    w = _LEAD_WORD.match(right)
    if m and w:
        a, b = m.group(1), w.group(1)
        if (a + b).lower() in vocab or not (a.lower() in vocab and b in vocab):
            return left[:-1] + right
        return left + right
    if m:  # "Physics-" + "Informed": a compound split at its hyphen
        return left + right
    return f"{left} {right}"


def join_text(lines: Sequence[Line], vocab: set[str]) -> str:
    """Paragraphs from lines: one block is one paragraph, except that a block continuing a sentence
    (previous block not ended by punctuation, this one starting in lower case) is joined to it."""
    paragraphs: list[str] = []
    parts: list[str] = []
    prev_block: tuple[int, int] | None = None
    for ln in lines:
        block = (ln.page, ln.block)
        if parts and block != prev_block and (parts[-1].endswith(_SENTENCE_END) or not ln.text[:1].islower()):
            paragraphs.append(" ".join(parts))
            parts = []
        if parts and parts[-1].endswith("-") and _HYPHENATED.search(parts[-1][-40:]):
            parts[-1] = _join_pair(parts[-1], ln.text, vocab)
        else:
            parts.append(ln.text)
        prev_block = block
    if parts:
        paragraphs.append(" ".join(parts))
    return "\n\n".join(paragraphs)
