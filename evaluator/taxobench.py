"""Score TaxoBench submissions: gold JSONL (``id``, ``gt`` tree) against predictions (``id``,
``hierarchy_tree`` or ``tree``, optional ``retrieved_papers``). See ``docs/taxobench.md``.

Per survey: retrieval R/P/F1; leaf clustering (ARI, homogeneity, completeness, V-measure) end to end
(unretrieved gold papers in one ⊥ cluster, the public scorer's default) and on aligned papers only
(``*_aligned``, the paper's ∩ columns); US-TED, US-NTED and Sem-Path. Aggregates are macro means over
**every gold survey**: a survey without a usable prediction gets the worst value of every metric
(0 for the scores, US-NTED = 1 and US-TED = |T*|, i.e. the distance to an empty tree) and lowers
the reported coverage; it is never skipped.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openxiv.evaluator import taxobench_metrics as tm
from openxiv.evaluator.labelsim import LabelSimilarity, get_similarity
from openxiv.evaluator.report import Coverage, EvalReport
from openxiv.evaluator.taxobench_io import (
    GoldSurvey,
    PredSurvey,
    load_gold,
    load_predictions,
)
from openxiv.evaluator.titles import DEFAULT_MIN_LENGTH, DEFAULT_THRESHOLD, align_titles
from openxiv.evaluator.trees import (
    ancestor_paths,
    leaf_clusters,
    paper_titles,
    topic_count,
)

__all__ = [
    "METRICS",
    "SurveyScore",
    "evaluate_taxobench",
    "score_survey",
    "score_taxobench",
]

CLUSTER_KEYS = ("ari", "homogeneity", "completeness", "v_measure")
METRICS = [
    "recall",
    "precision",
    "f1",
    *CLUSTER_KEYS,
    *(f"{k}_aligned" for k in CLUSTER_KEYS),
    "us_ted",
    "us_nted",
    "sem_path",
]
HEADLINE = [
    "recall",
    "precision",
    "f1",
    "ari",
    "v_measure",
    "ari_aligned",
    "v_measure_aligned",
    "us_nted",
    "sem_path",
]
LOWER_IS_BETTER = frozenset({"us_ted", "us_nted"})


@dataclass
class SurveyScore:
    id: Any
    label: str
    status: str  # "scored" | "missing" | "invalid"
    values: dict[str, float]
    counts: dict[str, int] = field(default_factory=dict)
    details: dict[str, list[str]] = field(default_factory=dict)

    def row(self) -> dict[str, Any]:
        return {
            "item_id": str(self.id),
            "label": self.label,
            **self.values,
            **self.counts,
            "details": self.details,
        }


# --- scoring ------------------------------------------------------------------------------------


def _worst(gold: GoldSurvey) -> dict[str, float]:
    values = dict.fromkeys(METRICS, 0.0)
    values["us_ted"] = float(topic_count(gold.tree))  # distance to an empty tree: delete every node
    values["us_nted"] = 1.0
    return values


def _pair_text(g: str, p: str, s: float) -> str:
    return g if s == 1.0 and g == p else f"{g}  ⟷  {p}  ({s:.3f})"


def score_survey(
    gold: GoldSurvey,
    pred: PredSurvey | None,
    similarity: LabelSimilarity,
    threshold: float = DEFAULT_THRESHOLD,
    min_length: int = DEFAULT_MIN_LENGTH,
) -> SurveyScore:
    """Every TaxoBench metric for one survey (see the module docstring for missing predictions)."""
    gold_clusters = leaf_clusters(gold.tree)
    gold_titles = list(gold_clusters)
    counts = {"n_gold": len(gold_titles), "gold_topics": topic_count(gold.tree)}
    if pred is None or pred.tree is None:
        status = "missing" if pred is None else "invalid"
        flag = "no prediction for this survey" if pred is None else f"unusable prediction: {pred.error}"
        details = {"flags": [flag], "missed": gold_titles}
        return SurveyScore(gold.id, gold.label, status, _worst(gold), counts, details)

    # Retrieval: distinct gold titles vs the retrieved list (duplicates kept, they cost precision).
    retrieved = pred.retrieved if pred.retrieved is not None else paper_titles(pred.tree)
    ret_align = align_titles(gold_titles, retrieved, threshold, min_length)
    hits = len(ret_align)
    values: dict[str, float] = {}
    values["recall"] = tm.retrieval_recall(hits, len(gold_titles))
    values["precision"] = tm.retrieval_precision(hits, len(retrieved))
    values["f1"] = tm.f1_score(values["precision"], values["recall"])

    # Organisation: distinct gold titles vs distinct titles of the predicted tree.
    pred_clusters = leaf_clusters(pred.tree)
    pred_titles = list(pred_clusters)
    tree_align = align_titles(gold_titles, pred_titles, threshold, min_length)
    pred_of_gold: list[int | None] = [None] * len(gold_titles)
    for i, j, _ in tree_align:
        pred_of_gold[i] = pred_clusters[pred_titles[j]]
    y_gold = [gold_clusters[t] for t in gold_titles]
    n_pred_clusters = max(pred_clusters.values(), default=-1) + 1
    e2e = tm.clustering_scores(*tm.e2e_labels(y_gold, pred_of_gold, n_pred_clusters))
    cap = tm.clustering_scores(*tm.intersection_labels(y_gold, pred_of_gold))
    values.update(e2e)
    values.update({f"{k}_aligned": v for k, v in cap.items()})

    ted = tm.us_ted(gold.tree, pred.tree, similarity)
    values["us_ted"] = ted
    values["us_nted"] = tm.us_nted(ted, topic_count(gold.tree), topic_count(pred.tree))

    gpaths, ppaths = ancestor_paths(gold.tree), ancestor_paths(pred.tree)
    per_paper = tm.sem_path(
        [gpaths[gold_titles[i]] for i, _, _ in tree_align],
        [ppaths[pred_titles[j]] for _, j, _ in tree_align],
        similarity,
    )
    values["sem_path"] = sum(per_paper) / len(per_paper) if per_paper else 0.0

    counts.update(
        n_retrieved=len(retrieved),
        n_retrieved_distinct=len(set(retrieved)),
        hits=hits,
        n_pred_tree_papers=len(pred_titles),
        n_aligned=len(tree_align),
        pred_topics=topic_count(pred.tree),
        pred_clusters=n_pred_clusters,
    )
    matched_p = {j for _, j, _ in ret_align}
    matched_g = {i for i, _, _ in ret_align}
    flags = []
    if len(retrieved) != len(set(retrieved)):
        flags.append(
            f"{len(retrieved) - len(set(retrieved))} duplicate retrieved title(s) count against precision"
        )
    multi = [t for t, ps in gpaths.items() if len(ps) > 1] + [t for t, ps in ppaths.items() if len(ps) > 1]
    if multi:
        flags.append(f"{len(multi)} title(s) filed under several leaves (cluster = last leaf)")
    details = {
        "matched": [_pair_text(gold_titles[i], retrieved[j], s) for i, j, s in ret_align],
        "missed": [t for k, t in enumerate(gold_titles) if k not in matched_g],
        "extra": [t for k, t in enumerate(retrieved) if k not in matched_p],
        "flags": flags,
    }
    return SurveyScore(gold.id, gold.label, "scored", values, counts, details)


@dataclass
class TaxoBenchResult:
    surveys: list[SurveyScore]
    unknown_prediction_ids: list[str]
    similarity: str

    @property
    def coverage(self) -> Coverage:
        return Coverage(answered=sum(s.status == "scored" for s in self.surveys), total=len(self.surveys))

    def means(self) -> dict[str, float]:
        n = len(self.surveys)
        return {m: sum(s.values[m] for s in self.surveys) / n if n else 0.0 for m in METRICS}


def score_taxobench(
    gold_path: str | Path,
    pred_path: str | Path,
    similarity: LabelSimilarity | str | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    min_length: int = DEFAULT_MIN_LENGTH,
) -> TaxoBenchResult:
    """Score every gold survey (in gold-file order) against the predictions.

    ``similarity``: a :class:`LabelSimilarity`, ``"exact"``, or ``None``/``"minilm"`` (the paper's).
    """
    sim = get_similarity(similarity)
    gold = load_gold(gold_path)
    preds = load_predictions(pred_path)
    surveys = [score_survey(g, preds.get(k), sim, threshold, min_length) for k, g in gold.items()]
    unknown = [str(p.id) for k, p in preds.items() if k not in gold]
    return TaxoBenchResult(surveys, unknown, getattr(sim, "name", type(sim).__name__))


CONVENTIONS = {
    "title_alignment": (
        "normalised titles (lowercase, accents folded, punctuation to space, search-output noise stripped) align "
        "when equal, or when SequenceMatcher ratio >= {threshold} and one contains the other and the shorter has "
        ">= {min_length} characters; one-to-one, global best-first (score desc, then gold index, then pred index)"
    ),
    "retrieval": "P* = distinct gold-tree titles; P̂ = retrieved_papers if non-empty, else every title in the "
    "predicted tree with duplicates (duplicates lower precision); macro mean over surveys",
    "clustering": "clusters = tree nodes holding papers (a title in several leaves keeps its last); ari/homogeneity/"
    "completeness/v_measure are end to end (unaligned gold papers in one shared ⊥ cluster); *_aligned use aligned "
    "papers only; fewer than 2 samples -> 0",
    "us_ted": "paper Algorithm 2 over topic nodes only: rename 1-Sim, unmatched child subtrees deleted/inserted at "
    "their node count, children matched by Hungarian assignment; us_nted = us_ted/(|T*|+|T̂|); lower is better",
    "sem_path": "lambda = 1, root kept, paper node dropped, best (gold path, predicted path) pair, mean over aligned "
    "papers",
    "label_similarity": "{similarity}",
    "missing": "a survey without a usable prediction is scored, not skipped: 0 for every score, us_nted = 1, us_ted = "
    "|T*| (distance to an empty tree); coverage reports how many surveys were answered",
}


SIMILARITY_TEXT = {
    "all-MiniLM-L6-v2": "Sim = max(0, cos) of all-MiniLM-L6-v2 embeddings (paper eq. 38)",
    "exact": "Sim = 1 if the normalised labels are equal else 0 (exact-match similarity, not the paper's)",
}


def evaluate_taxobench(
    gold_path: str | Path,
    pred_path: str | Path,
    similarity: LabelSimilarity | str | None = None,
    seed: int = 0,
    threshold: float = DEFAULT_THRESHOLD,
    min_length: int = DEFAULT_MIN_LENGTH,
    name: str | None = None,
    n_boot: int | None = None,
) -> EvalReport:
    """Score a TaxoBench submission and build the evaluator's :class:`EvalReport`.

    Aggregates are means over all gold surveys with seeded bootstrap 95% CIs (``seed``, ``n_boot``).
    """
    from openxiv.evaluator.stats import aggregate_rows

    result = score_taxobench(gold_path, pred_path, similarity, threshold, min_length)
    rows = [s.row() for s in result.surveys]
    conventions = {
        k: v.format(
            threshold=threshold,
            min_length=min_length,
            similarity=SIMILARITY_TEXT.get(result.similarity, result.similarity),
        )
        for k, v in CONVENTIONS.items()
    }
    status = [s.status for s in result.surveys]
    return EvalReport(
        name=name or Path(pred_path).stem,
        benchmark="taxobench",
        metrics=list(METRICS),
        per_item=rows,
        aggregates=aggregate_rows(rows, METRICS, seed=seed, **({"n_boot": n_boot} if n_boot else {})),
        conventions=conventions,
        inputs={"gold": str(gold_path), "submission": str(pred_path)},
        counts={
            "gold_items": len(rows),
            "scored": status.count("scored"),
            "missing": status.count("missing"),
            "invalid": status.count("invalid"),
            "unknown_prediction_ids": len(result.unknown_prediction_ids),
        },
        coverage=result.coverage,
        headline=list(HEADLINE),
        extra={
            "lower_is_better": sorted(LOWER_IS_BETTER),
            "unknown_prediction_ids": result.unknown_prediction_ids,
            "label_similarity": result.similarity,
        },
    )
