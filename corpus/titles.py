"""Title normalisation shared by the store (`Store.find_by_title`) and the evaluator.

`normalize_title`: lowercase, accents folded, every run of punctuation or whitespace turned into
one space, trimmed. Two titles that differ only in case, punctuation, LaTeX braces or spacing
normalise to the same string::

    >>> normalize_title("  BERT: Pre-training of Deep {Bidirectional} Transformers ")
    'bert pre training of deep bidirectional transformers'
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["normalize_title", "normalize_whitespace"]

_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def _fold(text: str) -> str:
    if text.isascii():
        return text
    decomposed = unicodedata.normalize("NFKD", text)
    return "".join(ch for ch in decomposed if not unicodedata.combining(ch))


def normalize_title(title: str | None) -> str:
    """Lowercase, accents folded, punctuation to space, whitespace collapsed; ``""`` for ``None``."""
    if not title:
        return ""
    return _NON_WORD.sub(" ", _fold(title).lower()).strip()


def normalize_whitespace(text: str | None) -> str | None:
    """Collapse runs of whitespace (newlines included) into one space and trim; keep ``None``."""
    if text is None:
        return None
    out = " ".join(text.split())
    return out or None
