"""Token postings for the metadata filters: author names and venues found in time proportional to the matches.

A `TokenIndex` maps every word of a set of folded strings (distinct author names, distinct journal
references) to the keys of the strings that hold it: a sorted vocabulary plus CSR arrays. Because the
vocabulary is sorted, the words starting with a prefix are one contiguous range (found by bisection)
and their keys one contiguous slice, so a lookup touches only the postings it returns; nothing scans
the list of names.

The author rule (`AuthorMatcher`): a query name matches an author name when *every* query word
matches a word of the name (order free: "Vaswani, Ashish" = "Ashish Vaswani"), where a query word
matches a name word that

- equals it (``li`` matches "Wei Li" but not "Lin" or "Olivia");
- starts with it, when the query word is one letter (an initial: "A. Vaswani") or 4+ letters
  ("Oliv" matches "Olivia", never "Livia" inside it);
- is its initial, when the query has several words and the paper wrote an initial ("John Smith"
  matches "J. Smith").

The venue rule (`VenueMatcher`): the folded venue is a phrase, in order, of the folded journal
reference; a reference word matches a venue word when it equals it or is it followed by digits only
(a volume glued to the journal name: ``C46`` matches "Chinese Physics C").
"""

from __future__ import annotations

import bisect
import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from functools import reduce
from pathlib import Path

import numpy as np

from openxiv.corpus.normalize import fold

__all__ = ["AuthorMatcher", "TokenIndex", "VenueMatcher", "Venues", "csr", "gather", "venue_years"]

PREFIX_MIN = 4
"""A query word this long may be the start of a name word (``Vasw`` -> ``Vaswani``)."""
_YEAR = re.compile(r"(?<!\d)(1[89]\d\d|20\d\d)(?!\d)")
_EMPTY = np.zeros(0, dtype=np.int64)


def csr(lists: Sequence[Sequence[int]], n_keys: int) -> tuple[np.ndarray, np.ndarray]:
    """CSR of key -> rows from per-row key lists (rows ascending within each key)."""
    keys = np.fromiter((k for ks in lists for k in ks), dtype=np.int64)
    rows = np.repeat(np.arange(len(lists), dtype=np.int32), [len(ks) for ks in lists])
    order = np.lexsort((rows, keys))
    ptr = np.zeros(n_keys + 1, dtype=np.int64)
    np.cumsum(np.bincount(keys, minlength=n_keys), out=ptr[1:])
    return ptr, rows[order]


def gather(ptr: np.ndarray, keys: np.ndarray) -> np.ndarray:
    """Positions ``ptr[k]:ptr[k+1]`` of every key, concatenated (vectorised: no loop over keys)."""
    starts = np.asarray(ptr[keys], dtype=np.int64)
    lengths = np.asarray(ptr[keys + 1], dtype=np.int64) - starts
    total = int(lengths.sum())
    if total == 0:
        return np.zeros(0, dtype=np.int64)
    offsets = np.repeat(starts - np.cumsum(lengths) + lengths, lengths)
    return offsets + np.arange(total, dtype=np.int64)


def venue_years(journal_ref: str | None) -> list[int]:
    """The years (1800-2099) written in a journal reference."""
    return sorted({int(y) for y in _YEAR.findall(journal_ref or "")})


@dataclass
class TokenIndex:
    vocab: list[str]
    """Distinct words, sorted."""
    ptr: np.ndarray
    keys: np.ndarray
    """Keys of the strings holding ``vocab[i]``: ``keys[ptr[i]:ptr[i+1]]``, ascending."""

    @classmethod
    def build(cls, strings: Sequence[str]) -> TokenIndex:
        """Index the words of each folded string (see `_words`)."""
        pairs = sorted({(w, k) for k, s in enumerate(strings) for w in _words(s)})
        vocab = sorted({w for w, _ in pairs})
        slot = {w: i for i, w in enumerate(vocab)}
        ptr = np.zeros(len(vocab) + 1, dtype=np.int64)
        np.cumsum(np.bincount([slot[w] for w, _ in pairs], minlength=len(vocab)), out=ptr[1:])
        return cls(vocab, ptr, np.asarray([k for _, k in pairs], dtype=np.int64))

    def exact(self, word: str) -> np.ndarray:
        i = bisect.bisect_left(self.vocab, word)
        if i < len(self.vocab) and self.vocab[i] == word:
            return np.asarray(self.keys[self.ptr[i] : self.ptr[i + 1]])
        return _EMPTY

    def prefix(self, word: str) -> np.ndarray:
        lo = bisect.bisect_left(self.vocab, word)
        hi = bisect.bisect_left(self.vocab, word + "\x7f", lo)
        if hi <= lo:
            return _EMPTY
        return np.unique(self.keys[self.ptr[lo] : self.ptr[hi]])

    def save(self, directory: Path, name: str) -> None:
        (directory / f"{name}_vocab.json").write_text(json.dumps(self.vocab), encoding="utf-8")
        np.save(directory / f"{name}_ptr.npy", self.ptr)
        np.save(directory / f"{name}_keys.npy", self.keys)

    @classmethod
    def load(cls, directory: Path, name: str) -> TokenIndex | None:
        """The saved index, or ``None`` when the snapshot predates it."""
        vocab = directory / f"{name}_vocab.json"
        if not vocab.is_file():
            return None
        return cls(
            json.loads(vocab.read_text(encoding="utf-8")),
            np.load(directory / f"{name}_ptr.npy", mmap_mode="r"),
            np.load(directory / f"{name}_keys.npy", mmap_mode="r"),
        )


