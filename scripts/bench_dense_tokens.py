"""Dense vectors at more tokens (issue 14): the same rankings on two snapshots of one corpus whose paper
vectors differ only in ``embed_max_tokens``, judged by the rule of ``scripts/bench_quality.py``.

    .venv/bin/python scripts/bench_dense_tokens.py --base data/index \\
        --longer data/scratch/dense64/index [--query-tokens 32 64 128] [--no-write]

Rows (``bench_quality.measure`` on each snapshot): BM25 once, dense only, and the hybrid rankings of
the quality table whose known items the rule checks. The verdict is ``bench_quality.choose`` over the
hybrid rows of both snapshots, with the base snapshot's feedback-free row as the MRR reference: the
longer vectors win only if one of their rows is the one the rule picks.

The query side: a snapshot encodes a query with the truncation its papers were embedded at. The
snapshot is reopened with its own ONNX encoder truncating queries at each ``--query-tokens`` to show
what the query length alone changes (topic queries are shorter than 32 tokens, so only long `exact`
known-item sentences can move), with the encoder's CPU time per query.

Passage vectors are estimated, not built: ``--passage-sample`` passages are encoded at the longer
snapshot's truncation to time them (CPU seconds, extrapolated to every passage), and the share of
relevant topic papers that have a full text at all bounds what passage vectors could add to topic
recall.

Writes the section "Dense vectors at 64 tokens" of BENCHMARKS.md just after "Retrieval quality"
(whose table ``bench_quality.py`` owns and rewrites).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import sqlite3
import statistics
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from openxiv.corpus.settings.model import Settings
from openxiv.evaluator.ranked import score_query
from openxiv.evaluator.shared import SharedData
from openxiv.indexer import layout
from openxiv.indexer import manifest as manifest_file
from openxiv.indexer.encoders.onnx_encoder import OnnxEncoder
from openxiv.indexer.manifest import BadIndexError
from openxiv.indexer.snapshot import open_index, resolve_snapshot

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench_md import write_section
from bench_quality import (
    CONFIGS,
    KNOWN_ITEM_FILE,
    NO_FEEDBACK,
    TOPIC_FILES,
    choose,
    default_encoder,
    evaluate,
    load_jsonl,
    measure,
    run_queries,
    table,
)

SECTION = "Dense vectors at 64 tokens"
AFTER = "Retrieval quality"
DEFAULT_ROW = "hybrid weighted 1:0.3 + feedback x0.3 below the first 10"
ROWS = (
    "bm25 (papers + passages)",
    "dense only",
    NO_FEEDBACK,
    "hybrid weighted 1:0.5",
    "hybrid zscore 1:0.5",
    "hybrid weighted 1:0.3 + feedback x0.3, head 10 kept when ratio >= 1.2 or coverage >= 0.6",
    DEFAULT_ROW,
)


def manifest(index: Path) -> manifest_file.Manifest:
    """The manifest of the live snapshot of ``index`` (a root or a snapshot)."""
    return manifest_file.read(resolve_snapshot(index))


def built(index: Path) -> bool:
    """``index`` holds a snapshot with its manifest (`resolve_snapshot` raises when it does not)."""
    try:
        return (resolve_snapshot(index) / layout.MANIFEST).is_file()
    except BadIndexError:
        return False


QUICK = ("bm25 (papers + passages)", "dense only", NO_FEEDBACK, DEFAULT_ROW)
"""``--quick``: the rows the rule needs (BM25, the MRR reference, the shipped ranking) and dense alone."""


def quality_rows(
    base: Path, longer: Path, settings: Settings, rows: tuple[str, ...] = ROWS
) -> list[dict[str, Any]]:
    """The ``rows`` configurations on both snapshots (BM25 once: it does not read vectors)."""
    configs = {name: CONFIGS[name] for name in rows}
    rows = measure(base, settings, configs)
    rows += measure(longer, settings, {k: v for k, v in configs.items() if not k.startswith("bm25")})
    papers = int(manifest(base).corpus.papers or 0)
    return [{**r, "papers": papers} for r in rows]


def verdict(rows: list[dict[str, Any]], base_encoder: str) -> str:
    """`choose` over the hybrid rows of both snapshots: rows are relabelled onto the default encoder
    (so the rule sees them all) with the longer encoder named in the configuration, and only the base
    snapshot's feedback-free row keeps the name `choose` takes as the MRR reference."""
    pooled = []
    for r in rows:
        r = dict(r)
        if r["encoder"] != base_encoder:
            r["config"] = (
                f"{r['config'].removesuffix(' (default)')} [{r['encoder'].rsplit('@', 1)[1]} tokens]"
            )
        r["encoder"] = default_encoder()
        pooled.append(r)
    return choose(pooled)


