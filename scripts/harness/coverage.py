"""Coverage bias of a ranking on short queries (issue 37), for ``bench_quality`` and ``bench_calibration``.

Some papers of the corpus have a full text (searched as passages), the rest a title + abstract. A
ranking is fair to that mixed coverage when having a full text gives no advantage by itself: for a
short keyword query, the share of papers with a full text in the first 10 hits should be about their
share among the papers that contain every query word. The measure is the ratio of the two shares'
means over the short queries (a query fewer than 10 papers fully match is left out: its first page
cannot show their share), 1 when fair, above 1 when full texts are favoured, below 1 when abstracts are.

"Contains every query word" is the issue's own definition (`TextMatch`): the paper's text (title,
abstract and, for a full text, every section) holds each query word as a case-insensitive substring,
a word's final ``s`` dropped (``agents`` → ``agent``, so ``LLM agent`` and ``agentic`` count), a word
of at most 3 letters (``RL``, ``AI``) as a whole word. It
reproduces the issue's base shares on the whole shared corpus ("large language model agents" 0.01
among 4,511 papers, the issue 4,477; "reinforcement learning" 0.01, "code generation" 0.09, "object
detection" 0.23: BENCHMARKS.md «Coverage bias: the issue's measure»). The looser match the index
sees (`index_match`: every word *as the index analyses it*, stemmed, in the title + abstract or in any
of the paper's passages together) is reported beside it as the ``index`` base: stemming lets
``detection`` match ``detected`` and ``detector`` and ``generation`` match ``generated``, common in
the physics full texts, so it counts about half as many more full texts (0.29 against 0.23 for
"object detection") and the bias it gives reads lower.

The issue's reading compares windows of very different lengths: an abstract of ~200 words against a
full text of thousands, which holds the two words of a short query by chance far more often (most
physics full texts that hold "object" and "detection" are not about object detection). The
``opening`` reading (`TextMatch.mask` with ``opening``) compares like with like: the same substring
rule over the paper's opening, its title + abstract, or for a paper without abstract its title + first
passage (the text the paper side indexes since issue 37, `Settings.paper_lead`). Under it, 1 means a
full text that opens on the query's words is as likely to be on the first page as an abstract that
holds them; above 1, what its other passages hold lifts it. The two readings bracket a fair ranking:
the issue's reads below 1 and the opening reading above 1 for the same first pages.

The short queries are derived from the dev topic query sets, never from held-out ones: each dev
topic query is ``"<subject>: <heading>"``; its subject and the last ``—`` part of its heading are
short queries when they have 2 to 5 words, each on-topic for the papers listed under it (the union
over the subject's headings; labels are incomplete, so "on-topic first" is a lower bound). The
issue's own examples (`EXAMPLES`) are added; they have no labels.
"""

from __future__ import annotations

import itertools
import json
import re
import sqlite3
import statistics
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from openxiv.indexer.engine.sparse import analyze

__all__ = [
    "EXAMPLES",
    "ShortQuery",
    "TextMatch",
    "coverage_bias",
    "full_text_mask",
    "index_match",
    "query_words",
    "short_queries",
]

TOPIC_FILES = ("topic_queries_dev.jsonl", "topic_queries_more_dev.jsonl")
EXAMPLES = (
    "large language model agents",
    "reinforcement learning",
    "code generation",
    "object detection",
    "diffusion models",
)
"""The short queries issue 37 quotes (its first hits were off-topic papers that have a full text)."""
MIN_WORDS, MAX_WORDS = 2, 5


@dataclass(frozen=True)
class ShortQuery:
    query: str
    on_topic: frozenset[str]
    """Papers listed under it in the dev topic sets (empty for `EXAMPLES`)."""


def short_queries(gold: Path) -> list[ShortQuery]:
    """The short dev queries (module doc), in a fixed order: derived ones sorted, then `EXAMPLES`."""
    labels: dict[str, set[str]] = {}
    for name in TOPIC_FILES:
        for line in (gold / name).read_text(encoding="utf-8").splitlines():
            if not line.strip():
                continue
            q = json.loads(line)
            subject, _, heading = q["query"].partition(":")
            for part in (subject, heading.split("—")[-1]):
                part = part.strip()
                if MIN_WORDS <= len(re.findall(r"\w+", part)) <= MAX_WORDS:
                    labels.setdefault(part, set()).update(q["relevant"])
    out = [ShortQuery(q, frozenset(labels[q])) for q in sorted(labels)]
    return out + [ShortQuery(q, frozenset(labels.get(q, ()))) for q in EXAMPLES if q not in labels]


def query_words(query: str) -> list[str]:
    """The words `TextMatch` looks for: lower-cased, a final ``s`` of a word longer than 3 dropped."""
    words = re.findall(r"\w+", query.lower())
    return list(dict.fromkeys(w[:-1] if len(w) > 3 and w.endswith("s") else w for w in words))


