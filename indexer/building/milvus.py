"""`write_milvus`: the Milvus backend's stages of ``openxiv index build --backend milvus``.

The build job (`openxiv.indexer.building.job`) copies the corpus, reads papers and passages and
saves the paper metadata into the snapshot directory as always; this module then writes, instead
of bm25s matrices and FAISS indexes:

- a papers collection: ``row`` (primary key, the paper's row in arxiv_id order), ``text`` (title +
  abstract as analysed terms: `openxiv.indexer.engine.milvus_common.analyse`), ``sparse`` (the built-in BM25 function's
  output), ``dense`` (the paper vector from the same embedding cache as the embedded build, when
  papers are embedded) and the filter fields (`FILTER_FIELDS`);
- a passages collection (when the corpus has full texts): ``pid`` (corpus passage id),
  ``paper_row``, ``seq`` (position in the paper), ``text``, ``sparse``, ``dense`` (when passages
  are embedded) and the same filter fields, copied from the paper, so a filter runs inside Milvus.

Both are flushed, indexed and loaded before the aliases move to them (`switch_aliases`), and the
manifest's ``milvus`` part names them. Collections of snapshots that no longer exist on disk are
dropped after the switch (`drop_unused`), so pruning a snapshot also frees its collections.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np

from openxiv.corpus.settings.model import Settings
from openxiv.indexer import layout
from openxiv.indexer.analyzer import STOPWORDS, TOKEN
from openxiv.indexer.building.stages import (
    BuildContext,
    BuildError,
    CorpusRead,
    build_config,
    embed_vectors,
    fusion_info,
    paper_bm25_text,
    versions,
)
from openxiv.indexer.engine.milvus_common import (
    ANALYZER,
    MAX_AUTHORS,
    MAX_CATEGORIES,
    MAX_VENUE_KEYS,
    aliases,
    analyse,
    collection_names,
    connect,
    redact_uri,
)
from openxiv.indexer.engine.milvus_terms import count_terms, write_terms
from openxiv.indexer.manifest import Bm25Info, Counts, EmbeddingInfo, Manifest, MilvusInfo

__all__ = ["FILTER_FIELDS", "drop_unused", "switch_aliases", "write_milvus"]

FILTER_FIELDS = ("categories", "authors", "venue_keys", "venue_year_keys", "date_start", "date_end")
INSERT_BATCH = 2000
TEXT_MAX = 65535


def _per_row(n: int, ptr: np.ndarray, rows: np.ndarray) -> list[list[int]]:
    """Invert CSR postings (key -> rows) into the keys of each row."""
    out: list[list[int]] = [[] for _ in range(n)]
    for key in range(ptr.size - 1):
        for row in rows[int(ptr[key]) : int(ptr[key + 1])].tolist():
            out[row].append(key)
    return out


def _filter_values(meta: Any) -> list[dict[str, Any]]:
    """The filter fields of every paper row, from the snapshot's metadata arrays."""
    n = meta.n
    cats = _per_row(n, meta.cat_ptr, meta.cat_rows)
    auths = _per_row(n, meta.author_ptr, meta.author_rows)
    v = meta.venues
    venues = _per_row(n, v.ptr, v.rows) if v is not None else [[] for _ in range(n)]
    years = _per_row(n, v.year_ptr, v.year_rows) if v is not None else [[] for _ in range(n)]
    return [
        {
            "categories": [meta.categories[k] for k in cats[i]][:MAX_CATEGORIES],
            "authors": [meta.authors[k][:255] for k in auths[i]][:MAX_AUTHORS],
            "venue_keys": venues[i][:MAX_VENUE_KEYS],
            "venue_year_keys": years[i][:MAX_VENUE_KEYS],
            "date_start": int(meta.dates[i]),
            "date_end": int(meta.date_ends[i]),
        }
        for i in range(n)
    ]


