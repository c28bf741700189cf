"""What every encoder shares: row normalisation of vectors and the build directory of a model artefact.

Apart from `openxiv.indexer.encoders.embed` (the `Encoder` registry) so that the ONNX encoder and
the registry both use them without importing each other.
"""

from __future__ import annotations

import contextlib
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import numpy as np

__all__ = ["EncoderUnavailable", "built_dir", "normalize_rows"]


def normalize_rows(x: np.ndarray) -> np.ndarray:
    """Float32 copy-free (when possible) L2 normalisation of each row; zero rows stay zero."""
    x = np.asarray(x, dtype=np.float32)
    norms = np.linalg.norm(x, axis=-1, keepdims=True)
    np.maximum(norms, 1e-12, out=norms)
    return np.ascontiguousarray(x / norms, dtype=np.float32)


@contextlib.contextmanager
def built_dir(out_dir: Path) -> Iterator[Path]:
    """A temporary sibling of ``out_dir`` to build a model artefact in, renamed to ``out_dir`` when
    the block succeeds (a concurrent builder that got there first wins) and removed otherwise, so
    no half-built directory is ever read."""
    out_dir.parent.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=out_dir.name + ".tmp", dir=out_dir.parent))
    try:
        yield tmp
        if not out_dir.exists():
            tmp.rename(out_dir)
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)


class EncoderUnavailable(RuntimeError):
    """The query encoder cannot answer now (a model server down, slow or refusing): a search with a
    lexical side answers without the dense sides and says so in ``warnings``; a dense mode alone is
    answered 503."""
