"""The ``references`` stage: every paper's references, resolved to corpus papers, and its inverse,
cited-by, with each corpus paper's in-corpus citation count, written at index build.

The corpus keeps each paper's bibliography (`openxiv.corpus.references`: unArXive inputs as they
come, plain texts and PDFs as `openxiv.corpus.bibliography` parsed them, each entry with the arXiv
id it prints and its citing sentence). This stage walks them once, in arXiv id order, and resolves
every entry that prints no arXiv id against the whole corpus by DOI or title and year
(`openxiv.indexer.building.resolve`). It writes arrays, so serving a paper's references or the
papers that cite it is a binary search and two slices (memory-mapped), never a scan (the table
`openxiv.indexer.tables.references` describes and reads, so serving never imports the build).

It streams: the entries' texts and contexts go to their files as they are read; what it holds is
the resolver's per-paper arrays (33 bytes a paper besides its id), the distinct cited arXiv ids outside the corpus,
and 4 bytes an entry plus 8 a resolved one (the cited rows and the edges). A snapshot built before
this stage has no ``references/`` and no manifest ``references`` part; the service says so (409)
instead of answering "no references".
"""

from __future__ import annotations

from array import array
from pathlib import Path
from typing import Any, BinaryIO

import numpy as np

from openxiv.indexer.building.resolve import TitleIndex
from openxiv.indexer.tables.references import (
    CITATIONS_FILE,
    CITED_BY_FILE,
    CITED_PTR_FILE,
    CONTEXT_FILE,
    CONTEXT_PTR_FILE,
    ENTRY_CITED_FILE,
    IDS_FILE,
    IN_CORPUS_FILE,
    INFO_FILE,
    REFS_PTR_FILE,
    TEXT_FILE,
    TEXT_PTR_FILE,
)
from openxiv.indexer.tables.rowtable import write_info

__all__ = ["write_references"]

_CHUNK = 20_000


def _ptr(counts: np.ndarray) -> np.ndarray:
    out = np.zeros(len(counts) + 1, dtype=np.int64)
    np.cumsum(counts, out=out[1:])
    return out


class _Blobs:
    """Texts appended to one file, with their end offsets."""

    def __init__(self, fh: BinaryIO) -> None:
        self.fh, self.ends, self.at = fh, array("q", [0]), 0

    def add(self, text: str | None) -> None:
        if text:
            data = text.encode("utf-8", "surrogatepass")
            self.fh.write(data)
            self.at += len(data)
        self.ends.append(self.at)


def write_references(corpus_db: Path, directory: Path, paper_ids: np.ndarray | None = None) -> dict[str, Any]:
    """Read the bibliographies of ``corpus_db`` (the snapshot's copy), resolve them and write the
    table into ``directory``; the counts (the manifest's ``references`` part). ``paper_ids``: the
    snapshot's papers in row order, which ``citations.npy`` follows (default: every corpus paper)."""
    from openxiv.corpus.references import iter_references
    from openxiv.corpus.store import Store
    from openxiv.indexer.building.corpusrows import paper_rows

    index = TitleIndex.read(paper_rows(corpus_db, ("arxiv_id", "title", "authors_json", "doi"), _CHUNK))
    int(index.ids.size)
    directory.mkdir(parents=True, exist_ok=True)
    external: dict[str, int] = {}
    citing, per_paper, cited = array("i"), array("i"), array("i")
    stats = {"doi": 0, "title": 0, "context": 0}
    store = Store.open_readonly(corpus_db)
    try:
        with (
            store.engine.connect() as conn,
            (directory / TEXT_FILE).open("wb") as tf,
            (directory / CONTEXT_FILE).open("wb") as cf,
        ):
            texts, contexts = _Blobs(tf), _Blobs(cf)
            for aid, refs in iter_references(conn, by_arxiv_id=True):
                own = int(np.searchsorted(index.ids, aid.encode()))
                citing.append(own)
                per_paper.append(len(refs))
                for ref in refs:
                    cited.append(_cited(index, external, ref.arxiv_id, ref.text, own, stats))
                    texts.add(ref.text)
                    contexts.add(ref.context)
                    stats["context"] += ref.context is not None
    finally:
        store.close()
    return _write_arrays(
        directory, index, external, citing, per_paper, cited, texts, contexts, stats, paper_ids
    )


