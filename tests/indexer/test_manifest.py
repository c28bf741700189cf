"""The manifest's one reader and one writer (`openxiv.indexer.manifest`)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openxiv.indexer import layout
from openxiv.indexer.manifest import BadIndexError, Manifest, read, write
from openxiv.indexer.snapshot import BadIndexError as SnapshotBadIndexError


def _manifest(**extra: object) -> dict[str, object]:
    return {
        "format_version": layout.FORMAT_VERSION,
        "zz_newer_key": {"kept": True},
        "corpus": {"fingerprint": "abc", "papers": 3, "papers_with_fulltext": 1},
        "counts": {"papers": 3, "passages": 0, "paper_vectors": 0, "passage_vectors": 0},
        "embedding": {
            "embedded": "papers",
            "encoder": "onnx-int8:m",
            "fingerprint": "f1",
            "dim": 4,
            "max_tokens": 8,
        },
        **extra,
    }


def test_write_then_read_round_trips_every_key(tmp_path: Path) -> None:
    original = _manifest(snapshot="s1")
    write(tmp_path, Manifest.of(original))
    back = read(tmp_path).as_json()
    assert back == original and sorted(back) == sorted(original)
    assert json.loads((tmp_path / layout.MANIFEST).read_text()) == original
    assert not list(tmp_path.glob("*.tmp"))


def test_typed_view_keeps_unknown_keys_and_gives_the_encoder_key(tmp_path: Path) -> None:
    m = Manifest.of(_manifest())
    assert m.corpus.fingerprint == "abc" and m.counts.papers == 3
    assert m.model_extra == {"zz_newer_key": {"kept": True}}
    assert m.embedding.encoder_key == ("onnx-int8:m", "f1", 4, 8)
    assert Manifest.of(_manifest(embedding={"embedded": "none"})).embedding.encoder_key is None
    assert Manifest.of(_manifest(embedding=None)).embedding.encoder_key is None


def test_reader_rejects_a_wrong_version_and_a_mistyped_field(tmp_path: Path) -> None:
    assert BadIndexError is SnapshotBadIndexError
    (tmp_path / layout.MANIFEST).write_text(json.dumps(_manifest(format_version=0)), encoding="utf-8")
    with pytest.raises(BadIndexError, match="format version 0"):
        read(tmp_path)
    (tmp_path / layout.MANIFEST).write_text(
        json.dumps(_manifest(counts={"papers": "many"})), encoding="utf-8"
    )
    with pytest.raises(BadIndexError, match=r"counts\.papers"):
        read(tmp_path)
    with pytest.raises(BadIndexError, match="is missing"):
        read(tmp_path / "nowhere")


def test_a_manifest_the_reader_would_reject_cannot_be_made(tmp_path: Path) -> None:
    with pytest.raises(BadIndexError, match=r"embedding\.dim"):
        Manifest.of(_manifest(embedding={"dim": "wide"}))
