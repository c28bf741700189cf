"""The snapshot manifest (``manifest.json``): one typed model, one reader, one writer.

A manifest records what a build made: format version, counts, the corpus fingerprint, the encoder,
BM25 and fusion parameters, sizes and timings. `read` is the only code that parses it (checking the
format version and the types of the fields readers rely on), `write` the only code that writes it
(a temporary file renamed into place, so a reader never sees half a manifest).

The in-memory manifest stays the plain JSON ``dict`` that `read` returns and `write` takes, so key
order and every key a newer or older build wrote round-trip unchanged; `Manifest.of` gives the typed
view of one (``extra="allow"``: unknown keys are kept, not rejected).
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
    "CorpusInfo",
    "EmbeddingInfo",
    "Manifest",
    "SentencesInfo",
    "TldrInfo",
    "read",
    "write",
]


class BadIndexError(RuntimeError):
    """An index directory that cannot be used; the message says what is wrong and what to do."""


class _Part(BaseModel):
    model_config = ConfigDict(extra="allow")


class CorpusInfo(_Part):
    """What the snapshot's corpus copy holds; ``fingerprint`` decides whether a rebuild is needed."""

    fingerprint: str | None = None
    papers: int | None = None
    passages: int | None = None


class EmbeddingInfo(_Part):
    """The encoder that made the snapshot's vectors (``embedded`` is ``none`` for a BM25-only build)."""

    embedded: str = "none"
    model: str | None = None
    encoder: str | None = None
    fingerprint: str | None = None
    dim: int | None = None
    max_tokens: int | None = None

    @property
    def encoder_key(self) -> tuple[Any, ...] | None:
        """Two snapshots with the same key can share one loaded query encoder; ``None`` when this
        snapshot has no fingerprinted encoder (nothing to share)."""
        if not self.fingerprint:
            return None
        return (self.encoder, self.fingerprint, self.dim, self.max_tokens)


class TldrInfo(_Part):
    """The papers' tldrs stored at build (``tldr/``, `openxiv.indexer.build.tldrs`); absent in snapshots
    built before them, which serve by computing each hit's tldr."""

    rules: str
    """Digest of the tldr rule's source the table was made with; another one is not used."""
    papers: int
    with_tldr: int = 0


class SentencesInfo(_Part):
    """The abstracts' sentences stored at build (``sentences/``, `openxiv.indexer.build.sentences`); absent
    in snapshots built before them, which serve by analysing each hit's abstract."""

    rules: str
    """Digest of the sentence and analyzer rules' source the table was made with."""
    stemmer: str
    papers: int
    sentences: int = 0


class Manifest(_Part):
    """Typed view of a manifest dict; fields not declared here are kept as extras."""

    format_version: int
    snapshot: str | None = None
    created_at: str | None = None
    source_db: str | None = None
    corpus: CorpusInfo = CorpusInfo()
    counts: dict[str, int] = {}
    embedding: EmbeddingInfo = EmbeddingInfo()
    build_config: dict[str, Any] | None = None
    sizes_bytes: dict[str, int] = {}
    tldr: TldrInfo | None = None
    sentences: SentencesInfo | None = None

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


def read(snapshot: Path) -> dict[str, Any]:
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
    Manifest.of(manifest, path)
    return manifest


def write(directory: Path, manifest: Mapping[str, Any]) -> Path:
    """Write ``manifest`` to ``directory/manifest.json`` through a temporary file and `os.replace`,
    after checking it against `Manifest`. The one writer of ``manifest.json``."""
    path = Path(directory) / layout.MANIFEST
    Manifest.of(manifest, path)
    tmp = path.with_suffix(".json.tmp")
    tmp.write_text(
        json.dumps(dict(manifest), indent=2, sort_keys=False, default=str) + "\n", encoding="utf-8"
    )
    os.replace(tmp, path)
    return path