def _schema(client: Any, key: str, dim: int | None, bm25: dict[str, float]) -> tuple[Any, Any]:
    from pymilvus import DataType, Function, FunctionType

    schema = client.create_schema(auto_id=False)
    if key == "papers":
        schema.add_field("row", DataType.INT64, is_primary=True)
    else:
        schema.add_field("pid", DataType.INT64, is_primary=True)
        schema.add_field("paper_row", DataType.INT64)
        schema.add_field("seq", DataType.INT32)
    schema.add_field(
        "text",
        DataType.VARCHAR,
        max_length=TEXT_MAX,
        enable_analyzer=True,
        analyzer_params=ANALYZER,
        enable_match=True,
    )
    schema.add_field("sparse", DataType.SPARSE_FLOAT_VECTOR)
    if dim:
        schema.add_field("dense", DataType.FLOAT_VECTOR, dim=dim)
    schema.add_field(
        "categories",
        DataType.ARRAY,
        element_type=DataType.VARCHAR,
        max_capacity=MAX_CATEGORIES,
        max_length=64,
    )
    schema.add_field(
        "authors", DataType.ARRAY, element_type=DataType.VARCHAR, max_capacity=MAX_AUTHORS, max_length=256
    )
    for name in ("venue_keys", "venue_year_keys"):
        schema.add_field(name, DataType.ARRAY, element_type=DataType.INT64, max_capacity=MAX_VENUE_KEYS)
    schema.add_field("date_start", DataType.INT32)
    schema.add_field("date_end", DataType.INT32)
    schema.add_function(
        Function(
            name=f"{key}_bm25",
            function_type=FunctionType.BM25,
            input_field_names=["text"],
            output_field_names=["sparse"],
        )
    )
    index = client.prepare_index_params()
    # k1 and b flat (Milvus reads them so) and as a JSON ``params`` entry, the only form milvus-lite
    # 3.2 reads: pymilvus flattens ``params`` into separate keys, which milvus-lite drops, so its BM25
    # scored with its own k1 1.5 instead of the index's (issue 42: the BM25 sides' top 10 then
    # differed from the embedded backend's on 1 query in 13)
    index.add_index(
        "sparse",
        index_type="SPARSE_INVERTED_INDEX",
        metric_type="BM25",
        params={**bm25, "params": dict(bm25)},
    )
    if dim:
        index.add_index("dense", index_type="FLAT", metric_type="IP")
    return schema, index


def _clip(text: str) -> str:
    """Keep a text under the VARCHAR limit (counted in bytes)."""
    raw = text.encode("utf-8")
    return text if len(raw) < TEXT_MAX else raw[: TEXT_MAX - 4].decode("utf-8", "ignore")


def _batches(rows: Iterator[dict[str, Any]]) -> Iterator[list[dict[str, Any]]]:
    batch: list[dict[str, Any]] = []
    for row in rows:
        batch.append(row)
        if len(batch) >= INSERT_BATCH:
            yield batch
            batch = []
    if batch:
        yield batch


def _write(
    client: Any, name: str, key: str, dim: int | None, bm25: dict[str, float], rows: Iterator[dict[str, Any]]
) -> int:
    if client.has_collection(name):
        client.drop_collection(name)  # a leftover of a build that died before its switch
    schema, index = _schema(client, key, dim, bm25)
    client.create_collection(name, schema=schema, index_params=index)
    n = 0
    for batch in _batches(rows):
        client.insert(name, batch)
        n += len(batch)
    client.flush(name)
    client.load_collection(name)
    return n


def _vectors(ctx: BuildContext, corpus: CorpusRead, info: EmbeddingInfo) -> dict[str, np.ndarray]:
    """The embed stages (the same cache as the embedded build), by layout part."""
    if ctx.embed == "none":
        return {}
    return {sub: np.asarray(v, dtype=np.float32) for sub, v in embed_vectors(ctx, corpus, info)}


def _rows(corpus: CorpusRead, ctx: BuildContext, vectors: dict[str, np.ndarray]) -> tuple[Any, Any]:
    """The ``milvus_analyse`` stage; the papers' and passages' rows to insert (lazily). Writes the
    texts' BM25 statistics into the snapshot (`openxiv.indexer.engine.milvus_terms`)."""
    with ctx.timer("milvus_analyse"):
        fields = _filter_values(corpus.meta)
        stemmer = ctx.settings.bm25_stemmer
        side = corpus.paper_side_texts(ctx.settings.paper_lead)
        paper_terms = analyse([paper_bm25_text(t, a) for chunk in side for t, a in chunk], stemmer)
        passage_terms = analyse(corpus.texts, stemmer) if corpus.n_passages else []
        rows, ids = corpus.rows.tolist(), corpus.ids.tolist()  # plain ints for the Milvus client
        write_terms(
            ctx.tmp,
            count_terms((_clip(t) for t in paper_terms), stemmer),
            count_terms((_clip(t) for t in passage_terms), stemmer) if passage_terms else None,
        )
    paper_vecs, passage_vecs = vectors.get(layout.DENSE_PAPERS), vectors.get(layout.DENSE_PASSAGES)

    def papers() -> Iterator[dict[str, Any]]:
        for i, terms in enumerate(paper_terms):
            row = {"row": i, "text": _clip(terms), **fields[i]}
            if paper_vecs is not None:
                row["dense"] = paper_vecs[i].tolist()
            yield row

    def passages() -> Iterator[dict[str, Any]]:
        seq = 0
        for j, (terms, prow, pid) in enumerate(zip(passage_terms, rows, ids, strict=True)):
            seq = seq + 1 if j and rows[j - 1] == prow else 0
            row = {"pid": pid, "paper_row": prow, "seq": seq, "text": _clip(terms), **fields[prow]}
            if passage_vecs is not None:
                row["dense"] = passage_vecs[j].tolist()
            yield row

    return papers, passages


