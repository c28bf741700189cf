"""Retrieval quality of openxiv's search on the real dev query sets, configuration by configuration.

Runs the dev topic queries (Recall@10/@100, nDCG@10), the full-text known-item queries (MRR@10,
success@1/@10 per kind) and the short queries' coverage bias (`harness.coverage`) through the same backend code path the service uses, scores them with
openxiv's own evaluator (`openxiv.evaluator.ranked`), times every query, prints a table, rewrites the
``## Retrieval quality`` section of BENCHMARKS.md and draws quality against latency into
``docs/quality_vs_latency.png``.

    .venv/bin/python scripts/bench_quality.py --index data/index [--index other/index ...]

Each ``--index`` is one snapshot (one encoder); every fusion configuration runs on each. Another
snapshot built with another encoder (``openxiv index build --model model2vec:...``) adds its rows.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("HF_HUB_OFFLINE", "1")

from harness.data import SharedData

from openxiv.corpus.settings.model import Settings, repo_root
from openxiv.evaluator.ranked import score_query
from openxiv.indexer.engine.query_kind import QueryKindConfig
from openxiv.indexer.manifest import Manifest
from openxiv.indexer.snapshot import open_index

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.coverage import coverage_bias, short_queries, text_match
from harness.data import KNOWN_ITEM_FILE, TOPIC_FILES, load_jsonl
from harness.quality import (
    MRR_DROP,
    RECALL_NOISE,
    TARGET_EXACT,
    TARGET_KEYWORDS,
    evaluate,
    keeps_known_items,
    run_queries,
)
from harness.report import write_section
from harness.timing import percentile

# name -> (mode, settings changes, family weights). Weights are explicit so that the rows do not move
# when the shipped defaults (corpus/settings/model.py) change.
BM25_DENSE = {"bm25": 1.0, "dense": 1.0}
W03 = {"bm25": 1.0, "dense": 0.3}
CONFIGS: dict[str, tuple[str, dict[str, Any], dict[str, float]]] = {
    "bm25 (papers + passages)": ("bm25", {}, {}),
    "bm25 papers only": ("bm25_papers", {}, {}),
    "dense only": ("dense", {}, {}),
    "hybrid rrf 1:1": ("rrf", {"rrf_k": 60}, BM25_DENSE),
    "hybrid rrf 1:0.3": ("rrf", {"rrf_k": 60}, {"bm25": 1.0, "dense": 0.3}),
    "hybrid weighted 1:1": ("weighted", {}, BM25_DENSE),
    "hybrid weighted 1:0.5": ("weighted", {}, {"bm25": 1.0, "dense": 0.5}),
    "hybrid weighted 1:0.3": ("weighted", {}, {"bm25": 1.0, "dense": 0.3}),
    "hybrid zscore 1:0.5": ("zscore", {}, {"bm25": 1.0, "dense": 0.5}),
}
# --sweep: the neighbours of the chosen point, so the choice can be checked on both sides
SWEEP: dict[str, tuple[str, dict[str, Any], dict[str, float]]] = {
    "hybrid rrf 1:0.5": ("rrf", {"rrf_k": 60}, {"bm25": 1.0, "dense": 0.5}),
    "hybrid weighted 1:0.4": ("weighted", {}, {"bm25": 1.0, "dense": 0.4}),
    "hybrid weighted 1:0.2": ("weighted", {}, {"bm25": 1.0, "dense": 0.2}),
    "hybrid zscore 1:0.7": ("zscore", {}, {"bm25": 1.0, "dense": 0.7}),
    "hybrid weighted 1:0.5, passage scale 0.9": (
        "weighted",
        {"passage_scale": 0.9},
        {"bm25": 1.0, "dense": 0.5},
    ),
}
# pseudo-relevance feedback (openxiv.indexer.engine.prf): the feedback list's weight decides what known items
# lose; the number of feedback papers and words is chosen by --cv (2-fold over the topic queries);
# which queries keep the head of the ranking without feedback (gate, coverage, head) by the 2-fold
# cross-validation over all three query sets in docs/indexing.md
FEEDBACK = {"prf_docs": 10, "prf_terms": 20, "prf_gate": 0.0, "prf_coverage": 2.0, "prf_head": 10}
CONFIGS.update(
    {
        f"hybrid weighted 1:0.3 + feedback x{w}": ("weighted", {**FEEDBACK, "prf_weight": w}, W03)
        for w in (0.2, 0.3, 0.5)
    }
)
FB03 = {**FEEDBACK, "prf_weight": 0.3}
CONFIGS["hybrid weighted 1:0.3 + feedback x0.3, none when ratio >= 1.4 (round 1)"] = (
    "weighted",
    {**FB03, "prf_gate": 1.4, "prf_head": 1_000_000},
    W03,
)
CONFIGS["hybrid weighted 1:0.3 + feedback x0.3, head 10 kept when ratio >= 1.2 or coverage >= 0.6"] = (
    "weighted",
    {**FB03, "prf_gate": 1.2, "prf_coverage": 0.6},
    W03,
)
CONFIGS["hybrid weighted 1:0.3 + feedback x0.3 below the first 5"] = (
    "weighted",
    {**FB03, "prf_gate": 1.0, "prf_head": 5},
    W03,
)
CONFIGS["hybrid weighted 1:0.3 + feedback x0.3 below the first 10"] = (
    "weighted",
    {**FB03, "prf_gate": 1.0, "prf_coverage": 0.6},
    W03,
)
# category prior (openxiv.indexer.engine.prior): its papers and boost chosen by 2-fold cross-validation
# (scripts/bench_prior.py); below the same kept first 10 places, so known items cannot move
PRIOR = {"prior_docs": 50, "prior_weight": 2.0, "prior_head": 10}
CONFIGS["hybrid weighted 1:0.3 + category prior (no feedback)"] = ("weighted", PRIOR, W03)
CONFIGS["hybrid weighted 1:0.3 + feedback x0.3 below the first 10 + category prior"] = (
    "weighted",
    {**FB03, "prf_gate": 1.0, "prf_coverage": 0.6, **PRIOR},
    W03,
)
# issue 26: topic queries (openxiv.indexer.engine.query_kind) let feedback and the prior reorder their first page
KIND = {"kind_ratio": 2.0, "kind_coverage": 0.8, "kind_max_words": 12, "kind_dense": 0.65}
CONFIGS[
    "hybrid weighted 1:0.3 + feedback x0.3 below the first 10 + category prior, first page free for topics"
] = (
    "weighted",
    {**FB03, "prf_gate": 1.0, "prf_coverage": 0.6, **PRIOR, **KIND},
    W03,
)
# the same with the thresholds chosen for the encoder tuned on the corpus (docs/embeddings.md), its default
KIND_TUNED = {**KIND, "kind_max_words": 16, "kind_dense": 0.55}
CONFIGS[
    "hybrid weighted 1:0.3 + feedback x0.3 below the first 10 + category prior, first page free for topics "
    "(words<=16, dense10>=0.55)"
] = (
    "weighted",
    {**FB03, "prf_gate": 1.0, "prf_coverage": 0.6, **PRIOR, **KIND_TUNED},
    W03,
)
SWEEP["hybrid zscore 1:0.5 + feedback x0.3"] = (
    "zscore",
    {**FB03, "prf_gate": 1.0, "prf_coverage": 0.6},
    {"bm25": 1.0, "dense": 0.5},
)
CV_GRID = [{"prf_docs": d, "prf_terms": t} for d in (5, 10, 20) for t in (10, 20, 40)]
DENSE_MODES = ("dense", "rrf", "weighted", "zscore")
CEILING_DEPTHS = (100, 300, 1000)


def ceiling(index_dir: Path, settings: Settings) -> str:
    """Topic recall at growing depths for BM25 on paper text and for the shipped ranking: how many
    relevant papers are among the candidates at all, against how many reach the top 100."""
    topics = [q for f in TOPIC_FILES for q in load_jsonl(SharedData.default().gold(f))]
    depth = max(CEILING_DEPTHS)
    opened = open_index(index_dir, settings)
    parts = []
    try:
        for label, mode in (("BM25 on paper text", "bm25_papers"), ("the shipped ranking", None)):
            got = evaluate(topics, run_queries(opened.backend, topics, mode, depth)[0], CEILING_DEPTHS)
            recalls = " / ".join(f"{got[f'recall@{k}']:.3f}" for k in CEILING_DEPTHS)
            parts.append(f"{label} {recalls}")
    finally:
        opened.close()
    return (
        f"Topic Recall@{' / @'.join(map(str, CEILING_DEPTHS))} on the first index: " + "; ".join(parts) + "."
    )


def cross_validate(index_dir: Path, settings: Settings, weight: float) -> str:
    """Feedback papers and words (`CV_GRID`) chosen honestly: 2-fold cross-validation over the topic
    queries (even / odd positions), each fold's setting picked by the other fold's Recall@100, so no
    query scores the setting it chose. Known items do not enter: the grid leaves their rule to the
    feedback weight (`CONFIGS`)."""
    topics = [q for f in TOPIC_FILES for q in load_jsonl(SharedData.default().gold(f))]
    opened = open_index(index_dir, settings)
    recall: dict[str, list[float]] = {}
    try:
        for changes in [{"prf_docs": 0}, *CV_GRID]:
            backend = opened.backend.tuned(side_weights=W03, prf_weight=weight, **changes)
            run = run_queries(backend, topics, "weighted", 100)[0]
            name = (
                "no feedback" if not changes["prf_docs"] else f"{changes['prf_docs']}/{changes['prf_terms']}"
            )
            recall[name] = [
                score_query([d for d, _ in run[q["qid"]]], set(q["relevant"]), (100,))["recall@100"]
                for q in topics
            ]
    finally:
        opened.close()
    folds = [list(range(0, len(topics), 2)), list(range(1, len(topics), 2))]
    held_out: list[float] = []
    picks = []
    for train, test in (folds, folds[::-1]):
        pick = max(recall, key=lambda n: (statistics.mean(recall[n][i] for i in train), n))
        picks.append(pick)
        held_out += [recall[pick][i] for i in test]
    cells = " · ".join(f"{n} {statistics.mean(v):.3f}" for n, v in recall.items())
    return (
        f"Feedback papers/words by 2-fold cross-validation over the topic queries (weighted 1:0.3, feedback "
        f"x{weight}, gate {settings.prf_gate}, category prior {settings.prior_docs} papers x{settings.prior_weight}; "
        f"topic R@100 of every setting on all queries: {cells}). Picked on each fold: "
        f"{' and '.join(picks)}; held-out topic R@100 {statistics.mean(held_out):.3f} against "
        f"{statistics.mean(recall['no feedback']):.3f} without feedback."
    )


def feedback_cost(index_dir: Path, settings: Settings) -> str:
    """What pseudo-relevance feedback adds: the one-off transpose and the per-query expansion plus
    second sparse sum (`feedback_list`, gate off), on the dev topic queries."""
    from openxiv.indexer.engine.doc_terms import DocTerms
    from openxiv.indexer.engine.prf import FeedbackConfig, feedback_list

    topics = [q for f in TOPIC_FILES for q in load_jsonl(SharedData.default().gold(f))]
    opened = open_index(index_dir, settings)
    try:
        papers = opened.backend.bm25_papers
        t = time.perf_counter()
        terms = DocTerms(papers)
        transpose = time.perf_counter() - t
        config = FeedbackConfig(settings.prf_docs or 10, settings.prf_terms, settings.prf_weight, gate=0.0)
        scores = [papers.scores(papers.query_tokens(q["query"])) for q in topics]
        feedback_list(terms, scores[0], config, settings.candidates)  # compile
        ms = []
        for s in scores:
            t = time.perf_counter()
            feedback_list(terms, s, config, settings.candidates)
            ms.append((time.perf_counter() - t) * 1000)
    finally:
        opened.close()
    return (
        f"Feedback cost: transpose {transpose:.2f} s once; per topic query p50 {percentile(ms, 50):.2f} ms, "
        f"p95 {percentile(ms, 95):.2f} ms (1-minute load average {os.getloadavg()[0]:.1f})."
    )


def measure(index_dir: Path, settings: Settings, configs: dict[str, Any]) -> list[dict[str, Any]]:
    gold = SharedData.default().gold()
    topics = [q for f in TOPIC_FILES for q in load_jsonl(gold / f)]
    known = load_jsonl(gold / KNOWN_ITEM_FILE)
    opened = open_index(index_dir, settings)
    rows = []
    try:
        base = opened.backend
        shorts = short_queries(gold)
        match = text_match(opened, [sq.query for sq in shorts])
        emb = opened.manifest.embedding
        encoder = f"{encoder_label(emb.model)}@{emb.max_tokens}" if emb.model else "none"
        own_kind = getattr(base.encoder, "description", {}).get("query_kind")
        base.search("warm up the encoder and the numba kernels", top_k=10)
        for name, (mode, row_changes, weights) in configs.items():
            if mode in DENSE_MODES and "dense_papers" not in base.sides:
                continue
            changes = {
                "prf_docs": 0,
                "prior_docs": 0,
                "kind_ratio": 0.0,
                **row_changes,
            }  # no feedback, no prior, every first page kept unless the row says so
            backend = base.tuned(side_weights=weights, **changes)
            try:
                trun, tlat = run_queries(backend, topics, mode, 100)
            except ValueError as exc:  # e.g. dense mode on an index built without vectors
                print(f"skip {name}: {exc}")
                continue
            topic = evaluate(topics, trun, (10, 100))
            krun, klat = run_queries(backend, known, mode, 10)
            per_kind = {}
            for kind in ("exact", "keywords"):
                subset = [q for q in known if q["kind"] == kind]
                per_kind[kind] = evaluate(subset, {q["qid"]: krun[q["qid"]] for q in subset}, (1, 10))
            lat = tlat + klat
            bias = coverage_bias(backend, shorts, match, mode)  # issue 37: fair to mixed coverage
            row = {
                "index": str(index_dir),
                "encoder": encoder,
                "config": name + (" (default)" if shipped(mode, changes, weights, encoder, own_kind) else ""),
                "topic_recall@10": topic["recall@10"],
                "topic_recall@100": topic["recall@100"],
                "topic_ndcg@10": topic["ndcg@10"],
                "exact_mrr@10": per_kind["exact"]["mrr@10"],
                "exact_success@1": per_kind["exact"]["success@1"],
                "exact_success@10": per_kind["exact"]["success@10"],
                "kw_mrr@10": per_kind["keywords"]["mrr@10"],
                "kw_success@1": per_kind["keywords"]["success@1"],
                "kw_success@10": per_kind["keywords"]["success@10"],
                "coverage_bias": bias["ratio"],
                "coverage_bias_index": bias["index"]["ratio"],
                "coverage_bias_opening": bias["opening"]["ratio"],
                "p50_ms": percentile(lat, 50),
                "p95_ms": percentile(lat, 95),
                "build_s": _build_seconds(opened.manifest),
                "vectors_cached": _vectors_cached(opened.manifest),
            }
            rows.append(row)
            print(json.dumps(row))
    finally:
        opened.close()
    return rows


def encoder_label(model: str) -> str:
    """The encoder as a row names it: a packaged model by its name, a model in a local directory
    (e.g. one `scripts/train_encoder.py` wrote) by its last two path parts, not this machine's path."""
    prefix, sep, name = model.rpartition(":")
    if "/" in name and Path(name).is_absolute():
        name = "<" + "/".join(Path(name).parts[-2:]) + ">"
    return f"{prefix}{sep}{name}"


