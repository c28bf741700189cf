"""Where a quoted span lies in a paper's stored text: exact, then normalised, then fuzzy.

A paper's stored text is its fields in reading order (title, abstract, then every full-text section
as `openxiv.corpus.store.Store.sections` returns it). `PaperText` holds them once per paper with
their word tokens, so every quote credited to the same paper reuses one tokenisation.

The three levels, tried in order, each reporting the field (section), its index and the offsets of
the span in that field's original text:

1. **exact**: the quote (trimmed) is a substring of one field, character for character.
2. **normalised**: the quote's words equal a run of the paper's words, after folding case, accents
   (NFKD, combining marks dropped) and everything that is not a letter or digit: punctuation,
   quotation marks, dashes, line breaks and hyphenation spacing do not count.
3. **fuzzy**: candidate windows from the quote's word trigrams (each occurrence of one in the paper
   votes for the window start it implies; trigrams seen more than `MAX_POSTINGS` times vote not; the
   paper's trigrams are one integer array, built once, tested against the quote's in one pass),
   then, in each of the best `MAX_WINDOWS` windows, the word span most similar to the quote by
   rapidfuzz's ``ratio`` (1 − Indel edit distance / total length) on the folded words, its start
   and end moved a few words each way. The work per quote is bounded by the quote's length and
   `MAX_WINDOWS`, not by the paper's.
"""

from __future__ import annotations

import re
import unicodedata
from bisect import bisect_right
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
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
    _vocab: dict[str, int] = field(default_factory=dict, init=False, repr=False)
    _grams: dict[int, np.ndarray] = field(default_factory=dict, init=False, repr=False)

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
        """The best-aligned span among the candidate windows the quote's trigrams vote for."""
        votes = self._votes(qwords, NGRAM if len(qwords) >= NGRAM else 1)
        if not votes:
            return None
        best: tuple[float, int, int] | None = None
        for start in _window_starts(votes, len(qwords)):
            found = self._align(" ".join(qwords), start, len(qwords))
            if found is not None and (best is None or found[0] > best[0]):
                best = found
        if best is None:
            return None
        sim, first, end = best
        return self._match("fuzzy", sim, first, end - 1)

    def _align(self, target: str, start: int, m: int) -> tuple[float, int, int] | None:
        """The word span ``[a, b)`` near ``[start, start + m)`` most similar to ``target`` (rapidfuzz
        ``ratio``: 1 − Indel distance / total length), its start moved first, then its end, each by up
        to `_reach` words: 2·(2·reach + 1) ratio calls on spans of about the quote's length."""
        n, reach = len(self.words), _reach(m)

        def score(a: int, b: int) -> float:
            if a < 0 or b > n or b <= a:
                return -1.0
            return fuzz.ratio(
                target, self.joined[self.word_at[a] : self.word_at[b - 1] + len(self.words[b - 1])]
            )

        a = max(range(start - reach, start + reach + 1), key=lambda x: (score(x, x + m), -abs(x - start)))
        b = max(range(a + m - reach, a + m + reach + 1), key=lambda y: (score(a, y), -abs(y - a - m)))
        sim = score(a, b)
        return None if sim < 0 else (sim / 100.0, a, b)

    # ------------------------------------------------------------------ helpers
    def _votes(self, qwords: list[str], n: int) -> Counter[int]:
        """Window starts voted for by the quote's word n-grams: each occurrence of the n-gram at quote
        position j and paper word p votes for p - j; an n-gram found more than `MAX_POSTINGS` times in
        the paper votes not. The paper's n-grams are one integer array (word ids mixed, built on
        first use), so a quote costs one vectorised membership test over it."""
        grams = self.gram_array(n)
        wanted: dict[int, list[int]] = {}
        for j in range(len(qwords) - n + 1):
            ids = [self._vocab.get(w, -1) for w in qwords[j : j + n]]
            if min(ids) >= 0:
                wanted.setdefault(_mix(ids, len(self._vocab)), []).append(j)
        votes: Counter[int] = Counter()
        if not wanted or grams.size == 0:
            return votes
        positions = np.flatnonzero(np.isin(grams, np.fromiter(wanted, dtype=np.int64)))
        found = grams[positions]
        values, counts = np.unique(found, return_counts=True)
        common = {int(v) for v, c in zip(values, counts, strict=True) if c > MAX_POSTINGS}
        for p, g in zip(positions.tolist(), found.tolist(), strict=True):
            if g not in common:
                for j in wanted[g]:
                    votes[p - j] += 1
        return votes

    def gram_array(self, n: int) -> np.ndarray:
        if n not in self._grams:
            if not self._vocab:
                for w in self.words:
                    self._vocab.setdefault(w, len(self._vocab))
            ids = np.fromiter((self._vocab[w] for w in self.words), dtype=np.int64, count=len(self.words))
            size, base = len(ids) - n + 1, len(self._vocab)
            mixed = np.zeros(max(size, 0), dtype=np.int64)
            for k in range(n):
                mixed = mixed * base + ids[k : k + size] if size > 0 else mixed
            self._grams[n] = mixed
        return self._grams[n]

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


def _mix(ids: list[int], base: int) -> int:
    """One integer for a word-id n-gram (as `PaperText.gram_array` mixes them)."""
    out = 0
    for i in ids:
        out = out * base + i
    return out


def _reach(m: int) -> int:
    """How far (words) a fuzzy span's start and end may move from where the votes put them."""
    return max(3, m // 20)


def _window_starts(votes: Counter[int], length: int) -> list[int]:
    """The starts with the most votes, one per neighbourhood (starts closer than half a quote are
    the same window seen through a dropped or added word), at most `MAX_WINDOWS`, and none with
    less than a third of the best one's votes (a stray shared phrase beside the real window)."""
    chosen: list[int] = []
    radius = max(2, length // 2)
    ranked = sorted(votes.items(), key=lambda kv: (-kv[1], kv[0]))
    floor = ranked[0][1] / 3
    for start, n in ranked:
        if n < floor:
            break
        if all(abs(start - c) > radius for c in chosen):
            chosen.append(start)
            if len(chosen) == MAX_WINDOWS:
                break
    return chosen
