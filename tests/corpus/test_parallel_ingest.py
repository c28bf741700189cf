"""``openxiv ingest --workers N`` (and ``--ray``) stores what the serial ingest stores.

Real inputs from ../shared: real PDFs (valid and truncated), a folder's MANIFEST.json (passed over),
listing lines with a paper given twice (merged), unarXive full texts. Each run goes
through the CLI into its own database; the databases must hold the same papers, passages, skipped
inputs and corpus fingerprint, and the runs must report the same counts and exit status.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import text

from openxiv.corpus.store import Store
from openxiv.evaluator.shared import SharedData

SMALL_PDFS = 4


@pytest.fixture(scope="module")
def inputs(shared_data: SharedData, head, tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("parallel-inputs")
    pdfs = root / "pdfs"
    pdfs.mkdir()
    valid = sorted((shared_data.pdfs / "valid").glob("*.pdf"), key=lambda p: p.stat().st_size)
    broken = sorted((shared_data.pdfs / "broken").glob("*.pdf"))[:2]
    for p in [*valid[:SMALL_PDFS], *broken, shared_data.pdfs / "MANIFEST.json"]:
        os.symlink(p, pdfs / p.name)
    lines = head(shared_data.listing("cs"), 300)
    (root / "a.jsonl").write_text("".join(lines[:200]), encoding="utf-8")
    (root / "b.jsonl").write_text("".join(lines[150:]) + "{not json\n", encoding="utf-8")
    return [root / "a.jsonl", pdfs, root / "b.jsonl", shared_data.unarxive]


def _ingest(db: Path, inputs: list[Path], *extra: str) -> tuple[int, str]:
    from openxiv.service.cli import cli

    args = ["ingest", "--db", str(db), "--no-progress", *extra, *map(str, inputs)]
    result = CliRunner().invoke(cli, args, catch_exceptions=False)
    counts = result.output.splitlines()[0].split(":", 1)[1].split(" in ")[0]  # "read 1, added 1, ..."
    return result.exit_code, counts


def _contents(db: Path) -> dict[str, Any]:
    with Store.open_readonly(db) as store:
        papers = list(store.iter_papers())
        passages = [(p.arxiv_id, p.ordinal, p.text) for p in store.iter_passages()]
        with store.engine.connect() as conn:
            errors = conn.execute(
                text("SELECT source, location, reason FROM ingest_errors ORDER BY id")
            ).all()
        return {"fingerprint": store.fingerprint(), "papers": papers, "passages": passages, "errors": errors}


def test_workers_store_what_the_serial_ingest_stores(inputs: list[Path], tmp_path: Path):
    serial = _ingest(tmp_path / "serial.sqlite", inputs)
    parallel = _ingest(tmp_path / "w2.sqlite", inputs, "--workers", "2")
    assert serial[0] == 3  # broken PDFs and a bad line were skipped, the rest landed
    assert parallel == serial
    want = _contents(tmp_path / "serial.sqlite")
    assert len(want["papers"]) > 250 and any(p.has_fulltext for p in want["papers"]) and want["passages"]
    assert sum("pdf" in e.source or e.source.endswith(".pdf") for e in want["errors"]) == 2
    assert _contents(tmp_path / "w2.sqlite") == want


def test_ray_tasks_store_what_the_serial_ingest_stores(inputs: list[Path], tmp_path: Path):
    pytest.importorskip("ray", reason="the [ray] extra is not installed")
    serial = _ingest(tmp_path / "serial.sqlite", inputs[:2])
    on_ray = _ingest(tmp_path / "ray.sqlite", inputs[:2], "--ray", "--workers", "2")
    assert on_ray == serial
    assert _contents(tmp_path / "ray.sqlite") == _contents(tmp_path / "serial.sqlite")