def default_encoder() -> str:
    s = Settings.from_env()
    return f"{s.model}@{s.embed_max_tokens}"


def shipped(
    mode: str, changes: dict[str, Any], weights: dict[str, float], encoder: str, own_kind: Any = None
) -> bool:
    """Whether this row runs the ranking a default install serves (built-in Settings, no environment;
    the query-kind thresholds left unset are the encoder's own, ``own_kind``)."""
    s = Settings.from_env()
    kind = QueryKindConfig.of(s, own_kind)
    values = {**dict(s), "kind_max_words": kind.max_words, "kind_dense": kind.dense}
    return (
        encoder == default_encoder()
        and mode == s.fusion
        and all(k in values and values[k] == v for k, v in changes.items())
        and weights.get("bm25", s.weight_bm25) == s.weight_bm25
        and weights.get("dense", s.weight_dense) == s.weight_dense
    )


def _build_seconds(manifest: Manifest) -> float | None:
    return None if manifest.build is None else float(manifest.build.seconds)


def _vectors_cached(manifest: Manifest) -> bool:
    """True when the build encoded nothing: its time excludes embedding."""
    return bool(manifest.embedding.reused_from_cache) and not manifest.embedding.encoded


def _minutes(seconds: float | None, cached: bool = False) -> str:
    if seconds is None:
        return ""
    return f"{seconds / 60:.1f}" + (" (vectors from cache)" if cached else "")


