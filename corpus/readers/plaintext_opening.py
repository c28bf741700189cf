"""The opening of a plain-text full text: title and authors, past TeX residue and page headers.

Rules (see also `openxiv.corpus.readers.plaintext` and docs/corpus.md):

- leading junk is skipped (`is_junk`): LaTeX layout residue (``=``, ``1.25in .125in .25in``,
  ``.5pt``, ``hyperref``, ``at 11pt``), lone punctuation, theorem-environment names (``Lemma
  Corollary``), and a preprint's page header (`is_page_header`: report numbers, arXiv ids and
  dates such as ``LBNL-46839``, ``hep-th/0009104``, ``January 3, 2001``);
- the title is the first remaining block, with TeX dimensions and a page header around it and a
  trailing full stop removed, unless it is a heading, a paragraph, a caption, a list of names or an
  affiliation (then ``None``); a block running title, names and affiliation together is cut before
  the names;
- the authors are the names (`names.split_names`, all or nothing) of the blocks right after it;
- when the first block is not a title (`plaintext_title`, issue 21), the next few blocks are looked
  at, past report numbers, publication notes, name lists and affiliations: a title-shaped block
  followed by names, an affiliation or an ``Abstract``/``Introduction`` heading is the title, and
  the names before it are authors too;
- a title continues over the next block when it ends with a colon or the next block is a short
  line that starts in lower case (``QED in a Strong External Magnetic Field:`` / ``Beyond the
  Constant Mass Approximation``).
"""

from __future__ import annotations

import re

from openxiv.corpus.normalize import normalize_whitespace
from openxiv.corpus.readers.author_block import (
    is_affiliation,
    is_affiliation_word,
    split_names,
)

__all__ = [
    "BARE_UNITS",
    "SECTION_NUMBER",
    "TRAILING_FUNCTION_WORDS",
    "TWO_SENTENCES",
    "affiliation_block",
    "cut_names",
    "is_dimension",
    "is_junk",
    "is_page_header",
    "strip_residue",
    "take_authors",
    "take_title",
    "title_shaped",
]

_UNIT = re.compile(
    r"^[-+=.,;:{}()\[\]\\0-9]*(?:in|cm|mm|pt|em|ex|truecm|truein|truept|sp|bp|pc|true)?[-+=.,;:{}()\[\]0-9]*$",
    re.IGNORECASE,
)
_THEOREM_WORDS = {
    "lemma", "corollary", "proposition", "theorem", "definition", "remark", "example", "conjecture",
    "claim", "notation", "assumption", "problem", "question", "fact", "exercise", "note",
    "observation", "hypothesis", "proof", "algorithm", "condition", "property", "case", "step",
    "construction", "result", "criterion", "axiom", "principle", "summary", "conclusion", "convention",
    "solution", "qed", "corolary", "corollaire", "théorème", "theoreme", "lemme", "rappel", "remarque",
    "exemple", "définition", "statement", "main", "reminder",
}  # fmt: skip
_GLUED_UNIT = re.compile(r"^(?:plus|minus|at|to|height|width|depth|by)[-+=.\d]*(?:pt|cm|mm|in|ex|em)?$")
_UNIT_WORDS = {"at", "plus", "minus", "to", "scaled", "by"}
"""Words of TeX dimension residue (``at 11pt``, ``2.3ex plus .2ex``)."""
_TEX_WORDS = {
    "hyperref", "amsmath", "amssymb", "graphicx", "epsfig", "psfig", "revtex", "aastex", "aipproc",
    "article", "cm", "pt",
}  # fmt: skip
SECTION_NUMBER = re.compile(r"^(\d+(?:\.\d+)*\.?|[IVX]+\.?|[A-Z]\.)\s+(?=[A-Z])")
_REPORT_NUMBER = re.compile(r"^[A-Z]{2,}(?:-[A-Z]+)*(?:/\d|-\d| \d{2,4}[-/]\d)")
TRAILING_FUNCTION_WORDS = {
    "a", "an", "and", "are", "as", "at", "be", "by", "for", "from", "in", "is", "of", "on", "or",
    "that", "the", "to", "where", "which", "with", "we", "get", "obtain", "find", "have", "has",
}  # fmt: skip
_NOT_A_TITLE = re.compile(r"^(?:keywords?|pacs|this (?:paper|article|work|note)|©|copyright)\b", re.I)
_INSTITUTION_HEADS = {
    "department", "dept.", "dipartimento", "departament", "departamento", "institute", "institut",
    "instituto", "istituto", "university", "universität", "université", "universidad", "università",
    "laboratory", "laboratoire", "faculty", "school", "college",
}  # fmt: skip
_PARTICLES = {"de", "van", "von", "del", "della", "di", "du", "le", "la", "t"}
"""Lower-case words a title may start with: a name (``de Broglie oscillation ...``)."""
_NON_TITLES = {"introduction", "abstract", "contents", "preface", "summary", "overview"}
_MONTHS = [
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
]
_HEADER_TOKEN = re.compile(
    r"^(?:[~(),.;:]+|[a-z\-]+(?:\.[A-Z]{2})?/(?:\d{7}|x{7})|(?:arxiv:)?\d{4}\.\d{4,5}(?:v\d+)?"
    r"|\(?\d{1,4}\)?,?|[A-Z][A-Z0-9]*(?:[-/.]+[A-Z0-9]+)*[.,]?"
    r"|[A-Za-z0-9]+(?:[-/.][A-Za-z0-9]+)*[-/.]\d[A-Za-z0-9/.-]*[.,]?|\(P\))$"
)
_HEADER_ANCHOR = re.compile(r"\d[-/.]|[-/]\d|/\d{7}|\d{4}\.\d{4}|^\d{4}$")
_CAPTION = re.compile(r"^(?:fig(?:ure)?|table|tab)\.?\s*\d", re.I)
TWO_SENTENCES = re.compile(r"[a-z]{2}\.\s+[A-Z][a-z]")


