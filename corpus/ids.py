"""arXiv identifiers: every spelling in, one canonical form out.

`parse_arxiv_id` accepts the forms met in listings, PDFs, agent answers and gold files::

    2301.00001  2301.00001v3  arXiv:2301.00001  arxiv--2301.00001  ARXIV_2301.00001
    https://arxiv.org/abs/2301.00001v2   https://arxiv.org/pdf/2301.00001v1.pdf
    http://export.arxiv.org/abs/2301.00001   10.48550/arXiv.2301.00001
    https://doi.org/10.48550/ARXIV.2301.00001
    hep-th/9901001  hep-th/9901001v2  math.GT/0309136 (canonical math/0309136)

and returns ``ArxivId(canonical, version)``. Anything else raises `InvalidArxivId` with the reason;
nothing is truncated or guessed from a substring.

Rules (arXiv's identifier documentation): new-style ids are ``YYMM.NNNN`` from 0704 to 1412 and
``YYMM.NNNNN`` from 1501 on; old-style ids are ``archive[.SC]/YYMMNNN`` from 9108 to 0703, and the
subject class is not part of the canonical id.
"""

from __future__ import annotations

import re
from contextlib import suppress
from dataclasses import dataclass
from datetime import date

__all__ = [
    "COMMON_NEW_STYLE",
    "ArxivId",
    "InvalidArxivId",
    "canonical_id",
    "id_archive",
    "id_month",
    "is_arxiv_id",
    "parse_arxiv_id",
    "try_canonical_id",
]


class InvalidArxivId(ValueError):
    """Raised when a string is not an arXiv identifier in any accepted spelling."""


@dataclass(frozen=True, slots=True)
class ArxivId:
    canonical: str
    version: int | None = None

    @property
    def is_old_style(self) -> bool:
        return "/" in self.canonical

    @property
    def yymm(self) -> str:
        """The year-month part, e.g. ``"2301"`` or ``"9901"`` for ``hep-th/9901001``."""
        if self.is_old_style:
            return self.canonical.split("/", 1)[1][:4]
        return self.canonical[:4]

    def with_version(self) -> str:
        return self.canonical if self.version is None else f"{self.canonical}v{self.version}"

    def __str__(self) -> str:
        return self.with_version()


_URL_PREFIX = re.compile(
    r"^(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf|html|format)/", re.IGNORECASE
)
_DOI_URL_PREFIX = re.compile(r"^(?:https?://)?(?:dx\.)?doi\.org/", re.IGNORECASE)
_ARXIV_DOI_PREFIX = re.compile(r"^10\.48550/arxiv\.", re.IGNORECASE)
_OTHER_DOI = re.compile(r"^10\.\d{4,9}/")
_ARXIV_WORD_PREFIX = re.compile(r"^arxiv[:\-_\s]*", re.IGNORECASE)
_NEW_STYLE = re.compile(r"^(\d{2})(\d{2})\.(\d{4,5})(?:v(\d+))?$")
_OLD_STYLE = re.compile(r"^([a-z][a-z\-]*)(?:\.([a-z]{2}))?/(\d{7})(?:v(\d+))?$", re.IGNORECASE)
# The spellings agents write most (bare, versioned, ``arXiv:``, abs URL, arXiv DOI) in one match; every
# string it accepts takes the same path through the general rules below, so it is only a shortcut.
COMMON_NEW_STYLE = re.compile(
    r"(?:arxiv:|https?://(?:www\.)?arxiv\.org/abs/|10\.48550/arxiv\.)?(\d{2})(\d{2})\.(\d{4,5})(?:v(\d+))?",
    re.IGNORECASE,
)
_WRAPPERS = "<>[]()\"' \t\r\n"
_MAX_LENGTH = 200


def _strip_decorations(text: str) -> str:
    s = text.strip().strip(_WRAPPERS)
    for sep in ("#", "?"):
        if sep in s:
            s = s.split(sep, 1)[0]
    s = s.rstrip("/")
    if s.lower().endswith(".pdf"):
        s = s[:-4]
    return s


def parse_arxiv_id(text: str) -> ArxivId:
    """Parse any accepted spelling of an arXiv identifier.

    >>> parse_arxiv_id("https://arxiv.org/pdf/2301.00001v2.pdf")
    ArxivId(canonical='2301.00001', version=2)
    >>> parse_arxiv_id("math.GT/0309136").canonical
    'math/0309136'
    """
    if not isinstance(text, str):
        raise InvalidArxivId(f"not a string: {text!r}")
    if _is_canonical_new_style(text):
        return ArxivId(text)
    return _parse_general(text)