def table(rows: list[dict[str, Any]]) -> str:
    head = (
        "| encoder | configuration | topic R@10 | topic R@100 | topic nDCG@10 | exact MRR@10 | exact S@1 | "
        "exact S@10 | keywords MRR@10 | keywords S@1 | keywords S@10 | coverage bias | coverage bias (index match) "
        "| coverage bias (opening) | p50 ms | p95 ms | index build min |\n"
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n"
    )
    body = "".join(
        f"| {r['encoder']} | {r['config']} | {r['topic_recall@10']:.3f} | {r['topic_recall@100']:.3f} | "
        f"{r['topic_ndcg@10']:.3f} | {r['exact_mrr@10']:.3f} | {r['exact_success@1']:.3f} | "
        f"{r['exact_success@10']:.3f} | {r['kw_mrr@10']:.3f} | {r['kw_success@1']:.3f} | "
        f"{r['kw_success@10']:.3f} | {_bias(r)} | {_bias(r, 'coverage_bias_index')} | "
        f"{_bias(r, 'coverage_bias_opening')} | {r['p50_ms']:.1f} | {r['p95_ms']:.1f} | "
        f"{_minutes(r['build_s'], r.get('vectors_cached', False))} |\n"
        for r in rows
    )
    return head + body


KEY_INDEX = "coverage_bias_index"


