"""Bibliography entries resolved to corpus papers by DOI or by title and year, at index build.

An entry that prints an arXiv id was resolved when it was read (`openxiv.corpus.bibliography`); the
others are looked up here against every paper of the snapshot's corpus copy, precision first:

- **DOI**: the entry prints the DOI a corpus paper carries (``papers.doi``, lower-cased);
- **title**: the entry's folded words (`openxiv.corpus.normalize.fold`) contain a corpus paper's
  whole folded title, of at least `MIN_TITLE_WORDS` words: its first three words as words, then
  the rest letter for letter with the spaces left out (a PDF line join writes ``Retrieval-augmented``
  as ``Retrievalaugmented``, and ``convolu- tional`` as two words), ending where a word ends; the entry
  confirms it: it prints the first author's surname or a year from one before the paper's arXiv
  year to three after (a preprint is often printed with its journal's year); a title shorter than
  `SURE_TITLE_WORDS` words needs both. When two papers' titles match, the longer wins; two
  different papers with titles of the same length leave the entry unresolved. A paper never
  resolves its own entry.

Memory is a fixed few arrays per corpus paper, never a dictionary of titles: the folded title's
first three words and its whole (spaces left out) as 64-bit hashes, its word and letter counts,
year and first author's surname hash (`TitleIndex`: 33 bytes a paper besides its id; its measured size
at millions of papers is in BENCHMARKS.md, by scripts/bench_citations.py), plus the DOIs' hashes.
An entry costs one binary search per word of it.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

import numpy as np

from openxiv.corpus.bibliography import find_doi, years_in
from openxiv.corpus.ids import id_month
from openxiv.corpus.normalize import fold

__all__ = ["MIN_TITLE_WORDS", "SURE_TITLE_WORDS", "TitleIndex", "h64"]

MIN_TITLE_WORDS = 3
"""Shortest title (in folded words) an entry is matched on."""
SURE_TITLE_WORDS = 5
"""A matched title this long needs the author or the year to agree; a shorter one needs both."""
_PREFIX = 3


def h64(text: str) -> int:
    """A stable 64-bit hash of ``text`` (the first 8 bytes of its BLAKE2b), as a signed int64."""
    return int.from_bytes(hashlib.blake2b(text.encode(), digest_size=8).digest(), "little", signed=True)


def _surname(authors_json: str | None) -> int:
    try:
        authors = json.loads(authors_json or "[]")
    except ValueError:
        return 0
    words = fold(authors[0]).split() if authors and isinstance(authors[0], str) else []
    return h64(words[-1]) if words else 0


@dataclass
class TitleIndex:
    """What resolving needs of every corpus paper (row = place in arXiv id order)."""

    ids: np.ndarray
    """Every corpus paper's arXiv id (bytes), sorted: a paper's row."""
    year: np.ndarray
    surname: np.ndarray
    prefix: np.ndarray
    """Hash of the first `_PREFIX` title words, sorted; `order` holds their rows."""
    order: np.ndarray
    full: np.ndarray
    """Hash of the whole folded title with the spaces left out."""
    words: np.ndarray
    chars: np.ndarray
    doi: np.ndarray
    """DOI hashes, sorted; `doi_rows` holds their rows."""
    doi_rows: np.ndarray

    @classmethod
    def read(cls, chunks: Iterable[list[tuple[str, str | None, str | None, str | None]]]) -> TitleIndex:
        """From ``(arxiv_id, title, authors_json, doi)`` chunks in arXiv id order."""
        ids: list[np.ndarray] = []
        year, surname, prefix, full, words, chars = (
            np.zeros(0, t) for t in ("i2", "i8", "i8", "i8", "u1", "u2")
        )
        yl: list[np.ndarray] = [year]
        sl, pl, fl, wl, cl = [surname], [prefix], [full], [words], [chars]
        dois: list[tuple[int, int]] = []
        row = 0
        for chunk in chunks:
            ids.append(np.asarray([a.encode() for a, _, _, _ in chunk], dtype="S32"))
            y, s, p, f, w, c = [], [], [], [], [], []
            for aid, title, authors, doi in chunk:
                month = id_month(aid)
                y.append(month.year if month else 0)
                s.append(_surname(authors))
                toks = fold(title).split()
                ok = len(toks) >= MIN_TITLE_WORDS
                p.append(h64(" ".join(toks[:_PREFIX])) if ok else 0)
                joined = "".join(toks)
                ok = ok and len(joined) < 65_535
                f.append(h64(joined) if ok else 0)
                w.append(min(len(toks), 255) if ok else 0)
                c.append(len(joined) if ok else 0)
                if doi:
                    dois.append((h64(doi.strip().lower()), row))
                row += 1
            yl.append(np.asarray(y, "i2"))
            sl.append(np.asarray(s, "i8"))
            pl.append(np.asarray(p, "i8"))
            fl.append(np.asarray(f, "i8"))
            wl.append(np.asarray(w, "u1"))
            cl.append(np.asarray(c, "u2"))
        all_ids = np.concatenate(ids) if ids else np.zeros(0, "S32")
        width = max(int(np.char.str_len(all_ids).max()) if all_ids.size else 1, 1)
        words = np.concatenate(wl)
        prefix = np.concatenate(pl)
        order = np.flatnonzero(words).astype(np.int32)
        order = order[np.argsort(prefix[order], kind="stable")]
        d = np.asarray(sorted(dois), dtype=np.int64).reshape(-1, 2)
        return cls(
            ids=all_ids.astype(f"S{width}"),
            year=np.concatenate(yl),
            surname=np.concatenate(sl),
            prefix=prefix[order],
            order=order,
            full=np.concatenate(fl),
            words=words,
            chars=np.concatenate(cl),
            doi=d[:, 0].copy(),
            doi_rows=d[:, 1].astype(np.int32),
        )

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in vars(self).values() if isinstance(a, np.ndarray))

    def resolve(self, text: str, own_row: int) -> tuple[int, str] | None:
        """The row of the corpus paper entry ``text`` cites and how (``"doi"`` or ``"title"``), or
        ``None`` (see the module doc)."""
        doi = find_doi(text)
        if doi:
            i = int(np.searchsorted(self.doi, h64(doi)))
            if i < self.doi.size and self.doi[i] == h64(doi) and int(self.doi_rows[i]) != own_row:
                return int(self.doi_rows[i]), "doi"
        toks = fold(text).split()
        if len(toks) < MIN_TITLE_WORDS:
            return None
        row = self._by_title(toks, set(years_in(text)), own_row)
        return None if row is None else (row, "title")

    def _by_title(self, toks: Sequence[str], years: set[int], own_row: int) -> int | None:
        found: dict[int, int] = {}  # row -> title words
        names = {h64(t) for t in toks}
        letters = "".join(toks)
        starts = np.cumsum([0, *(len(t) for t in toks)])  # where each word starts in `letters`
        ends = set(starts.tolist())
        for i in range(len(toks) - _PREFIX + 1):
            key = h64(" ".join(toks[i : i + _PREFIX]))
            lo = int(np.searchsorted(self.prefix, key))
            hi = int(np.searchsorted(self.prefix, key, side="right"))
            for row in self.order[lo:hi]:
                end = int(starts[i]) + int(self.chars[row])
                if end in ends and h64(letters[int(starts[i]) : end]) == self.full[row]:
                    found[int(row)] = int(self.words[row])
        best: list[tuple[int, int]] = []
        for row, n in found.items():
            if row == own_row:
                continue
            y = int(self.year[row])
            year_ok = any(y - 1 <= x <= y + 3 for x in years)
            author_ok = int(self.surname[row]) in names
            if (year_ok and author_ok) or (n >= SURE_TITLE_WORDS and (year_ok or author_ok)):
                best.append((n, row))
        if not best:
            return None
        best.sort(reverse=True)
        if len(best) > 1 and best[1][0] == best[0][0]:
            return None  # two papers, titles equally long: cannot tell
        return best[0][1]
