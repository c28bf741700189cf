"""Where a quoted span lies in a paper's stored text: exact, then normalised, then fuzzy.

A paper's stored text is its fields in reading order (title, abstract, then every full-text section
as `openxiv.corpus.store.Store.sections` returns it). `PaperText` holds them once per paper with
their word tokens, so every quote credited to the same paper reuses one tokenisation and one
n-gram index.

The three levels, tried in order, each reporting the field (section), its index and the offsets of
the span in that field's original text:

1. **exact**: the quote (trimmed) is a substring of one field, character for character.
2. **normalised**: the quote's words equal a run of the paper's words, after folding case, accents
   (NFKD, combining marks dropped) and everything that is not a letter or digit: punctuation,
   quotation marks, dashes, line breaks and hyphenation spacing do not count.
3. **fuzzy**: candidate windows from the quote's word trigrams (each trigram found in the paper
   votes for the window start it implies, trigrams seen more than `MAX_POSTINGS` times vote not),
   then rapidfuzz's ``partial_ratio_alignment`` (1 − Indel edit distance / total length, over the
   best-aligned stretch of the window) on the normalised strings of the best `MAX_WINDOWS` windows.
   The work per quote is bounded by the quote's length and `MAX_WINDOWS`, not by the paper's.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field

from rapidfuzz import fuzz

__all__ = ["Field", "Match", "PaperText", "normal_words"]

WORD = re.compile(r"[^\W_]+")
NGRAM = 3
MAX_POSTINGS = 64
"""A trigram found more often than this in one paper ("in order to") gives no useful window."""
MAX_WINDOWS = 6


@dataclass(frozen=True)
class Field:
    """One part of the stored text: ``name`` is ``title``, ``abstract`` or the section's name."""

    name: str
    text: str
    section_idx: int | None = None
    """`Section.idx` for a full-text section; ``None`` for the title and the abstract."""


@dataclass(frozen=True)
class Match:
    """Where (and how well) a quote was found in one paper."""

    level: str
    """``exact``, ``normalised``, ``fuzzy`` (similarity below 1 on the normalised words) or ``none``."""
    similarity: float
    """1.0 for exact and normalised; the rapidfuzz ratio in [0, 1] otherwise (0 without a candidate)."""
    field: str | None = None
    section_idx: int | None = None
    start: int | None = None
    end: int | None = None
    """Character offsets of the span in the field's original text."""
    span: str = ""
    """The paper's text at those offsets."""

    def found(self) -> bool:
        return self.level in ("exact", "normalised")


def _fold(word: str) -> str:
    if word.isascii():
        return word.lower()
    decomposed = unicodedata.normalize("NFKD", word)
    return "".join(c for c in decomposed if not unicodedata.combining(c)).casefold()


def normal_words(text: str) -> list[str]:
    """The folded words of ``text`` (the unit of the normalised and fuzzy levels)."""
    return [f for m in WORD.finditer(text) if (f := _fold(m.group()))]