def _bias(row: dict[str, Any], key: str = "coverage_bias") -> str:
    """The row's coverage bias (`harness.coverage`; ``key`` ``coverage_bias``: the issue's match,
    ``coverage_bias_index``: the index's looser match, ``coverage_bias_opening``: the papers' openings;
    rows of a JSON file written before it: blank)."""
    return f"{row[key]:.2f}" if row.get(key) is not None else ""


def plot(rows: list[dict[str, Any]], out: Path) -> None:
    """Two panels against median latency: topic Recall@100 and known-item keywords success@10.

    Colour = configuration, marker = encoder, legend outside the axes (labels on the points collide).
    """
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    configs = list(dict.fromkeys(r["config"] for r in rows))
    encoders = list(dict.fromkeys(r["encoder"] for r in rows))
    colours = {c: plt.get_cmap("tab10")(i % 10) for i, c in enumerate(configs)}
    markers = {e: "osD^v"[i % 5] for i, e in enumerate(encoders)}
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.8))
    panels = (
        ("topic_recall@100", "topic Recall@100 (103 dev queries)"),
        ("kw_success@10", "known-item keywords success@10"),
    )
    for ax, (key, label) in zip(axes, panels, strict=True):
        for r in rows:
            ax.scatter(r["p50_ms"], r[key], s=55, color=colours[r["config"]], marker=markers[r["encoder"]])
        ax.set_xlabel("median query latency, ms (backend, one thread)")
        ax.set_ylabel(label)
        ax.grid(alpha=0.3)
    handles = [plt.Line2D([], [], color=colours[c], marker="o", linestyle="", label=c) for c in configs]
    handles += [
        plt.Line2D([], [], color="black", markerfacecolor="none", marker=markers[e], linestyle="", label=e)
        for e in encoders
    ]
    fig.legend(handles=handles, loc="center right", fontsize=8, frameon=False)
    fig.suptitle("openxiv retrieval quality against latency (dev sets, whole shared corpus)")
    fig.tight_layout(rect=(0, 0, 0.75, 1))
    out.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(out, dpi=110)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", action="append", type=Path, required=True, help="index root or snapshot")
    parser.add_argument("--no-write", action="store_true", help="print only; leave BENCHMARKS.md alone")
    parser.add_argument("--replot", type=Path, help="redraw the plot from a --json file of an earlier run")
    parser.add_argument("--json", type=Path, help="also write the rows to this JSON file")
    parser.add_argument("--sweep", action="store_true", help="also run the neighbouring configurations")
    parser.add_argument(
        "--feedback-cost", action="store_true", help="only time pseudo-relevance feedback itself, then exit"
    )
    parser.add_argument(
        "--cv", action="store_true", help="choose feedback papers/words by cross-validation (topic queries)"
    )
    parser.add_argument(
        "--only",
        action="append",
        metavar="TEXT",
        help="run only the configurations whose name contains TEXT (repeatable), e.g. the rows an encoder rule reads",
    )
    parser.add_argument(
        "--section",
        default=SECTION,
        help=f"BENCHMARKS.md section to write (another than «{SECTION}»: placed after it, no plot)",
    )
    args = parser.parse_args()
    load = os.getloadavg()
    if args.feedback_cost:
        print(feedback_cost(args.index[0], Settings.from_env()))
        return
    if args.replot:
        rows = json.loads(args.replot.read_text(encoding="utf-8"))
    else:
        settings = Settings.from_env()
        configs = {**CONFIGS, **(SWEEP if args.sweep else {})}
        if args.only:
            configs = {k: v for k, v in configs.items() if any(t in k for t in args.only)}
            if not configs:
                parser.error(f"--only: no configuration name contains {args.only}")
        rows = []
        for index_dir in args.index:
            # BM25 rows do not depend on the encoder: keep them once (from the first index)
            done = {r["config"] for r in rows if r["config"].startswith("bm25")}
            rows += measure(index_dir, settings, {k: v for k, v in configs.items() if k not in done})
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n", encoding="utf-8")
    text = table(rows)
    verdict = choose(rows)
    if len({r["encoder"] for r in rows if not r["config"].startswith("bm25")}) > 1:
        verdict += "\n\n" + encoder_verdict(rows)
    if not args.replot:
        verdict += "\n\n" + ceiling(args.index[0], Settings.from_env())
    if args.cv and not args.replot:
        verdict += "\n\n" + cross_validate(args.index[0], Settings.from_env(), 0.3)
    print(text + "\n" + verdict)
    if args.no_write:
        return
    cmd = "HF_HUB_OFFLINE=1 .venv/bin/python scripts/bench_quality.py " + " ".join(
        f"--index {p}" for p in args.index
    )
    cmd += " --sweep" if args.sweep else ""
    cmd += " --cv" if args.cv else ""
    cmd += "".join(f' --only "{t}"' for t in args.only or [])
    cmd += f" --replot {args.replot.name}" if args.replot else ""
    cmd += f' --section "{args.section}"' if args.section != SECTION else ""
    if args.section == SECTION:
        plot(rows, repo_root() / "docs" / "quality_vs_latency.png")
    write_section(
        args.section,
        "Dev query sets from `../shared/gold`: 103 topic queries (labels incomplete, so recall is the headline) "
        "and 600 full-text known-item queries (300 `exact` sentences, 300 `keywords` bags), whole shared "
        "corpus (101,029 papers, 282,233 passages). Latency is the backend alone, one query at a time on "
        "one thread; service overhead is in the service section. `coverage bias` (issue 37, "
        "scripts/harness/coverage.py): on the short dev queries (2–5 words, derived from the dev topic sets, and "
        "the issue's examples), the full-text share of the first 10 hits over their share among the papers "
        "whose text (title, abstract, full text) holds every query word, the issue's measure (1: having a full "
        "text gives no advantage by itself); `(index match)` counts a paper as matching when its title + "
        "abstract or its passages together hold every word as the index stems it (looser: more full texts). `index build min` is the whole "
        "`openxiv index build` of that snapshot (ingest not included), embedding included unless the cell says the vectors came from the cache (the fresh default build is in the Index build section).\n\n"
        + text
        + "\n"
        + verdict
        + ("\n\n![quality against latency](docs/quality_vs_latency.png)" if args.section == SECTION else "")
        + "\n\nCommand: `"
        + cmd
        + f"` (1-minute load average {load[0]:.1f} at the start, {os.getloadavg()[0]:.1f} at the end: "
        "latencies grow with it)\n",
        after=SECTION,
    )


