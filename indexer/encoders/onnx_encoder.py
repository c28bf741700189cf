"""The ``onnx-int8`` encoder: a transformer exported to ONNX with static int8 quantisation.

Two halves with different needs:

- `export_onnx_int8` (index builds, once per model): torch + transformers export the transformer
  to ONNX, and ONNX Runtime's ``quantize_static`` gives every quantised MatMul int8 weights (per
  channel) and a *fixed* activation scale calibrated on seeded sequences of vocabulary words. The
  result is a self-contained directory (`ONNX_FILE`, ``tokenizer.json``, `DESCRIPTION`).
- `OnnxEncoder` (builds and serving): onnxruntime + tokenizers only, loading such a directory (the
  model cache's or a snapshot's own copy), so serving imports no torch and writes nothing.

Why static: dynamic quantisation computed one activation scale per batch tensor, so a text's vector
depended on its batch-mates and a rebuild with another embedding-cache history ranked differently
(issue 8). With fixed scales and every text padded to ``max_tokens`` a row's arithmetic is the same
in any batch (integer GEMMs are exact; the float ops are per row), so a vector depends only on its
text and the model: bit-identical across batch sizes, orders and cache states. Of the options
measured (docs/embeddings.md, «Reproducible vectors»), dynamic per batch is not reproducible, dynamic
per text, float32 and weight-only int8 are reproducible but slow, and static int8 on every MatMul
loses closeness to torch (the FFN down-projection's GELU outliers clip), so those six MatMuls stay
float.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import shutil
import warnings
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from openxiv.corpus.extras import missing_extra
from openxiv.indexer.encoders.vectors import built_dir, normalize_rows

__all__ = [
    "DESCRIPTION",
    "ONNX_FILE",
    "SCHEME",
    "OnnxEncoder",
    "export_onnx_int8",
    "onnx_description",
    "onnx_session",
    "onnx_threads",
    "quantize_static_int8",
    "sha256_files",
]

ONNX_FILE = "model.int8.onnx"
TOKENIZER_FILE = "tokenizer.json"
DESCRIPTION = "encoder.json"
SCHEME = "static-int8-v1"
"""Quantisation scheme; part of the fingerprint, so vectors of another scheme are never mixed."""
CALIBRATION_SEQUENCES = 256
CALIBRATION_WORDS = 48
CALIBRATION_TOKENS = 64
CALIBRATION_SEED = 0


def onnx_description(directory: Path) -> dict[str, Any] | None:
    """The description (``encoder.json``) of an exported int8 encoder in ``directory``, or None when
    there is none or it lists no ONNX file (a torch or model2vec snapshot stores only a description)."""
    try:
        desc = json.loads((Path(directory) / DESCRIPTION).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return desc if isinstance(desc, dict) and ONNX_FILE in desc.get("files", []) else None


def sha256_files(directory: Path, names: Sequence[str]) -> str:
    """sha256 over the named files (name, NUL, bytes; in order): what an exported encoder's or
    cross-encoder's fingerprint is made of."""
    h = hashlib.sha256()
    for name in names:
        h.update(name.encode() + b"\0")
        with (directory / name).open("rb") as fh:
            for block in iter(lambda: fh.read(1 << 20), b""):
                h.update(block)
    return h.hexdigest()


def _pooling_mode(model_path: Path) -> str:
    cfg = model_path / "1_Pooling" / "config.json"
    if cfg.exists() and json.loads(cfg.read_text()).get("pooling_mode_cls_token"):
        return "cls"
    return "mean"


def _calibration_feeds(tokenizer_file: Path) -> Iterator[dict[str, np.ndarray]]:
    """Seeded sequences of whole vocabulary words: no data set is needed and the export is the
    same on every machine. Their activation ranges gave the same cosine to torch as 600 real
    abstracts (0.9910 vs 0.9909)."""
    from tokenizers import Tokenizer

    tok = Tokenizer.from_file(str(tokenizer_file))
    tok.enable_truncation(max_length=CALIBRATION_TOKENS)
    tok.enable_padding(length=CALIBRATION_TOKENS)
    vocab = sorted(w for w in tok.get_vocab() if w.isascii() and w.isalpha() and len(w) >= 3)
    rng = np.random.default_rng(CALIBRATION_SEED)
    texts = [" ".join(rng.choice(vocab, CALIBRATION_WORDS)) for _ in range(CALIBRATION_SEQUENCES)]
    for start in range(0, len(texts), 32):
        encs = tok.encode_batch(texts[start : start + 32])
        ids = np.array([e.ids for e in encs], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encs], dtype=np.int64)
        yield {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}