@dataclass
class PaperText:
    """A paper's fields with their word tokens, folded and joined once for every quote."""

    arxiv_id: str
    fields: Sequence[Field]
    words: list[str] = field(init=False)
    spans: list[tuple[int, int, int]] = field(init=False)
    """Per word: its field's index and its character offsets in that field."""
    joined: str = field(init=False)
    """``" " + " ".join(words) + " "``: a word run is a substring bounded by spaces."""
    word_at: list[int] = field(init=False)
    """Character offset in ``joined`` where each word starts."""
    _grams: dict[tuple[str, ...], list[int]] | None = field(default=None, init=False)

    def __post_init__(self) -> None:
        self.words, self.spans = [], []
        for i, f in enumerate(self.fields):
            for m in WORD.finditer(f.text):
                folded = _fold(m.group())
                if folded:
                    self.words.append(folded)
                    self.spans.append((i, m.start(), m.end()))
        self.word_at, pos = [], 1
        for w in self.words:
            self.word_at.append(pos)
            pos += len(w) + 1
        self.joined = " " + " ".join(self.words) + " "

    @property
    def abstract_only(self) -> bool:
        """True when the paper has no full-text section (only its title and abstract can be searched)."""
        return all(f.section_idx is None for f in self.fields)

    # ------------------------------------------------------------------ the three levels
    def find(self, quote: str, fuzzy_min: float = 0.0) -> Match:
        """The best match of ``quote``: exact, normalised, else the best fuzzy window (``none`` when
        its similarity is below ``fuzzy_min`` or no window shares a word trigram with the quote)."""
        exact = self.find_exact(quote)
        if exact is not None:
            return exact
        qwords = normal_words(quote)
        if not qwords:
            return Match("none", 0.0)
        normalised = self.find_normalised(qwords)
        if normalised is not None:
            return normalised
        best = self.find_fuzzy(qwords)
        if best is None or best.similarity < fuzzy_min:
            return Match("none", 0.0 if best is None else best.similarity)
        return best

    def find_exact(self, quote: str) -> Match | None:
        q = quote.strip()
        if not q:
            return None
        for f in self.fields:
            at = f.text.find(q)
            if at >= 0:
                return Match("exact", 1.0, f.name, f.section_idx, at, at + len(q), f.text[at : at + len(q)])
        return None

    def find_normalised(self, qwords: list[str]) -> Match | None:
        """The quote's words as a run of the paper's words; its first and last word may be cut (a
        quote that starts or ends inside a word), the words between may not."""
        target = " ".join(qwords)
        at = self.joined.find(" " + target + " ")
        if at >= 0:
            first = bisect_right(self.word_at, at + 1) - 1
            return self._match("normalised", 1.0, first, first + len(qwords) - 1)
        at = self.joined.find(target)
        if at < 0:
            return None
        first = bisect_right(self.word_at, at) - 1
        last = bisect_right(self.word_at, at + len(target) - 1) - 1
        head = at - self.word_at[first]
        tail = self.word_at[last] + len(self.words[last]) - (at + len(target))
        return self._match("normalised", 1.0, first, last, head, tail)

    def find_fuzzy(self, qwords: list[str]) -> Match | None:
        """The best-aligned window among the candidates the quote's trigrams vote for."""
        n = NGRAM if len(qwords) >= NGRAM else 1
        grams = self._index(n)
        votes: Counter[int] = Counter()
        for j in range(len(qwords) - n + 1):
            for p in grams.get(tuple(qwords[j : j + n]), ()):
                votes[p - j] += 1
        if not votes:
            return None
        target = " ".join(qwords)
        slack = max(3, len(qwords) // 4)
        best: Match | None = None
        for start in _window_starts(votes, len(qwords)):
            lo = max(0, start - slack)
            hi = min(len(self.words), start + len(qwords) + slack)
            window, offsets = self._window(lo, hi)
            aligned = fuzz.partial_ratio_alignment(target, window)
            if aligned is None:
                continue
            sim = aligned.score / 100.0
            if best is not None and sim <= best.similarity:
                continue
            first, last = _snap(offsets, self.words[lo:hi], aligned.dest_start, aligned.dest_end)
            best = self._match("fuzzy", sim, lo + first, lo + last)
        return best

    # ------------------------------------------------------------------ helpers
    def _index(self, n: int) -> dict[tuple[str, ...], list[int]]:
        """Word n-gram → positions (built on first use; trigrams for quotes of 3 words or more)."""
        if n == NGRAM and self._grams is not None:
            return self._grams
        index: dict[tuple[str, ...], list[int]] = defaultdict(list)
        w = self.words
        for i in range(len(w) - n + 1):
            index[tuple(w[i : i + n])].append(i)
        pruned = {g: ps for g, ps in index.items() if len(ps) <= MAX_POSTINGS}
        if n == NGRAM:
            self._grams = pruned
        return pruned

    def _window(self, lo: int, hi: int) -> tuple[str, list[int]]:
        """Words ``lo..hi-1`` joined by spaces, and where each starts in that string."""
        offsets, pos = [], 0
        for w in self.words[lo:hi]:
            offsets.append(pos)
            pos += len(w) + 1
        return " ".join(self.words[lo:hi]), offsets

    def _match(self, level: str, sim: float, first: int, last: int, head: int = 0, tail: int = 0) -> Match:
        """The span of words ``first..last`` in the original text, less ``head`` characters of the
        first word and ``tail`` of the last (only where folding kept a word's length)."""
        fi, start, first_end = self.spans[first]
        li, last_start, end = self.spans[last]
        if first_end - start == len(self.words[first]):
            start += head
        if end - last_start == len(self.words[last]):
            end -= tail
        if li != fi:  # a span over a field boundary: report the first field's part
            end = len(self.fields[fi].text)
        f = self.fields[fi]
        return Match(level, sim, f.name, f.section_idx, start, end, f.text[start:end])


def _snap(offsets: list[int], words: list[str], start: int, end: int) -> tuple[int, int]:
    """The words an aligned character stretch covers: a word counts when at least half of it is
    inside (the alignment may start on a stray letter at the end of the previous word)."""
    first = bisect_right(offsets, start) - 1
    if start - offsets[first] > len(words[first]) / 2 and first + 1 < len(words):
        first += 1
    last = bisect_right(offsets, max(end - 1, 0)) - 1
    if end - offsets[last] < len(words[last]) / 2 and last > first:
        last -= 1
    return first, max(first, last)


def _window_starts(votes: Counter[int], length: int) -> list[int]:
    """The starts with the most votes, one per neighbourhood (starts closer than half a quote are
    the same window seen through a dropped or added word)."""
    chosen: list[int] = []
    radius = max(2, length // 2)
    for start, _ in sorted(votes.items(), key=lambda kv: (-kv[1], kv[0])):
        if all(abs(start - c) > radius for c in chosen):
            chosen.append(start)
            if len(chosen) == MAX_WINDOWS:
                break
    return chosen
