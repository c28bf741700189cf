"""The embedded backend's stages of a build: bm25s matrices and FAISS indexes in the snapshot directory.

After the shared stages (`openxiv.indexer.build.stages`: read, tldr, sentences), `write_embedded`
runs ``bm25_papers`` and ``bm25_passages`` (bm25s matrices), then, unless the build embeds nothing,
``load_model`` / ``embed_papers`` / ``embed_passages`` and the FAISS index of each, and returns the
typed manifest of what it wrote.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from openxiv.indexer import layout
from openxiv.indexer.build.stages import (
    TOKEN_PATTERN,
    BuildContext,
    CorpusRead,
    build_config,
    embed_vectors,
    fusion_info,
    paper_bm25_text,
    versions,
)
from openxiv.indexer.engine.sparse import STOPWORDS, PassageIndex, SparseIndex
from openxiv.indexer.manifest import Bm25Info, Counts, EmbeddingInfo, Manifest

__all__ = ["write_embedded"]


def _bm25(ctx: BuildContext, corpus: CorpusRead) -> Bm25Info:
    """The ``bm25_papers`` and ``bm25_passages`` stages."""
    s = ctx.settings
    kw: dict[str, Any] = {"k1": s.bm25_k1, "b": s.bm25_b, "stemmer": s.bm25_stemmer}
    with ctx.timer("bm25_papers"):
        texts = [paper_bm25_text(d.title, d.abstract) for d in corpus.docs]
        papers = SparseIndex.build(texts, progress=ctx.progress, **kw)
        papers.save(ctx.tmp / layout.BM25_PAPERS)
    passages: PassageIndex | None = None
    if corpus.texts:
        with ctx.timer("bm25_passages"):
            rows, ids = np.asarray(corpus.rows), np.asarray(corpus.ids)
            passages = PassageIndex.build(
                corpus.texts, rows, ids, len(corpus.docs), progress=ctx.progress, **kw
            )
            passages.save(ctx.tmp / layout.BM25_PASSAGES)
    return Bm25Info(
        library="bm25s",
        method=papers.model.method,
        k1=s.bm25_k1,
        b=s.bm25_b,
        tokenizer={
            "pattern": TOKEN_PATTERN,
            "lower": True,
            "stopwords": STOPWORDS,
            "stemmer": s.bm25_stemmer,
        },
        paper_text="title + newline + abstract",
        papers=papers.params,
        passages=passages.sparse.params if passages is not None else None,
    )


def _dense(ctx: BuildContext, corpus: CorpusRead, counts: Counts) -> EmbeddingInfo:
    """The embed stages and a FAISS index of each part's vectors."""
    info = EmbeddingInfo(embedded=ctx.embed)
    if ctx.embed == "none":
        return info
    from openxiv.indexer.engine.dense import DenseIndex, use_all_cores

    use_all_cores()  # explicit: importing dense no longer sizes FAISS's thread pool
    for sub, vectors in embed_vectors(ctx, corpus, info):
        index = DenseIndex.build(vectors, ctx.settings.ann_threshold, storage=ctx.settings.dense_storage)
        index.save(ctx.tmp / sub)
        if sub == layout.DENSE_PAPERS:
            info.dense_papers, counts.paper_vectors = index.info(), int(index.ntotal)
        else:
            info.dense_passages, counts.passage_vectors = index.info(), int(index.ntotal)
    return info


def write_embedded(ctx: BuildContext, corpus: CorpusRead) -> Manifest:
    """Write the snapshot's BM25 and dense parts; the manifest of the build so far."""
    bm25 = _bm25(ctx, corpus)
    counts = Counts(papers=len(corpus.docs), passages=len(corpus.texts), paper_vectors=0, passage_vectors=0)
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