def query_side(index: Path, settings: Settings, tokens: list[int]) -> list[dict[str, Any]]:
    """Each query truncation on one snapshot: dense-only and shipped-ranking scores of the known items,
    the encoder's CPU time per `exact` query, and whether any topic query's vector changes at all."""
    snap = resolve_snapshot(index)
    gold = SharedData.default().gold()
    topics = [q["query"] for f in TOPIC_FILES for q in load_jsonl(gold / f)]
    known = load_jsonl(gold / KNOWN_ITEM_FILE)
    exact = [q["query"] for q in known if q["kind"] == "exact"]
    built = int(manifest(index).embedding.max_tokens or 0)
    reference = OnnxEncoder(snap / "encoder", built, settings.embed_batch_size)
    out = []
    for qt in tokens:
        encoder = OnnxEncoder(snap / "encoder", qt, settings.embed_batch_size)
        encoder.encode_query(exact[0])
        cpu = time.process_time()
        for text in exact:
            encoder.encode_query(text)
        cpu_ms = (time.process_time() - cpu) * 1000 / len(exact)
        topics_changed = sum(
            not np.array_equal(encoder.encode_query(t), reference.encode_query(t)) for t in topics
        )
        opened = open_index(index, settings, encoder=encoder)
        try:
            for label, mode, changes in (
                ("dense only", "dense", {"prf_docs": 0}),
                (DEFAULT_ROW, *CONFIGS[DEFAULT_ROW][:2]),
            ):
                krun, _ = run_queries(opened.backend.tuned(**changes), known, mode, 10)
                row = {
                    "index": str(index),
                    "papers": int(manifest(index).corpus.papers or 0),
                    "vectors": built,
                    "query_tokens": qt,
                    "config": label,
                    "encode_cpu_ms": cpu_ms,
                    "topic_queries_changed": topics_changed,
                }
                for kind in ("exact", "keywords"):
                    subset = [q for q in known if q["kind"] == kind]
                    got = evaluate(subset, {q["qid"]: krun[q["qid"]] for q in subset}, (1, 10))
                    row.update({f"{kind}_{k}": v for k, v in got.items()})
                out.append(row)
                print(json.dumps(row), flush=True)
        finally:
            opened.close()
    return out