SECTION = "Retrieval quality"
NO_FEEDBACK = "hybrid weighted 1:0.3"


def choose(rows: list[dict[str, Any]]) -> str:
    """The rule that picks the shipped ranking, fixed before the second round of issue 14 measured
    anything: the most topic Recall@100 among hybrid configurations on the default encoder's index
    that keep the known items with a margin (success@10 exact >= `TARGET_EXACT`, keywords >=
    `TARGET_KEYWORDS`, MRR@10 of each kind at most `MRR_DROP` below the `NO_FEEDBACK` row); among
    rows within `RECALL_NOISE` of that recall, the best keywords MRR@10."""
    encoder = default_encoder()
    base = next((r for r in rows if r["config"].startswith("bm25 (papers")), None)
    candidates = [r for r in rows if r["encoder"] == encoder and r["config"].startswith("hybrid")]
    plain = next((r for r in candidates if r["config"].removesuffix(" (default)") == NO_FEEDBACK), None)
    if base is None or plain is None:
        return "(no BM25 row or no feedback-free hybrid row on the default encoder's index: nothing to choose from)"
    ok = [r for r in candidates if keeps_known_items(r, plain)]
    if not ok:
        return "No hybrid configuration keeps the known-item targets on the default encoder."
    top = max(r["topic_recall@100"] for r in ok)
    near = [r for r in ok if r["topic_recall@100"] >= top - RECALL_NOISE]
    best = max(
        near, key=lambda r: (round(r["kw_mrr@10"], 6), round(r["exact_mrr@10"], 6), r["topic_recall@100"])
    )
    dense = next((r for r in rows if r["encoder"] == encoder and r["config"] == "dense only"), None)
    beats = best["topic_recall@100"] > base["topic_recall@100"] and (
        dense is None or best["topic_recall@100"] > dense["topic_recall@100"]
    )
    return (
        f"Rule: the most topic Recall@100 among hybrid rows on the default encoder ({encoder}) that keep "
        f"the known items with a margin (success@10 exact >= {TARGET_EXACT}, keywords >= {TARGET_KEYWORDS}; "
        f"MRR@10 of each kind at most {MRR_DROP} below `{NO_FEEDBACK}`); among rows within {RECALL_NOISE} "
        "of that recall, the best keywords MRR@10. "
        f"Chosen: **{best['config']}** (topic R@100 "
        f"{best['topic_recall@100']:.3f} against {base['topic_recall@100']:.3f} for BM25 and "
        f"{dense['topic_recall@100'] if dense else float('nan'):.3f} for dense alone; "
        f"{'beats both' if beats else 'does NOT beat both'}). "
        + (
            "It is the shipped default (corpus/settings/model.py)."
            if best["config"].endswith(" (default)")
            else "It is NOT the shipped default: change corpus/settings/model.py or say why not."
        )
    )


