"""A plain text's title and authors (`split_opening`): the first block's title with its second line,
or a title found past the first block when that is not one (issue 21, item 2).

`split_opening` takes the title and the author blocks with `plaintext_opening`'s block rules; this
module sits above that one (it imports it, never the reverse).

`recover_title` runs when the first block of the opening is not a title (`plaintext_opening`): the
next `_SCAN_BLOCKS` blocks are looked at, past TeX residue, report numbers, publication notes, name
lists, affiliations and addresses (names met there are authors). A title-shaped block is the title
when only residue came before it, or when names, an affiliation or the abstract / introduction
heading follow it; a TeX length inside a block cuts a title off the names run into it. How many
titles this recovers and how many of them are right: BENCHMARKS.md, «Metadata completeness». `continued_title` joins a title with its second line.
"""

from __future__ import annotations

import re

from openxiv.corpus.normalize import normalize_whitespace
from openxiv.corpus.readers.author_block import lowercase_words, split_names
from openxiv.corpus.readers.plaintext_opening import (
    BARE_UNITS,
    TRAILING_FUNCTION_WORDS,
    TWO_SENTENCES,
    affiliation_block,
    cut_names,
    is_dimension,
    is_junk,
    is_page_header,
    strip_residue,
    take_authors,
    take_title,
    title_shaped,
)

__all__ = ["continued_title", "recover_title", "split_opening"]


_SCAN_BLOCKS = 8
"""Blocks looked at for a title that is not the first one."""
_BODY_HEADING = re.compile(
    r"^(?:(?:\d+\.?|[IVX]+\.)\s*)?(?:abstract|introduction|summary|contents|preface)\b", re.I
)
_NOTE = re.compile(
    r"^(?:\d{4}\s+)?(?:pp\.|proceedings|to appear|submitted|talk\b|invited|contribution|based on|"
    r"dedicated|key ?words|ams\b|msc\b|mathematics subject|pacs|preprint|todo|version|draft|"
    r"\(?received|tel\b|fax\b|e-?mail)",
    re.I,
)
"""Publication notes and classification lines that come before a title."""


def recover_title(blocks: list[str], vocab: set[str]) -> tuple[str | None, list[str], list[str]]:
    """``(title, authors before it, blocks after it)`` from the first `_SCAN_BLOCKS` blocks, or
    ``(None, [], blocks)`` (see the module docstring)."""
    authors: list[str] = []
    noise_only = True  # nothing but residue, headers and notes before: no confirmation needed
    for i, block in enumerate(blocks[:_SCAN_BLOCKS]):
        text = strip_residue(normalize_whitespace(block) or "")
        if _BODY_HEADING.match(text):
            break  # the body starts: the title is not in the text
        if is_junk(block) or is_page_header(block) or is_junk(text) or _NOTE.match(text):
            continue
        if sum(ch.isalpha() for ch in text) < 6:
            continue  # "D..", "LTH 739", "TODO:"
        following = blocks[i + 1] if i + 1 < len(blocks) else ""
        cut = cut_names(text, vocab, following) if len(text.split()) > 4 else None
        if cut is not None and _recovered(cut[0], vocab):  # title, names and affiliation in one block
            return cut[0], authors, [*cut[1], *blocks[i + 1 :]]
        names = split_names(text, vocab)
        if names is not None or affiliation_block(text) or _address_or_list(text):
            authors.extend(n for n in names or () if n not in authors)
            noise_only = False
            continue
        title, rest = continued_title(_before_dimension(text), blocks[i + 1 :], vocab)
        confirmed = title != text or noise_only or _leads_to_body(rest, vocab)
        if not (_recovered(title, vocab) and confirmed):
            break
        return title.removesuffix(".") if not title.endswith("al.") else title, authors, rest
    return None, [], blocks


def _recovered(title: str, vocab: set[str]) -> bool:
    """A title found past the first block: title-shaped, two to 25 words, one sentence, not ending
    on a function word, not a name list or an address."""
    words = title.split()
    return (
        title_shaped(title)
        and 2 <= len(words) <= 25
        and not TWO_SENTENCES.search(title)
        and words[-1].lower() not in TRAILING_FUNCTION_WORDS
        and not title.endswith(",")
        and split_names(title, vocab) is None
        and not _address_or_list(title)
        and not _FIRST_PERSON.match(title)
    )


_FIRST_PERSON = re.compile(r"^(?:we|in this|here we|our|it is)\b", re.I)
"""How a paragraph starts, not a title (``We discuss properties of ...``)."""


