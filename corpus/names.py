"""The one normaliser of author names and venue strings: ingest, index and query time all use it.

`fold_text` transliterates every character to ASCII with anyascii (``ø`` -> ``o``, ``Ł`` -> ``L``,
``ß`` -> ``ss``, Cyrillic and CJK to their romanisations), casefolds, turns every run of
punctuation or whitespace into one space and trims::

    >>> fold_text("Søren  Hauberg"), fold_text("Łukasz Kaiser"), fold_text("王小明")
    ('soren hauberg', 'lukasz kaiser', 'wangxiaoming')

Accent folding by Unicode decomposition alone (NFKD, marks dropped) leaves ``ø``, ``ł``, ``đ`` and
every non-Latin script untouched, so a filter that then kept only ``[a-z0-9]`` turned "Søren" into
"s ren" and a CJK name into nothing: ASCII and native spellings never met. Transliteration makes
both spellings of a name fold to the same tokens (a CJK name folds to its anyascii form, so the
native spelling and ``WangXiaoMing`` both match it).

Titles keep their own rules (`openxiv.corpus.titles.normalize_title`, used by the evaluator to
match answers to gold titles); this module is only for names and short metadata strings.
"""

from __future__ import annotations

import re

from anyascii import anyascii

__all__ = ["fold_text", "name_tokens", "normalize_name"]

_NON_ALNUM = re.compile(r"[^0-9a-z]+")


def fold_text(text: str) -> str:
    """Transliterated, casefolded, punctuation to spaces, whitespace collapsed; ``""`` when empty."""
    if not text:
        return ""
    ascii_text = text if text.isascii() else anyascii(text)
    return _NON_ALNUM.sub(" ", ascii_text.casefold()).strip()


def normalize_name(name: str) -> str:
    """An author name as stored in ``name_norm`` and indexed: ``"José Núñez-Pérez"`` -> ``"jose nunez perez"``."""
    return fold_text(name)


def name_tokens(name: str) -> list[str]:
    """The words of a folded name (``"D'Incà, M."`` -> ``["d", "inca", "m"]``)."""
    return fold_text(name).split()
