"""Author names from the title block of a paper (PDF title page, plain-text opening).

Precision over recall: `split_names` returns the names of a text only when *all* of it reads as a
list of person names, and ``None`` otherwise, so an affiliation, an e-mail address, a subtitle or a
sentence never becomes an author. A name is 2 to 5 words, each a capitalised word (``Ashish``,
``Ming-Wei``, ``O'Brien``, ``COMELLAS``), an initial (``M.P.``, ``W.J.``) or a surname particle
(``van``, ``de``, ``Las``), with at least one capitalised word of two letters or more and no word
of an institution (``University``, ``Laboratoire``...) or an English function word (``of``,
``with``). Names are separated by commas, semicolons, ``and`` or ``&``. Footnote marks (``*``,
``†``, ``1,2``, a trailing digit) and ``[formula]`` placeholders are removed first.
"""

from __future__ import annotations

import re

from openxiv.corpus.readers.line_sub import sub_marked_lines

__all__ = ["is_affiliation", "is_affiliation_word", "lowercase_words", "split_names"]

MAX_NAMES = 60

_AFFILIATION_WORDS = {
    "university", "universit", "universiteit", "universität", "université", "universidad",
    "università", "department", "dept", "departament", "departamento", "dipartimento", "institute",
    "institut", "instituto", "istituto", "laboratory", "laboratoire", "laboratorio", "lab", "labs",
    "physics", "physique", "fisica", "school", "college", "center", "centre", "centro", "faculty",
    "facultad", "academy", "observatory", "research", "national", "road", "street", "avenue", "box",
    "sciences", "science", "theoretical", "technology", "group", "division", "inc", "ltd", "corp",
    "corporation", "company", "google", "microsoft", "facebook", "meta", "deepmind", "openai", "ai",
    "hospital", "foundation", "council", "ministry", "astronomy", "astrophysics", "mathematics",
    "engineering", "computer", "informatics", "usa", "germany", "france", "italy", "japan", "china",
    "india", "russia", "spain", "israel", "canada", "uk", "u.k.", "cnrs", "infn", "cern", "email",
    "e-mail",
}  # fmt: skip
_NOT_NAMES = {"abstract", "introduction", "contents", "keywords", "date", "received", "preprint"}
_FUNCTION_WORDS = {
    "of", "the", "for", "at", "in", "on", "with", "to", "a", "an", "from", "by", "via", "is", "are",
    "its", "their", "our", "we", "this", "that", "as", "or", "not", "into", "towards", "toward",
    "using", "under", "over", "between", "through", "all", "authors", "equal", "contribution",
}  # fmt: skip
_PARTICLES = {
    "van", "von", "der", "den", "de", "del", "della", "da", "das", "do", "dos", "di", "du", "la", "le",
    "las", "los", "ter", "ten", "bin", "ibn", "al", "el", "y", "st.", "mc", "mac",
}  # fmt: skip
_MARKS = re.compile(r"\[formula\]|[*†‡§¶‖⋆∗♦♣♠♥□⋄◦•∙#]|\(\s*\d+\s*\)")
_TRAILING_DIGITS = re.compile(r"(?<=[^\W\d_])\d+(?:,\d+)*(?=\s|,|$)")
_LONE_NUMBERS = re.compile(r"(?:(?<=\s)|^)\d+(?:\s*,\s*\d+)*(?=\s|$|,)")
_AFFILIATION_LETTERS = re.compile(r"(?<=[^\W\d_]),[a-c](?:,[a-c])*(?=[,\s]|$)|(?:^|\s)[a-c]\)")
_SEPARATORS = re.compile(r"\s*(?:,|;|\band\b|&|\bund\b|\bet\b)\s*")
_INITIALS = re.compile(r"^(?:[A-Z][a-z]?\.(?:\s?-?[A-Z][a-z]?\.)*|[A-Z])$")
_WORD = re.compile(r"^[^\W\d_][^\W\d_'’.\-]*(?:[-'’][^\W\d_]+)*\.?$")


def _clean(text: str) -> str:
    text = _MARKS.sub(" ", text)
    text = _AFFILIATION_LETTERS.sub("", text)
    text = _TRAILING_DIGITS.sub("", text)
    text = _LONE_NUMBERS.sub(" ", text)
    text = re.sub(r"^\s*by\s+", "", text, flags=re.I)
    return " ".join(text.split()).strip(" ,;")