def _before_dimension(text: str) -> str:
    """The words of ``text`` before a TeX length inside it, which in a block running title, names
    and affiliation together separates the title (``Affine Lie Algebras ... on K3 1cm Toru Sasaki``)."""
    words = text.split()
    cut = next(
        (
            i
            for i, w in enumerate(words)
            if i >= 3 and is_dimension(w) and (w in BARE_UNITS or not w.isalpha())
        ),
        None,
    )  # "1cm", "cm", not "to" or "at"
    return text if cut is None else " ".join(words[:cut])


_POSTAL = re.compile(r"\b[A-Z]{0,3}-?\d{4,6}\b|\b[A-Z]{1,2}\d{1,2} \d[A-Z]{2}\b")


def _address_or_list(text: str) -> bool:
    """A postal address (``Geneva 23, Switzerland``, ``Los Alamos, NM 87545``) or a keyword list
    (``Patlack, Keller-Segel, McKean-Vlasov, chemotaxis, ...``): commas in a short line, a postal
    code next to a comma, or a comma every word or two."""
    commas, words = text.count(","), len(text.split())
    if not commas:
        return "·" in text
    return words <= 5 or bool(_POSTAL.search(text)) or (commas >= 3 and words < 3 * commas)


def _leads_to_body(rest: list[str], vocab: set[str]) -> bool:
    """What follows a title: names, an affiliation or the abstract / introduction heading."""
    nxt = normalize_whitespace(rest[0]) or "" if rest else ""
    return bool(nxt) and (
        _BODY_HEADING.match(nxt) is not None or split_names(nxt, vocab) is not None or affiliation_block(nxt)
    )


def continued_title(title: str, rest: list[str], vocab: set[str]) -> tuple[str, list[str]]:
    """``title`` joined with its second line, when it ends with a colon or the next block is a
    short line starting in lower case that is not a name list; names and an affiliation run into
    that line are cut off (`cut_names`) and kept as blocks."""
    if not rest:
        return title, rest
    nxt = normalize_whitespace(rest[0]) or ""
    words = nxt.split()
    if not words or _BODY_HEADING.match(nxt) or split_names(nxt, vocab) is not None:
        return title, rest
    lower_start = words[0] in _CONTINUATION_WORDS or (
        words[0][0].islower() and title.split()[-1].lower() in TRAILING_FUNCTION_WORDS
    )
    if not (title.endswith(":") or lower_start) or title.endswith(".") or not _second_line(nxt):
        return title, rest
    joined = f"{title} {nxt}"
    if len(words) <= 15 and not affiliation_block(nxt):
        return joined, rest[1:]
    cut = cut_names(joined, vocab, rest[1] if len(rest) > 1 else "")
    if cut is not None and len(cut[0]) > len(title):
        return cut[0], [*cut[1], *rest[1:]]
    return title, rest


_CONTINUATION_WORDS = {
    "of", "in", "on", "for", "from", "with", "at", "beyond", "via", "through", "into", "towards",
    "using", "under", "within", "without", "between", "over",
}  # fmt: skip
"""Lower-case words a title's second line starts with (``at Higher Orders in ...``); not ``and`` or
``by``, which start an author line, nor ``a``, an affiliation mark, unless the first line ends on a
function word (``... Inflation and`` / ``a Lower Bound ...``)."""
_NOT_SECOND_LINE = re.compile(r"collaboration|behalf|published|submitted|preprint|talk|proceedings", re.I)


def _second_line(block: str) -> bool:
    """A block that can be a title's second line: two words or more, no TeX residue, no
    publication note or collaboration, and not ending on a function word."""
    words = block.split()
    return (
        len(words) >= 2
        and not is_junk(block)
        and not any(is_dimension(w) for w in words)
        and not _NOT_SECOND_LINE.search(block)
        and words[-1].lower() not in TRAILING_FUNCTION_WORDS
    )


def split_opening(text: str) -> tuple[str | None, list[str], list[str]]:
    """``(title, authors, remaining blocks)`` of the blank-line-separated blocks of ``text``."""
    blocks = [b.strip() for b in re.split(r"\n\s*\n", text) if b.strip()]
    while blocks and (is_junk(blocks[0]) or is_page_header(blocks[0]) or is_junk(strip_residue(blocks[0]))):
        blocks.pop(0)
    vocab = lowercase_words(text)
    title, rest = take_title(blocks, vocab)
    before: list[str] = []
    if title is not None:
        title, rest = continued_title(title, rest, vocab)
    else:
        title, before, rest = recover_title(blocks, vocab)
    authors, rest = take_authors(rest, vocab)
    return title, [*before, *(a for a in authors if a not in before)], rest
