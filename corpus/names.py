"""Old import path of the name normaliser; it lives in `openxiv.corpus.normalize` (``fold_text`` is `fold`)."""

from __future__ import annotations

from openxiv.corpus.normalize import fold as fold_text
from openxiv.corpus.normalize import name_tokens, normalize_name

__all__ = ["fold_text", "name_tokens", "normalize_name"]
