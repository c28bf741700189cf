"""Reader for arXiv PDFs (PyMuPDF): id, title, abstract and sections recovered from the layout.

`read_pdf(path)` returns one `PaperRecord`, or a `ReadError` for a file it cannot use (not a PDF,
truncated, encrypted, no pages, no text, no arXiv id); it never raises for bad input.

- **arXiv id**: from the rotated margin stamp of page 1 (``arXiv:2203.02155v1 [cs.CL] 4 Mar 2022``
  gives id, version, primary category and the date of that version), else from the file name
  (``2206.10883v3.pdf``).
- **title**: the largest horizontal text in the top half of page 1 (lines of that size next to
  each other are joined); the PDF metadata title only when none is found and it looks like a title.
- **abstract**: the text after an *Abstract* heading (or a bold *Abstract.* run-in) up to the next
  heading or the first change of font size (footnotes); without a heading, the longest paragraph
  of page 1 before the first section heading.
- **sections**: one `SectionRecord` per heading (see `pdf_layout.match_heading`), text joined into
  paragraphs with page furniture removed. *References*/*Bibliography* and the reference list are
  kept out; headed appendices after the reference list are kept as sections.
- **authors**: the person names of page 1 between the title and the abstract (its heading, or the
  first line that is neither names nor an affiliation and runs longer than a name line). A line
  counts only when all of it reads as names (`names.split_names`: no institution word, e-mail,
  function word or date; each name has a word the paper never writes in lower case); names set
  apart by affiliation superscripts (``Kelvin Guu *1 Kenton Lee *1``) are split there. A line that
  is partly names (``Joseph (Yossi) Gil``) is left out: precision over recall.
- **categories**: the primary category of the margin stamp (``[cs.CL]``); **dates**: the stamp's
  date is the date of the version the PDF shows (``updated``), and v1's date (``published``) only
  when that version is v1.

This module reads the file, the stamp and the structure after the title; page 1's title block (title
and authors) is `pdf_front`'s, the lines, furniture and headings `pdf_layout`'s, the paragraphs
`pdf_text`'s.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterator
from datetime import date, datetime
from pathlib import Path
from typing import Any

from openxiv.corpus.bibliography import entries_from_lines, references_of, with_contexts
from openxiv.corpus.extras import import_pymupdf, missing_extra
from openxiv.corpus.ids import InvalidArxivId, parse_arxiv_id
from openxiv.corpus.normalize import heading_key
from openxiv.corpus.readers import pdf_front
from openxiv.corpus.readers.pdf_layout import (
    END_NAMES,
    FRONT_MATTER,
    REFERENCE_NAMES,
    Heading,
    Line,
    body_size,
    drop_furniture,
    extract_lines,
    has_letters,
    match_heading,
    merge_heading_continuations,
    merge_number_lines,
)
from openxiv.corpus.readers.pdf_text import join_text, vocabulary
from openxiv.corpus.records import PaperRecord, ReadError, SectionRecord, TitleSource

__all__ = ["FORMAT", "MAX_PAGES", "TEXT_FLAGS", "parse_stamp", "read_pdf"]

FORMAT = "pdf"
MAX_PAGES = 400
"""Pages read at most per file (a bound on time and memory for pathological files)."""

# PyMuPDF text flags: keep whitespace, clip to the page, expand ligatures (no PRESERVE_LIGATURES),
# no images.
TEXT_FLAGS = 2 | 64 | 128

_STAMP = re.compile(
    r"arXiv:\s*(?P<id>[a-z][a-z\-]*(?:\.[A-Z]{2})?/\d{7}|\d{4}\.\d{4,5})(?:v(?P<v>\d+))?"
    r"\s*(?:\[(?P<cat>[^\]\s]+)\])?\s*(?P<date>\d{1,2}\s+[A-Z][a-z]{2}\s+\d{4})?"
)
_ABSTRACT_RUN_IN = re.compile(r"^abstract\s*[.:—–-]?\s*", re.I)


def parse_stamp(text: str) -> tuple[str, int | None, str | None, date | None] | None:
    """``(canonical id, version, primary category, date)`` from arXiv's margin stamp text, or ``None``.

    >>> parse_stamp("arXiv:2203.02155v1  [cs.CL]  4 Mar 2022")
    ('2203.02155', 1, 'cs.CL', datetime.date(2022, 3, 4))
    """
    m = _STAMP.search(text)
    if not m:
        return None
    try:
        parsed = parse_arxiv_id(m.group("id") + (f"v{m.group('v')}" if m.group("v") else ""))
    except InvalidArxivId:
        return None
    when = None
    if m.group("date"):
        try:
            when = datetime.strptime(" ".join(m.group("date").split()), "%d %b %Y").date()
        except ValueError:
            when = None
    return parsed.canonical, parsed.version, m.group("cat"), when


def _quiet_mupdf(pymupdf: Any) -> None:
    try:
        pymupdf.TOOLS.mupdf_display_errors(False)
        pymupdf.TOOLS.mupdf_display_warnings(False)
    except AttributeError:  # older PyMuPDF
        pass


def _page_dicts(doc: Any, heights: list[float], failed: list[int]) -> Iterator[tuple[int, dict[str, Any]]]:
    for pno in range(min(doc.page_count, MAX_PAGES)):
        try:
            page = doc.load_page(pno)
            heights.append(page.rect.height)
            yield pno, page.get_text("dict", flags=TEXT_FLAGS)
        except Exception:  # a damaged page: skip it, keep the rest
            if len(heights) == pno:
                heights.append(792.0)
            failed.append(pno)


def read_pdf(path: str | Path) -> PaperRecord | ReadError:
    """One `PaperRecord` for the PDF at ``path``, or a `ReadError` saying why it cannot be used."""
    path = Path(path)
    name = path.name
    try:
        pymupdf = import_pymupdf()
    except ImportError as exc:  # the [pdf] extra
        return ReadError(name, "file", str(missing_extra("pdf", "reading PDFs", exc)))
    _quiet_mupdf(pymupdf)
    try:
        doc = pymupdf.open(str(path), filetype="pdf")
    except Exception as exc:
        return ReadError(name, "file", f"cannot open PDF: {str(exc).replace(str(path), name)}")
    try:
        return _read_document(doc, name)
    except Exception as exc:  # a layout bug must not stop the batch
        return ReadError(name, "file", f"cannot read PDF: {type(exc).__name__}: {exc}")
    finally:
        doc.close()


def _read_document(doc: Any, name: str) -> PaperRecord | ReadError:
    if doc.needs_pass:
        return ReadError(name, "file", "PDF is encrypted (a password is required)")
    if doc.page_count == 0:
        return ReadError(name, "file", "PDF has no pages (truncated or damaged file?)")
    heights: list[float] = []
    failed: list[int] = []
    raw_lines, rotated = extract_lines(_page_dicts(doc, heights, failed))
    if failed and len(failed) == len(heights):
        return ReadError(name, "file", f"no page of the PDF can be read ({len(failed)} pages)")
    if not raw_lines:
        return ReadError(name, "file", "PDF has no extractable text (scanned images only?)")

    stamp = parse_stamp(" ".join(rotated))
    if stamp is None:
        first_page = " ".join(ln.text for ln in raw_lines if ln.page == 0 and ln.x0 < 60)
        stamp = parse_stamp(first_page) if "arXiv:" in first_page else None
    if stamp is not None:
        arxiv_id, version, category, when = stamp
    else:
        try:
            parsed = parse_arxiv_id(Path(name).stem)
        except InvalidArxivId:
            return ReadError(name, "file", "no arXiv id in the margin stamp or the file name")
        arxiv_id, version, category, when = parsed.canonical, parsed.version, None, None
        if version is None:
            version = _version_from_name(name, arxiv_id)

    body = body_size(raw_lines)
    lines = merge_heading_continuations(drop_furniture(merge_number_lines(raw_lines), heights, body))
    title_lines = pdf_front.title_lines(raw_lines, heights[0] if heights else 792.0)
    title = pdf_front.join_title(title_lines)
    title_source: TitleSource = "text" if title else "metadata"  # the page's title block, else the metadata
    title = title or pdf_front.metadata_title(doc.metadata or {})
    title_end = (title_lines[-1].page, title_lines[-1].y1) if title_lines else (0, 0.0)

    abstract, sections, bib_lines = _structure(lines, body, title_end)
    entries = entries_from_lines([(ln.text, ln.x0, ln.page * 10_000 + ln.block) for ln in bib_lines])
    paragraphs = (p for s in sections for p in s.text.split("\n\n"))
    return PaperRecord(
        arxiv_id=arxiv_id,
        source=f"pdf:{name}",
        version=version,
        title=title,
        title_source=title_source if title else None,
        abstract=abstract,
        authors=pdf_front.authors(raw_lines, title_end, pdf_front.written_lowercase(lines))
        if title_lines
        else [],
        categories=[category] if category else [],
        published=when if version == 1 else None,
        updated=when,
        sections=sections,
        references=with_contexts(references_of(entries, arxiv_id), entries, paragraphs),
    )


def _version_from_name(name: str, arxiv_id: str) -> int | None:
    try:
        return parse_arxiv_id(Path(name).stem).version
    except InvalidArxivId:
        return None


def _structure(
    lines: list[Line], body: float, title_end: tuple[int, float]
) -> tuple[str | None, list[SectionRecord], list[Line]]:
    """The abstract, the sections and the reference list's lines, in one walk over the lines after
    the title."""
    after_title = [ln for ln in lines if (ln.page, ln.y0) > title_end or ln.page > title_end[0]]
    styles = _heading_styles(after_title, body)
    vocab = vocabulary(after_title)

    abstract_lines: list[Line] = []
    abstract_size: float | None = None
    abstract_seen = False
    sections: list[tuple[Heading, int, list[Line]]] = []  # heading, its page, its lines
    state = "front"  # front -> abstract -> body <-> skip (front matter) | refs (references)
    seen_references = False
    bib_lines: list[Line] = []
    rows = Counter((ln.page, ln.block, round(ln.y1)) for ln in after_title)
    for ln in after_title:
        in_row = rows[(ln.page, ln.block, round(ln.y1))] > 1  # a table row's cell, not a heading
        heading = None if in_row else match_heading(ln, body, styles, appendix=seen_references)
        key = heading_key(heading.name) if heading is not None else ""
        run_in = bool(ln.lead_bold) and heading_key(ln.lead_bold) == "abstract"
        if (
            (run_in or (key == "abstract" and heading is not None and heading.number is None))
            and not abstract_seen
            and all(page == 0 for _, page, _ in sections)
        ):
            # "headings" before the abstract were front matter (e.g. numbered affiliations)
            sections.clear()
            state, abstract_seen = "abstract", True
            rest = _ABSTRACT_RUN_IN.sub("", ln.text, count=1).strip() if run_in else ""
            if rest:
                abstract_lines.append(_with_text(ln, rest))
                abstract_size = ln.size
            continue
        if heading is not None:
            if key in END_NAMES:
                break
            if key in REFERENCE_NAMES:
                state, seen_references = "refs", True
            elif key in FRONT_MATTER or key == "abstract":
                state = "skip"
            else:
                state = "body"
                sections.append((heading, ln.page, []))
            continue
        if state == "abstract":
            if abstract_size is None:
                abstract_size = ln.size
            if abs(ln.size - abstract_size) > 0.8:
                state = "skip"
                continue
            abstract_lines.append(ln)
        elif state == "body":
            sections[-1][2].append(ln)
        elif state == "refs":
            bib_lines.append(ln)

    abstract = join_text(abstract_lines, vocab).replace("\n\n", " ") if abstract_lines else None
    if not abstract_lines:
        abstract = _longest_front_paragraph(after_title, body, styles, vocab)
    records = []
    for i, (heading, _page, body_lines) in enumerate(sections):
        text = join_text(body_lines, vocab)
        if not has_letters(text):  # no text: keep a parent heading, drop contents-page entries
            following = sections[i + 1][0].number if i + 1 < len(sections) else None
            if not (heading.number and following and following.startswith(heading.number + ".")):
                continue
            text = ""
        records.append(SectionRecord(name=heading.name, text=text, number=heading.number or None))
    # an appendix table of contents repeats the numbers of the headings that follow it
    later = Counter(r.number for r in records if r.number)
    kept = []
    for r in records:
        if r.number:
            later[r.number] -= 1
            if not r.text and later[r.number] > 0:
                continue
        kept.append(r)
    return abstract or None, kept, bib_lines


def _with_text(ln: Line, text: str) -> Line:
    return Line(ln.page, ln.block, ln.x0, ln.y0, ln.x1, ln.y1, text, ln.size, ln.bold, "")


def _heading_styles(lines: list[Line], body: float) -> set[tuple[float, bool]]:
    """Styles ``(size, bold)`` of numbered top-level headings larger than the body, seen twice or more."""
    counts: dict[tuple[float, bool], int] = {}
    for ln in lines:
        if ln.size <= body + 0.5:
            continue
        h = match_heading(ln, body, set(), appendix=False)
        if h is not None and h.number and "." not in h.number:
            style = (round(ln.size * 2) / 2, ln.bold)
            counts[style] = counts.get(style, 0) + 1
    return {style for style, n in counts.items() if n >= 2}


def _longest_front_paragraph(
    lines: list[Line], body: float, styles: set[tuple[float, bool]], vocab: set[str]
) -> str | None:
    """Without an Abstract heading: the longest page-1 paragraph before the first heading (>= 40 words)."""
    blocks: dict[int, list[Line]] = {}
    for ln in lines:
        if ln.page > 0 or match_heading(ln, body, styles, appendix=False) is not None:
            break
        blocks.setdefault(ln.block, []).append(ln)
    best = max(blocks.values(), key=lambda b: sum(len(ln.text) for ln in b), default=[])
    text = join_text(best, vocab).replace("\n\n", " ") if best else ""
    return text if len(text.split()) >= 40 else None