def _cited(
    index: TitleIndex,
    external: dict[str, int],
    arxiv_id: str | None,
    text: str | None,
    own: int,
    stats: dict[str, int],
) -> int:
    """The cited paper as a key: its corpus row (>= 0), -2 - its number among the cited ids outside
    the corpus, or -1 when the entry resolves to none."""
    n = int(index.ids.size)
    if arxiv_id is not None:
        i = int(np.searchsorted(index.ids, arxiv_id.encode()))
        if i < n and index.ids[i] == arxiv_id.encode():
            return i
        return -2 - external.setdefault(arxiv_id, len(external))
    if not text:
        return -1
    found = index.resolve(text, own)
    if found is None:
        return -1
    stats[found[1]] += 1
    return found[0]


def _write_arrays(
    directory: Path,
    index: TitleIndex,
    external: dict[str, int],
    citing: array[int],
    per_paper: array[int],
    cited_keys: array[int],
    texts: _Blobs,
    contexts: _Blobs,
    stats: dict[str, int],
    paper_ids: np.ndarray | None,
) -> dict[str, Any]:
    n = int(index.ids.size)
    ext = sorted(external)
    width = max([index.ids.dtype.itemsize, *(len(a) for a in ext)], default=1)
    vocab_old = np.concatenate(
        [index.ids.astype(f"S{width}"), np.asarray([a.encode() for a in ext], f"S{width}")]
    )
    ext_old = np.zeros(len(ext), dtype=np.int64)  # external number -> place in vocab_old
    for k, a in enumerate(ext):
        ext_old[external[a]] = n + k
    order = np.argsort(vocab_old, kind="stable")
    vocab = vocab_old[order]
    new_of_old = np.empty(order.size, dtype=np.int64)
    new_of_old[order] = np.arange(order.size)
    rows = vocab.size

    keys = (
        np.frombuffer(cited_keys, dtype=np.int32).astype(np.int64)
        if len(cited_keys)
        else np.zeros(0, np.int64)
    )
    cited = np.full(keys.size, -1, dtype=np.int64)
    inside, outside = keys >= 0, keys <= -2
    cited[inside] = new_of_old[keys[inside]]
    cited[outside] = new_of_old[ext_old[-2 - keys[outside]]]
    citing_new = new_of_old[np.frombuffer(citing, dtype=np.int32)] if len(citing) else np.zeros(0, np.int64)
    counts = np.frombuffer(per_paper, dtype=np.int32) if len(per_paper) else np.zeros(0, np.int32)
    per_row = np.zeros(rows, dtype=np.int64)
    per_row[citing_new] = counts
    entry_citing = np.repeat(citing_new, counts)
    edges = np.unique(cited[cited >= 0] * rows + entry_citing[cited >= 0])
    edge_cited, edge_citing = edges // rows, edges % rows
    in_corpus = np.zeros(rows, dtype=bool)
    in_corpus[new_of_old[:n]] = True
    per_cited = np.bincount(edge_cited, minlength=rows).astype(np.int64)

    np.save(directory / IDS_FILE, vocab)
    np.save(directory / IN_CORPUS_FILE, in_corpus)
    np.save(directory / REFS_PTR_FILE, _ptr(per_row))
    np.save(directory / ENTRY_CITED_FILE, cited.astype(np.int32))
    np.save(directory / TEXT_PTR_FILE, np.frombuffer(texts.ends, dtype=np.int64))
    np.save(directory / CONTEXT_PTR_FILE, np.frombuffer(contexts.ends, dtype=np.int64))
    np.save(directory / CITED_PTR_FILE, _ptr(per_cited))
    np.save(directory / CITED_BY_FILE, edge_citing.astype(np.int32))
    ids = paper_ids if paper_ids is not None else vocab[in_corpus]
    at = np.searchsorted(vocab, np.asarray([str(a).encode() for a in ids], dtype=f"S{width}"))
    np.save(
        directory / CITATIONS_FILE,
        per_cited[np.minimum(at, rows - 1)].astype(np.int32) if rows else np.zeros(0, np.int32),
    )
    resolved = cited[cited >= 0]
    info = {
        "papers_with_references": int(np.count_nonzero(counts)),
        "references": int(cited.size),
        "resolved": int(resolved.size),
        "resolved_in_corpus": int(np.count_nonzero(in_corpus[resolved])),
        "cited_papers": int(np.unique(resolved).size),
        "cited_papers_in_corpus": int(np.count_nonzero(in_corpus & (per_cited > 0))),
        "resolved_by_doi": stats["doi"],
        "resolved_by_title": stats["title"],
        "with_context": stats["context"],
        "citation_links": int(np.count_nonzero(in_corpus[edge_cited])),
        "index_bytes": index.nbytes,
    }
    return write_info(directory / INFO_FILE, info)
