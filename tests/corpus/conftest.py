"""Fixtures for the corpus tests: real files from ../shared, small slices of them in tmp dirs."""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from pathlib import Path

import pytest

from openxiv.corpus.ids import try_canonical_id
from openxiv.corpus.shared import SharedData

HEAD_LINES = 2000
_ID = re.compile(r'^\{"id":\s*"([^"]+)"')


@pytest.fixture(scope="session")
def shared_data() -> SharedData:
    data = SharedData.default()
    if not data.available:
        pytest.skip(f"shared data not found at {data.root} (set OPENXIV_SHARED to the folder holding data/)")
    return data


@pytest.fixture(scope="session")
def shared(shared_data: SharedData) -> Path:
    return shared_data.root


@pytest.fixture(scope="session")
def listing_files(shared_data: SharedData) -> list[Path]:
    return shared_data.listings


@pytest.fixture(scope="session")
def fulltext_dir(shared_data: SharedData) -> Path:
    return shared_data.fulltext


def _plaintexts_by_id(fulltext_dir: Path, wanted: set[str]) -> dict[str, dict[str, str]]:
    """The ``{id, text}`` objects of the shared plain texts whose id is in ``wanted`` (all of them)."""
    out: dict[str, dict[str, str]] = {}
    with gzip.open(fulltext_dir / "plaintext-9108-1612.jsonl.gz", "rt", encoding="utf-8") as fh:
        for line in fh:
            obj = json.loads(line)
            if obj["id"] in wanted:
                out[obj["id"]] = obj
    assert set(out) == wanted
    return out


def head_lines(path: Path, n: int) -> list[str]:
    out = []
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            out.append(line)
            if len(out) >= n:
                break
    return out


@pytest.fixture(scope="session")
def plaintexts_by_id():
    """``plaintexts_by_id(fulltext_dir, ids)``: the shared plain-text objects of those ids."""
    return _plaintexts_by_id


@pytest.fixture(scope="session")
def head():
    """``head(path, n)``: the first ``n`` lines of a gzipped file."""
    return head_lines


@pytest.fixture(scope="session")
def listing_subset(listing_files: list[Path], tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    """The first lines of each listing plus every line whose paper occurs twice (quick scan).

    Returns the two subset files, the canonical ids met more than once, and the raw ids that occur
    verbatim in both files (the 20 cross-listed papers).
    """
    lines: dict[Path, list[tuple[str, str]]] = {}
    for path in listing_files:
        rows = []
        with gzip.open(path, "rt", encoding="utf-8") as fh:
            for line in fh:
                m = _ID.match(line)
                raw = m.group(1) if m else json.loads(line)["id"]
                rows.append((raw, line))
        lines[path] = rows
    canon = Counter(try_canonical_id(raw) for rows in lines.values() for raw, _ in rows)
    dup = {c for c, n in canon.items() if n > 1}
    raw_sets = [{raw for raw, _ in rows} for rows in lines.values()]
    cross_raw = raw_sets[0] & raw_sets[1]
    out_dir = tmp_path_factory.mktemp("listing-subset")
    files = []
    for path, rows in lines.items():
        keep = [line for i, (raw, line) in enumerate(rows) if i < HEAD_LINES or try_canonical_id(raw) in dup]
        dest = out_dir / path.name
        with gzip.open(dest, "wt", encoding="utf-8") as fh:
            fh.writelines(keep)
        files.append(dest)
    return {"files": files, "dup": dup, "cross_raw": cross_raw}
