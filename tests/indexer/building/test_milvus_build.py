"""Milvus snapshots on milvus-lite: a rebuild writes new collections, moves the aliases, and drops
the collections of pruned snapshots; a bad setup is a clear error that changes nothing."""

from __future__ import annotations

from pathlib import Path

import pytest
from small_index import make_db, records

from openxiv.corpus.settings.model import Settings
from openxiv.indexer.building.job import BuildError, build_index_report
from openxiv.indexer.manifest import BadIndexError
from openxiv.indexer.snapshot import current_snapshot, open_index, verify_snapshot

pytest.importorskip("pymilvus")
pytest.importorskip("milvus_lite")


def test_rebuild_switches_aliases_and_drops_pruned_collections(shared: Path, tmp_path: Path) -> None:
    from openxiv.indexer.engine.milvus_common import connect

    db = make_db(tmp_path / "corpus.sqlite", records(shared, 120, 30, 3))
    uri = str(tmp_path / "milvus.db")
    settings = Settings(data_dir=tmp_path, embed="none", backend="milvus", milvus_uri=uri)
    root = tmp_path / "index"
    first = build_index_report(db, root, settings, progress=False, keep=1).manifest.milvus
    second = build_index_report(db, root, settings, progress=False, keep=1).manifest.milvus
    assert first is not None and second is not None
    assert set(first.collections.values()).isdisjoint(second.collections.values())
    client = connect(uri)
    try:
        for key, alias in second.aliases.items():
            assert client.describe_alias(alias)["collection_name"] == second.collections[key]
        names = set(client.list_collections())
    finally:
        client.close()
    assert set(second.collections.values()) <= names
    assert not set(first.collections.values()) & names  # the pruned snapshot's collections are gone
    live = current_snapshot(root)
    assert live is not None
    manifest = verify_snapshot(live)
    assert manifest.counts.papers == 153 and manifest.counts.passages > 0
    with open_index(root, settings) as index:
        result = index.backend.search("neural network", top_k=5)
        assert result.hits and result.total_count >= len(result.hits)
        with pytest.raises(ValueError, match="dense"):
            index.backend.search("neural network", mode="dense")  # a BM25-only build, as embedded


def test_milvus_build_without_uri_is_a_clear_error(shared: Path, tmp_path: Path) -> None:
    db = make_db(tmp_path / "corpus.sqlite", records(shared, 20, 0, 0))
    settings = Settings(data_dir=tmp_path, embed="none", backend="milvus")
    with pytest.raises(BuildError, match="--milvus-uri"):
        build_index_report(db, tmp_path / "index", settings, progress=False)
    assert current_snapshot(tmp_path / "index") is None


def test_snapshot_whose_collections_are_gone_is_refused(shared: Path, tmp_path: Path) -> None:
    from openxiv.indexer.engine.milvus_common import connect

    db = make_db(tmp_path / "corpus.sqlite", records(shared, 20, 0, 0))
    uri = str(tmp_path / "milvus.db")
    settings = Settings(data_dir=tmp_path, embed="none", backend="milvus", milvus_uri=uri)
    manifest = build_index_report(db, tmp_path / "index", settings, progress=False).manifest
    client = connect(uri)
    assert manifest.milvus is not None
    client.drop_collection(manifest.milvus.collections["papers"])
    client.close()
    with pytest.raises(BadIndexError, match="does not exist"):
        open_index(tmp_path / "index", settings)
