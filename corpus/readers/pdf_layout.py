"""Layout analysis for the PDF reader: lines with their style, page furniture, headings.

`extract_lines` makes the one pass over PyMuPDF's ``page.get_text("dict")`` output and flattens it
into `Line` records (text, dominant font size, bold, position, page, block). Everything else here
works on those lines, never on characters:

- `body_size`: the most common font size weighted by characters: the body text;
- `drop_furniture`: running headers and footers (the same text, digits ignored, in the top or
  bottom margin of at least three pages), lone page numbers in the margins, footnotes (text
  smaller than the body below the last body-size line of its page), text under 80% of the body
  size (tables, figure labels), equation debris and table-of-contents lines (dot leaders);
- `match_heading`: whether a line is a section heading (bold or larger than the body; numbered
  ``1``, ``2.3``, ``A.1``, ``IV.``, or a known name such as *Introduction*; see the function).

Their text is joined into paragraphs by `openxiv.corpus.readers.pdf_text`.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from itertools import islice
from typing import Any

from openxiv.corpus.normalize import heading_key

__all__ = [
    "Heading",
    "Line",
    "body_size",
    "drop_furniture",
    "extract_lines",
    "has_letters",
    "match_heading",
    "merge_heading_continuations",
    "merge_number_lines",
]

_SUPERSCRIPT, _BOLD = 1, 16
_BOLD_FONT = re.compile(r"bold|black|heavy|semibold|demi|cmbx|\bbd\b|-bd|medi", re.I)
_DIGITS = re.compile(r"\d+")
_LETTERS = re.compile(r"[^\W\d_]")
_PAGE_NUMBER = re.compile(r"^(?:page\s*)?(?:\d{1,4}|[ivxlc]{1,6})(?:\s*(?:of|/)\s*\d{1,4})?$", re.I)
_NUMBER_TOKEN = re.compile(r"^(?:\d{1,2}(?:\.\d{1,2}){0,3}|[A-Z](?:\.\d{1,2}){0,3}|[IVX]{1,5})\.?$")
_NUMBERED = re.compile(
    r"^(?P<num>\d{1,2}(?:\.\d{1,2}){0,3}|[A-Z](?:\.\d{1,2}){0,3}|[IVX]{1,5})(?P<dot>\.?)\s+(?P<name>\S.*)$"
)
_ROMAN = re.compile(r"^[IVX]{1,5}$")
_CONTENTS = re.compile(r"(?:\.\s?){5,}\s*\d*$|^(?:table of )?contents$", re.I)
_SENTENCE_BREAK = re.compile(r"[a-z]{3}\.\s+[A-Z]")


def has_letters(text: str, n: int = 3) -> bool:
    """``text`` holds at least ``n`` letters; stops at the ``n``-th (a section's whole text was
    scanned to count every letter just to compare the count with 3)."""
    return sum(1 for _ in islice(_LETTERS.finditer(text), n)) >= n


@dataclass(slots=True)
class Line:
    """One visual line of text (horizontal writing only)."""

    page: int
    block: int
    x0: float
    y0: float
    x1: float
    y1: float
    text: str
    size: float
    """Font size of most of the line's characters."""
    bold: bool
    """The line starts bold and at least 60% of its characters are bold (math may interrupt it)."""
    lead_bold: str
    """The bold text the line starts with when the rest is not bold (run-in headings)."""
    pieces: tuple[str, ...] = ()
    """The text cut at the superscripts that were dropped (``Kelvin Guu *1 Kenton Lee *1`` gives
    ``("Kelvin Guu", "Kenton Lee")``): where a title page separates author names; empty when the
    line had no superscript."""


@dataclass(slots=True)
class Heading:
    name: str
    number: str | None


class _BoldFonts(dict[str, bool]):
    """Whether a font's name says bold, computed once per font name."""

    def __missing__(self, font: str) -> bool:
        bold = self[font] = bool(_BOLD_FONT.search(font))
        return bold


_BOLD_FONTS = _BoldFonts()


def _is_bold(span: dict[str, Any]) -> bool:
    return bool(span["flags"] & _BOLD) or _BOLD_FONTS[span["font"]]


