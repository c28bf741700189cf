"""A small real index for the references tests: the 49 unArXive papers of ../shared and the PDFs of
1512.03385 (ResNet, which three of them cite), 1706.03762 (the Transformer, which cites ResNet by title
and three of them cite) and 1502.03167 (batch normalisation, which ResNet cites by title), built
BM25-only (no model) in a few seconds."""

from __future__ import annotations

import itertools
from pathlib import Path

from live_index import SHARED, UNARXIVE, BuiltIndex, service_settings

RESNET_PDF = SHARED.pdfs / "valid" / "1512.03385.pdf"
CITATION_PDFS = (
    RESNET_PDF,
    SHARED.pdfs / "valid" / "1706.03762.pdf",
    SHARED.pdfs / "valid" / "1502.03167.pdf",
)


def build_refs_index(tmp: Path) -> BuiltIndex:
    from openxiv.corpus.readers import read_path
    from openxiv.corpus.store import Store
    from openxiv.indexer.building.job import build_index

    settings = service_settings(tmp).replace(embed="none")
    db = tmp / "corpus.sqlite"
    with Store(db) as store:
        store.ingest(
            itertools.chain(read_path(UNARXIVE), *(read_path(p) for p in CITATION_PDFS)), settings=settings
        )
        stats = store.stats()
    build_index(db, tmp / "index", settings, progress=False, cache_path=tmp / "embcache.sqlite")
    return BuiltIndex(
        root=tmp / "index", db=db, settings=settings, cache=tmp / "embcache.sqlite", stats=stats
    )
