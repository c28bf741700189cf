"""What every named stage of a build shares: the build's context, the corpus it read, the embed stage.

`BuildContext` is carried once through a build instead of the temporary directory, settings,
progress flag, encoder and cache path passed by hand to each step: the `BuildSetup` a
`openxiv.indexer.building.job.BuildJob` holds, plus the snapshot directory its copy stage makes. The stages here are the ones both backends run:

- ``cutoff`` (`cut_at_until`, only with ``--until``): later papers deleted from the corpus copy;
- ``read`` (`read_corpus`): papers and passages of the snapshot's corpus copy, the paper metadata
  arrays; ``tldr`` and ``sentences``: the stored per-row tables (`openxiv.indexer.building.tldrs`,
  `openxiv.indexer.building.sentences`);
- ``load_model`` / ``embed_papers`` / ``embed_passages`` (`embed_vectors`): vectors through the
  shared embedding cache, so unchanged texts are never re-encoded.

The backend stages (`openxiv.indexer.building.embedded` for bm25s + FAISS,
`openxiv.indexer.building.milvus` for Milvus collections) take a `BuildContext` and a `CorpusRead`
and fill the typed `Manifest`; neither imports the other.
"""

from __future__ import annotations

import contextlib
import hashlib
import logging
import platform
import time
from array import array
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np

from openxiv.corpus.settings.model import Settings
from openxiv.indexer import layout
from openxiv.indexer.engine.meta import PaperMeta
from openxiv.indexer.engine.milvus_common import redact_uri
from openxiv.indexer.manifest import (
    CorpusInfo,
    CutoffInfo,
    EmbeddingInfo,
    FusionInfo,
    SentencesInfo,
    TldrInfo,
)

log = logging.getLogger("openxiv.indexer")
"""Stage lines (start, end and seconds) at INFO: `openxiv index build` shows them on stderr when that
is not a terminal (container logs), where the progress bars stay off."""

__all__ = [
    "EMBED_CHOICES",
    "READ_CHUNK",
    "BuildContext",
    "BuildError",
    "BuildSetup",
    "CorpusRead",
    "StageTimer",
    "build_config",
    "cut_at_until",
    "embed_parts",
    "embed_vectors",
    "fusion_info",
    "paper_bm25_text",
    "read_corpus",
    "versions",
]

EMBED_CHOICES = ("papers", "passages", "both", "none")


class BuildError(RuntimeError):
    """The build cannot run (missing DB, empty corpus, bad setting); nothing was changed."""


def paper_bm25_text(title: str | None, abstract: str | None) -> str:
    """What BM25 indexes per paper. Repeating the title (x2, x3) measured no better on the topic
    dev queries (docs/indexing.md, «Ranking»), so the title appears once."""
    return f"{title or ''}\n{abstract or ''}"


class StageTimer:
    """Times each named stage (``with timer("bm25_papers"): ...``); the manifest's ``build.stages_s``.

    Each stage is announced once, on one channel: with ``progress``, ``[index] <stage> ...`` on stdout
    beside the progress bars; without, log lines (logger ``openxiv.indexer``: ``<stage> ...`` and
    ``<stage> done in <s> s``, which ``openxiv index build`` writes on stderr when it is not a terminal)."""

    def __init__(self, progress: bool) -> None:
        self.times: dict[str, float] = {}
        self.progress = progress

    @contextlib.contextmanager
    def __call__(self, name: str) -> Iterator[None]:
        if self.progress:
            print(f"[index] {name} ...", flush=True)
        else:
            log.info("%s ...", name)
        t = time.perf_counter()
        yield
        self.times[name] = round(time.perf_counter() - t, 3)
        if not self.progress:
            log.info("%s done in %.1f s", name, self.times[name])


@dataclass
class BuildSetup:
    """What every stage of one build reads that is known before it starts (a `BuildJob` holds it)."""

    settings: Settings
    timer: StageTimer
    progress: bool
    encoder: Any | None
    """A loaded encoder to use instead of loading ``settings.model`` (tests, benchmarks)."""
    cache_path: Path
    """The shared embedding cache (``<data_dir>/embcache.sqlite`` unless given)."""


