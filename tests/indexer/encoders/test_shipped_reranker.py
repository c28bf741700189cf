"""The cross-encoder shipped in the package (``indexer/encoders/shipped_reranker``), run as served.

Real model, real papers: a paper's title scores its own abstract above another paper's, on papers of
the shared listing; the files are the ones `reranker.json` fingerprints; the resolver knows
``shipped``, ``none`` and a directory, and a damaged directory is `RerankerUnavailable`.
"""

from __future__ import annotations

import gzip
import json
import random
import shutil
from pathlib import Path

import pytest
from live_index import LISTING_CS

from openxiv.indexer.encoders.cross_encoder import (
    DESCRIPTION,
    OnnxCrossEncoder,
    resolve_reranker,
    shipped_reranker_dir,
)
from openxiv.indexer.encoders.onnx_encoder import sha256_files
from openxiv.indexer.encoders.rerankers import Reranker, RerankerUnavailable

LISTING = LISTING_CS


def _papers(n: int) -> list[tuple[str, str]]:
    if not LISTING.is_file():
        pytest.skip(f"shared listing not found ({LISTING})")
    out = []
    with gzip.open(LISTING, "rt", encoding="utf-8") as fh:
        for i, line in enumerate(fh):
            if i % 997 == 0:  # spread over the file: many fields, not one day's listing
                row = json.loads(line)
                out.append((" ".join(row["title"].split()), " ".join(row["abstract"].split())))
            if len(out) == n:
                break
    return out


def test_a_title_scores_its_own_abstract_above_another_papers() -> None:
    ce = resolve_reranker("shipped")
    assert isinstance(ce, Reranker)
    papers = _papers(40)
    rng = random.Random(0)
    wins = 0
    for i, (title, abstract) in enumerate(papers):
        other = papers[(i + rng.randrange(1, len(papers))) % len(papers)][1]
        true, rand = ce.score(title, [abstract, other])
        wins += int(true > rand)
    assert wins >= 0.9 * len(papers), f"{wins} of {len(papers)}"


def test_scores_do_not_depend_on_batch_mates() -> None:
    ce = resolve_reranker("shipped")
    assert ce is not None
    (t, a), (_, b), (_, c) = _papers(3)
    alone = ce.score(t, [a])
    together = ce.score(t, [c, a, b])
    assert abs(alone[0] - together[1]) < 1e-5  # float rounding of batch-sized kernels (~1e-7), no more


def test_the_description_fingerprints_the_shipped_files_and_records_training() -> None:
    d = shipped_reranker_dir()
    desc = json.loads((d / DESCRIPTION).read_text())
    assert desc["sha256"] == sha256_files(d, desc["files"])
    assert desc["trained"]["script"] == "scripts/train_reranker.py"
    assert desc["trained"]["args"] and desc["trained"]["command"].startswith("scripts/train_reranker.py")
    ce = resolve_reranker("shipped")
    assert ce is not None and ce.fingerprint == f"onnx-ce-{desc['sha256'][:16]}"


def test_the_resolver(tmp_path: Path) -> None:
    assert resolve_reranker("none") is None
    copy = tmp_path / "ce"
    shutil.copytree(shipped_reranker_dir(), copy)
    from_path = resolve_reranker(str(copy))
    assert isinstance(from_path, OnnxCrossEncoder)
    assert from_path.fingerprint == OnnxCrossEncoder(shipped_reranker_dir()).fingerprint
    with pytest.raises(RerankerUnavailable, match="no cross-encoder"):
        resolve_reranker(str(tmp_path / "missing"))
    tok = copy / "tokenizer.json"
    tok.write_text(tok.read_text() + " ")
    with pytest.raises(RerankerUnavailable, match="sha256"):
        OnnxCrossEncoder(copy)