def _split_initials(token: str) -> list[str]:
    """``M.P.Bellon`` -> ``["M.P.", "Bellon"]``; any other token unchanged."""
    m = re.match(r"^((?:[A-Z]\.){1,3})([A-Z][^\W\d_]{1,})$", token)
    return [m.group(1), m.group(2)] if m else [token]


def _is_name(part: str, vocab: set[str] | frozenset[str]) -> bool:
    tokens = [t for tok in part.split() for t in _split_initials(tok)]
    if not 2 <= len(tokens) <= 5:
        return False
    long_words = 0
    unknown = 0
    for tok in tokens:
        if _INITIALS.match(tok):
            continue
        low = tok.lower().strip(".")
        if low in _FUNCTION_WORDS or low in _AFFILIATION_WORDS or low in _NOT_NAMES:
            return False
        if low in _PARTICLES:
            continue
        if not _WORD.match(tok) or not tok[0].isupper() or tok.endswith("."):
            return False
        if len(tok) >= 2:
            long_words += 1
            unknown += low not in vocab
    return long_words >= 1 and 2 * unknown >= long_words and not _INITIALS.match(tokens[-1])


def split_names(text: str, vocab: set[str] | frozenset[str] = frozenset()) -> list[str] | None:
    """The person names ``text`` lists, or ``None`` unless every part of it is a name.

    ``vocab``: lower-case words of the paper's body. At least half the words of a name (initials
    aside) must not be among them: ``Lattice Field Theory`` is a title, since its words occur in
    lower case in the text.
    """
    if "@" in text or "http" in text or len(text) > 1000:
        return None
    cleaned = _clean(text)
    if not cleaned:
        return None
    parts = [p for p in _SEPARATORS.split(cleaned) if p and p.strip()]
    if not parts or len(parts) > MAX_NAMES:
        return None
    names = [" ".join(p.split()) for p in parts]
    if not all(_is_name(n, vocab) for n in names):
        return None
    return names


def is_affiliation(text: str) -> bool:
    """An institution, address or e-mail line (a word such as ``University`` or ``Labs``, or an ``@``)."""
    if "@" in text:
        return True
    return any(is_affiliation_word(w) for w in text.split())


def is_affiliation_word(word: str) -> bool:
    return word.lower().strip(".,;:()") in _AFFILIATION_WORDS


_LOWER_WORD = re.compile(r"\b[a-z][a-z'’-]+\b")


_ADDRESSES = re.compile(r"\{[^}]*\}\S*|(?<!\S)\S*@\S*|(?<!\S)\S*://\S*|\b[a-z]+\.[a-z]+(?:\.[a-z]+)*\b")
r"""E-mail addresses, ``{a, b}@host`` groups, URLs and host names. A token holding ``@`` or ``://``
is matched from its start (``(?<!\S)``): the same matches as without the look-behind, which let
``\S*`` rescan the rest of the token from every character (a sixth of `read_pdf`'s layout work)."""


_ADDRESS_MARK = re.compile(r"[@{.:](?:(?<=[@{])|(?<=[a-z]\.)[a-z]|(?<=:)//)")
"""What every `_ADDRESSES` match holds: a ``{``, an ``@``, a ``://``, or a dot between lower-case
letters. Written to start with one of those four characters, so that the regex engine skips to
them instead of trying each alternative at every character."""


def lowercase_words(text: str) -> set[str]:
    """The words ``text`` writes in lower case: the ``vocab`` of `split_names`. E-mail addresses
    and URLs are left out: ``{huiyi.wang, ...}@unsw.edu.au`` does not make ``wang`` a word."""
    return set(_LOWER_WORD.findall(strip_addresses(text)))


def strip_addresses(text: str) -> str:
    """``_ADDRESSES.sub(" ", text)``, run only on the lines that can hold a match.

    A ``{...}`` group runs from its ``{`` to the first ``}`` after it (and on to the end of that
    token); every other match lies inside one whitespace-free token. So a match starts on the line
    of a mark and ends at the latest on the line of the first ``}`` after it (`sub_marked_lines`).
    """
    last_close = text.rfind("}")

    def reach(m: re.Match[str]) -> int:
        p = m.start()
        return text.find("}", p) if m.group() == "{" and p < last_close else p

    return sub_marked_lines(_ADDRESSES, " ", text, _ADDRESS_MARK, reach)
