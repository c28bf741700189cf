"""`SharedData` names the files the shared data folder really holds (the layout lives in one place)."""

from __future__ import annotations

from pathlib import Path

import pytest

from openxiv.corpus.shared import SharedData


@pytest.fixture(scope="module")
def shared() -> SharedData:
    data = SharedData.default()
    if not data.available:
        pytest.skip(data.missing_message())
    return data


def test_every_named_file_exists(shared: SharedData) -> None:
    files = [
        *shared.listings,
        shared.listing("cs"),
        shared.listing("astro"),
        shared.plaintext,
        shared.unarxive,
    ]
    files += [shared.gold(name) for name in (*SharedData.TOPIC_SETS, SharedData.KNOWN_ITEM)]
    assert [f for f in files if not f.is_file()] == []
    assert shared.listing("cs").name.startswith("listing-cs-")
    assert all(d.is_dir() for d in shared.ingest_inputs)
    assert sorted(shared.pdfs.joinpath("valid").glob("*.pdf")) and shared.gold("taxobench").is_dir()


def test_a_missing_folder_is_reported_not_read(tmp_path: Path) -> None:
    absent = SharedData(tmp_path / "nowhere")
    assert not absent.available and str(absent.root) in absent.missing_message()