def passage_estimate(index: Path, db: Path, sample: int) -> dict[str, Any]:
    """CPU seconds per 1,000 passages at the snapshot's truncation (a spread sample of the corpus's
    passages), the whole corpus's passage count, and how many relevant topic papers have full text."""
    snap = resolve_snapshot(index)
    tokens = int(manifest(index).embedding.max_tokens or 0)
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        total = con.execute("SELECT count(*) FROM passages").fetchone()[0]
        step = max(1, total // sample)
        texts = [
            t for (t,) in con.execute("SELECT text FROM passages WHERE id % ? = 0 LIMIT ?", (step, sample))
        ]
        fulltext = {a for (a,) in con.execute("SELECT arxiv_id FROM papers WHERE has_fulltext")}
        papers = con.execute("SELECT count(*) FROM papers").fetchone()[0]
    finally:
        con.close()
    gold = SharedData.default().gold()
    relevant = [r for f in TOPIC_FILES for q in load_jsonl(gold / f) for r in q["relevant"]]
    encoder = OnnxEncoder(snap / "encoder", tokens, 64)
    cpu = time.process_time()
    encoder.encode(texts)
    per_1000 = (time.process_time() - cpu) * 1000 / len(texts)
    return {
        "tokens": tokens,
        "sample": len(texts),
        "cpu_s_per_1000": per_1000,
        "passages": total,
        "papers": papers,
        "fulltext_papers": len(fulltext),
        "relevant": len(relevant),
        "relevant_with_fulltext": sum(r in fulltext for r in relevant),
    }


def paired(base: Path, longer: Path, settings: Settings, resamples: int = 2000) -> list[dict[str, Any]]:
    """Per topic query, Recall@10/@100 of dense alone and the shipped ranking on both snapshots: the
    mean difference (longer - base) with a bootstrap 95% interval over queries (seed 0), and how many
    queries go up and down, so a gain can be told from noise."""
    gold = SharedData.default().gold()
    topics = [q for f in TOPIC_FILES for q in load_jsonl(gold / f)]
    names = ("dense only", DEFAULT_ROW)
    per: dict[tuple[str, str], list[dict[str, float]]] = {}
    for index in (base, longer):
        opened = open_index(index, settings)
        try:
            for name in names:
                mode, changes, weights = CONFIGS[name]
                backend = opened.backend.tuned(side_weights=weights, **{"prf_docs": 0, **changes})
                run = run_queries(backend, topics, mode, 100)[0]
                per[(str(index), name)] = [
                    score_query([d for d, _ in run[q["qid"]]], set(q["relevant"]), (10, 100)) for q in topics
                ]
        finally:
            opened.close()
    out = []
    for name in names:
        for metric in ("recall@10", "recall@100"):
            a = [r[metric] for r in per[(str(base), name)]]
            b = [r[metric] for r in per[(str(longer), name)]]
            diff = [y - x for x, y in zip(a, b, strict=True)]
            rng = random.Random(0)
            boots = sorted(statistics.mean(rng.choice(diff) for _ in diff) for _ in range(resamples))
            out.append(
                {
                    "config": name,
                    "metric": metric,
                    "base": statistics.mean(a),
                    "longer": statistics.mean(b),
                    "diff": statistics.mean(diff),
                    "low": boots[int(0.025 * resamples)],
                    "high": boots[int(0.975 * resamples) - 1],
                    "up": sum(d > 0 for d in diff),
                    "down": sum(d < 0 for d in diff),
                    "queries": len(diff),
                }
            )
    return out


def encode_rate(index: Path, db: Path, sample: int, tokens: list[int]) -> dict[str, Any]:
    """CPU seconds per 1,000 paper texts at each truncation: ``sample`` papers spread over the corpus,
    encoded in thirds, the truncations interleaved within one run so the load hits them alike."""
    from openxiv.indexer.encoders.embed import paper_text

    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        total = con.execute("SELECT count(*) FROM papers").fetchone()[0]
        rows = con.execute(
            "SELECT title, abstract FROM papers WHERE id % ? = 7 ORDER BY id LIMIT ?",
            (max(1, total // sample), sample),
        ).fetchall()
    finally:
        con.close()
    texts = [paper_text(t, a) for t, a in rows]
    encoders = {t: OnnxEncoder(resolve_snapshot(index) / "encoder", t, 64) for t in tokens}
    cpu = dict.fromkeys(tokens, 0.0)
    third = len(texts) // 3 + 1
    for start in range(0, len(texts), third):
        for t, encoder in encoders.items():
            began = time.process_time()
            encoder.encode(texts[start : start + third])
            cpu[t] += time.process_time() - began
    return {
        "papers": len(texts),
        "threads": int(os.environ.get("OMP_NUM_THREADS", "0") or 0) or os.cpu_count(),
        "cpu_s_per_1000": {str(t): c * 1000 / len(texts) for t, c in cpu.items()},
    }


def build_cost(index: Path) -> str:
    m = manifest(index)
    emb = m.embedding
    seconds, stages = (m.build.seconds, m.build.stages_s) if m.build is not None else (0.0, {})
    return (
        f"`{Path(index).name}`: {emb.max_tokens} tokens, encoded {emb.encoded}, reused "
        f"{emb.reused_from_cache} from the cache; build {seconds / 60:.1f} min wall, "
        f"embed_papers {stages.get('embed_papers', 0) / 60:.1f} min wall"
    )


def query_table(rows: list[dict[str, Any]]) -> str:
    head = (
        "| papers | paper vectors | query tokens | ranking | encode CPU ms/query (exact items) | topic query vectors "
        "changed | exact MRR@10 | exact S@1 | exact S@10 | keywords MRR@10 | keywords S@10 |\n"
        "|---:|---:|---:|---|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    return head + "".join(
        f"| {r['papers']:,} | {r['vectors']} | {r['query_tokens']} | {r['config']} | {r['encode_cpu_ms']:.2f} | "
        f"{r['topic_queries_changed']} | {r['exact_mrr@10']:.3f} | {r['exact_success@1']:.3f} | "
        f"{r['exact_success@10']:.3f} | {r['keywords_mrr@10']:.3f} | {r['keywords_success@10']:.3f} |\n"
        for r in rows
    )


def comparison(data: dict[str, Any], heading: bool = False) -> str:
    """One run's rows, the rule's verdict over both snapshots, the per-query differences, build costs."""
    rows = data["quality"]
    text = f"**{rows[0].get('papers', 0):,} papers.**\n\n" if heading else ""
    text += table(rows) + "\n" + verdict(rows, rows[0]["encoder"])
    if data.get("paired"):
        text += (
            "\n\nPer topic query, longer vectors against the base (mean difference, bootstrap 95% interval over "
            "the queries, queries up / down):\n\n| ranking | metric | base | longer | difference | 95% interval "
            "| up | down |\n|---|---|---:|---:|---:|---:|---:|---:|\n"
            + "".join(
                f"| {r['config']} | {r['metric']} | {r['base']:.3f} | {r['longer']:.3f} | {r['diff']:+.4f} | "
                f"[{r['low']:+.4f}, {r['high']:+.4f}] | {r['up']} | {r['down']} |\n"
                for r in data["paired"]
            )
        )
    if data.get("build"):
        text += f"\n\nBuild cost: {'; '.join(data['build'])}."
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--base", type=Path, required=True, help="index root of the shipped truncation")
    parser.add_argument("--longer", type=Path, required=True, help="index root embedded at more tokens")
    parser.add_argument("--query-tokens", type=int, nargs="*", default=[32, 64])
    parser.add_argument(
        "--parts",
        nargs="*",
        default=["quality", "paired", "query", "passages", "rate"],
        help="what to measure now (quality, paired, query, passages, rate); with --json, the other parts are "
        "read from it",
    )
    parser.add_argument("--passage-sample", type=int, default=2000, help="passages timed")
    parser.add_argument("--rate-sample", type=int, default=3000, help="papers timed at 32 and 64 tokens")
    parser.add_argument(
        "--passage-db", type=Path, help="corpus whose passages are counted (default: --base's copy)"
    )
    parser.add_argument(
        "--json", type=Path, help="JSON file of the rows: parts not measured now are read from it"
    )
    parser.add_argument("--quick", action="store_true", help="only the rows the rule needs, and dense alone")
    parser.add_argument(
        "--also",
        type=Path,
        action="append",
        default=[],
        help="--json file of another run to show after this one",
    )
    parser.add_argument("--note", default="", help="text added to the section (build cost, load)")
    parser.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    args = parser.parse_args()
    settings = Settings.from_env()
    load = os.getloadavg()
    data: dict[str, Any] = {}
    if args.json and args.json.exists():
        data = json.loads(args.json.read_text(encoding="utf-8"))
    if "quality" in args.parts:
        data["quality"] = quality_rows(args.base, args.longer, settings, QUICK if args.quick else ROWS)
        data["build"] = [build_cost(args.base), build_cost(args.longer)]
        data["load"] = [load[0], os.getloadavg()[0]]
    if "query" in args.parts:
        ready = [str(i) for i in (args.base, args.longer) if built(i)]
        data["query"] = [r for r in data.get("query", []) if r["index"] not in ready]
        data["query"] += [r for i in ready for r in query_side(Path(i), settings, args.query_tokens)]
        data["query"].sort(key=lambda r: (-r["papers"], r["vectors"], r["query_tokens"], r["config"]))
    if "passages" in args.parts:
        db = args.passage_db or resolve_snapshot(args.base) / "corpus.sqlite"
        data["passages"] = passage_estimate(args.longer, db, args.passage_sample)
    if "paired" in args.parts:
        data["paired"] = paired(args.base, args.longer, settings)
    if "rate" in args.parts:
        db = args.passage_db or resolve_snapshot(args.base) / "corpus.sqlite"
        data["rate"] = encode_rate(args.base, db, args.rate_sample, [32, 64])
    if args.json:
        args.json.write_text(json.dumps(data, indent=1) + "\n", encoding="utf-8")
    if "quality" not in data:
        return
    data.setdefault("build", [build_cost(args.base), build_cost(args.longer)])
    text = comparison(data, heading=True)
    for earlier in args.also:
        text += f"\n\n{comparison(json.loads(earlier.read_text(encoding='utf-8')), heading=True)}"
    if data.get("query"):
        text += "\n\nQuery truncation alone (each snapshot reopened with its own encoder cutting queries at "
        text += "the given length):\n\n" + query_table(data["query"])
    if data.get("passages"):
        p = data["passages"]
        full = p["cpu_s_per_1000"] * p["passages"] / 1000
        text += (
            f"\n\nPassage vectors (an estimate, not built): {p['sample']} passages encoded at {p['tokens']} "
            f"tokens took {p['cpu_s_per_1000']:.1f} CPU s per 1,000, so the corpus's {p['passages']:,} "
            f"passages need about {full / 60:.0f} CPU min ({full / 120:.0f} min on 2 idle cores). "
            f"{p['relevant_with_fulltext']} of the {p['relevant']:,} (topic query, relevant paper) pairs of the "
            f"dev sets have a full text ({p['fulltext_papers']:,} of {p['papers']:,} papers do), so passage vectors "
            "cannot add a relevant paper to any topic ranking of the dev sets."
        )
    if data.get("rate"):
        r = data["rate"]
        per = r["cpu_s_per_1000"]
        text += (
            f"\n\nEncoding cost of paper vectors ({r['papers']:,} papers of the whole corpus, both lengths in one "
            f"run, {r['threads']} ONNX threads): {per['32']:.1f} CPU s per 1,000 papers at 32 tokens, "
            f"{per['64']:.1f} at 64 ({per['64'] / per['32']:.2f}x)."
        )
    text += f"\n\n{args.note}" if args.note else ""
    print(text)
    if args.no_write:
        return
    cmd = (
        f"HF_HUB_OFFLINE=1 .venv/bin/python scripts/bench_dense_tokens.py --base {args.base} "
        f"--longer {args.longer}" + (f" --passage-db {args.passage_db}" if args.passage_db else "")
    )
    cmd += " --quick" if args.quick else ""
    cmd += "".join(f" --also {p}" for p in args.also)
    cmd += " --note '<the paragraph above>'" if args.note else ""
    loads = data.get("load", [float("nan")] * 2)
    write_section(
        SECTION,
        "The shipped rankings on two snapshots of one corpus that differ only in the truncation of the "
        "paper vectors (`OPENXIV_EMBED_MAX_TOKENS`), same dev sets as the table above, same rule. Latencies "
        "are the backend alone under the shared machine's load.\n\n"
        + text
        + f"\n\nCommand: `{cmd}` (1-minute load average {loads[0]:.1f} at the start, {loads[1]:.1f} at the end)\n",
        after=AFTER,
    )


if __name__ == "__main__":
    main()
