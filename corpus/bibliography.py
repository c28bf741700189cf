"""Bibliographies of full texts: a reference list split into entries, each entry's arXiv id when it
prints one, and the sentence of the body that cites it (its context).

The plain-text and PDF readers hand their reference section here (`entries_from_blocks`,
`entries_from_lines`) and the body's paragraphs (`with_contexts`); what comes back is the paper's
`Reference` list, stored like an unArXive bibliography (`openxiv.corpus.references`). An entry that
prints no arXiv id is resolved later, at index build, against the whole corpus by DOI or title and
year (`openxiv.indexer.building.resolve`): an ingest sees one paper at a time.

Rules (precision first; what cannot be told is left out rather than guessed):

- **entries**: a label opening an entry (``[12]``, ``12.``, ``12)``) is taken off and remembered;
  PDF lines are split at those labels when most entries carry one, else at the paragraph breaks
  the layout gives (a new text block, or a line that starts left of the lines before it: hanging
  indent); a plain-text block is an entry, and a block that lists several works separated by
  ``; J. Name`` (physics style) is one entry per work;
- **arXiv ids**: new-style ids (``1706.03762``, ``arXiv:1706.03762v2``, ``arxiv.org/abs/...``) with a
  real month, and old-style ids of a known archive (``hep-th/9901001``); the first one an entry
  prints is its id (canonical, version-free). A paper's own id is never its reference;
- **contexts**: numeric markers (``[3]``, ``[2, 5-7]``) name the entry with that label;
  author-year markers (``Vaswani et al. (2017)``, ``(Vaswani et al., 2017)``) name the one entry
  whose first author's surname and year they give; the plain texts' ``[\\cite=key]`` markers name
  the entry whose label is the key. The context is the first body sentence with a marker for the
  entry, markers shown as printed, at most `CONTEXT_CHARS` characters.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, replace

from openxiv.corpus.ids import try_canonical_id
from openxiv.corpus.normalize import fold, normalize_whitespace
from openxiv.corpus.records import REFERENCE_CHARS, Reference
from openxiv.corpus.text import split_sentences

__all__ = [
    "BIBLIOGRAPHY_RULES",
    "CONTEXT_CHARS",
    "Entry",
    "entries_from_blocks",
    "entries_from_lines",
    "find_arxiv_id",
    "find_doi",
    "references_of",
    "with_contexts",
    "years_in",
]

BIBLIOGRAPHY_RULES = 1
"""Version of these rules: part of the ingest key of plain-text and PDF files
(`openxiv.corpus.inputs.read_key`), so ``--skip-unchanged`` reads them again when the rules change."""
CONTEXT_CHARS = 400
"""Longest citing sentence kept as an entry's context."""
MAX_ENTRIES = 2000
"""Most entries kept of one paper (more is a parsing accident: a whole appendix read as references)."""

_ARCHIVES = (
    "acc-phys|adap-org|alg-geom|ao-sci|astro-ph|atom-ph|bayes-an|chao-dyn|chem-ph|cmp-lg|comp-gas|"
    "cond-mat|cs|dg-ga|funct-an|gr-qc|hep-ex|hep-lat|hep-ph|hep-th|math|math-ph|mtrl-th|nlin|"
    "nucl-ex|nucl-th|patt-sol|physics|plasm-ph|q-alg|q-bio|quant-ph|solv-int|supr-con"
)
_OLD_ID = re.compile(rf"(?<![\w-])({_ARCHIVES})(?:\.[A-Za-z-]{{2,12}})?/(\d{{7}})(?:v\d+)?(?!\d)")
_NEW_ID = re.compile(
    r"(?:arxiv\s*(?:preprint)?\s*:?\s*(?:abs/)?|arxiv\.org/(?:abs|pdf)/)?(?<![\d.])(\d{2})(0[1-9]|1[0-2])\.(\d{4,5})(?:v\d+)?(?![\d])",
    re.I,
)
_DOI = re.compile(r"\b(10\.\d{4,9}/[^\s\"<>,;]+)", re.I)
_YEAR = re.compile(r"(?<!\d)(19[5-9]\d|20[0-4]\d)(?!\d)")
_LABEL = re.compile(r"^\s*(?:\[(\d{1,4})\]|(\d{1,4})[.)](?=\s)|\((\d{1,4})\)(?=\s))\s*")
_SPLIT_WORKS = re.compile(r";\s+(?=(?:[A-Z]\.\s?-?){1,3}\s?[A-Z][a-z])")
_SPLIT_AUTHOR_YEAR = re.compile(r"(?<=[.)\d])\s+(?=[A-Z][a-z'-]+,\s(?:[A-Z]\.\s?-?){1,3}[,\s])")
_NUM_MARKER = re.compile(r"\[(\d{1,4}(?:\s*[,–-]\s*\d{1,4})*)\]")
_CITE_KEY = re.compile(r"\[\\cite=([^\]]+)\]")
_SURNAME = r"([A-Z][A-Za-z'\u00c0-\u017f-]+)"
_AUTHOR_YEAR = re.compile(
    _SURNAME
    + r"(?:\s+et\s+al\.?|\s+(?:and|&)\s+[A-Z][A-Za-z'\u00c0-\u017f-]+)?,?\s*\(?\s*((?:19|20)\d{2})[a-z]?"
)