@dataclass
class BuildContext(BuildSetup):
    """What every stage of one build reads, carried once: the setup and the snapshot being built."""

    tmp: Path
    """The snapshot being built (``snapshots/.tmp-<name>``), renamed into place when it verifies."""

    @classmethod
    def of(cls, setup: BuildSetup, tmp: Path) -> BuildContext:
        return cls(setup.settings, setup.timer, setup.progress, setup.encoder, setup.cache_path, tmp)

    @property
    def embed(self) -> str:
        return self.settings.embed

    def bar(self, iterable: Any, total: int, desc: str) -> Any:
        if not self.progress:
            return iterable
        from tqdm.auto import tqdm

        return tqdm(iterable, total=total, desc=desc, unit="row", smoothing=0.05)


def versions(*extra: str) -> dict[str, str | None]:
    out: dict[str, str | None] = {"python": platform.python_version()}
    for dist in (
        "openxiv",
        "bm25s",
        "faiss-cpu",
        "sentence-transformers",
        "torch",
        "numpy",
        "PyStemmer",
        *extra,
    ):
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            out[dist] = None
    return out


def fusion_info(settings: Settings) -> FusionInfo:
    """The manifest's ``fusion`` part: the ranking settings the snapshot was built with."""
    return FusionInfo(
        fusion=settings.fusion,
        rrf_k=settings.rrf_k,
        weight_bm25=settings.weight_bm25,
        weight_dense=settings.weight_dense,
        candidates=settings.candidates,
    )


def build_config(settings: Settings) -> dict[str, Any]:
    """The settings a snapshot depends on: equal config + equal corpus fingerprint = same snapshot."""
    embed = settings.embed
    return {
        "embed": embed,
        "model": settings.model if embed != "none" else None,
        "embed_max_tokens": settings.embed_max_tokens if embed != "none" else None,
        "ann_threshold": settings.ann_threshold,
        "ann_index": settings.ann_index if embed != "none" else None,
        "dense_storage": settings.dense_storage if embed != "none" else None,
        "bm25_k1": settings.bm25_k1,
        "bm25_b": settings.bm25_b,
        "bm25_stemmer": settings.bm25_stemmer,
        **({"paper_lead": True} if settings.paper_lead else {}),  # absent: what every build did before
        "format_version": layout.FORMAT_VERSION,
        **({"until": settings.build_until.isoformat()} if settings.build_until is not None else {}),
        **(
            {"backend": "milvus", "milvus_uri": redact_uri(settings.milvus_uri or "")}
            if settings.backend == "milvus"
            else {}
        ),
    }


READ_CHUNK = 20_000
"""Papers (or passages) a streaming stage reads from the store at once: the build never holds more
records than this as Python objects (docs/scale.md, «The memory model»)."""


@dataclass
class CorpusRead:
    """What a build reads from the snapshot's corpus copy: the paper metadata arrays, each passage's
    paper row and id, and the stored tables. The records themselves are not held: a stage that needs
    them streams the columns it uses again from the copy, `READ_CHUNK` rows at a time
    (`paper_columns`, `passage_text_chunks`), so a build's memory does not grow with the records."""

    db: Path
    """The snapshot's corpus copy (papers in arxiv_id = row order, passages in id order)."""
    meta: PaperMeta
    stats: dict[str, Any]
    rows: np.ndarray
    """Paper row of each passage (int32)."""
    ids: np.ndarray
    """Corpus passage id of each passage (int64)."""
    tldr: TldrInfo | None = None
    """What `openxiv.indexer.building.tldrs.write_tldrs` wrote (the manifest's ``tldr``)."""
    sentences: SentencesInfo | None = None
    """What `openxiv.indexer.building.sentences.write_sentences` wrote (the manifest's ``sentences``)."""
    cutoff: CutoffInfo | None = None
    """What the ``cutoff`` stage left out (``--until``; `openxiv.indexer.building.cutoff`)."""
    chunk: int = READ_CHUNK

    @property
    def n_papers(self) -> int:
        return self.meta.n

    @property
    def n_passages(self) -> int:
        return int(self.rows.size)

    def paper_columns(self, *columns: str) -> Iterator[list[tuple[Any, ...]]]:
        """``columns`` of every paper (in row order), ``chunk`` rows at a time: what a stage reads
        instead of whole records (`openxiv.indexer.building.corpusrows`)."""
        from openxiv.indexer.building.corpusrows import paper_rows

        return paper_rows(self.db, columns, self.chunk)

    def paper_side_texts(self, lead: bool) -> Iterator[list[tuple[str | None, str | None]]]:
        """``(title, text)`` of every paper (in row order), ``chunk`` at a time: what the paper side
        indexes (BM25 over papers, the paper vectors). The text is the abstract; with ``lead``
        (`Settings.paper_lead`) a paper without one is represented by its full text's first passage,
        as an abstract represents the rest of a paper (docs/indexing.md, «Papers without an
        abstract»)."""
        from openxiv.indexer.building.corpusrows import paper_texts

        return paper_texts(self.db, self.chunk, lead)

    def passage_text_chunks(self) -> Iterator[list[str]]:
        """Every passage's text (in passage order), ``chunk`` at a time."""
        from openxiv.indexer.building.corpusrows import passage_texts

        return passage_texts(self.db, self.chunk)

    @property
    def docs(self) -> list[Any]:
        """Every paper (`openxiv.corpus.records.Paper`) at once: for a backend that has no streaming
        build yet (Milvus)."""
        from openxiv.corpus.store import Store

        with Store.open_readonly(self.db) as store:
            return list(store.iter_papers())

    @property
    def texts(self) -> list[str]:
        """Every passage text at once: for a backend that has no streaming build yet (Milvus)."""
        return [t for chunk in self.passage_text_chunks() for t in chunk]

    def corpus_info(self) -> CorpusInfo:
        info = CorpusInfo(
            papers=self.n_papers,
            passages=self.n_passages,
            papers_with_fulltext=self.stats.get("papers_with_fulltext"),
            sections=self.stats.get("sections"),
        )
        if self.cutoff is not None:  # set only then, so a build without one writes no key
            info.cutoff = self.cutoff
        return info