def extract_lines(page_dicts: Iterable[tuple[int, dict[str, Any]]]) -> tuple[list[Line], list[str]]:
    """Flatten page dicts into horizontal `Line` records; return them and page 1's rotated text.

    Superscripts smaller than the line's text (footnote marks, affiliation numbers) are dropped.
    Rotated text (the arXiv margin stamp, axis labels) is kept out of the lines; rotated lines of
    the first page are returned separately so the caller can find the stamp in them.
    """
    lines: list[Line] = []
    rotated: list[str] = []
    for pno, page in page_dicts:
        for block in page.get("blocks", ()):
            number = block["number"]
            for ln in block.get("lines", ()):
                spans = ln["spans"]
                if ln["dir"][0] < 0.99:  # rotated or vertical
                    if pno == 0:
                        rotated.append("".join(s["text"] for s in spans))
                    continue
                if len(spans) == 1:  # the common case, without the bookkeeping below
                    span = spans[0]
                    text = _collapse(span["text"])
                    if not text:
                        continue
                    size, bold, lead = round(span["size"], 1), _is_bold(span), ""
                    pieces: tuple[str, ...] = ()
                else:
                    style = _line_style(spans, pno)
                    if style is None:
                        continue
                    text, size, bold, lead, pieces = style
                x0, y0, x1, y1 = ln["bbox"]
                lines.append(Line(pno, number, x0, y0, x1, y1, text, size, bold, lead, pieces))
    return lines, rotated


def _collapse(text: str) -> str:
    """Whitespace runs to one space, trimmed (``str.split`` splits where ``\\s+`` matches)."""
    return " ".join(text.split())


def _line_style(
    spans: list[dict[str, Any]], pno: int
) -> tuple[str, float, bool, str, tuple[str, ...]] | None:
    """``(text, size, bold, lead_bold, pieces)`` of a line of several spans (see `Line`), or ``None``
    when nothing is inked once small superscripts are dropped."""
    # one comprehension per pass over the spans: this runs for ~24,000 lines and ~230,000 spans
    # in the 28 shared PDFs
    inked = [s for s in spans if not s["text"].isspace() and s["text"]]
    if not inked:
        return None
    big = max([s["size"] for s in inked])
    kept = spans
    if any([s["flags"] & _SUPERSCRIPT for s in spans]):
        kept = [s for s in spans if not (s["flags"] & _SUPERSCRIPT and s["size"] < 0.85 * big)]
        inked = [s for s in kept if not s["text"].isspace() and s["text"]]
        if not inked:
            return None
    bolds = [_is_bold(s) for s in inked]
    bold_chars = 0
    chars: dict[float, int] = {}  # characters per exact size, in order of first use
    for s, b in zip(inked, bolds, strict=True):
        n = len(s["text"])
        chars[s["size"]] = chars.get(s["size"], 0) + n
        if b:
            bold_chars += n
    # per size rounded to 0.1 pt, rounding each distinct size once (`round` with digits is slow);
    # a rounded size still comes first where its first span was
    sizes: dict[float, int] = {}
    for exact, n in chars.items():
        key = round(exact, 1)
        sizes[key] = sizes.get(key, 0) + n
    size = max(sizes, key=sizes.__getitem__)
    # a bold line with some math in it ("5.2. Avoids MLP.k Regions") is still bold
    bold, lead = bolds[0] and bold_chars >= 0.6 * sum(sizes.values()), ""
    if bolds[0] and not bold:
        first_plain = kept.index(inked[bolds.index(False)])
        lead = _collapse("".join(s["text"] for s in kept[:first_plain]))
    text = _collapse("".join(s["text"] for s in kept))
    pieces = _pieces(spans, big) if len(kept) < len(spans) and pno == 0 else ()
    return text, size, bold, lead, pieces


def _pieces(spans: list[dict[str, Any]], big: float) -> tuple[str, ...]:
    """The line's text cut at its small superscripts (author-affiliation marks)."""
    out: list[str] = []
    cur: list[str] = []
    for s in spans:
        if s["flags"] & _SUPERSCRIPT and s["size"] < 0.85 * big:
            out.append("".join(cur))
            cur = []
        else:
            cur.append(s["text"])
    out.append("".join(cur))
    cleaned = (_collapse(p).strip(" ,;") for p in out)
    return tuple(p for p in cleaned if p)


def body_size(lines: Sequence[Line]) -> float:
    """The most common font size, weighted by characters, rounded to half points."""
    counts: Counter[float] = Counter()
    for ln in lines:
        counts[round(ln.size * 2) / 2] += len(ln.text)
    return counts.most_common(1)[0][0] if counts else 10.0


