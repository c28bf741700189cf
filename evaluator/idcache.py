"""Canonical arXiv ids of many strings, cached: the evaluator's fast path over `openxiv.corpus.ids`.

A submission holds a dozen predicted id strings per item and the gold as many again; each is
normalised when the file is read (is it an id or a title?) and again when it is matched. The answer
is always `openxiv.corpus.ids.try_canonical_id`'s; this module only avoids asking twice and makes the
common spellings cheap:

* `canonical_ids` takes a batch of strings and runs ONE regex over them joined by newlines: the
  corpus's own pattern for the spellings agents write most (bare, versioned, ``arXiv:``, abs URL,
  arXiv DOI), which the corpus parser sends straight to its numbering rules. Whether a string of that
  form is an id depends only on its shape (year-month, digits of the sequence number, version), so
  the corpus parser is asked once per shape, on the first string of that shape, and its answer is
  reused for every other string of the same shape (the canonical form is checked to be
  ``YYMM.NNNNN`` on that first string, else the shape always goes to the parser). Every other string
  goes to the parser.
* Every answer is kept in one dict (`try_canonical_id` reads it), so reading and matching the same
  string costs one parse.
"""

from __future__ import annotations

import re

from openxiv.corpus.ids import COMMON_NEW_STYLE
from openxiv.corpus.ids import try_canonical_id as _parse

__all__ = ["canonical_ids", "looks_like_id", "try_canonical_id"]

_MAX_ENTRIES = 1 << 21  # ~2M strings (a few hundred MB at worst); the cache starts over beyond that

# One line = one string: either the corpus's common spelling (groups set) or anything else (``.*``).
_LINES = re.compile(rf"^(?:{COMMON_NEW_STYLE.pattern}|.*)$", re.IGNORECASE | re.MULTILINE)

_cache: dict[str, str | None] = {}
_shape_ok: dict[tuple[str, int, str], bool] = {}  # (yymm, digits, version) -> the parser's verdict


def try_canonical_id(text: object) -> str | None:
    """`openxiv.corpus.ids.try_canonical_id`, answered from the cache when the string was seen."""
    if type(text) is not str:
        return _parse(text)
    c = _cache.get(text, _cache)
    if c is not _cache:
        return c  # type: ignore[return-value]
    return canonical_ids([text])[0]


_ID_HINT = re.compile(r"\d{3,}|^(?:arxiv|https?:|doi|10\.)", re.IGNORECASE)


def looks_like_id(s: str) -> bool:
    """True for strings that parse as arXiv ids, or have no spaces and look like an id attempt."""
    s = s.strip()
    if try_canonical_id(s) is not None:
        return True
    return bool(s) and not any(c.isspace() for c in s) and bool(_ID_HINT.search(s))


def canonical_ids(texts: list[str]) -> list[str | None]:
    """`try_canonical_id` of each string, in order; one regex pass over the strings not seen before."""
    cache = _cache
    new = [t for t in dict.fromkeys(texts) if t not in cache]
    if new:
        if len(cache) + len(new) > _MAX_ENTRIES:
            cache.clear()
            _shape_ok.clear()
        _fill(new)
    return [cache[t] for t in texts]


def _fill(texts: list[str]) -> None:
    joined = "\n".join(texts)
    lines = _LINES.findall(joined) if joined.count("\n") == len(texts) - 1 else None
    if lines is None or len(lines) != len(texts):  # a string with a line break (or \r oddities)
        for t in texts:
            _cache[t] = _parse(t)
        return
    cache, shape_ok = _cache, _shape_ok
    for t, (yy, mm, number, version) in zip(texts, lines, strict=True):
        if not yy:
            cache[t] = _parse(t)
            continue
        ok = shape_ok.get((yy + mm, len(number), version))
        cache[t] = _first_of_shape(t, yy + mm, number, version) if ok is None else (
            f"{yy}{mm}.{number}" if ok else None
        )  # fmt: skip


def _first_of_shape(text: str, yymm: str, number: str, version: str) -> str | None:
    """The parser's answer for ``text``, remembered for its shape when it has the expected form."""
    answer = _parse(text)
    if answer is None or answer == f"{yymm}.{number}":
        _shape_ok[(yymm, len(number), version)] = answer is not None
    return answer