@dataclass(frozen=True)
class Entry:
    """One bibliography entry as read: its label (``"12"``, a cite key, or ``None``) and its text."""

    label: str | None
    text: str


def find_arxiv_id(text: str, own: str | None = None) -> str | None:
    """The first arXiv id ``text`` prints (canonical, version-free), never ``own``; ``None`` without one."""
    found: list[tuple[int, str]] = []
    for m in _OLD_ID.finditer(text):  # the subject class (math.GT/, cond-mat.stat-mech/) is no part of it
        if cid := try_canonical_id(f"{m.group(1)}/{m.group(2)}"):
            found.append((m.start(), cid))
    for m in _NEW_ID.finditer(text):
        yy = int(m.group(1))
        if not 7 <= yy <= 40 or (len(m.group(3)) == 5) != (yy * 100 + int(m.group(2)) >= 1501):
            continue  # five digits from 2015-01 on, four before: anything else is no id
        if cid := try_canonical_id(f"{m.group(1)}{m.group(2)}.{m.group(3)}"):
            found.append((m.start(), cid))
    ids = [cid for _, cid in sorted(found) if cid != own]
    return ids[0] if ids else None


def find_doi(text: str) -> str | None:
    """The first DOI ``text`` prints, lower-cased, trailing punctuation off; ``None`` without one."""
    m = _DOI.search(text)
    return m.group(1).rstrip(".)]").lower() if m else None


def years_in(text: str) -> list[int]:
    """The four-digit years (1950-2049) ``text`` prints, in order."""
    return [int(y) for y in _YEAR.findall(text)]


def _labelled(text: str) -> Entry:
    m = _LABEL.match(text)
    if not m:
        return Entry(None, text.strip())
    return Entry(next(g for g in m.groups() if g), text[m.end() :].strip())


def _works(block: str) -> list[str]:
    """A block listing several works (``A, Phys. Rev. 1 (1990); B. Name, ...``, or author-year entries
    run together: ``... (1996). Name, F.A. et al, ...``) split into them when every part prints a
    year or an arXiv id; else the block whole."""
    for pattern in (_SPLIT_WORKS, _SPLIT_AUTHOR_YEAR):
        parts = [p.strip() for p in pattern.split(block)]
        if len(parts) > 1 and all(years_in(p) or find_arxiv_id(p) for p in parts):
            return parts
    return [block]


def entries_from_blocks(blocks: Iterable[str]) -> list[Entry]:
    """The entries of a plain-text reference section given as its blank-line-separated blocks."""
    out: list[Entry] = []
    for block in blocks:
        text = " ".join(block.split())
        if not text:
            continue
        first = _labelled(text)
        for i, work in enumerate(_works(first.text)):
            out.append(Entry(first.label if i == 0 else None, work))
    return out[:MAX_ENTRIES]