def drop_furniture(lines: list[Line], page_heights: Sequence[float], body: float) -> list[Line]:
    """Remove running headers/footers, margin page numbers, footnotes and tiny text (tables, figures)."""
    n_pages = len(page_heights)
    on_pages: set[tuple[int, str]] = set()
    keyed: list[str | None] = []
    for ln in lines:
        h = page_heights[ln.page]
        if ln.y1 < 0.09 * h or ln.y0 > 0.91 * h:
            key = _DIGITS.sub("#", ln.text.lower())
            keyed.append(key)
            on_pages.add((ln.page, key))
        else:
            keyed.append(None)
    per_key: Counter[str] = Counter(key for _, key in on_pages)
    repeat = 3 if n_pages >= 4 else 2
    # lowest body-size line per page: smaller text below it is footnotes
    body_bottom: dict[int, float] = {}
    for ln in lines:
        if abs(ln.size - body) <= 0.6 and len(ln.text) > 30:
            body_bottom[ln.page] = max(body_bottom.get(ln.page, 0.0), ln.y1)
    out: list[Line] = []
    for ln, mkey in zip(lines, keyed, strict=True):
        if mkey is not None and (per_key[mkey] >= repeat or _PAGE_NUMBER.match(ln.text)):
            continue
        if ln.size < 0.8 * body:
            continue
        if ln.size < body - 0.6 and ln.y0 > body_bottom.get(ln.page, 1e9):
            continue
        if len(ln.text) <= 3 and len(_LETTERS.findall(ln.text)) <= 1:  # equation debris: "x", "(1)"
            continue
        if _CONTENTS.search(ln.text):  # a table of contents: dot leaders, or its title
            continue
        out.append(ln)
    return out


def merge_number_lines(lines: list[Line]) -> list[Line]:
    """Join pieces of one visual line that PyMuPDF split at wide gaps (justified headings, a section
    number set apart from its title): consecutive, same baseline, left to right, and in the same
    block, or the left piece a lone section number."""
    out: list[Line] = []
    for ln in lines:
        prev = out[-1] if out else None
        if prev is not None and prev.page == ln.page and abs(prev.y1 - ln.y1) < 0.4 * max(prev.size, ln.size):
            gap = ln.x0 - prev.x1
            same_block = prev.block == ln.block and abs(prev.size - ln.size) < 0.6
            if -1 < gap < 4 * ln.size and (same_block or _NUMBER_TOKEN.match(prev.text)):
                lone_number = _NUMBER_TOKEN.match(prev.text) is not None
                out[-1] = Line(
                    prev.page, prev.block, prev.x0, min(prev.y0, ln.y0), ln.x1, max(prev.y1, ln.y1),
                    f"{prev.text} {ln.text}", ln.size if lone_number else prev.size,
                    prev.bold and ln.bold, prev.lead_bold or (prev.text if prev.bold and not ln.bold else ""),
                )  # fmt: skip
                continue
        out.append(ln)
    return out


def merge_heading_continuations(lines: list[Line]) -> list[Line]:
    """Join a wrapped heading's second line to its first: same page, size and boldness, bold or
    larger text, at most 0.4 line heights below, first line not ending a sentence."""
    out: list[Line] = []
    for ln in lines:
        prev = out[-1] if out else None
        if (
            prev is not None
            and prev.bold
            and ln.bold
            and prev.page == ln.page
            and abs(prev.size - ln.size) < 0.3
            and -0.5 * ln.size <= ln.y0 - prev.y1 < 0.4 * ln.size
            and ln.x0 < prev.x0 + 3 * ln.size
            and (_NUMBERED.match(prev.text) or prev.text.lower().startswith("appendi"))
            and len(prev.text) + len(ln.text) < 120
            and not prev.text.endswith((".", ":"))
            and not _NUMBERED.match(ln.text)
        ):
            if prev.text.endswith("-"):  # "Batch-" + "Normalized", "Mixture Us-" + "age"
                text = (prev.text[:-1] if ln.text[:1].islower() else prev.text) + ln.text
            else:
                text = f"{prev.text} {ln.text}"
            out[-1] = Line(
                prev.page, prev.block, prev.x0, prev.y0, max(prev.x1, ln.x1), ln.y1,
                text, prev.size, True, "",
            )  # fmt: skip
            continue
        out.append(ln)
    return out