def write_milvus(ctx: BuildContext, corpus: CorpusRead) -> Manifest:
    """Write the snapshot's collections on ``settings.milvus_uri``; the manifest of the build so far."""
    settings = ctx.settings
    if not settings.milvus_uri:
        raise BuildError("--backend milvus needs --milvus-uri (a .db file or http://host:19530)")
    embedding = EmbeddingInfo(embedded=settings.embed)
    vectors = _vectors(ctx, corpus, embedding)
    names = collection_names(settings.milvus_prefix, ctx.tmp.name.removeprefix(layout.TMP_PREFIX))
    bm25 = {"bm25_k1": settings.bm25_k1, "bm25_b": settings.bm25_b}
    counts = Counts(
        papers=0,
        passages=0,
        paper_vectors=len(vectors.get(layout.DENSE_PAPERS, ())),
        passage_vectors=len(vectors.get(layout.DENSE_PASSAGES, ())),
    )
    client = connect(settings.milvus_uri, settings.milvus_token)
    try:
        papers, passages = _rows(corpus, ctx, vectors)
        dims = {
            sub: embedding.dim if sub in vectors else None
            for sub in (layout.DENSE_PAPERS, layout.DENSE_PASSAGES)
        }
        with ctx.timer("milvus_papers"):
            counts.papers = _write(
                client, names["papers"], "papers", dims[layout.DENSE_PAPERS], bm25, papers()
            )
        if corpus.n_passages:
            with ctx.timer("milvus_passages"):
                dim = dims[layout.DENSE_PASSAGES]
                counts.passages = _write(client, names["passages"], "passages", dim, bm25, passages())
    finally:
        client.close()
    return Manifest(
        format_version=layout.FORMAT_VERSION,
        build_config=build_config(settings),
        backend="milvus",
        milvus=MilvusInfo(
            uri=redact_uri(settings.milvus_uri),
            collections={k: v for k, v in names.items() if k == "papers" or counts.passages},
            aliases=aliases(settings.milvus_prefix),
            prefix=settings.milvus_prefix,
            analyzer=ANALYZER,
            bm25_function="built-in BM25 over `text` (SPARSE_INVERTED_INDEX)",
            dense_index="FLAT, inner product",
        ),
        corpus=corpus.corpus_info(),
        counts=counts,
        embedding=embedding,
        bm25=Bm25Info(
            library="milvus",
            method="milvus BM25 function",
            k1=settings.bm25_k1,
            b=settings.bm25_b,
            tokenizer={
                "analysed_by": "openxiv (bm25s words, lowercase, stop words, PyStemmer) before Milvus",
                "pattern": TOKEN.pattern,
                "stopwords": STOPWORDS,
                "stemmer": settings.bm25_stemmer,
                "milvus_analyzer": ANALYZER,
            },
            paper_text="title + newline + abstract, analysed",
        ),
        fusion=fusion_info(settings),
        tldr=corpus.tldr,
        sentences=corpus.sentences,
        versions=versions("pymilvus", "milvus-lite"),
        settings=settings.as_dict(),
    )


def switch_aliases(settings: Settings, spec: MilvusInfo) -> None:
    """Point the stable aliases at this build's collections (each switch is atomic in Milvus)."""
    client = connect(settings.milvus_uri or spec.uri, settings.milvus_token)
    try:
        existing = {a for name in client.list_collections() for a in client.list_aliases(name)["aliases"]}
        for key, collection in spec.collections.items():
            alias = spec.aliases[key]
            if alias in existing:
                client.alter_alias(collection, alias)
            else:
                client.create_alias(collection, alias)
    finally:
        client.close()


def drop_unused(settings: Settings, index_root: Path) -> list[str]:
    """Drop this prefix's collections that no snapshot under ``index_root`` names any more (pruned
    snapshots); collections of snapshots still on disk, leased or not, stay."""
    from openxiv.indexer.manifest import read as read_manifest
    from openxiv.indexer.snapshot import list_snapshots

    wanted: set[str] = set()
    for snap in list_snapshots(index_root):
        try:
            spec = read_manifest(snap).milvus
        except Exception:
            continue
        if spec is not None:
            wanted |= set(spec.collections.values())
    client = connect(settings.milvus_uri or "", settings.milvus_token)
    dropped = []
    try:
        stem = (f"{settings.milvus_prefix}_papers_", f"{settings.milvus_prefix}_passages_")
        for name in client.list_collections():
            if name.startswith(stem) and name not in wanted:
                client.drop_collection(name)
                dropped.append(name)
    finally:
        client.close()
    return dropped
