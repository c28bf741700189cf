"""What the training scripts share (``train_encoder.py``, ``train_reranker.py``): the gold papers
they must leave out and a checkpoint written so that a kill never leaves half of one."""

from __future__ import annotations

import argparse
import json
import shutil
from pathlib import Path
from typing import Any

GOLD_DIR_DEFAULT = Path(__file__).resolve().parents[2] / ".." / "shared" / "gold"


def gold_ids(gold_dir: Path) -> set[str]:
    """Every arXiv id a dev or example query set names as relevant (excluded from training)."""
    ids: set[str] = set()
    for path in sorted(gold_dir.glob("*.jsonl")):
        for line in path.read_text(encoding="utf-8").splitlines():
            if line.strip():
                row = json.loads(line)
                ids.update(str(x) for x in row.get("relevant", []))
    return ids


def save_checkpoint(
    ckpt_dir: Path, model: Any, opt: Any, step: int, log: list[float], args: argparse.Namespace
) -> None:
    """Model, optimiser, step, losses and RNG state, written beside and renamed (never half)."""
    import torch

    tmp = ckpt_dir.with_suffix(".tmp")
    tmp.mkdir(parents=True, exist_ok=True)
    state = {
        "model": model.state_dict(),
        "opt": opt.state_dict(),
        "step": step,
        "log": log,
        "rng": torch.get_rng_state(),
        "args": {k: str(v) for k, v in vars(args).items()},
    }
    torch.save(state, tmp / "state.pt")
    if ckpt_dir.exists():
        shutil.rmtree(ckpt_dir)
    tmp.rename(ckpt_dir)