def encoder_verdict(rows: list[dict[str, Any]]) -> str:
    """The rule that decides whether another encoder replaces the shipped one (issue 26), on the
    shipped ranking (the ``(default)`` row's configuration) of each encoder's index: it must keep the
    known-item floors (`TARGET_EXACT`, `TARGET_KEYWORDS`) and lose at most `MRR_DROP` MRR@10 of each
    kind against the shipped encoder, and find more topic Recall@100; within `RECALL_NOISE` of the
    shipped encoder's recall, the better keywords MRR@10 decides and a tie keeps the shipped one."""
    shipped_row = next((r for r in rows if r["config"].endswith(" (default)")), None)
    if shipped_row is None:
        return "(no row of the shipped ranking on the default encoder: no encoder to compare against)"
    config = shipped_row["config"].removesuffix(" (default)")
    lines = []
    for r in rows:
        if r["config"] != config or r["encoder"] == shipped_row["encoder"]:
            continue
        keeps = keeps_known_items(r, shipped_row)
        gain = r["topic_recall@100"] - shipped_row["topic_recall@100"]
        wins = keeps and (
            gain > RECALL_NOISE
            or (gain >= -RECALL_NOISE and round(r["kw_mrr@10"], 6) > round(shipped_row["kw_mrr@10"], 6))
        )
        lines.append(
            f"- **{r['encoder']}**: topic R@100 {r['topic_recall@100']:.3f} against "
            f"{shipped_row['topic_recall@100']:.3f} ({gain:+.3f}), R@10 {r['topic_recall@10']:.3f} against "
            f"{shipped_row['topic_recall@10']:.3f}; keywords MRR@10 {r['kw_mrr@10']:.4f} against "
            f"{shipped_row['kw_mrr@10']:.4f}, exact MRR@10 {r['exact_mrr@10']:.4f} against "
            f"{shipped_row['exact_mrr@10']:.4f}; known-item floors {'kept' if keeps else 'NOT kept'}: "
            + ("**replaces the shipped encoder**." if wins else "the shipped encoder stays.")
        )
    return (
        f"Encoder rule, on the shipped ranking ({config}; the query-kind thresholds are the shipped "
        "encoder's, `scripts/bench_query_kind.py` chooses an encoder's own): another encoder replaces "
        f"{shipped_row['encoder']} when it keeps the known-item floors and loses at most {MRR_DROP} MRR@10 "
        f"per kind, and finds more topic Recall@100 by over {RECALL_NOISE}; within {RECALL_NOISE}, the "
        "better keywords MRR@10 decides (a tie keeps the shipped encoder).\n\n" + "\n".join(lines)
    )


if __name__ == "__main__":
    main()
