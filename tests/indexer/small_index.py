"""Small real corpora for the snapshot and filter tests: listing papers and plain-text full texts from ../shared."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from openxiv.corpus.readers import read_path
from openxiv.corpus.store import Store

LISTING_CS = "listing-cs-2503-2606.jsonl.gz"
LISTING_ASTRO = "listing-astro-2504-2606.jsonl.gz"
PLAINTEXT = "plaintext-9108-1612.jsonl.gz"


def records(shared: Path, cs: int, astro: int, full: int, skip_cs: int = 0) -> Iterator[Any]:
    d = shared / "data"
    return itertools.chain(
        itertools.islice(read_path(d / "corpus" / LISTING_CS), skip_cs, skip_cs + cs),
        itertools.islice(read_path(d / "corpus" / LISTING_ASTRO), astro),
        itertools.islice(read_path(d / "fulltext" / PLAINTEXT), full),
    )


def make_db(path: Path, items: Iterator[Any]) -> Path:
    with Store(path) as store:
        store.ingest(items)
    return path
