"""Page 1's title block of an arXiv PDF: the title and the author names (for `openxiv.corpus.readers.pdf`).

- **title**: `title_lines` finds the largest horizontal text in the top half of page 1 (lines of that
  size next to each other), `join_title` joins them; `metadata_title` is the PDF metadata's title, used
  by the reader only when the page has none and it looks like a title.
- **authors**: `authors` reads the person names between the title and the abstract (the rules are in
  the reader's module docstring), with the words the paper writes in lower case
  (`written_lowercase`) telling names from words.
"""

from __future__ import annotations

import re
from typing import Any

from openxiv.corpus.ids import InvalidArxivId, parse_arxiv_id
from openxiv.corpus.normalize import heading_key
from openxiv.corpus.readers.author_block import is_affiliation, lowercase_words, split_names
from openxiv.corpus.readers.pdf_layout import Line, has_letters, match_heading

__all__ = ["MAX_AUTHOR_LINES", "authors", "join_title", "metadata_title", "title_lines", "written_lowercase"]

_BAD_META_TITLE = re.compile(r"\.(?:dvi|pdf|tex|docx?)$|^untitled|^microsoft word|^arxiv:", re.I)
_TITLE_NOISE = re.compile(r"^(?:preprint|under review|published as|arxiv|proceedings)", re.I)

MAX_AUTHOR_LINES = 40
"""Lines of page 1 after the title searched for author names at most."""


def authors(lines: list[Line], title_end: tuple[int, float], vocab: set[str]) -> list[str]:
    """Author names of the title block (the rules: `openxiv.corpus.readers.pdf`'s module docstring)."""
    out: list[str] = []
    style: tuple[float, bool] | None = None  # (size, bold) of the first name line
    block = [ln for ln in lines if ln.page == 0 and ln.y0 >= title_end[1] - 1][:MAX_AUTHOR_LINES]
    for ln in _rows(block):
        text = ln.text.strip()
        if heading_key(ln.lead_bold or text).startswith("abstract") or match_heading(
            ln, 10.0, set(), appendix=False
        ):
            break
        names = _line_names(ln, vocab)
        if names is None:
            if not is_affiliation(text) and len(text) > 60:
                break  # the abstract without its heading, or body text
            continue
        if style is None:
            style = (ln.size, ln.bold)
        elif abs(ln.size - style[0]) > 0.6 or ln.bold != style[1]:
            continue  # names are set in one style; "IIIT Hyderabad" under them is an affiliation
        out.extend(n for n in names if n not in out)
    return out


def _rows(lines: list[Line]) -> list[Line]:
    """Lines top to bottom, a row (tops within a third of the text size) left to right."""
    out: list[Line] = []
    row: list[Line] = []
    for ln in sorted(lines, key=lambda ln: ln.y0):
        if row and ln.y0 - row[0].y0 > ln.size / 3:
            out.extend(sorted(row, key=lambda r: r.x0))
            row = []
        row.append(ln)
    out.extend(sorted(row, key=lambda r: r.x0))
    return out


def written_lowercase(lines: list[Line]) -> set[str]:
    return lowercase_words("\n".join(ln.text for ln in lines))


def _line_names(ln: Line, vocab: set[str]) -> list[str] | None:
    """The names of a line, from its superscript-separated pieces when it has them."""
    if len(ln.pieces) > 1:
        out: list[str] = []
        for piece in ln.pieces:
            names = split_names(piece, vocab)
            if names is None:
                return None
            out.extend(names)
        return out
    return split_names(ln.text, vocab)


def title_lines(lines: list[Line], page_height: float) -> list[Line]:
    """The lines of page 1's title: the largest text in the top half, and its neighbours of that size."""
    candidates = [
        ln
        for ln in lines
        if ln.page == 0
        and ln.y0 < 0.5 * page_height
        and has_letters(ln.text)
        and not _TITLE_NOISE.match(ln.text)
    ]
    if not candidates:
        return []
    top = max(ln.size for ln in candidates)
    same = sorted((ln for ln in candidates if abs(ln.size - top) <= 0.5), key=lambda ln: (ln.y0, ln.x0))
    group = [same[0]]
    for ln in same[1:]:
        prev = group[-1]
        if ln.y0 - prev.y1 > 1.2 * top:
            break
        group.append(ln)
    return group


def join_title(lines: list[Line]) -> str | None:
    if not lines:
        return None
    parts: list[str] = []
    for ln in lines:
        text = ln.text.strip()
        if parts and parts[-1].endswith("-") and text[:1].islower():
            parts[-1] = parts[-1][:-1] + text
        else:
            parts.append(text)
    title = " ".join(" ".join(parts).split()).strip(" *∗†‡")
    return title if has_letters(title) else None


def metadata_title(meta: dict[str, Any]) -> str | None:
    title = " ".join(str(meta.get("title") or "").split())
    if len(title) < 10 or len(title.split()) < 2 or _BAD_META_TITLE.search(title):
        return None
    try:
        parse_arxiv_id(title)
        return None
    except InvalidArxivId:
        return title
