"""arXiv categories apart from the MSC/ACM subject classes some listings put among them.

The daily listings of ``../shared`` (and arXiv's own ``msc-class``/``acm-class`` metadata, when a
listing folds it in) give some papers entries such as ``85A40, 68T07``, ``14J60 (Primary)`` or
``I.2.10; I.4.7`` among their categories. They are subject classes of the Mathematics Subject
Classification and the ACM Computing Classification System, not arXiv categories: the category
filter refuses them, and serving them as categories misleads (issue 21, item 6).

An arXiv category or archive starts with a lower-case letter and is letters and hyphens with at
most one dot (``cs.CL``, ``astro-ph.GA``, ``hep-th``, ``physics.acc-ph``, ``q-bio.NC``); an MSC code is
two digits, then a letter or hyphen and two digits, or ``xx`` (``85A40``, ``85-08``, ``68Txx``, ``85``); an
ACM code a capital A-K with dot-separated numbers or ``m`` (``I.2.10``, ``J.2``, ``A.0``, ``K.4.m``), so
none of them overlap. `split_categories` keeps the stored list as it is (the corpus stores what its
input gave, and its content hash covers it) and is applied where papers are served. A value that is
neither (a listing's stray comment, ``accepted for Astronomy & Astrophysics``) is served as neither.
"""

from __future__ import annotations

import re
from collections.abc import Iterable

__all__ = ["is_arxiv_category", "split_categories"]

_ARXIV_CATEGORY = re.compile(r"[a-z][a-z-]*(?:\.[A-Za-z][A-Za-z-]*)?")
_SUBJECT_CLASS = re.compile(r"\d{2}(?:[A-Z-]\d{2}|[A-Z-][Xx]{2}|-XX)?|[A-K](?:\.(?:\d+|m))+")
_SEPARATORS = re.compile(r"[;,\s]+")


def is_arxiv_category(value: str) -> bool:
    """``value`` is shaped like an arXiv category or archive (see the module docstring)."""
    return _ARXIV_CATEGORY.fullmatch(value) is not None


def split_categories(values: Iterable[str]) -> tuple[list[str], list[str]]:
    """(arXiv categories, subject classes) of a stored category list, both in order and without
    duplicates. Classes given together (``"I.2.10; I.4.7"``, ``"14J60 (Primary) 14F05, 14J26
    (Secondary)"``) are split into their codes; words that are no code are left out."""
    categories: dict[str, None] = {}
    classes: dict[str, None] = {}
    for value in values:
        if is_arxiv_category(value):
            categories[value] = None
            continue
        for word in _SEPARATORS.split(value):
            if _SUBJECT_CLASS.fullmatch(word):
                classes[word] = None
    return list(categories), list(classes)
