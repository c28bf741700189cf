"""The embedded backend's stages of a build: bm25s matrices and FAISS indexes in the snapshot directory.

After the shared stages (`openxiv.indexer.building.stages`: read, tldr, sentences), `write_embedded`
runs ``bm25_papers`` and ``bm25_passages`` (bm25s matrices), then, unless the build embeds nothing,
``load_model`` / ``embed_papers`` / ``embed_passages`` and the FAISS index of each, and returns the
typed manifest of what it wrote.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from openxiv.indexer import layout
from openxiv.indexer.analyzer import STOPWORDS, TOKEN
from openxiv.indexer.building.bm25stream import StreamingBM25
from openxiv.indexer.building.stages import (
    BuildContext,
    CorpusRead,
    build_config,
    embed_parts,
    fusion_info,
    paper_bm25_text,
    versions,
)
from openxiv.indexer.engine.doc_terms import write_doc_terms
from openxiv.indexer.engine.sparse import PassageIndex
from openxiv.indexer.manifest import Bm25Info, Counts, EmbeddingInfo, Manifest

if TYPE_CHECKING:
    from openxiv.indexer.engine.dense import DenseIndex

__all__ = ["fill_trained", "write_embedded"]

SPILL_CHUNK = 100_000
"""Rows moved from the spill file into a trained index at a time (float32 of each row while added)."""


def _bm25(ctx: BuildContext, corpus: CorpusRead) -> Bm25Info:
    """The ``bm25_papers`` and ``bm25_passages`` stages, each one streaming pass over the corpus copy
    (`openxiv.indexer.building.bm25stream`: the same matrix as an in-memory build)."""
    s = ctx.settings
    kw: dict[str, Any] = {"k1": s.bm25_k1, "b": s.bm25_b, "stemmer": s.bm25_stemmer}
    with ctx.timer("bm25_papers"):
        builder = StreamingBM25(ctx.tmp / ".bm25-spill", **kw)
        rows = corpus.paper_side_texts(s.paper_lead)
        for chunk in ctx.bar(rows, -(-corpus.n_papers // corpus.chunk), "bm25 papers"):
            builder.add([paper_bm25_text(title, abstract) for title, abstract in chunk])
        papers = builder.finish()
        papers.save(ctx.tmp / layout.BM25_PAPERS)
        write_doc_terms(papers, ctx.tmp / layout.BM25_PAPERS)  # feedback's copy by rows, mapped when served
        params = papers.params
        del papers, builder
    passages: dict[str, object] | None = None
    if corpus.n_passages:
        with ctx.timer("bm25_passages"):
            builder = StreamingBM25(ctx.tmp / ".bm25-spill", **kw)
            chunks = corpus.passage_text_chunks()
            for texts in ctx.bar(chunks, -(-corpus.n_passages // corpus.chunk), "bm25 passages"):
                builder.add(texts)
            index = PassageIndex(builder.finish(), corpus.rows, corpus.ids, corpus.n_papers)
            index.save(ctx.tmp / layout.BM25_PASSAGES)
            passages = index.sparse.params
            del index, builder
    return Bm25Info(
        library="bm25s",
        method=str(params["method"]),
        k1=s.bm25_k1,
        b=s.bm25_b,
        tokenizer={
            "pattern": TOKEN.pattern,
            "lower": True,
            "stopwords": STOPWORDS,
            "stemmer": s.bm25_stemmer,
        },
        paper_text="title + newline + abstract" + (" (or first passage)" if s.paper_lead else ""),
        papers=params,
        passages=passages,
    )


def _dense(ctx: BuildContext, corpus: CorpusRead, counts: Counts) -> EmbeddingInfo:
    """The embed stages and a FAISS index of each part's vectors, filled a chunk at a time straight
    from the embedding cache (`openxiv.indexer.building.stages.embed_parts`)."""
    info = EmbeddingInfo(embedded=ctx.embed)
    if ctx.embed == "none":
        return info
    from openxiv.indexer.engine.dense import DenseIndex, use_all_cores

    use_all_cores()  # explicit: importing dense no longer sizes FAISS's thread pool
    s = ctx.settings
    for sub, n, chunks in embed_parts(ctx, corpus, info):
        index = DenseIndex.create(
            n, int(info.dim or 0), s.ann_threshold, ann=s.ann_index, storage=s.dense_storage
        )
        if index.needs_training:
            fill_trained(index, chunks, n, ctx.tmp / f".{sub}.spill.npy")
        else:
            for vectors in chunks:
                index.add(vectors)
        index.save(ctx.tmp / sub)
        if sub == layout.DENSE_PAPERS:
            info.dense_papers, counts.paper_vectors = index.info(), int(index.ntotal)
        else:
            info.dense_passages, counts.passage_vectors = index.info(), int(index.ntotal)
        del index
    return info


def fill_trained(index: DenseIndex, chunks: Iterator[np.ndarray], n: int, spill: Path) -> None:
    """Fill an index that learns from its rows (IVF) from vectors that arrive a chunk at a time: the
    chunks go to a float16 file on disk (what the index stores, so nothing is lost), the index trains
    on its strided sample of them (`DenseIndex.train_rows`), then takes the rows from the file a
    chunk at a time. Memory stays the index's own plus one chunk, not every vector in float32."""
    store = np.lib.format.open_memmap(spill, mode="w+", dtype=np.float16, shape=(n, index.dim))
    try:
        at = 0
        for vectors in chunks:
            store[at : at + len(vectors)] = vectors
            at += len(vectors)
        if at != n:
            raise ValueError(f"the embed stage gave {at} vectors for {n} rows")
        index.train(np.asarray(store[index.train_rows()], dtype=np.float32))
        for start in range(0, n, SPILL_CHUNK):
            index.add(np.asarray(store[start : start + SPILL_CHUNK], dtype=np.float32))
    finally:
        del store
        spill.unlink(missing_ok=True)


def write_embedded(ctx: BuildContext, corpus: CorpusRead) -> Manifest:
    """Write the snapshot's BM25 and dense parts; the manifest of the build so far."""
    bm25 = _bm25(ctx, corpus)
    counts = Counts(papers=corpus.n_papers, passages=corpus.n_passages, paper_vectors=0, passage_vectors=0)
    embedding = _dense(ctx, corpus, counts)
    return Manifest(
        format_version=layout.FORMAT_VERSION,
        build_config=build_config(ctx.settings),
        corpus=corpus.corpus_info(),
        counts=counts,
        embedding=embedding,
        bm25=bm25,
        fusion=fusion_info(ctx.settings),
        tldr=corpus.tldr,
        sentences=corpus.sentences,
        versions=versions(),
        settings=ctx.settings.as_dict(),
    )