def cut_at_until(ctx: BuildContext) -> CutoffInfo | None:
    """The ``cutoff`` stage (``--until``): the papers submitted after it deleted from the snapshot's
    corpus copy before anything is read from it (`openxiv.indexer.building.cutoff`)."""
    until = ctx.settings.build_until
    if until is None:
        return None
    from openxiv.indexer.building.cutoff import apply_cutoff

    with ctx.timer("cutoff"):
        info = apply_cutoff(ctx.tmp / layout.CORPUS, until)
    if info.kept == 0:
        raise BuildError(f"--until {until.isoformat()}: no paper of the corpus was submitted by then")
    return info


def read_corpus(ctx: BuildContext) -> CorpusRead:
    """The ``read``, ``tldr`` and ``sentences`` stages, each one streaming pass over ``ctx.tmp``'s
    corpus copy: the paper metadata arrays and each passage's row and id (``read``), the papers'
    tldrs and their abstracts' sentences (the stored tables)."""
    from openxiv.corpus.store import Store
    from openxiv.indexer.building.corpusrows import meta_rows, passage_papers
    from openxiv.indexer.building.sentences import write_sentences
    from openxiv.indexer.building.tldrs import build_tldrs, write_tldrs

    cutoff = cut_at_until(ctx)
    db = ctx.tmp / layout.CORPUS
    store = Store.open_readonly(db)
    try:
        stats = store.stats()
        with ctx.timer("read"):
            meta = PaperMeta.from_docs(ctx.bar(meta_rows(db, READ_CHUNK), stats["papers"], "read papers"))
            meta.save(ctx.tmp / layout.META)
            rows, ids = array("i"), array("q")
            for chunk in ctx.bar(
                passage_papers(db, READ_CHUNK), -(-stats["passages"] // READ_CHUNK), "read passages"
            ):
                for passage_id, arxiv_id in chunk:
                    row = meta.row_of(arxiv_id)
                    if row is None:  # the copy is consistent: every passage's paper is a paper row
                        raise BuildError(f"passage {passage_id} belongs to no paper ({arxiv_id})")
                    rows.append(row)
                    ids.append(passage_id)
            out = CorpusRead(
                db,
                meta,
                stats,
                np.frombuffer(rows, dtype=np.int32),
                np.frombuffer(ids, dtype=np.int64),
                cutoff=cutoff,
            )
        with ctx.timer("tldr"):
            chunks = out.paper_columns("arxiv_id", "abstract")
            tldrs = (t for chunk in chunks for t in build_tldrs(chunk, store.lead_sections))
            out.tldr = TldrInfo(**write_tldrs(ctx.tmp / layout.TLDR, tldrs))
        with ctx.timer("sentences"):
            abstracts = (a for chunk in out.paper_columns("abstract") for (a,) in chunk)
            info = write_sentences(ctx.tmp / layout.SENTENCES, abstracts, ctx.settings.bm25_stemmer)
            out.sentences = SentencesInfo(**info)
    finally:
        store.close()
    return out


def embed_parts(
    ctx: BuildContext, corpus: CorpusRead, info: EmbeddingInfo
) -> Iterator[tuple[str, int, Iterator[np.ndarray]]]:
    """The embed stages: vectors of the papers and/or passages ``ctx.embed`` names, through the
    shared embedding cache; yields ``(layout part, rows, vector chunks)`` inside the part's stage
    timer (the chunks, `READ_CHUNK` rows each in row order, must be consumed before the next part)
    and fills ``info`` (the manifest's ``embedding``). The snapshot keeps the encoder for query
    encoding."""
    from openxiv.indexer.building.embcache import EmbeddingCache, encode_cached
    from openxiv.indexer.encoders.embed import load_encoder, paper_text, save_snapshot_encoder

    settings = ctx.settings
    with ctx.timer("load_model"):
        enc = ctx.encoder if ctx.encoder is not None else load_encoder(settings)
        bind = getattr(enc, "bind_cache", None)
        if callable(bind):  # a model server: its vectors' key depends on what the cache has seen
            with EmbeddingCache(ctx.cache_path) as probes:
                bind(probes)
        # the snapshot carries its encoder: serving loads it from there (no export, no torch)
        save_snapshot_encoder(enc, ctx.tmp / layout.ENCODER)
    info.model = settings.model
    info.encoder = enc.name
    info.fingerprint = enc.fingerprint
    info.dim = int(enc.dim)
    info.max_tokens = int(enc.max_tokens)
    info.paper_text = "title + '. ' + abstract" + (" (or first passage)" if settings.paper_lead else "")
    info.cache = str(ctx.cache_path.resolve())
    info.encoded = 0
    info.reused_from_cache = 0

    def paper_texts() -> Iterator[list[str]]:
        for chunk in corpus.paper_side_texts(settings.paper_lead):
            yield [paper_text(title, abstract) for title, abstract in chunk]

    jobs: list[tuple[str, str, int, Callable[[], Iterator[list[str]]]]] = []
    if ctx.embed in ("papers", "both"):
        jobs.append(("embed_papers", layout.DENSE_PAPERS, corpus.n_papers, paper_texts))
    if ctx.embed in ("passages", "both") and corpus.n_passages:
        jobs.append(("embed_passages", layout.DENSE_PASSAGES, corpus.n_passages, corpus.passage_text_chunks))
    with EmbeddingCache(ctx.cache_path) as cache:
        for stage, sub, n, texts_of in jobs:
            with ctx.timer(stage):
                before = cache.written
                digests: list[np.ndarray] = []

                def chunks(
                    texts_of: Callable[[], Iterator[list[str]]] = texts_of,
                    digests: list[np.ndarray] = digests,
                ) -> Iterator[np.ndarray]:
                    for texts in texts_of():
                        digests.append(_digests(texts))
                        yield encode_cached(
                            enc, texts, cache, progress=ctx.progress, batch_size=settings.embed_batch_size
                        )

                yield sub, n, chunks()
                encoded = cache.written - before
            distinct = int(np.unique(np.concatenate(digests)).size) if digests else 0
            info.encoded += encoded
            info.reused_from_cache += distinct - encoded


def _digests(texts: list[str]) -> np.ndarray:
    """A 64-bit digest of each text: distinct texts are counted across chunks without holding them."""
    return np.frombuffer(
        b"".join(hashlib.blake2b(t.encode("utf-8"), digest_size=8).digest() for t in texts), dtype=np.uint64
    )


def embed_vectors(
    ctx: BuildContext, corpus: CorpusRead, info: EmbeddingInfo
) -> Iterator[tuple[str, np.ndarray]]:
    """`embed_parts` with each part's vectors as one array (for a backend without a streaming build)."""
    for sub, _n, chunks in embed_parts(ctx, corpus, info):
        parts = list(chunks)
        yield sub, np.concatenate(parts) if parts else np.zeros((0, int(info.dim or 0)), np.float32)
