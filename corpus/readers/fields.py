"""Typed access to the fields of one JSON object, and the size check of the record made from it.

A field of the wrong JSON type is an error that names the field and both types
(``title: expected a string, got an array``), never a Python ``repr`` stored as text. Missing and
``null`` fields are simply unknown. The size limits are in `openxiv.corpus.readers.limits`.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from openxiv.corpus.normalize import is_single_spaced, normalize_whitespace
from openxiv.corpus.readers import limits
from openxiv.corpus.records import PaperRecord

__all__ = [
    "FieldError",
    "check_limits",
    "json_type",
    "opt_str",
    "opt_text",
    "str_list",
    "str_value",
    "text_value",
]


class FieldError(ValueError):
    """A field has the wrong type or size; the message names the field."""


def json_type(value: object) -> str:
    """The JSON name of a value's type, with its article: ``an array``, ``a number``..."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    return "null" if value is None else type(value).__name__


def str_value(value: object, label: str) -> str | None:
    """``value`` stripped, ``None`` when null or blank; `FieldError` naming ``label`` unless a string."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise FieldError(f"{label}: expected a string, got {json_type(value)}")
    return value.strip() or None


def text_value(value: object, label: str) -> str | None:
    """`str_value` with whitespace runs (hard line breaks, indentation) collapsed to one space."""
    return normalize_whitespace(str_value(value, label))


def opt_str(obj: dict[str, Any], key: str) -> str | None:
    """The string field ``obj[key]`` (see `str_value`)."""
    return str_value(obj.get(key), key)


def opt_text(obj: dict[str, Any], key: str) -> str | None:
    """The text field ``obj[key]`` (see `text_value`); a string already single-spaced, as nearly
    every one is, is returned without the checks and copies of the general path."""
    value = obj.get(key)
    if type(value) is str and is_single_spaced(value):
        return value or None
    return text_value(value, key)


def str_list(obj: dict[str, Any], key: str) -> list[str]:
    """``obj[key]`` as a list of whitespace-normalised strings (nulls and blanks dropped)."""
    value = obj.get(key)
    if value is None:
        return []
    if not isinstance(value, list):
        raise FieldError(f"{key}: expected an array of strings, got {json_type(value)}")
    if _clean_strings(value):
        return list(value)
    out: list[str] = []
    for item in value:
        if item is None:
            continue
        if not isinstance(item, str):
            raise FieldError(f"{key}: expected an array of strings, got {json_type(item)} in it")
        text = " ".join(item.split())
        if text:
            out.append(text)
    return out


def _clean_strings(values: list[Any]) -> bool:
    """True when ``values`` are all non-empty strings already single-spaced (`is_single_spaced`),
    so `str_list` returns them as they are: one check of the joined list instead of a split per
    item (half a million author names in the shared listings). ``|`` next to a space only sends a
    list to the item-by-item path, which gives the same result."""
    try:
        joined = "|".join(values)
    except TypeError:  # a null or a non-string: the item-by-item path drops or reports it
        return False
    return is_single_spaced(joined) and " |" not in joined and "| " not in joined and "" not in values


_LIMITS: dict[str, int] = {name: getattr(limits, name) for name in limits.__all__}


def _check(field: str, size: int | None, limit: str, unit: str = "characters") -> None:
    if size is not None and size > _LIMITS[limit]:
        raise FieldError(f"{field}: {size:,} {unit}, over the limit of {_LIMITS[limit]:,} ({limit})")


def _chars(value: str | None) -> int | None:
    return None if value is None else len(value)


def _check_each(field: str, values: Sequence[str], limit: str) -> None:
    """`_check` of every value, naming the first one over the limit (``authors[3]``); the names are
    only formatted for a value over it (this runs for every author of every ingested record)."""
    if values and max(map(len, values)) > _LIMITS[limit]:
        for i, value in enumerate(values):
            _check(f"{field}[{i}]", len(value), limit)


_MAX_TITLE, _MAX_ABSTRACT = limits.MAX_TITLE_CHARS, limits.MAX_ABSTRACT_CHARS
_MAX_AUTHORS, _MAX_AUTHOR = limits.MAX_AUTHORS, limits.MAX_AUTHOR_CHARS
_MAX_CATEGORIES, _MAX_CATEGORY = limits.MAX_CATEGORIES, limits.MAX_CATEGORY_CHARS
_MAX_FIELD = limits.MAX_FIELD_CHARS


def _within_limits(rec: PaperRecord) -> bool:
    """True when no metadata value of ``rec`` is over its limit and it has no full text: the
    common case, answered in one expression (the named checks of `check_limits` cost more than
    building the record)."""
    return (
        not rec.sections
        and len(rec.title or "") <= _MAX_TITLE
        and len(rec.abstract or "") <= _MAX_ABSTRACT
        and len(rec.authors) <= _MAX_AUTHORS
        and (not rec.authors or max(map(len, rec.authors)) <= _MAX_AUTHOR)
        and len(rec.categories) <= _MAX_CATEGORIES
        and (not rec.categories or max(map(len, rec.categories)) <= _MAX_CATEGORY)
        and len(rec.comment or "") <= _MAX_FIELD
        and len(rec.license or "") <= _MAX_FIELD
        and len(rec.journal_ref or "") <= _MAX_FIELD
        and len(rec.doi or "") <= _MAX_FIELD
    )


def check_limits(rec: PaperRecord) -> None:
    """Raise `FieldError` for the first value of ``rec`` over its limit (the record is then skipped)."""
    if _within_limits(rec):
        return
    _check("title", _chars(rec.title), "MAX_TITLE_CHARS")
    _check("abstract", _chars(rec.abstract), "MAX_ABSTRACT_CHARS")
    _check("authors", len(rec.authors), "MAX_AUTHORS", "entries")
    _check_each("authors", rec.authors, "MAX_AUTHOR_CHARS")
    _check("categories", len(rec.categories), "MAX_CATEGORIES", "entries")
    _check_each("categories", rec.categories, "MAX_CATEGORY_CHARS")
    for name in ("comment", "license", "journal_ref", "doi"):
        _check(name, _chars(getattr(rec, name)), "MAX_FIELD_CHARS")
    for i, sec in enumerate(rec.sections):
        _check(f"sections[{i}].name", len(sec.name), "MAX_SECTION_NAME_CHARS")
    _check("full text", sum(len(s.text) for s in rec.sections), "MAX_TEXT_CHARS")