@dataclass
class TextMatch:
    """Which papers' text holds every word of a query (module doc), over one corpus database.

    ``words`` are looked for in one pass over the database (title + abstract of every paper, then the
    sections of the full texts), so build it with every query's words at once (`for_queries`)."""

    full: np.ndarray
    """Papers (rows) with a full text."""
    rows_of: dict[str, np.ndarray] = field(default_factory=dict)
    """Word -> boolean mask over paper rows (the papers whose text holds it)."""
    opening_of: dict[str, np.ndarray] = field(default_factory=dict)
    """Word -> mask of the papers whose opening holds it: the title + abstract, or for a paper
    without abstract the title + its first passage (the `opening` reading, module doc)."""

    @classmethod
    def for_queries(
        cls, db: Path, row_of: Any, n: int, full: np.ndarray, queries: Iterable[str]
    ) -> TextMatch:
        """Scan ``db`` (a corpus.sqlite, read-only) once for the words of ``queries``; ``row_of``
        maps an arXiv id to its row in the index (None: not in it), ``n`` rows."""
        words = sorted({w for q in queries for w in query_words(q)})
        masks = {w: np.zeros(n, dtype=bool) for w in words}
        opening = {w: np.zeros(n, dtype=bool) for w in words}
        con = sqlite3.connect(f"file:{Path(db).resolve()}?mode=ro", uri=True)
        try:
            row_by_id: dict[int, int] = {}
            titles: dict[int, str] = {}
            for pid, arxiv_id, title, abstract in con.execute(
                "SELECT id, arxiv_id, title, abstract FROM papers"
            ):
                row = row_of(arxiv_id)
                if row is not None:
                    row_by_id[pid] = row
                    text = f"{title or ''}\n{abstract or ''}".lower()
                    _mark(masks, text, row)
                    if abstract:
                        _mark(opening, text, row)
                    else:
                        titles[pid] = text
            firsts = con.execute("SELECT paper_id, text FROM passages WHERE ordinal = 0")
            for pid, text in firsts:
                if pid in titles:
                    _mark(opening, f"{titles.pop(pid)}\n{text or ''}".lower(), row_by_id[pid])
            for pid, text in titles.items():  # no abstract and no passage: the title alone
                _mark(opening, text, row_by_id[pid])
            sections = con.execute("SELECT paper_id, text FROM sections ORDER BY paper_id, idx")
            for pid, group in itertools.groupby(sections, key=lambda r: r[0]):
                if pid in row_by_id:  # a paper's sections as one text: one scan per word
                    _mark(masks, "\n".join(t or "" for _, t in group).lower(), row_by_id[pid])
        finally:
            con.close()
        return cls(full, masks, opening)

    def mask(self, query: str, opening: bool = False) -> np.ndarray:
        """Papers whose text (or with ``opening``, whose opening) holds every word of ``query`` (its
        words must have been scanned)."""
        of = self.opening_of if opening else self.rows_of
        out = np.ones(self.full.size, dtype=bool)
        for w in query_words(query):
            out &= of[w]
        return out


SHORT_WORD = 3
"""Words this short (``rl``, ``ai``, ``sql``) must match as whole words: as substrings they are in
most texts (``world``, ``said``)."""


def _mark(masks: dict[str, np.ndarray], text: str, row: int) -> None:
    """Set ``row`` in the mask of each word ``text`` holds (short words: as whole words)."""
    whole: set[str] | None = None
    for w, m in masks.items():
        if m[row]:
            continue
        if len(w) > SHORT_WORD:
            m[row] = w in text
        else:
            whole = set(re.findall(r"\w+", text)) if whole is None else whole
            m[row] = w in whole


def full_text_mask(backend: Any) -> np.ndarray:
    """Papers (rows) with at least one passage."""
    n = backend.meta.n
    if backend.passages is None:
        return np.zeros(n, dtype=bool)
    ptr = np.asarray(backend.passages.ptr)
    return np.diff(ptr[: n + 1]) > 0


def text_match(opened: Any, queries: Iterable[str]) -> TextMatch:
    """`TextMatch` over an opened index (`openxiv.indexer.snapshot.open_index`): its snapshot's
    corpus database and its paper rows."""
    backend = opened.backend
    return TextMatch.for_queries(
        opened.store.path, backend.meta.row_of, backend.meta.n, full_text_mask(backend), queries
    )


def _column_rows(index: Any, word: str) -> np.ndarray:
    t = index.vocab.get(word)
    if t is None:
        return np.zeros(0, dtype=np.int64)
    return np.asarray(index.indices[index.indptr[t] : index.indptr[t + 1]], dtype=np.int64)


def index_match(backend: Any, query: str) -> np.ndarray:
    """The looser match (module doc): papers whose title + abstract or passages together hold every
    word of ``query`` as the index analyses it (stemmed)."""
    papers = backend.bm25_papers
    mask = np.ones(backend.meta.n, dtype=bool)
    for word in set(analyze([query], papers.stemmer_name)[0]):
        has = np.zeros(backend.meta.n, dtype=bool)
        has[_column_rows(papers, word)] = True
        if backend.passages is not None:
            has[backend.passages.paper_row[_column_rows(backend.passages.sparse, word)]] = True
        mask &= has
    return mask


