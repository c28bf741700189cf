"""A title for a paper whose sources give none, so no paper is ever stored or served untitled.

Agents drop search hits without a title (the AutoResearchBench agent keeps a candidate only when its
title is truthy, issue 21). When no input gives a title (a plain text that opens with a heading or
an author list), the stored title is *derived*: the first real sentence of the abstract, else of the
full text (a paragraph of at least `MIN_WORDS` words, mostly letters, without an e-mail address),
with citation and reference markers removed and cut at a word boundary to `MAX_CHARS` characters
(``…`` marks a cut). A paper without any such sentence gets ``arXiv:<id>``. Its ``title_source``
is ``derived`` (`openxiv.corpus.records.TitleSource`), and any real title that arrives later
replaces it (`openxiv.corpus.merge`).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator

__all__ = ["MAX_CHARS", "MIN_WORDS", "derive_title", "first_sentence"]

MAX_CHARS = 120
MIN_WORDS = 5
_PARAGRAPHS_LOOKED_AT = 12
"""Paragraphs of each text tried before giving up on it (a derived title comes from the start)."""

_MARKERS = re.compile(r"\[\\[a-z]+=[^\]]*\]")
"""``[\\cite=foo]``, ``[\\ref=eq1]``, ``[\\citep=...]``: TeX residue of the plain texts."""
_SENTENCE_END = re.compile(r"(?<=[a-z0-9)\]][.!?])\s+(?=[A-Z(\[])")
_LEADING_LABEL = re.compile(r"^(?:abstract|summary|résumé)\s*[.:]\s*", re.I)


def _paragraphs(text: str) -> Iterator[str]:
    start = 0
    for _ in range(_PARAGRAPHS_LOOKED_AT):
        end = text.find("\n\n", start)
        yield text[start:] if end < 0 else text[start:end]
        if end < 0:
            return
        start = end + 2


def first_sentence(text: str | None) -> str | None:
    """The first sentence of the first real paragraph of ``text`` (see the module docstring)."""
    for para in _paragraphs(text or ""):
        para = " ".join(_MARKERS.sub(" ", _LEADING_LABEL.sub("", para.strip())).split())
        words = para.split()
        if len(words) < MIN_WORDS or "@" in para or words[0] == "[formula]":
            continue
        letters = sum(ch.isalpha() for ch in para)
        if letters < 0.6 * len(para.replace(" ", "")):
            continue
        sentence = _SENTENCE_END.split(para, maxsplit=1)[0].rstrip(" .")
        if len(sentence.split()) >= MIN_WORDS:
            return _cut(sentence)
    return None


def _cut(text: str) -> str:
    if len(text) <= MAX_CHARS:
        return text
    head = text[: MAX_CHARS - 1]
    head = head[: head.rfind(" ")] if " " in head else head
    return head.rstrip(" ,;:") + "…"


def derive_title(arxiv_id: str, abstract: str | None, texts: Iterable[str]) -> str:
    """A derived title (see the module docstring): from ``abstract``, else from the first of
    ``texts`` (the sections, in reading order) that has a real sentence, else ``arXiv:<id>``."""
    for text in (abstract, *texts):
        found = first_sentence(text)
        if found:
            return found
    return f"arXiv:{arxiv_id}"
