"""The shipped cross-encoder (a `Reranker`) and the resolver that turns ``OPENXIV_RERANK`` into one.

The cross-encoder is MiniLM-L6 fine-tuned on the corpus by ``scripts/train_reranker.py`` and stored
in this package already exported (``shipped_reranker/``: int8 ONNX with the encoder's static scheme,
``tokenizer.json`` and ``reranker.json``, which records its sha256 and its training command). It reads
``[CLS] query [SEP] text [SEP]`` cut at the exported ``max_tokens`` and answers one logit per pair.
Every pair is padded to ``max_tokens``, so with fixed activation scales a pair's score depends on
the other pairs of its batch only by float rounding (~1e-7: the kernels' blocking follows the batch
size); a query's head is batched the same way each time it is asked. Serving imports onnxruntime and tokenizers only (no torch).

`resolve_reranker` is the one place a setting becomes a reranker: ``shipped`` (the default), ``none``
(no reranker: a request asking for one is told so in ``warnings``) or the path of a directory
exported the same way. Other kinds (a model server) add a branch there.
"""

from __future__ import annotations

import functools
import json
import threading
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from openxiv.corpus.settings.model import Settings
from openxiv.indexer.encoders.onnx_encoder import onnx_session, sha256_files
from openxiv.indexer.encoders.remote_http import is_remote
from openxiv.indexer.encoders.rerankers import Reranker, RerankerUnavailable

__all__ = [
    "DESCRIPTION",
    "ONNX_FILE",
    "TOKENIZER_FILE",
    "OnnxCrossEncoder",
    "resolve_reranker",
    "shipped_reranker_dir",
]

ONNX_FILE = "model.int8.onnx"
TOKENIZER_FILE = "tokenizer.json"
DESCRIPTION = "reranker.json"
BATCH = 32
"""Pairs per ONNX run: bounds memory at depth 200 (the score of a pair does not depend on it)."""


def shipped_reranker_dir() -> Path:
    """The cross-encoder stored in this package."""
    return Path(__file__).resolve().parent / "shipped_reranker"


class OnnxCrossEncoder:
    """An exported cross-encoder directory run by ONNX Runtime; satisfies `Reranker`."""

    def __init__(self, directory: Path) -> None:
        from tokenizers import Tokenizer

        self.directory = Path(directory)
        try:
            desc: dict[str, Any] = json.loads((self.directory / DESCRIPTION).read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise RerankerUnavailable(f"no cross-encoder in {self.directory}: {exc}") from exc
        self.description = desc
        actual = sha256_files(self.directory, desc["files"])
        if desc.get("sha256") and actual != desc["sha256"]:
            raise RerankerUnavailable(f"{self.directory}: files do not match the sha256 in {DESCRIPTION}")
        self.session = onnx_session(self.directory / ONNX_FILE)
        self._inputs = {i.name for i in self.session.get_inputs()}
        self.max_tokens = int(desc.get("max_tokens", 128))
        self.tokenizer = Tokenizer.from_file(str(self.directory / TOKENIZER_FILE))
        self.tokenizer.enable_truncation(max_length=self.max_tokens, strategy="longest_first")
        pad_id = self.tokenizer.token_to_id("[PAD]")
        self.tokenizer.enable_padding(length=self.max_tokens, pad_id=pad_id or 0)
        self.name = str(desc.get("model", self.directory.name))
        self.fingerprint = f"onnx-ce-{actual[:16]}"

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        """One logit per text (higher is more relevant), in the order given."""
        out = np.zeros(len(texts), dtype=np.float32)
        for start in range(0, len(texts), BATCH):
            chunk = texts[start : start + BATCH]
            encs = self.tokenizer.encode_batch([(query, t) for t in chunk])
            feeds = {
                "input_ids": np.array([e.ids for e in encs], dtype=np.int64),
                "attention_mask": np.array([e.attention_mask for e in encs], dtype=np.int64),
                "token_type_ids": np.array([e.type_ids for e in encs], dtype=np.int64),
            }
            logits = self.session.run(None, {k: v for k, v in feeds.items() if k in self._inputs})[0]
            out[start : start + len(chunk)] = np.asarray(logits, dtype=np.float32).reshape(-1)
        return out


def resolve_reranker(spec: str, settings: Settings | None = None) -> Reranker | None:
    """The reranker a setting names (loaded once per process): ``shipped``, ``none``, a directory, or
    a model server ``http://host:port/v1#model`` (`openxiv.indexer.encoders.remote_rerank`; its shape,
    timeout, key and replay from ``settings``, the process's environment when not given).

    None for ``none``; `RerankerUnavailable` when the named one cannot be loaded (the stage then keeps
    the first-stage order and says why)."""
    value = spec.strip()
    if value.lower() in ("", "none", "off"):
        return None
    if is_remote(value):  # a model server: OPENXIV_RERANK=http://host:port/v1#model (docs/models.md)
        return _remote(value, settings or Settings.from_env())
    return _local(value)


@functools.lru_cache(maxsize=4)
def _local(value: str) -> Reranker:
    if value.lower() == "shipped":
        return OnnxCrossEncoder(shipped_reranker_dir())
    return OnnxCrossEncoder(Path(value).expanduser())


_REMOTE: dict[tuple[object, ...], Reranker] = {}
_REMOTE_LOCK = threading.Lock()


def _remote(value: str, settings: Settings) -> Reranker:
    """One `RemoteReranker` per server and the settings it reads (the shape it found is kept)."""
    from openxiv.indexer.encoders.remote_rerank import remote_reranker

    key = (
        value,
        settings.rerank_api,
        settings.remote_query_timeout,
        settings.remote_api_key,
        settings.remote_replay,
        str(settings.remote_replay_file),
        str(settings.data_dir),
    )
    with _REMOTE_LOCK:
        if key not in _REMOTE:
            _REMOTE[key] = remote_reranker(value, settings.rerank_api, settings)
        return _REMOTE[key]