def is_junk(block: str) -> bool:
    """LaTeX residue or punctuation that cannot be a title or a heading."""
    words = block.split()
    if not words or not any(ch.isalpha() for ch in block) or block[0] in "=,.;:{}\\":
        return True
    if all(w == "[formula]" for w in words):
        return True
    if all(
        _UNIT.match(w) or w.endswith(".sty") or w.lower() in _TEX_WORDS or w.startswith("\\") for w in words
    ) or all(_tex_residue(w) for w in words):
        return True
    if len(words) == 1:  # "Observations" is a heading; "Remarks Example" a list of environments
        return words[0].lower().strip(".,;:") in _THEOREM_WORDS
    if all(_theorem_word(w.lower().strip(".,;:")) for w in words):
        return True
    # "-0.5 truecm Lemma Corollary", "*mainthm*Main Theorem": environments among TeX residue
    return any(is_dimension(w) or any(ch in w for ch in "@><*_\\") for w in words) and all(
        _theorem_word(w.lower().strip(".,;:")) or _tex_residue(w) for w in words
    )


def _tex_residue(word: str) -> bool:
    """A word of TeX residue: a dimension, ``at``/``plus``/``scaled``, a macro or package name."""
    return bool(
        _UNIT.match(word)
        or _GLUED_UNIT.match(word)
        or word in _UNIT_WORDS
        or word.lower() in _TEX_WORDS
        or any(ch in word for ch in "@><*_\\")
    )


BARE_UNITS = {"cm", "mm", "pt", "truecm", "truein", "truept", "truemm"}
"""Units that are TeX residue without a number; ``in``, ``em`` or ``true`` alone are English."""


def is_dimension(word: str) -> bool:
    """A TeX length (``0.5cm``, ``height2pt``, ``plus``), not a year range or a footnote mark."""
    if word.isalpha():
        return word.lower() in BARE_UNITS or bool(_GLUED_UNIT.match(word))
    return bool(_GLUED_UNIT.match(word) or (_UNIT.match(word) and re.search(r"[a-z]", word, re.I)))


def _theorem_word(word: str) -> bool:
    return word in _THEOREM_WORDS or word.removesuffix("s") in _THEOREM_WORDS


def is_page_header(block: str) -> bool:
    """A preprint's header: report numbers, arXiv ids and dates only (``CERN-TH/2000-035 January
    2000``); it needs one token with a digit next to a dash or slash, an id, or a year."""
    words = block.split()
    if not words or len(words) > 16:
        return False
    plain_caps = sum(w.isalpha() and w.isupper() for w in words)
    if plain_caps > 3 or plain_caps * 2 > len(words):
        return False  # an all-capitals title with a number in it (``... FROM SGR1806-20 ...``)
    return all(_header_word(w) for w in words) and any(_HEADER_ANCHOR.search(w) for w in words)


def _header_word(word: str) -> bool:
    low = word.lower().strip(".,")
    if len(low) < 2 and not low.isdigit():
        return False  # "A" of "A Note on ..."
    return (
        low in _MONTHS
        or low in {"preprint", "draft", "revised", "version", "hep", "(p)"}
        or bool(_HEADER_TOKEN.match(word))
    )


def title_shaped(block: str) -> bool:
    first = normalize_whitespace(block) or ""
    stripped = SECTION_NUMBER.sub("", first).lower().strip(".: ")
    if not first or stripped in _NON_TITLES or _REPORT_NUMBER.match(first) or _CAPTION.match(first):
        return False
    if _NOT_A_TITLE.match(first):
        return False
    if "@" in first or any(w.lower().strip(",.;") in _INSTITUTION_HEADS for w in first.split()):
        return False  # an affiliation, or names run into one
    if len(first) > 300 or len(first.split()) > 30 or "[\\cite" in first or "[\\ref" in first:
        return False
    if first.endswith(":") or sum(ch.isalpha() for ch in first.replace("[formula]", "")) < 6:
        return False
    if not (
        first[0].isupper()
        or first[0].isdigit()
        or first[0] in "\"'“‘[(|"
        or not first[0].isascii()
        or first.split()[0] in _PARTICLES
        or re.match(r"^[a-z]{1,2}-[A-Za-z]", first)  # q-Bernoulli, p-adic
    ):
        return False
    two_sentences = first.endswith(".") and TWO_SENTENCES.search(first[:-1])
    return not (two_sentences and len(first.split()) > 20)


