"""Size limits on what a JSON-lines record may carry, declared once.

A value over its limit is reported (``title: 5,012 characters, over the limit of 1,000``) and the
whole record is skipped rather than truncated: a kilobyte "title" means the line is broken (a
shifted field, a pasted body), and a truncated value would be indexed as if it were true. The limits
sit far above anything real: the longest values in the shared arXiv files are a 239-character title,
a 3,488-character listing abstract (~120,000 for one recovered from a plain-text full text), a 512-character author entry, a 3,303-author list and a 300,000-character
unarXive body.
"""

from __future__ import annotations

__all__ = [
    "MAX_ABSTRACT_CHARS",
    "MAX_AUTHORS",
    "MAX_AUTHOR_CHARS",
    "MAX_CATEGORIES",
    "MAX_CATEGORY_CHARS",
    "MAX_FIELD_CHARS",
    "MAX_LINE_BYTES",
    "MAX_SECTION_NAME_CHARS",
    "MAX_TEXT_CHARS",
    "MAX_TITLE_CHARS",
]

MAX_LINE_BYTES = 64 * 1024 * 1024
"""One JSON line, read in full before parsing; a longer line is reported without being held in memory."""
MAX_TITLE_CHARS = 1_000
"""A title (arXiv's longest are a few hundred characters)."""
MAX_ABSTRACT_CHARS = 200_000
"""An abstract. arXiv caps abstracts at 1,920 characters, but an abstract recovered from a plain-text
full text (the text under an ``Abstract`` heading) reaches ~120,000 in the shared files."""
MAX_AUTHOR_CHARS = 1_000
"""One author name (listings sometimes carry a whole collaboration in one entry)."""
MAX_AUTHORS = 10_000
"""Authors of one paper (particle-physics collaborations reach ~3,000)."""
MAX_CATEGORY_CHARS = 300
"""One category entry (listings carry MSC/ACM class strings of ~250 characters as categories)."""
MAX_CATEGORIES = 100
"""Categories of one paper."""
MAX_FIELD_CHARS = 5_000
"""Any other metadata string: comment, journal reference, DOI, licence."""
MAX_SECTION_NAME_CHARS = 1_000
"""A section heading."""
MAX_TEXT_CHARS = 20_000_000
"""The full text of one paper, all sections together (long theses reach a few million)."""
