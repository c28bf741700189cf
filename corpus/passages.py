"""Section-aware passage chunking of full text.

Each section's text is cut into overlapping windows of ``words`` words, consecutive windows sharing
``overlap`` words. A section no longer than one window is one passage; a tail of fewer than
``words // 4`` new words is merged into the previous window instead of making a tiny passage.
Windows never cross section boundaries. Offsets are character offsets in the section text, and the
passage text is exactly ``section_text[char_start:char_end]``.
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

__all__ = ["Chunk", "chunk_sections", "chunk_text", "word_spans"]

# Code points for which str.isspace() is true: the same separators as str.split() and regex \\s.
_LIMIT = 0x3001
_IS_SPACE = np.array([chr(c).isspace() for c in range(_LIMIT)] + [False], dtype=bool)
_ENCODING = "utf-32-le" if sys.byteorder == "little" else "utf-32-be"


def word_spans(text: str) -> tuple[np.ndarray, np.ndarray]:
    """Start and end character offsets of the whitespace-separated words of ``text`` (vectorised)."""
    if not text:
        empty = np.zeros(0, dtype=np.int64)
        return empty, empty
    codes = np.frombuffer(text.encode(_ENCODING, "surrogatepass"), dtype=np.uint32)
    is_word = ~_IS_SPACE[np.minimum(codes, _LIMIT)]
    edges = np.diff(np.concatenate(([False], is_word, [False])).astype(np.int8))
    return np.flatnonzero(edges == 1), np.flatnonzero(edges == -1)


@dataclass(frozen=True, slots=True)
class Chunk:
    section_idx: int
    ordinal: int
    """Position of the passage in the paper (0-based, across sections)."""
    text: str
    char_start: int
    char_end: int


def chunk_text(text: str, words: int, overlap: int) -> list[tuple[int, int]]:
    """``(char_start, char_end)`` of the windows over one text; ``[]`` when it has no words."""
    if words < 1:
        raise ValueError(f"passage size must be at least 1 word, got {words}")
    if not 0 <= overlap < words:
        raise ValueError(f"overlap must be in [0, {words}), got {overlap}")
    starts, ends = word_spans(text)
    n = len(starts)
    if n == 0:
        return []
    step = words - overlap
    tail_min = max(1, words // 4)
    out: list[tuple[int, int]] = []
    start = 0
    while True:
        end = min(start + words, n)
        if 0 < n - end < tail_min:
            end = n
        out.append((int(starts[start]), int(ends[end - 1])))
        if end >= n:
            return out
        start += step


def chunk_sections(sections: Sequence[str], words: int, overlap: int) -> list[Chunk]:
    """Passages of a paper whose sections have the given texts, in reading order."""
    chunks: list[Chunk] = []
    for idx, text in enumerate(sections):
        for start, end in chunk_text(text, words, overlap):
            chunks.append(Chunk(idx, len(chunks), text[start:end], start, end))
    return chunks
