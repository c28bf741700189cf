"""One helper for the snapshot's stored per-row tables (``tldr/``, ``sentences/``).

Both tables are arrays by paper row beside an info file (``{"rules": ..., "papers": n, ...}``)
whose ``rules`` is a digest of the source of the rules they were made with: a table made under
other rules, or for another corpus size, is not used (the service then computes per hit). This
module holds that machinery once: the rules digest (`digest`), the info file (`write_info`,
`read_info`), memory-mapped arrays (`mmap_array`) and the row lookup (`RowTable`).
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np

__all__ = ["RowTable", "digest", "mmap_array", "read_info", "write_info"]


def digest(source: str) -> str:
    """The version of a table's rules: the first 16 hex digits of the sha256 of their source."""
    return hashlib.sha256(source.encode("utf-8")).hexdigest()[:16]


def write_info(path: Path, info: dict[str, Any]) -> dict[str, Any]:
    """Write a table's info file (one JSON line); ``info`` back."""
    path.write_text(json.dumps(info) + "\n", encoding="utf-8")
    return info


def read_info(path: Path, expected: Mapping[str, Any]) -> dict[str, Any] | None:
    """The info file at ``path``, or ``None`` when it is missing, unreadable or any of ``expected``'s
    keys holds another value (rules, stemmer, papers): such a table is not used."""
    try:
        info = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(info, dict) or any(info.get(k) != v for k, v in expected.items()):
        return None
    return info


def mmap_array(path: Path) -> np.ndarray:
    """The ``.npy`` array at ``path``, memory-mapped, as a plain view (slicing a `numpy.memmap`
    costs seven times as much)."""
    return np.load(path, mmap_mode="r").view(np.ndarray)


class RowTable:
    """A stored table by paper row: ``row_of`` maps an arXiv id to its row (``None``: not in it)."""

    def __init__(self, row_of: Callable[[str], int | None]) -> None:
        self.row_of = row_of

    def __contains__(self, arxiv_id: str) -> bool:
        return self.row_of(arxiv_id) is not None
