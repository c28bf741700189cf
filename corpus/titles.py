"""Old import path of the title normaliser; it lives in `openxiv.corpus.normalize`."""

from __future__ import annotations

from openxiv.corpus.normalize import normalize_title, normalize_whitespace

__all__ = ["normalize_title", "normalize_whitespace"]