def entries_from_lines(lines: Sequence[tuple[str, float, int]]) -> list[Entry]:
    """The entries of a PDF reference section given as its lines ``(text, x0, block)`` in reading
    order (``block``: page × 10,000 + the page's block number): split at labels when most start with
    one, else at layout breaks (see the module doc)."""
    texts = [t.strip() for t, _, _ in lines]
    labelled = [i for i, t in enumerate(texts) if _LABEL.match(t)]
    starts: list[int]
    if len(labelled) >= 3 and _in_sequence([_labelled(texts[i]).label for i in labelled]):
        starts = labelled
    else:
        pages = [(t, x0, block // 10_000) for t, x0, block in lines]
        starts = _hanging_starts(pages) or [i for i in range(len(lines)) if _breaks(lines, i)]
        if starts and starts[0] != 0:
            starts.insert(0, 0)
    out: list[Entry] = []
    for k, s in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(lines)
        joined = _join_lines(texts[s:end])
        if joined:
            out.append(_labelled(joined))
    return out[:MAX_ENTRIES]


def _in_sequence(labels: Sequence[str | None]) -> bool:
    """Most labels count up by one (a numbered list, not numbers that open a line by chance)."""
    nums = [int(x) for x in labels if x and x.isdigit()]
    steps = sum(1 for a, b in itertools.pairwise(nums) if b == a + 1)
    return steps >= 0.7 * max(len(nums) - 1, 1)


def _hanging_starts(lines: Sequence[tuple[str, float, int]]) -> list[int] | None:
    """Entry starts by hanging indent: a line at its column's left edge (the least x0 of the page's
    lines within 30 points of it) opens an entry when the lines that continue entries are indented
    5 to 30 points; ``None`` when the list has no hanging indent."""
    lefts = []
    for _, x0, page in lines:
        near = [x for _, x, p in lines if p == page and abs(x - x0) < 30]
        lefts.append(min(near))
    indented = sum(1 for (_, x0, _), left in zip(lines, lefts, strict=True) if 5 <= x0 - left < 30)
    if indented < 0.3 * len(lines):
        return None
    return [i for i, ((_, x0, _), left) in enumerate(zip(lines, lefts, strict=True)) if x0 - left < 2]


def _breaks(lines: Sequence[tuple[str, float, int]], i: int) -> bool:
    """Without labels or hanging indent: an entry starts after a line ending a sentence when the
    layout starts a new text block."""
    if i == 0:
        return True
    return lines[i][2] != lines[i - 1][2] and lines[i - 1][0].rstrip().endswith((".", ")"))


def _join_lines(texts: Sequence[str]) -> str:
    out = ""
    for t in texts:
        out = out[:-1] + t if out.endswith("-") and t[:1].islower() else f"{out} {t}" if out else t
    return " ".join(out.split())


def references_of(entries: Sequence[Entry], own: str | None) -> list[Reference]:
    """Each entry as a `Reference`: its arXiv id when it prints one (never ``own``), its text."""
    out = []
    for e in entries:
        text = (normalize_whitespace(e.text) or "")[:REFERENCE_CHARS] or None
        out.append(Reference(find_arxiv_id(e.text, own), text))
    return out


def _numbers(marker: str) -> list[str]:
    """``"2, 5-7"`` -> ``["2", "5", "6", "7"]`` (a range of at most 50)."""
    out: list[str] = []
    for part in re.split(r"\s*,\s*", marker):
        bits = re.split(r"\s*[–-]\s*", part)
        if len(bits) == 2 and all(b.isdigit() for b in bits) and 0 <= int(bits[1]) - int(bits[0]) < 50:
            out.extend(str(n) for n in range(int(bits[0]), int(bits[1]) + 1))
        elif len(bits) == 1 and bits[0].isdigit():
            out.append(bits[0])
    return out


def _first_surname(text: str) -> str | None:
    """The first author's surname of an entry (``Vaswani, A.`` / ``A. Vaswani`` / ``Ashish Vaswani``)."""
    head = re.split(r"[,.(]\s|\band\b", text, maxsplit=1)[0] if text else ""
    words = [w for w in re.findall(r"[A-Za-z\u00c0-\u017f'-]+", head) if len(w) > 1]
    if not words:
        m = re.match(r"^(?:[A-Z]\.\s?-?)+\s*([A-Z][A-Za-z\u00c0-\u017f'-]+)", text)
        return fold(m.group(1)) if m else None
    if "," in text[: len(head) + 1]:
        return fold(words[0])  # "Vaswani, A."
    return fold(words[-1])


def with_contexts(
    refs: Sequence[Reference], entries: Sequence[Entry], paragraphs: Iterable[str]
) -> list[Reference]:
    """``refs`` (made of ``entries``, in order) each with the first body sentence that cites it."""
    paragraphs = list(paragraphs)
    keys = {
        k.strip()
        for p in paragraphs
        if "\\cite=" in p
        for m in _CITE_KEY.finditer(p)
        for k in m.group(1).split(",")
    }
    by_label: dict[str, int] = {}
    for i, e in enumerate(entries):
        first = e.text.split(" ", 1)[0]
        if e.label is not None:
            by_label.setdefault(e.label, i)
        elif first in keys:  # a plain text's entry opening with its cite key: "F1 E. R. Floyd, ..."
            by_label.setdefault(first, i)
    by_author_year: dict[tuple[str, int], list[int]] = {}
    for i, e in enumerate(entries):
        name = _first_surname(e.text)
        for y in set(years_in(e.text)[:3]):
            if name:
                by_author_year.setdefault((name, y), []).append(i)
    contexts: dict[int, str] = {}
    for para in paragraphs:
        sentences = split_sentences(para)
        for s in sentences:
            for i in _cited_in(s, by_label, by_author_year):
                contexts.setdefault(i, s[:CONTEXT_CHARS])
        if len(contexts) == len(entries):
            break
    return [replace(r, context=contexts.get(i)) for i, r in enumerate(refs)]


def _cited_in(
    sentence: str, by_label: dict[str, int], by_author_year: dict[tuple[str, int], list[int]]
) -> Iterable[int]:
    if "[" in sentence:
        for m in _NUM_MARKER.finditer(sentence):
            for n in _numbers(m.group(1)):
                if n in by_label:
                    yield by_label[n]
        for m in _CITE_KEY.finditer(sentence):
            for key in m.group(1).split(","):
                if key.strip() in by_label:
                    yield by_label[key.strip()]
    if by_author_year:
        for m in _AUTHOR_YEAR.finditer(sentence):
            hits = by_author_year.get((fold(m.group(1)), int(m.group(2))), [])
            if len(hits) == 1:
                yield hits[0]