def cut_names(block: str, vocab: set[str], next_block: str) -> tuple[str, list[str]] | None:
    """``(title, [names, affiliation])`` when ``block`` runs a title into author names, followed by
    an affiliation in the same block or the next one. The cut is the earliest word from which the
    rest up to the affiliation reads as names and which is an initial or a capitalised word the
    body never writes in lower case (so ``Lagrangian`` stays in the title)."""
    words = block.split()
    end = next((j for j, w in enumerate(words) if j >= 3 and is_affiliation_word(w)), len(words))
    if end == len(words) and not affiliation_block(next_block):
        return None
    cut = next((i for i in range(2, end) if _names_from(words, i, end, vocab)), None)
    if cut is None:
        return None
    head = " ".join(words[:cut])
    names = split_names(" ".join(words[cut:end]), vocab) or []
    if head.endswith((".", ",", ":")) or words[cut - 1].lower() in TRAILING_FUNCTION_WORDS:
        return None
    if end == len(words) and not _strong_names(" ".join(words[cut:end]), names):
        return None
    rest = [" ".join(words[cut:end]), " ".join(words[end:])]
    return head, [r for r in rest if r]


def _names_from(words: list[str], i: int, end: int, vocab: set[str]) -> bool:
    """``words[i:end]`` are names, starting with an initial or a word the body never writes in lower case."""
    first = words[i]
    starts = bool(re.match(r"^[A-Z]\.", first)) or (first[:1].isupper() and first.lower() not in vocab)
    return starts and split_names(" ".join(words[i:end]), vocab) is not None


def affiliation_block(block: str) -> bool:
    """A short block naming an institution (a long one is a paragraph that mentions physics)."""
    return len(block) <= 400 and is_affiliation(block)


def _has_initial(text: str) -> bool:
    return bool(re.search(r"(?:^|\s)[A-Z]\.", text))


def _strong_names(text: str, names: list[str]) -> bool:
    """Names that cannot be a title's words: two or more of them, or one with an initial."""
    return len(names) >= 2 or _has_initial(text)


def strip_residue(block: str) -> str:
    """A title block without the TeX dimensions and the page header around it (``0.5cm Affine Lie
    Algebras ...``, ``ITEP-15/99 April 1999 A remark on ...``, ``... height2pt``)."""
    words = block.split()
    start = 0
    while start < len(words) - 1 and is_dimension(words[start]):
        start += 1
    header = start
    while header < len(words) - 1 and _header_word(words[header]):
        header += 1
    if header > start and is_page_header(" ".join(words[start:header])) and not words[header][0].islower():
        start = header  # not "NGC 3801 caught in the act ..."
    end = len(words)
    while end > start + 1 and (is_dimension(words[end - 1]) or words[end - 1] == "in"):
        end -= 1  # a title never ends on "in": the unit of a length whose number was lost
    return " ".join(words[start:end])


def take_title(blocks: list[str], vocab: set[str]) -> tuple[str | None, list[str]]:
    if not blocks:
        return None, blocks
    first = strip_residue(normalize_whitespace(blocks[0]) or "")
    following = blocks[1] if len(blocks) > 1 else ""
    opening = split_names(first, vocab)
    if opening is not None and (
        _has_initial(first)
        or (affiliation_block(following) and (len(opening) > 1 or not first.isupper()))
        or following.strip().lower() in {"and", "&"}
    ):
        return None, blocks  # the opening is the author list: the title was not kept
    cut = cut_names(first, vocab, following) if len(first.split()) > 4 else None
    if cut is not None and title_shaped(cut[0]):
        return cut[0], [*cut[1], *blocks[1:]]
    if not title_shaped(first):
        return None, blocks
    if first.endswith(".") and not first.endswith(("et al.", " al.")):
        first = first[:-1].rstrip()
    return first, blocks[1:]


def take_authors(blocks: list[str], vocab: set[str]) -> tuple[list[str], list[str]]:
    """Names of the consecutive name-list blocks at the start (``", Patrik L. Ferrari"`` included)."""
    authors: list[str] = []
    while blocks and len(authors) < 60:
        names = split_names(normalize_whitespace(blocks[0]) or "", vocab)
        if names is None:
            break
        authors.extend(n for n in names if n not in authors)
        blocks = blocks[1:]
    return authors, blocks
