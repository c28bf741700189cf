"""The request grid of ``scripts/check_search_identical.py``: every query runs in each mode, filter
and one of the pages (rotating with the query), so the scripts that explain a before/after
(``scripts/bench_calibration.py --diff``) send exactly the requests it compared."""

from __future__ import annotations

MODES = (None, "rrf", "zscore", "bm25")
"""The default (``weighted`` fusion with feedback), the two other fusions (feedback too) and BM25 alone."""
PAGES = ((10, 0), (5, 10), (20, 3))
FILTERS: tuple[tuple[str, ...], ...] = ((), ("cs.CL",))