def _words(folded: str) -> set[str]:
    """The words of a folded string, plus the letters of a word that ends in a glued number (``c46`` -> ``c``)."""
    out = set(folded.split())
    out.update(m.group(1) for w in list(out) if (m := _GLUED.match(w)))
    return out


_GLUED = re.compile(r"^([a-z]+)\d+$")


def _intersect(sets: Iterable[np.ndarray]) -> np.ndarray:
    return reduce(lambda a, b: np.intersect1d(a, b, assume_unique=True), sets)


@dataclass
class AuthorMatcher:
    """Author-name keys for a query name (see the module docstring for the rule)."""

    tokens: TokenIndex

    def keys(self, query: str) -> np.ndarray:
        words = fold(query).split()
        if not words:
            return _EMPTY
        several = len(set(words)) > 1
        per_word = []
        for w in words:
            found = self.tokens.prefix(w) if len(w) == 1 or len(w) >= PREFIX_MIN else self.tokens.exact(w)
            if several and len(w) > 1:
                found = np.union1d(found, self.tokens.exact(w[0]))  # the paper wrote an initial
            if found.size == 0:
                return _EMPTY
            per_word.append(found)
        return _intersect(sorted(per_word, key=len))


@dataclass
class VenueMatcher:
    """Venue keys (distinct folded journal references) for a venue name, as a phrase."""

    venues: list[str]
    tokens: TokenIndex

    def keys(self, venue: str) -> np.ndarray:
        words = fold(venue).split()
        if not words:
            return _EMPTY
        candidates = _intersect(sorted((self.tokens.exact(w) for w in set(words)), key=len))
        return np.asarray(
            [k for k in candidates.tolist() if _has_phrase(self.venues[k].split(), words)], dtype=np.int64
        )


def _has_phrase(text: list[str], phrase: list[str]) -> bool:
    n = len(phrase)
    return any(
        all(_word_matches(t, p) for t, p in zip(text[i : i + n], phrase, strict=True))
        for i in range(len(text) - n + 1)
    )


def _word_matches(text_word: str, venue_word: str) -> bool:
    return text_word == venue_word or (
        text_word.startswith(venue_word) and text_word[len(venue_word) :].isdigit() and venue_word.isalpha()
    )


@dataclass
class Venues:
    """Per-snapshot venue data: distinct folded journal references and the years written in them."""

    refs: list[str]
    ptr: np.ndarray
    rows: np.ndarray
    """Paper rows of ``refs[i]``: ``rows[ptr[i]:ptr[i+1]]``."""
    years: np.ndarray
    """Distinct years (sorted) with their paper rows in ``year_ptr`` / ``year_rows``."""
    year_ptr: np.ndarray
    year_rows: np.ndarray
    tokens: TokenIndex

    def __post_init__(self) -> None:
        self._match = VenueMatcher(self.refs, self.tokens)

    @classmethod
    def build(cls, journal_refs: Sequence[str | None]) -> Venues:
        """From each paper row's journal reference (``None`` when it has none)."""
        index: dict[str, int] = {}
        per_row = []
        for ref in journal_refs:
            folded = fold(ref or "")
            per_row.append([index.setdefault(folded, len(index))] if folded else [])
        ptr, rows = csr(per_row, len(index))
        year_lists = [venue_years(ref) for ref in journal_refs]
        years = np.asarray(sorted({y for ys in year_lists for y in ys}), dtype=np.int32)
        year_ptr, year_rows = csr([np.searchsorted(years, ys).tolist() for ys in year_lists], int(years.size))
        refs = list(index)
        return cls(refs, ptr, rows, years, year_ptr, year_rows, TokenIndex.build(refs))

    def venue_keys(self, wanted: Iterable[str]) -> list[int]:
        """Keys of the references holding any wanted venue name as a phrase."""
        found = [self._match.keys(w) for w in wanted]
        return np.unique(np.concatenate(found)).tolist() if found else []

    def year_keys(self, year: int) -> list[int]:
        i = int(np.searchsorted(self.years, year))
        return [i] if i < self.years.size and int(self.years[i]) == year else []

    _ARRAYS = ("ptr", "rows", "years", "year_ptr", "year_rows")

    def save(self, directory: Path) -> None:
        (directory / "venues.json").write_text(json.dumps(self.refs), encoding="utf-8")
        for name in self._ARRAYS:
            np.save(directory / f"venue_{name}.npy", getattr(self, name))
        self.tokens.save(directory, "venue_tokens")

    @classmethod
    def load(cls, directory: Path) -> Venues | None:
        """The saved venue data, or ``None`` for a snapshot built before venues were indexed."""
        path = directory / "venues.json"
        tokens = TokenIndex.load(directory, "venue_tokens")
        if not path.is_file() or tokens is None:
            return None
        ptr, rows, years, year_ptr, year_rows = (
            np.load(directory / f"venue_{n}.npy", mmap_mode="r") for n in cls._ARRAYS
        )
        return cls(
            json.loads(path.read_text(encoding="utf-8")), ptr, rows, years, year_ptr, year_rows, tokens
        )
