"""Check that `openxiv eval` writes byte-identical reports before and after a change to the evaluator.

``save DIR`` runs a fixed set of `openxiv eval` commands and keeps every output (terminal table, JSON,
Markdown, HTML) under ``DIR/expected``; ``check DIR`` runs the same commands again into ``DIR/actual``
and compares byte by byte, printing the first differing line of each file that changed. Exit status 0
when every file is identical, 1 otherwise.

The cases: the shared AutoResearchBench fixtures (wide and deep gold, the real inference output, with
and without a corpus DB and a cutoff, Dr.Mi mode, a paired comparison), the TaxoBench fixtures (exact
similarity), and seeded synthetic data from ``scripts/bench_evaluator.py`` (10,000 items with a
comparison by default, 1,000 items against the corpus DB with a cutoff, in Dr.Mi mode, and a ranked
run) and from `make_passes` (1 to 6 passes per item with efficiency fields, 'none' states, title-only
gold). The synthetic files are written once, by ``save``, under ``DIR/data``: the reports name their
input paths, so ``check`` reuses them.

To save the reports of another commit without checking it out, unpack its code beside and put it
first on the path: ``git archive COMMIT corpus evaluator indexer service | tar -x -C OLD``, link
``OLD/pkg/openxiv/<part>`` to ``OLD/<part>`` (plus an empty ``__init__.py``), then run ``save`` with
``PYTHONPATH=OLD/pkg``.

Usage::

    .venv/bin/python scripts/check_eval_reports.py save data/scratch/me/reports   # on the old code
    .venv/bin/python scripts/check_eval_reports.py check data/scratch/me/reports  # on the new code

``--db`` names the corpus database of the corpus cases (default: ``data/corpus.sqlite``; the cases are
left out, with a note, when it does not exist). Shared data comes from `SharedData` (``OPENXIV_SHARED``).
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from collections.abc import Iterator
from pathlib import Path

from click.testing import CliRunner
from harness.data import SharedData

from openxiv.evaluator.cli import eval_group

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.synthetic import make_data, make_ranked

Case = tuple[str, list[str]]


def cases(data: Path, shared: SharedData, db: Path | None) -> Iterator[Case]:
    """``(name, arguments of openxiv eval)``; every case writes JSON, Markdown and HTML as well."""
    arb, taxo = shared.gold("autoresearchbench"), shared.gold("taxobench")
    wide, deep = arb / "academic_widesearch_example.jsonl", arb / "academic_deepsearch_example.jsonl"
    sample = arb / "sample_inference_output_wide.jsonl"
    yield "arb_wide", ["autoresearchbench", "-g", str(wide), "-s", str(sample)]
    yield "arb_sample_self", ["autoresearchbench", "-g", str(sample), "-s", str(sample)]
    yield "arb_compare", ["autoresearchbench", "-g", str(wide), "-s", str(sample), "--compare", str(sample)]
    yield "drmi_wide", ["drmi", "-g", str(wide), "-s", str(sample)]
    yield "arb_deep_all", ["autoresearchbench", "-g", str(deep), "-s", str(sample), "--max-candidates", "0"]
    ref, pred = taxo / "toy_reference.jsonl", taxo / "toy_prediction.jsonl"
    yield "taxo_toy", ["taxobench", "-g", str(ref), "-s", str(pred), "--similarity", "exact"]
    bottom = taxo / "bottom_up_outputs_examples.jsonl"
    yield "taxo_bottom_up", ["taxobench", "-g", str(bottom), "-s", str(bottom), "--similarity", "exact"]
    big, small = data / "big", data / "small"
    yield (
        "bench_big",
        ["autoresearchbench", "-g", str(big / "gold.jsonl"), "-s", str(big / "a.jsonl"),
         "--compare", str(big / "b.jsonl")],
    )  # fmt: skip
    yield "bench_small_drmi", ["drmi", "-g", str(small / "gold.jsonl"), "-s", str(small / "a.jsonl")]
    yield (
        "bench_small_all",
        ["autoresearchbench", "-g", str(small / "gold.jsonl"), "-s", str(small / "b.jsonl"),
         "--max-candidates", "0", "--threshold", "0.8"],
    )  # fmt: skip
    yield "ranked", ["ranked", "-g", str(small / "qrels.txt"), "-s", str(small / "run.txt")]
    passes = data / "passes"
    yield (
        "bench_passes",
        ["autoresearchbench", "-g", str(passes / "gold.jsonl"), "-s", str(passes / "a.jsonl"),
         "--compare", str(passes / "b.jsonl")],
    )  # fmt: skip
    if db is None:
        return
    yield "arb_wide_db", ["autoresearchbench", "-g", str(wide), "-s", str(sample), "--db", str(db),
                          "--cutoff", "2025-06-30"]  # fmt: skip
    yield (
        "bench_small_db",
        ["autoresearchbench", "-g", str(small / "gold.jsonl"), "-s", str(small / "a.jsonl"),
         "--db", str(db), "--cutoff", "2025-09-30"],
    )  # fmt: skip


def make_inputs(data: Path, items: int) -> None:
    for sub, n in (("big", items), ("small", 1000)):
        (data / sub).mkdir(parents=True, exist_ok=True)
        make_data(data / sub, n, seed=0)
    make_ranked(data / "small", 1000, seed=0)
    make_passes(data / "small" / "gold.jsonl", data / "passes")


def make_passes(gold_path: Path, out: Path, seed: int = 1) -> None:
    """Inference outputs with 1-6 passes per item in shuffled pass order, 'none' and 'empty' states,
    turn details or only a total time or neither, titles beside ids; a tenth of the gold has titles only."""
    rng = random.Random(seed)
    out.mkdir(parents=True, exist_ok=True)
    gold = [json.loads(line) for line in gold_path.read_text(encoding="utf-8").splitlines()]
    for g in gold:
        if isinstance(g["arxiv_id"], list) and rng.random() < 0.1:
            del g["arxiv_id"]
    (out / "gold.jsonl").write_text("".join(json.dumps(g) + "\n" for g in gold), encoding="utf-8")
    for name in ("a.jsonl", "b.jsonl"):
        lines = []
        for g in gold:
            ids = g.get("arxiv_id") or []
            pairs = list(
                zip(
                    [ids] if isinstance(ids, str) else ids or [None] * len(g["answer"]),
                    g["answer"],
                    strict=True,
                )
            )
            results = []
            for p in rng.sample(range(6), rng.randint(1, 6)):
                cands = [
                    {
                        "arxiv_id": f"{i}v{rng.randint(1, 3)}" if i and rng.random() < 0.8 else None,
                        "title": t if rng.random() < 0.5 else None,
                    }
                    for i, t in pairs
                    if rng.random() < 0.5
                ] + [{"arxiv_id": f"2{rng.randint(301, 312)}.{rng.randint(0, 99999):05d}"}] * rng.randint(
                    0, 3
                )
                res: dict[str, object] = {"pass_id": p, "status": "success", "final_candidates": cands}
                res["final_candidate_state"] = rng.choice(["ids", "ids", "ids", "none", "empty"])
                kind = rng.random()
                if kind < 0.6:
                    res["turn_details"] = [
                        {
                            "action": rng.choice(["tool", "answer", "error"]),
                            "duration": rng.random() * 9,
                            "input_tokens": rng.randint(10, 5000),
                            "output_tokens": rng.randint(1, 900),
                        }
                        for _ in range(rng.randint(1, 6))
                    ]
                elif kind < 0.8:
                    res["total_time"] = rng.random() * 60
                results.append(res)
            data = {"qid": g["qid"], "question": g["question"]}
            lines.append(json.dumps({"input_data": data, "inference_results": results}))
        (out / name).write_text("\n".join(lines) + "\n", encoding="utf-8")  # fmt: skip


def run_cases(data: Path, out: Path, db: Path | None) -> list[Path]:
    out.mkdir(parents=True, exist_ok=True)
    written: list[Path] = []
    runner = CliRunner()
    for name, args in cases(data, SharedData.default(), db):
        files = {k: out / f"{name}.{k}" for k in ("json", "md", "html", "txt")}
        argv = [*args, "--json", str(files["json"]), "--md", str(files["md"]), "--html", str(files["html"])]
        res = runner.invoke(eval_group, argv, catch_exceptions=False)
        if res.exit_code != 0:
            raise SystemExit(f"{name}: openxiv eval {' '.join(argv)} exited {res.exit_code}:\n{res.output}")
        # The terminal output names the output files: the folder is the one thing save and check differ in.
        files["txt"].write_text(res.output.replace(str(out), "<OUT>"), encoding="utf-8")
        written += files.values()
        print(f"{name}: {', '.join(p.name for p in files.values())}")
    return written


def first_difference(a: bytes, b: bytes) -> str:
    la, lb = a.split(b"\n"), b.split(b"\n")
    for k, (x, y) in enumerate(zip(la, lb, strict=False), 1):
        if x != y:
            return f"line {k}:\n  expected {x[:300]!r}\n  actual   {y[:300]!r}"
    return f"{len(la)} lines expected, {len(lb)} actual"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("mode", choices=("save", "check"))
    ap.add_argument("dir", type=Path)
    ap.add_argument("--items", type=int, default=10_000, help="Synthetic items of the large case.")
    ap.add_argument("--db", type=Path, default=Path("data/corpus.sqlite"), help="Corpus DB of the DB cases.")
    args = ap.parse_args()
    data = args.dir / "data"
    db = args.db.resolve() if args.db.is_file() else None
    if db is None:
        print(f"note: no corpus database at {args.db}: the corpus cases are left out")
    if args.mode == "save":
        make_inputs(data, args.items)
        run_cases(data, args.dir / "expected", db)
        return
    if not data.is_dir():
        raise SystemExit(f"no saved data under {data}: run 'save' on the old code first")
    changed = 0
    for path in run_cases(data, args.dir / "actual", db):
        expected = args.dir / "expected" / path.name
        if not expected.is_file():
            print(f"NEW   {path.name} (nothing saved to compare with)")
            changed += 1
        elif expected.read_bytes() != path.read_bytes():
            print(f"DIFF  {path.name}: {first_difference(expected.read_bytes(), path.read_bytes())}")
            changed += 1
    print("all reports byte-identical" if not changed else f"{changed} files differ")
    raise SystemExit(1 if changed else 0)


if __name__ == "__main__":
    main()
