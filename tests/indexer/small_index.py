"""Small real corpora for the snapshot and filter tests: listing papers and plain-text full texts from ../shared."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from openxiv.corpus.readers import read_path
from openxiv.corpus.store import Store
from openxiv.evaluator.shared import SharedData


def records(shared: SharedData, cs: int, astro: int, full: int, skip_cs: int = 0) -> Iterator[Any]:
    return itertools.chain(
        itertools.islice(read_path(shared.listing("cs")), skip_cs, skip_cs + cs),
        itertools.islice(read_path(shared.listing("astro")), astro),
        itertools.islice(read_path(shared.plaintext), full),
    )


def make_db(path: Path, items: Iterator[Any]) -> Path:
    with Store(path) as store:
        store.ingest(items)
    return path
