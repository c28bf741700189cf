"""Pause Python's cyclic garbage collector while the evaluator builds or walks large object trees.

Reading, scoring and rendering 10,000 items allocate millions of small dicts, lists, strings and
dataclasses. None of them form reference cycles, so reference counting frees every one of them; the
cyclic collector only adds work: it runs every 700 net allocations and its older generations re-walk
everything still alive, which grows with the report: a large share of the CPU time of reading,
scoring and writing JSON (BENCHMARKS.md, «Evaluator»).

On the way out, what the block allocated and kept is handed to the oldest generation without being
walked (`gc.freeze` then `gc.unfreeze`, both constant time), unless the caller froze objects itself:
otherwise the first collection after the block would walk the whole report once more.

`gc_paused` works as a context manager and as a decorator, nests, and restores the collector's
previous state on the way out (also on an exception), so a caller that disabled it keeps it disabled.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["gc_paused"]


@contextmanager
def gc_paused() -> Iterator[None]:
    """No cyclic garbage collection inside the block; the collector's state is restored after it."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            if gc.get_freeze_count() == 0:
                # Survivors of the block go straight to the oldest generation, unwalked (a freeze is
                # a constant-time list move; unfreeze hands them back to the oldest generation).
                gc.freeze()
                gc.unfreeze()
            gc.enable()