def _parse_general(text: str) -> ArxivId:
    """`parse_arxiv_id` by the rules, for any spelling."""
    m = COMMON_NEW_STYLE.fullmatch(text)
    if m:
        return _new_style(m[1], m[2], m[3], m[4], text)
    if len(text) > _MAX_LENGTH:
        raise InvalidArxivId(f"too long to be an arXiv id ({len(text)} characters)")
    s = _strip_decorations(text)
    if not s:
        raise InvalidArxivId("empty identifier")
    s = _URL_PREFIX.sub("", s)
    s = _DOI_URL_PREFIX.sub("", s)
    if _ARXIV_DOI_PREFIX.match(s):
        s = _ARXIV_DOI_PREFIX.sub("", s)
    elif _OTHER_DOI.match(s):
        raise InvalidArxivId(f"{text!r} is a DOI outside arXiv (only 10.48550/arXiv.* is an arXiv id)")
    s = _ARXIV_WORD_PREFIX.sub("", s)

    m = _NEW_STYLE.match(s)
    if m:
        return _new_style(m[1], m[2], m[3], m[4], text)

    m = _OLD_STYLE.match(s)
    if m:
        archive, _subject_class, digits, version = m.groups()
        yy, mm = int(digits[:2]), int(digits[2:4])
        if not 1 <= mm <= 12:
            raise InvalidArxivId(f"{text!r}: month {digits[2:4]} does not exist")
        if not (yy >= 91 or yy <= 7) or (yy == 91 and mm < 8) or (yy == 7 and mm > 3):
            raise InvalidArxivId(f"{text!r}: old-style ids run from 9108 to 0703")
        return ArxivId(f"{archive.lower()}/{digits}", _version(version, text))

    raise InvalidArxivId(f"{text!r} is not an arXiv identifier")


def _new_style(yy: str, mm: str, number: str, version: str | None, text: str) -> ArxivId:
    """Check a ``YYMM.NNNN(N)`` id against arXiv's numbering rules."""
    month = int(mm)
    if not 1 <= month <= 12:
        raise InvalidArxivId(f"{text!r}: month {mm} does not exist")
    yymm = int(yy + mm)
    if yymm < 704 and int(yy) < 90:
        raise InvalidArxivId(f"{text!r}: new-style ids start at 0704")
    if int(yy) >= 90:
        raise InvalidArxivId(f"{text!r}: new-style ids start at 0704 (19{yy} used old-style ids)")
    if yymm <= 1412 and len(number) != 4:
        raise InvalidArxivId(f"{text!r}: ids up to 1412 have a 4-digit sequence number")
    if yymm >= 1501 and len(number) != 5:
        raise InvalidArxivId(f"{text!r}: ids from 1501 on have a 5-digit sequence number")
    return ArxivId(f"{yy}{mm}.{number}", _version(version, text))


def _version(raw: str | None, text: str) -> int | None:
    if raw is None:
        return None
    v = int(raw)
    if v < 1:
        raise InvalidArxivId(f"{text!r}: versions start at v1")
    return v


def _canonical_prefixes() -> dict[int, frozenset[str]]:
    """The ``YYMM`` prefixes `_new_style` accepts, by the number of digits of the sequence number."""
    out: dict[int, set[str]] = {4: set(), 5: set()}
    for yymm in (f"{yy:02d}{mm:02d}" for yy in range(100) for mm in range(1, 13)):
        for digits, found in out.items():
            with suppress(InvalidArxivId):
                _new_style(yymm[:2], yymm[2:], "0" * digits, None, yymm)
                found.add(yymm)
    return {digits: frozenset(found) for digits, found in out.items()}


_CANONICAL_PREFIXES = _canonical_prefixes()


def _is_canonical_new_style(text: str) -> bool:
    """True when ``text`` is a new-style id in its canonical form (``2301.00001``: no version, no
    prefix), which `parse_arxiv_id` returns as it is. Nearly every id of an ingested record has this
    form, and the store checks it once more: answered by slicing and one set look-up instead of the
    regular expression and the numbering rules (a twentieth of a listing ingest's CPU)."""
    digits = len(text) - 5
    return (
        (digits == 4 or digits == 5)
        and text[4] == "."
        and text.isascii()
        and text[5:].isdigit()
        and text[:4] in _CANONICAL_PREFIXES[digits]
    )


def canonical_id(text: str) -> str:
    """The canonical, version-free id of ``text``; raises `InvalidArxivId`."""
    return parse_arxiv_id(text).canonical


def try_canonical_id(text: object) -> str | None:
    """Like `canonical_id` but returns ``None`` for anything that is not an arXiv id."""
    if not isinstance(text, str):
        return None
    if _is_canonical_new_style(text):
        return text
    try:
        return _parse_general(text).canonical
    except InvalidArxivId:
        return None


def is_arxiv_id(text: object) -> bool:
    return try_canonical_id(text) is not None


def id_month(arxiv_id: str) -> date | None:
    """The first day of the month an id was assigned in (``YYMM`` of the id), ``None`` for a non-id.

    arXiv numbers papers by the month of their first version, so this is v1's month:

    >>> id_month("chao-dyn/9912012"), id_month("1706.03762v7")
    (datetime.date(1999, 12, 1), datetime.date(2017, 6, 1))
    """
    try:
        yymm = parse_arxiv_id(arxiv_id).yymm
    except InvalidArxivId:
        return None
    yy, mm = int(yymm[:2]), int(yymm[2:])
    return date(1900 + yy if yy >= 91 else 2000 + yy, mm, 1)


def id_archive(arxiv_id: str) -> str | None:
    """The archive of an old-style id (``chao-dyn/9912012`` -> ``chao-dyn``): its subject area, which
    arXiv chose when the paper was submitted. ``None`` for new-style ids, which carry none."""
    try:
        parsed = parse_arxiv_id(arxiv_id)
    except InvalidArxivId:
        return None
    return parsed.canonical.split("/", 1)[0] if parsed.is_old_style else None