def _export_fp32(model_path: Path, target: Path) -> None:
    try:
        import torch
        from transformers import AutoModel
    except ImportError as exc:  # the [torch] extra: exporting needs it, serving the export does not
        raise missing_extra("torch", "exporting the onnx-int8 encoder", exc) from exc

    class HiddenStates(torch.nn.Module):
        """Keyword-only call into a Hugging Face model so that tracing sees three plain tensors."""

        def __init__(self, inner: Any) -> None:
            super().__init__()
            self.inner = inner

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            out = self.inner(
                input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids
            )
            return out.last_hidden_state

    model = HiddenStates(AutoModel.from_pretrained(str(model_path), local_files_only=True)).eval()
    ids = torch.ones((2, 16), dtype=torch.long)
    names = ["input_ids", "attention_mask", "token_type_ids"]
    axes: dict[str, dict[int, str]] = {n: {0: "batch", 1: "seq"} for n in [*names, "last_hidden_state"]}
    with torch.inference_mode():
        torch.onnx.export(
            model,
            (ids, torch.ones_like(ids), torch.zeros_like(ids)),
            str(target),
            input_names=names,
            output_names=["last_hidden_state"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )


def quantize_static_int8(fp32: Path, target: Path, tokenizer_file: Path) -> None:
    import onnx
    from onnxruntime.quantization import (
        CalibrationDataReader,
        CalibrationMethod,
        QuantFormat,
        QuantType,
        quantize_static,
    )

    feeds = _calibration_feeds(tokenizer_file)

    class Reader(CalibrationDataReader):
        def get_next(self) -> dict[str, np.ndarray] | None:
            return next(feeds, None)

    matmuls = [n.name for n in onnx.load(str(fp32)).graph.node if n.op_type == "MatMul"]
    # the FFN down-projections (".../layer.N/output/dense") take GELU outputs whose outliers a fixed
    # scale clips: quantised, cosine to torch fell to 0.934; kept float, 0.991
    ffn_down = [n for n in matmuls if "/output/dense/" in n and "/attention/" not in n]
    quantize_static(
        str(fp32),
        str(target),
        Reader(),
        quant_format=QuantFormat.QDQ,
        op_types_to_quantize=["MatMul"],
        per_channel=True,
        reduce_range=True,  # u8 x s8 products saturate on AVX2 without it
        activation_type=QuantType.QUInt8,
        weight_type=QuantType.QInt8,
        calibrate_method=CalibrationMethod.MinMax,
        nodes_to_exclude=ffn_down,
        extra_options={"ActivationSymmetric": False},
    )


def export_onnx_int8(model_path: Path, out_dir: Path, label: str, source_fingerprint: str) -> Path:
    """Export ``model_path`` into the encoder directory ``out_dir`` (once; reused when present)."""
    if (out_dir / DESCRIPTION).exists():
        return out_dir
    with built_dir(out_dir) as tmp:
        shutil.copy2(model_path / TOKENIZER_FILE, tmp / TOKENIZER_FILE)
        # the tracer and the quantizer warn about things that do not apply to this fixed graph
        # (constant branches, "pre-process first"); a user building an index should not see them
        root = logging.getLogger()
        level = root.level
        try:
            root.setLevel(logging.ERROR)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                _export_fp32(model_path, tmp / "model.fp32.onnx")
                quantize_static_int8(tmp / "model.fp32.onnx", tmp / ONNX_FILE, tmp / TOKENIZER_FILE)
        finally:
            root.setLevel(level)
        for leftover in tmp.glob("*.fp32*"):
            leftover.unlink()
        desc = {
            "backend": "onnx-int8",
            "model": label,
            "source_fingerprint": source_fingerprint,
            "scheme": SCHEME,
            "pooling": _pooling_mode(model_path),
            "files": [ONNX_FILE, TOKENIZER_FILE],
        }
        (tmp / DESCRIPTION).write_text(json.dumps(desc, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    return out_dir


def onnx_threads() -> int:
    """``OMP_NUM_THREADS`` when set (``openxiv serve`` sets it to ``OPENXIV_SERVE_THREADS``, 1 by
    default), else every core this process may use (index builds)."""
    raw = os.environ.get("OMP_NUM_THREADS", "").strip()
    if raw.isdigit():
        return max(1, int(raw))
    return max(1, len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1)


def onnx_session(path: Path) -> Any:
    """An onnxruntime CPU session of ``path`` with `onnx_threads` threads (encoders and rerankers)."""
    import onnxruntime as ort

    opts = ort.SessionOptions()
    n = onnx_threads()
    opts.intra_op_num_threads = n
    opts.inter_op_num_threads = 1
    if n == 1:
        # one thread per query while serving: no pool whose spinning steals CPU from other requests
        opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    opts.graph_optimization_level = ort.GraphOptimizationLevel.ORT_ENABLE_ALL
    return ort.InferenceSession(str(path), opts, providers=["CPUExecutionProvider"])


class OnnxEncoder:
    """An exported encoder directory run by ONNX Runtime; mean (or CLS) pooling + normalisation in
    numpy. Every batch is padded to ``max_tokens``, so a row never depends on its batch-mates."""

    def __init__(self, directory: Path, max_tokens: int, batch_size: int = 64) -> None:
        from tokenizers import Tokenizer

        self.directory = Path(directory)
        desc = json.loads((self.directory / DESCRIPTION).read_text(encoding="utf-8"))
        self.description: dict[str, Any] = desc
        self.session = onnx_session(self.directory / ONNX_FILE)
        self._inputs = {i.name for i in self.session.get_inputs()}
        self.tokenizer = Tokenizer.from_file(str(self.directory / TOKENIZER_FILE))
        self.tokenizer.enable_truncation(max_length=max_tokens)
        pad_id = self.tokenizer.token_to_id("[PAD]")
        self.tokenizer.enable_padding(length=max_tokens, pad_id=pad_id or 0)
        self.query_tokenizer = Tokenizer.from_str(self.tokenizer.to_str())
        """The same tokenizer without padding, for one query at a time (`encode_query`)."""
        self.query_tokenizer.no_padding()
        self.pooling = str(desc.get("pooling", "mean"))
        self.max_tokens = max_tokens
        self.batch_size = batch_size
        self.name = f"onnx-int8:{desc.get('model', self.directory.name)}"
        # the exact files: another export (ORT version, calibration) can never share cache entries
        self.fingerprint = f"onnx-int8-{SCHEME}-{sha256_files(self.directory, desc['files'])[:16]}"
        self.dim = int(self._run(["probe"]).shape[1])

    def _run(self, texts: list[str], tokenizer: Any = None) -> np.ndarray:
        encs = (tokenizer or self.tokenizer).encode_batch(texts)
        ids = np.array([e.ids for e in encs], dtype=np.int64)
        mask = np.array([e.attention_mask for e in encs], dtype=np.int64)
        feeds = {"input_ids": ids, "attention_mask": mask, "token_type_ids": np.zeros_like(ids)}
        out = self.session.run(None, {k: v for k, v in feeds.items() if k in self._inputs})[0]
        if self.pooling == "cls":
            pooled = out[:, 0, :]
        else:
            w = mask[:, :, None].astype(np.float32)
            pooled = (out * w).sum(axis=1) / np.maximum(w.sum(axis=1), 1e-9)
        return normalize_rows(pooled)

    def encode(
        self, texts: Sequence[str], batch_size: int | None = None, progress: bool = False
    ) -> np.ndarray:
        texts = list(texts)
        if not texts:
            return np.zeros((0, getattr(self, "dim", 0)), dtype=np.float32)
        bs = batch_size or self.batch_size
        bar = None
        if progress:
            from tqdm.auto import tqdm

            bar = tqdm(total=len(texts), desc="embed", unit="text")
        chunks = []
        for start in range(0, len(texts), bs):
            chunks.append(self._run(texts[start : start + bs]))
            if bar is not None:
                bar.update(len(chunks[-1]))
        if bar is not None:
            bar.close()
        return np.concatenate(chunks)

    def encode_query(self, text: str) -> np.ndarray:
        """One query, not padded to ``max_tokens``: a third less CPU for a typical 16-token query,
        and the same vector to the bit as the padded encoding the index was built with (the pad
        positions are masked out of attention and pooling; checked on the shared dev queries by
        tests/indexer/test_onnx_encoder.py and measured in BENCHMARKS.md, «Search service»)."""
        return self._run([text], self.query_tokenizer)[0]

    def save(self, directory: Path) -> None:
        """Copy the encoder files into ``directory`` (hard links where the filesystem allows), plus
        the description with this encoder's fingerprint, truncation and dimension."""
        directory.mkdir(parents=True, exist_ok=True)
        for name in self.description["files"]:
            try:
                (directory / name).hardlink_to(self.directory / name)
            except OSError:
                shutil.copy2(self.directory / name, directory / name)
        desc = {
            **self.description,
            "fingerprint": self.fingerprint,
            "max_tokens": self.max_tokens,
            "dim": self.dim,
            "needs_torch": False,
        }
        (directory / DESCRIPTION).write_text(
            json.dumps(desc, indent=2, sort_keys=True) + "\n", encoding="utf-8"
        )
