"""The title a paper is served with: never empty, and always with where it comes from.

Agents drop a hit without a title (the AutoResearchBench agent keeps a candidate only when its
title is truthy, issue 21), so every answer that carries a title also carries ``title_source``
(`openxiv.corpus.records.TitleSource`): ``metadata``, ``text`` or ``derived``. A corpus ingested by
this version stores both for every paper. An index built before the field existed holds papers
without it, and some without a title: such a paper is served as the current ingest would store it
(the same rules as the corpus migration, `openxiv.corpus.migrations`): a stored title comes from
``text`` when every source of the paper is a plain text or a PDF, else from ``metadata``; a missing
one is derived (`openxiv.corpus.titles.derive_title`) from the abstract, else the sections.

`titled` is the use cases' step (it reads the sections of an untitled paper from the store);
`with_title` the pure rule, also the last guard of every view (`openxiv.service.views`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable

from openxiv.corpus.records import Paper, TitleSource
from openxiv.corpus.store import Store
from openxiv.corpus.titles import derive_title

__all__ = ["is_titled", "source_of", "titled", "with_title"]

_TEXT_FORMATS = ("plaintext:", "pdf:")
"""Inputs whose title is read from the text (the opening of a plain text, a PDF page)."""


def is_titled(paper: Paper) -> bool:
    """The paper has a non-blank title and says where it comes from (nothing to fill in)."""
    return bool(paper.title and paper.title.strip()) and paper.title_source is not None


def source_of(paper: Paper) -> TitleSource:
    """Where the stored title of a paper without ``title_source`` comes from (the migration's rule)."""
    if paper.sources and all(s.startswith(_TEXT_FORMATS) for s in paper.sources):
        return "text"
    return "metadata"


def with_title(paper: Paper, texts: Iterable[str] = ()) -> Paper:
    """``paper`` with a title and its source: itself when it has both; a blank title is derived
    from the abstract, else from ``texts`` (its sections in reading order)."""
    if is_titled(paper):
        return paper
    if paper.title and paper.title.strip():
        return dataclasses.replace(paper, title_source=source_of(paper))
    title = derive_title(paper.arxiv_id, paper.abstract, texts)
    return dataclasses.replace(paper, title=title, title_source="derived")


def titled(store: Store, paper: Paper) -> Paper:
    """`with_title`, reading the paper's sections only when its title must be derived."""
    if is_titled(paper):
        return paper
    return with_title(paper, (s.text for s in store.sections(paper.arxiv_id)))
