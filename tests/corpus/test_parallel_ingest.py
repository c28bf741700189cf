"""``openxiv ingest --ingest-workers N`` (and ``--ray``) stores what the serial ingest stores.

Real inputs from ../shared: real PDFs (valid and truncated), a folder's MANIFEST.json (passed over),
listing lines with a paper given twice (merged), unarXive full texts. Each run goes
through the CLI into its own database; the databases must hold the same papers, passages, skipped
inputs and corpus fingerprint, and the runs must report the same counts and exit status.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from sqlalchemy import text

from openxiv.corpus.shared import SharedData
from openxiv.corpus.store import Store

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


def _ingest(db: Path, inputs: list[Path], *extra: str, own_process: bool = False) -> tuple[int, str]:
    """Exit status and counts of ``openxiv ingest``; ``own_process``: in a process of its own (a Ray
    run: Ray started and shut down in the pytest process leaves its gRPC threads behind, and the
    raylet of the next ``ray.init`` in that process, tests/indexer/building/test_ray_embed.py's, could then
    fail to start within Ray's wait)."""
    from openxiv.service.cli import cli

    args = ["ingest", "--db", str(db), "--no-progress", *extra, *map(str, inputs)]
    if own_process:
        run = "import sys; from openxiv.service.cli import cli; cli.main(sys.argv[1:], prog_name='openxiv')"
        proc = subprocess.run([sys.executable, "-c", run, *args], capture_output=True, text=True, timeout=600)
        code, output = proc.returncode, proc.stdout
    else:
        result = CliRunner().invoke(cli, args, catch_exceptions=False)
        code, output = result.exit_code, result.output
    summary = next(line for line in output.splitlines() if line.startswith(f"{db}:"))
    counts = summary.split(":", 1)[1].split(" in ")[0]  # "read 1, added 1, ..."
    return code, counts


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
    parallel = _ingest(tmp_path / "w2.sqlite", inputs, "--ingest-workers", "2")
    assert serial[0] == 3  # broken PDFs and a bad line were skipped, the rest landed
    assert parallel == serial
    want = _contents(tmp_path / "serial.sqlite")
    assert len(want["papers"]) > 250 and any(p.has_fulltext for p in want["papers"]) and want["passages"]
    assert sum("pdf" in e.source or e.source.endswith(".pdf") for e in want["errors"]) == 2
    assert _contents(tmp_path / "w2.sqlite") == want


def test_ray_tasks_store_what_the_serial_ingest_stores(inputs: list[Path], tmp_path: Path):
    pytest.importorskip("ray", reason="the [ray] extra is not installed")
    serial = _ingest(tmp_path / "serial.sqlite", inputs[:2])
    on_ray = _ingest(tmp_path / "ray.sqlite", inputs[:2], "--ray", "--ingest-workers", "2", own_process=True)
    assert on_ray == serial
    assert _contents(tmp_path / "ray.sqlite") == _contents(tmp_path / "serial.sqlite")
