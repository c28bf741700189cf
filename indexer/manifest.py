"""The snapshot manifest (``manifest.json``): one typed model, one reader, one writer.

A manifest records what a build made: format version, counts, the corpus fingerprint, the encoder,
BM25 and fusion parameters, sizes and timings. `read` is the only code that parses it (checking the
format version and the types of the fields readers rely on), `write` the only code that writes it
(a temporary file renamed into place, so a reader never sees half a manifest).

In memory a manifest is the typed `Manifest`: the build's stages fill its parts and every reader
uses its attributes (nobody reads it by string key). `Manifest.as_json` is its JSON object: the
fields a build set, in the order declared, then any key a newer or older build wrote
(``extra="allow"``: unknown keys are kept, not rejected), so such keys round-trip unchanged.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, ValidationError, field_validator

from openxiv.indexer import layout

__all__ = [
    "BadIndexError",
    "Bm25Info",
    "BuildInfo",
    "CorpusInfo",
    "Counts",
    "CutoffInfo",
    "EmbeddingInfo",
    "FusionInfo",
    "Manifest",
    "MilvusInfo",
    "ReferencesInfo",
    "SentencesInfo",
    "TldrInfo",
    "read",
    "write",
]


class BadIndexError(RuntimeError):
    """An index directory that cannot be used; the message says what is wrong and what to do."""


class _Part(BaseModel):
    model_config = ConfigDict(extra="allow")


class CutoffInfo(_Part):
    """A build-time cutoff (``--until``, `openxiv.indexer.building.cutoff`): the last submission day the
    snapshot holds and the papers of the source left out."""

    until: str
    """ISO day: no paper first submitted after it is in the snapshot."""
    kept: int
    removed_later: int
    """Papers first submitted after ``until`` (a month-only date counts as the month's last day)."""
    removed_undated: int
    """Papers with no date at all, left out because they cannot be shown to be older."""


class CorpusInfo(_Part):
    """What the snapshot's corpus copy holds; ``fingerprint`` decides whether a rebuild is needed."""

    papers: int | None = None
    passages: int | None = None
    papers_with_fulltext: int | None = None
    sections: int | None = None
    fingerprint: str | None = None
    cutoff: CutoffInfo | None = None
    """Set when the build had a cutoff (``--until``): the source's later papers are not in the copy."""


class Counts(_Part):
    """What the snapshot's parts hold (`openxiv.indexer.snapshot.verify_snapshot` checks each)."""

    papers: int = 0
    passages: int = 0
    paper_vectors: int = 0
    passage_vectors: int = 0


class EmbeddingInfo(_Part):
    """The encoder that made the snapshot's vectors (``embedded`` is ``none`` for a BM25-only build)."""

    embedded: str = "none"
    model: str | None = None
    encoder: str | None = None
    fingerprint: str | None = None
    dim: int | None = None
    max_tokens: int | None = None
    paper_text: str | None = None
    cache: str | None = None
    """The embedding cache the build read and filled."""
    encoded: int = 0
    """Texts the build encoded (not found in the cache)."""
    reused_from_cache: int = 0
    dense_papers: dict[str, Any] | None = None
    """`openxiv.indexer.engine.dense.DenseIndex.info` of the paper vectors' index."""
    dense_passages: dict[str, Any] | None = None

    @property
    def encoder_key(self) -> tuple[Any, ...] | None:
        """Two snapshots with the same key can share one loaded query encoder; ``None`` when this
        snapshot has no fingerprinted encoder (nothing to share)."""
        if not self.fingerprint:
            return None
        return (self.encoder, self.fingerprint, self.dim, self.max_tokens)


class Bm25Info(_Part):
    """The lexical side: library, parameters and the analyzer the snapshot's terms were made with."""

    library: str
    method: str
    k1: float
    b: float
    tokenizer: dict[str, Any]
    """Token pattern, stop words, ``stemmer`` (read by `openxiv.indexer.engine.evidence.stemmer_of`)."""
    paper_text: str
    papers: dict[str, Any] | None = None
    passages: dict[str, Any] | None = None


class FusionInfo(_Part):
    """The ranking settings the snapshot was built with."""

    fusion: str
    rrf_k: float
    weight_bm25: float
    weight_dense: float
    candidates: int


class MilvusInfo(_Part):
    """Where a Milvus build's collections live and which aliases serve them."""

    uri: str
    collections: dict[str, str]
    aliases: dict[str, str]
    prefix: str
    analyzer: dict[str, Any]
    bm25_function: str
    dense_index: str


class BuildInfo(_Part):
    """How long the build took, per named stage, and where it ran."""

    seconds: float
    stages_s: dict[str, float]
    host: str


class TldrInfo(_Part):
    """The papers' tldrs stored at build (``tldr/``, `openxiv.indexer.building.tldrs`); absent in snapshots
    built before them, which serve by computing each hit's tldr."""

    rules: str
    """Digest of the tldr rule's source the table was made with; another one is not used."""
    papers: int
    with_tldr: int = 0


class SentencesInfo(_Part):
    """The abstracts' sentences stored at build (``sentences/``, `openxiv.indexer.building.sentences`); absent
    in snapshots built before them, which serve by analysing each hit's abstract."""

    rules: str
    """Digest of the sentence and analyzer rules' source the table was made with."""
    stemmer: str
    papers: int
    sentences: int = 0


class ReferencesInfo(_Part):
    """The papers' references and cited-by written at build (``references/``,
    `openxiv.indexer.building.references`); absent in snapshots built before them, which answer
    references and cited-by requests with a 409 naming the snapshot."""

    papers_with_references: int = 0
    """Papers of the corpus with a bibliography (unArXive, plain-text and PDF inputs)."""
    references: int = 0
    """Bibliography entries in all."""
    resolved: int = 0
    """Entries that resolve to an arXiv id."""
    resolved_in_corpus: int = 0
    """Resolved entries whose paper is in the corpus."""
    cited_papers: int = 0
    cited_papers_in_corpus: int = 0
    resolved_by_doi: int = 0
    """Entries without a printed arXiv id resolved at build by a corpus paper's DOI
    (`openxiv.indexer.building.resolve`)."""
    resolved_by_title: int = 0
    """Entries without a printed arXiv id resolved at build by a corpus paper's title and year."""
    with_context: int = 0
    """Entries with the body sentence that cites them."""
    citation_links: int = 0
    """Distinct (citing paper, cited corpus paper) pairs: the sum of the in-corpus citation counts."""
    index_bytes: int = 0
    """Memory of the resolver's per-paper arrays (`openxiv.indexer.building.resolve.TitleIndex`)."""


class Manifest(_Part):
    """The typed manifest; fields not declared here are kept as extras. Fields are declared in the
    order a build writes them, so ``manifest.json`` reads top-down as the build ran."""

    format_version: int
    build_config: dict[str, Any] | None = None
    """The settings a snapshot depends on: equal config + equal corpus fingerprint = same snapshot."""
    backend: str | None = None
    """``milvus`` for a Milvus build; absent for the embedded backend."""
    milvus: MilvusInfo | None = None
    corpus: CorpusInfo = CorpusInfo()
    counts: Counts = Counts()
    embedding: EmbeddingInfo = EmbeddingInfo()
    bm25: Bm25Info | None = None
    fusion: FusionInfo | None = None
    tldr: TldrInfo | None = None
    sentences: SentencesInfo | None = None
    references: ReferencesInfo | None = None
    versions: dict[str, str | None] = {}
    settings: dict[str, Any] = {}
    snapshot: str | None = None
    created_at: str | None = None
    source_db: str | None = None
    build: BuildInfo | None = None
    sizes_bytes: dict[str, int] = {}

    @property
    def is_milvus(self) -> bool:
        return self.backend == "milvus"

    def as_json(self) -> dict[str, Any]:
        """The manifest as its JSON object: the fields a build set, in declaration order, then any
        extras an older or newer build wrote."""
        return self.model_dump(mode="json", exclude_unset=True)

    @field_validator("corpus", "embedding", "counts", "sizes_bytes", mode="before")
    @classmethod
    def _null_is_empty(cls, value: Any) -> Any:
        return {} if value is None else value  # readers always treated a null part as an empty one

    @classmethod
    def of(cls, manifest: Mapping[str, Any], where: str | Path = "manifest") -> Manifest:
        """The typed view of ``manifest``; `BadIndexError` naming the bad field when it does not fit."""
        try:
            return cls.model_validate(dict(manifest))
        except ValidationError as exc:
            first = exc.errors()[0]
            field = ".".join(str(p) for p in first["loc"])
            raise BadIndexError(
                f"{where}: field {field!r} {first['msg'].lower()}; rebuild with `openxiv index build`"
            ) from exc


def read(snapshot: Path) -> Manifest:
    """The manifest of ``snapshot``, checked for the format this code reads and for field types
    (`BadIndexError` otherwise). The one reader of ``manifest.json``."""
    path = Path(snapshot) / layout.MANIFEST
    if not path.is_file():
        raise BadIndexError(f"{snapshot} is not an index snapshot: {layout.MANIFEST} is missing")
    try:
        manifest = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, json.JSONDecodeError) as exc:
        raise BadIndexError(f"{path} is unreadable ({exc}); rebuild with `openxiv index build`") from exc
    version = manifest.get("format_version") if isinstance(manifest, dict) else None
    if version != layout.FORMAT_VERSION:
        raise BadIndexError(
            f"{path} has format version {version!r}, this openxiv reads version {layout.FORMAT_VERSION}: "
            "rebuild the index with `openxiv index build`"
        )
    return Manifest.of(manifest, path)


def write(directory: Path, manifest: Manifest) -> Path:
    """Write ``manifest`` to ``directory/manifest.json`` through a temporary file and `os.replace`.
    The one writer of ``manifest.json``."""
    path = Path(directory) / layout.MANIFEST
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(
        json.dumps(manifest.as_json(), indent=2, sort_keys=False, default=str) + "\n", encoding="utf-8"
    )
    os.replace(tmp, path)
    return path
