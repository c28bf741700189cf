"""`openxiv.indexer.warm`: a real snapshot's search files read into memory, in search order, and
the reading stops when asked."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from openxiv.indexer import layout
from openxiv.indexer.warm import HOT_PARTS, Warmer, hot_files


def test_hot_files_are_the_search_parts_in_search_order(sparse_index: Any) -> None:
    snap = Path(sparse_index.path)
    files = hot_files(snap)
    parts = [p.relative_to(snap).parts[0] for p in files]
    assert parts[0] == layout.BM25_PAPERS and layout.CORPUS not in parts
    assert parts == sorted(parts, key=HOT_PARTS.index)  # part by part, in the order a search reads
    assert snap / layout.BM25_PAPERS / "term_max.npy" in files


def test_warming_reads_every_hot_byte(sparse_index: Any) -> None:
    warmer = Warmer(Path(sparse_index.path))
    assert warmer.state().state == "warming"
    state = warmer.run()
    assert state.state == "warm"
    assert state.bytes_done == state.bytes_total == sum(p.stat().st_size for p in warmer.files) > 0
    assert state.describe().startswith("warm: ")


def test_a_stopped_warm_up_says_so(sparse_index: Any) -> None:
    warmer = Warmer(Path(sparse_index.path))
    warmer.stop()
    warmer.start()
    assert warmer.wait(60)
    state = warmer.state()
    assert state.state == "stopped" and state.bytes_done == 0
