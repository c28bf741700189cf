"""Importing the embedder or the dense index changes nothing in the process: going offline and
sizing FAISS's thread pool are explicit calls of the entry points that need them (issue 10)."""

from __future__ import annotations

import json
import os
import subprocess
import sys

PROBE = """
import json, os
import faiss
faiss.omp_set_num_threads(1)
before = {k: os.environ.get(k) for k in KEYS}
import openxiv.indexer.encoders.embed, openxiv.indexer.engine.dense, openxiv.indexer.snapshot, openxiv.service.holder
after = {k: os.environ.get(k) for k in KEYS}
print(json.dumps({"before": before, "after": after, "faiss_threads": faiss.omp_get_max_threads()}))
"""

KEYS = ["HF_HUB_OFFLINE", "TRANSFORMERS_OFFLINE", "HF_HUB_DISABLE_TELEMETRY"]


def test_importing_embed_and_dense_leaves_environment_and_faiss_threads_alone() -> None:
    env = {k: v for k, v in os.environ.items() if k not in KEYS}
    out = subprocess.run(
        [sys.executable, "-c", f"KEYS = {KEYS!r}\n{PROBE}"],
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    seen = json.loads(out.stdout.strip().splitlines()[-1])
    assert seen["before"] == {k: None for k in KEYS}
    assert seen["after"] == seen["before"]
    assert seen["faiss_threads"] == 1