KNOWN_NAMES = {
    "abstract", "introduction", "related work", "related works", "background", "preliminaries",
    "method", "methods", "methodology", "approach", "experiments", "experimental setup", "results",
    "evaluation", "discussion", "limitations", "conclusion", "conclusions", "concluding remarks",
    "conclusion and future work", "conclusions and future work", "future work", "summary",
    "acknowledgments", "acknowledgements", "acknowledgment", "acknowledgement", "references",
    "bibliography", "literature cited", "works cited", "appendix", "appendices",
    "supplementary material", "broader impact", "broader impacts", "broader impact statement",
    "ethics statement", "ethical considerations", "reproducibility statement", "impact statement",
    "author contributions", "contributions", "keywords", "ccs concepts", "index terms",
    "acm reference format", "checklist", "neurips paper checklist", "paper checklist",
    "reproducibility checklist",
}  # fmt: skip
FRONT_MATTER = {"keywords", "ccs concepts", "index terms", "acm reference format"}
REFERENCE_NAMES = {"references", "bibliography", "literature cited", "works cited", "reference"}
END_NAMES = {"checklist", "neurips paper checklist", "paper checklist", "reproducibility checklist"}
"""Headings after which nothing is kept (author checklists close NeurIPS papers)."""


def _all_capitals(text: str) -> bool:
    """At least 4 letters, all capitals. For ASCII text, where the cased characters are the letters,
    ``str.isupper`` answers it before any letter is collected (nearly every line is not)."""
    if text.isascii():
        return text.isupper() and len(_LETTERS.findall(text)) >= 4
    letters = _LETTERS.findall(text)
    return len(letters) >= 4 and "".join(letters).isupper()


def match_heading(
    ln: Line, body: float, heading_styles: set[tuple[float, bool]], appendix: bool
) -> Heading | None:
    """The heading this line is, or ``None``.

    A heading is short (at most 100 characters and 14 words), styled apart from the body (all bold,
    all capitals, or at least 1.5 pt larger) and either numbered (``3``, ``3.2``, ``3.2.1``, ``A.1``, ``IV.``;
    a lone letter needs a dot unless we are past the references) with a name that is mostly letters
    and not a sentence (no inner full stop, no trailing colon or comma), or a known name (*Introduction*, *Related Work*, *Conclusion*, *References*, ...). Unnumbered
    lines in the style of the paper's numbered section headings (``heading_styles``, larger than
    the body) are headings too. A standalone *References* line counts in any style.
    """
    text = ln.text
    if len(text) > 100 or len(text) < 3:
        return None
    caps = _all_capitals(text)  # small-caps headings (ICLR, ACM)
    styled = ln.bold or ln.size >= body + 1.5 or caps
    key = heading_key(text)
    if key in REFERENCE_NAMES and ln.size >= body - 0.6:
        return Heading(text.rstrip(".: "), None)
    if not styled:
        return None
    m = _NUMBERED.match(text)
    if m:
        num, dot, name = m.group("num"), m.group("dot"), m.group("name").strip()
        n_letters = len(_LETTERS.findall(name))
        if (
            n_letters >= 2
            and n_letters >= 0.6 * len(name.replace(" ", ""))
            and len(name.split()) <= 14
            and not name.endswith((":", ",", ";"))
            and not _SENTENCE_BREAK.search(name)
        ):
            if num[0].isdigit() and int(num.split(".")[0]) > 30:
                return None
            if _ROMAN.match(num) and not dot and not (appendix and len(num) == 1):
                num = ""  # "I think" / "V" alone: not a numbered heading
            elif num.isalpha() and len(num) == 1 and not dot and (not appendix or name[0].islower()):
                num = ""  # "A" alone numbers appendices only, and "I found ..." is a sentence
            if num and (name[0].isalpha() or name[0] in '[("“‘'):
                return Heading(name.rstrip(". "), num)
    if len(text.split()) > 14:
        return None
    if (key in KNOWN_NAMES or key.startswith(("appendix ", "appendices"))) and (
        ln.size > body + 0.5 or not text.endswith(".")  # "Methods." at body size is a run-in
    ):
        return Heading(text.rstrip(".: "), None)
    if (
        (round(ln.size * 2) / 2, ln.bold) in heading_styles
        and ln.size > body + 0.5
        and not text.endswith((".", ",", ":"))
        and text[0].isupper()
        and len(text.split()) <= 10
    ):
        return Heading(text, None)
    return None