MIN_MATCHING = 10
"""A query is measured when at least this many papers hold every word: a first page can only show a
share of the papers when it can be filled with them."""


def _share(full: np.ndarray, mask: np.ndarray) -> float | None:
    return float(full[mask].mean()) if int(mask.sum()) >= MIN_MATCHING else None


def coverage_bias(
    backend: Any, queries: list[ShortQuery], match: TextMatch, mode: str | None = None, k: int = 10
) -> dict[str, Any]:
    """Per query and overall: the full-text share of the first ``k`` hits against the share among
    the papers holding every query word (``base``: `TextMatch`, the issue's measure; ``index_base``:
    `index_match`; ``opening_base``: `TextMatch`'s opening reading; None when fewer than
    `MIN_MATCHING` papers hold them), and whether the first hit is on-topic (labelled queries)."""
    full = match.full
    rows: list[dict[str, Any]] = []
    for sq in queries:
        every = match.mask(sq.query)
        hits = backend.search(sq.query, top_k=k, mode=mode).hits
        top = [backend.meta.row_of(h.arxiv_id) for h in hits]
        rows.append(
            {
                "query": sq.query,
                "matching": int(every.sum()),
                "base": _share(full, every),
                "index_base": _share(full, index_match(backend, sq.query)),
                "opening_base": _share(full, match.mask(sq.query, opening=True)),
                "top": float(np.mean([full[r] for r in top if r is not None])) if top else 0.0,
                "first_on_topic": (hits[0].arxiv_id in sq.on_topic) if hits and sq.on_topic else None,
                "first": hits[0].arxiv_id if hits else None,
            }
        )
    return {
        **overall(rows, "base"),
        "index": overall(rows, "index_base"),
        "opening": overall(rows, "opening_base"),
        "rows": rows,
    }


def overall(rows: list[dict[str, Any]], base_key: str) -> dict[str, Any]:
    """The mean shares and their ratio over the queries with a base (``base_key`` of each row), and
    the share of labelled queries whose first hit is on-topic."""
    measured = [r for r in rows if r[base_key] is not None]
    top = statistics.mean(r["top"] for r in measured)
    base = statistics.mean(r[base_key] for r in measured)
    labelled = [r["first_on_topic"] for r in rows if r["first_on_topic"] is not None]
    return {
        "queries": len(measured),
        "top_share": top,
        "base_share": base,
        "ratio": top / base if base else float("inf"),
        "first_on_topic": statistics.mean(labelled) if labelled else None,
        "labelled": len(labelled),
    }


def one_unit_match(backend: Any, query: str) -> np.ndarray:
    """Papers whose title + abstract, or one of whose passages, holds every word of ``query`` as the
    index analyses it (a stricter reading of the index's match than `index_match`)."""
    papers, passages = backend.bm25_papers, backend.passages
    words = set(analyze([query], papers.stemmer_name)[0])
    in_paper = np.ones(backend.meta.n, dtype=bool)
    in_passage = np.ones(passages.n_passages, dtype=bool)
    for word in words:
        has = np.zeros(backend.meta.n, dtype=bool)
        has[_column_rows(papers, word)] = True
        in_paper &= has
        held = np.zeros(passages.n_passages, dtype=bool)
        held[_column_rows(passages.sparse, word)] = True
        in_passage &= held
    out = in_paper.copy()
    out[passages.paper_row[in_passage]] = True
    return out


def definitions(backend: Any, match: TextMatch, queries: Iterable[str]) -> str:
    """Papers matching and their full-text share under each reading of "contains every query word",
    per query: the issue's numbers are to be reproduced by one of them."""
    full = match.full
    readings = (
        ("text (title, abstract, full text), plural s dropped: the measure", match.mask),
        (
            "index stems, title + abstract or passages together (`index_match`)",
            lambda q: index_match(backend, q),
        ),
        ("index stems, title + abstract or one passage", lambda q: one_unit_match(backend, q)),
        ("index stems, title + abstract only", lambda q: _paper_side(backend, q)),
    )
    queries = list(queries)
    head = "| reading | " + " | ".join(queries) + " |\n|---|" + "---:|" * len(queries) + "\n"
    body = ""
    for name, mask_of in readings:
        cells = []
        for q in queries:
            m = mask_of(q)
            cells.append(f"{int(m.sum()):,} / {float(full[m].mean()) if m.any() else 0.0:.3f}")
        body += f"| {name} | " + " | ".join(cells) + " |\n"
    return head + body


def _paper_side(backend: Any, query: str) -> np.ndarray:
    papers = backend.bm25_papers
    out = np.ones(backend.meta.n, dtype=bool)
    for word in set(analyze([query], papers.stemmer_name)[0]):
        has = np.zeros(backend.meta.n, dtype=bool)
        has[_column_rows(papers, word)] = True
        out &= has
    return out
