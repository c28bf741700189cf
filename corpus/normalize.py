"""The one text normaliser: names, titles and section headings, at ingest, index and query time.

`fold` is the comparison form of any short string. It turns symbols and punctuation into spaces,
transliterates every letter to ASCII with anyascii (``ø`` -> ``o``, ``Ł`` -> ``L``, ``ß`` -> ``ss``,
Greek, Cyrillic and CJK to their romanisations), casefolds, turns every run of anything but
``[0-9a-z]`` into one space and trims::

    >>> fold("Søren  Hauberg"), fold("Łukasz Kaiser"), fold("王小明")
    ('soren hauberg', 'lukasz kaiser', 'wangxiaoming')
    >>> fold("  BERT: Pre-training of Deep {Bidirectional} Transformers ")
    'bert pre training of deep bidirectional transformers'

Accent folding by Unicode decomposition alone (NFKD, marks dropped) leaves ``ø``, ``ł``, ``đ`` and
every non-Latin script untouched, so the ASCII and the native spelling of a name or a title never
met. Transliteration makes both fold to the same tokens. `normalize_name` (authors, venues:
``paper_authors.name_norm``, the author postings and the query) and `normalize_title`
(``papers.title_norm``, `Store.find_by_title`, the evaluator's title matching) are both `fold`;
the evaluator only strips search-engine noise (``[PDF]``, ``- arXiv``) before folding.

`heading_key` is the comparison form of a section heading: lower case, white space collapsed,
trailing punctuation dropped and, with ``strip_number``, a leading ``3.2``/``IV.``/``A.`` removed.
Headings keep their non-ASCII letters (only equality and containment are asked of them).
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

from anyascii import anyascii

__all__ = [
    "fold",
    "heading_key",
    "is_single_spaced",
    "name_tokens",
    "normalize_name",
    "normalize_names",
    "normalize_title",
    "normalize_whitespace",
]

_NON_ALNUM = re.compile(r"[^0-9a-z]+")
_NON_WORD = re.compile(r"[^\w\u0300-\u036f]+")
_SPACES = re.compile(r"\s+")
_SPACE_RUNS = re.compile(r" {2,}")
_LEADING_NUMBER = re.compile(r"^\s*(?:[0-9]+(?:\.[0-9]+)*[.):]?|(?:[IVXLC]+|[A-Z])[.):])\s+(?=\S)")
_TRAILING_PUNCT = ".:—-– "


_ASCII_FOLD = bytes(c if chr(c).isalnum() and c < 128 else 32 for c in range(256)).lower()
"""A byte table: ASCII letters to lower case, digits kept, every other byte to a space."""


def fold(text: str | None) -> str:
    """Transliterated, casefolded, non-alphanumerics to single spaces, trimmed; ``""`` when empty."""
    if not text:
        return ""
    if not text.isascii():
        # symbols and punctuation go before transliteration: "360°" is "360", not "360deg"
        text = anyascii(_NON_WORD.sub(" ", unicodedata.normalize("NFC", text)))
        if not text.isascii():  # anyascii leaves nothing else, but the byte table needs ASCII
            return _NON_ALNUM.sub(" ", text.casefold()).strip()
    # the same as the regex substitution above, by a byte table: a third of the CPU on titles
    # and names, folded once per paper and per author at ingest
    return " ".join(text.encode("ascii").translate(_ASCII_FOLD).decode("ascii").split())


@lru_cache(maxsize=1 << 16)
def normalize_name(name: str | None) -> str:
    """An author name as stored in ``name_norm`` and indexed: ``"José Núñez-Pérez"`` -> ``"jose nunez perez"``.
    Cached: the same names come back paper after paper during an ingest and an index build."""
    return fold(name)


_ASCII_FOLD_LINES = _ASCII_FOLD[:10] + b"\n" + _ASCII_FOLD[11:]
"""`_ASCII_FOLD` keeping line breaks, to fold many strings joined by them at once."""


def normalize_names(names: Sequence[str]) -> list[str]:
    """`normalize_name` of each of ``names`` (one paper's authors): ASCII lists are folded in one
    translation of their joined text, since calling `fold` per name (and caching it) was the largest
    Python cost of writing a listing's author rows; any other list name by name. The spaces are
    collapsed and trimmed over the whole text too (one substitution and two replacements rather
    than a split and a join per name)."""
    joined = "\n".join(names)
    if joined.isascii() and joined.count("\n") == len(names) - 1:
        folded = joined.encode("ascii").translate(_ASCII_FOLD_LINES).decode("ascii")
        if "  " in folded:
            folded = _SPACE_RUNS.sub(" ", folded)
        return folded.replace(" \n", "\n").replace("\n ", "\n").strip(" ").split("\n")
    return [normalize_name(name) for name in names]


def normalize_title(title: str | None) -> str:
    """A title as stored in ``title_norm`` and matched: ``"Attention Is All You Need!"`` -> ``"attention is all you need"``."""
    return fold(title)


def name_tokens(name: str | None) -> list[str]:
    """The words of a folded name (``"D'Incà, M."`` -> ``["d", "inca", "m"]``)."""
    return fold(name).split()


def heading_key(text: str, strip_number: bool = False) -> str:
    """Comparison form of a heading: ``"3.2  Related Work:"`` -> ``"3.2 related work"``, ``"related work"`` with ``strip_number``."""
    # the PDF reader asks this of every line it reads, nearly all of them single-spaced already
    key = text if is_single_spaced(text) else _SPACES.sub(" ", text).strip()
    if strip_number:
        key = _LEADING_NUMBER.sub("", key, count=1)
    return key.rstrip(_TRAILING_PUNCT).lower()


_ASCII_CONTROLS = bytes(range(32)) + b"\x7f"
"""The ASCII characters `str.isprintable` rejects (every ASCII whitespace character but the space is one)."""


def is_single_spaced(text: str) -> bool:
    """True when ``" ".join(text.split()) == text``, checked without splitting: every whitespace
    character but the space is unprintable, so a printable text without double, leading or trailing
    spaces is already collapsed (what nearly every ingested value is; splitting each one cost more
    than parsing its JSON line). An ASCII text is printable when deleting its control characters
    by a byte translation leaves its length: the same answer as `str.isprintable` for two thirds of
    its CPU on long texts (it looks each character up in the Unicode tables; abstracts are long),
    though not on short ones (titles, names), which keep `str.isprintable`."""
    if len(text) > 128 and text.isascii():
        printable = len(text.encode("ascii").translate(None, _ASCII_CONTROLS)) == len(text)
    else:
        printable = text.isprintable()
    return printable and "  " not in text and text[:1] != " " and text[-1:] != " "


def normalize_whitespace(text: str | None) -> str | None:
    """Collapse runs of whitespace (newlines included) into one space and trim; keep ``None``."""
    if text is None:
        return None
    out = text if is_single_spaced(text) else " ".join(text.split())
    return out or None
