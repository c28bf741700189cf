"""The evaluator's result object (`EvalReport`) and its terminal / JSON / Markdown renderings.

NOTE FOR THE TAXOBENCH ENGINEER (part B): ``evaluate_taxobench(...)`` returns an `EvalReport`.
Build it like this and every renderer (terminal table, JSON, Markdown, self-contained HTML) works::

    from openxiv.evaluator.report import EvalReport
    from openxiv.evaluator.stats import aggregate_rows

    rows = [{"item_id": "1", "label": "survey title", "recall": 0.5, "ari": 0.3, ...,
             "details": {"matched": [...], "missed": [...], "extra": [...]}}, ...]
    metrics = ["recall", "precision", "f1", "ari", ...]          # per-item metric columns, in order
    report = EvalReport(
        name="taxobench", benchmark="taxobench",
        metrics=metrics, per_item=rows,
        aggregates=aggregate_rows(rows, metrics, seed=seed),     # mean + bootstrap 95% CI per metric
        conventions={"alignment": "...", "missing": "missing survey scores 0"},
        inputs={"gold": str(gold_path), "submission": str(pred_path)},
        counts={"gold_items": 5, "scored": 5}, coverage=Coverage(answered=5, total=5),
    )

Per-item rows are plain dicts: ``item_id`` (str) is required, ``label`` is shown in tables, every name in
``metrics`` maps to a float or ``None`` (undefined for that item), and an optional ``details`` dict holds
lists such as ``matched`` / ``missed`` / ``extra`` / ``flags`` that the HTML report shows per item.
``extra`` (report level) is free-form JSON for benchmark-specific blocks. Comparisons of two
submissions (``comparison``) are filled in by the CLI through `openxiv.evaluator.stats.compare_rows`.
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Any

from openxiv.evaluator.gcpause import gc_paused

__all__ = [
    "Aggregate",
    "Comparison",
    "ComparisonRow",
    "Coverage",
    "EvalReport",
    "aggregate_rows",
    "render_markdown",
    "render_terminal",
    "write_json",
]


@dataclass
class Aggregate:
    """Mean of one metric over ``n`` items with its percentile-bootstrap 95% CI."""

    value: float | None
    ci_low: float | None = None
    ci_high: float | None = None
    n: int = 0


@dataclass
class Coverage:
    """How many gold items the submission answered; unanswered items are scored, not skipped."""

    answered: int
    total: int

    @property
    def fraction(self) -> float:
        return self.answered / self.total if self.total else 1.0


@dataclass
class ComparisonRow:
    """System A (the submission) against system B (``--compare``) on one metric, paired by item."""

    metric: str
    mean_a: float
    mean_b: float
    diff: float  # mean_a - mean_b
    ci_low: float  # paired bootstrap 95% CI of the difference
    ci_high: float
    p_randomization: float  # paired sign-flip randomization test, two-sided, (count+1)/(B+1)
    p_bootstrap: float  # paired bootstrap test, two-sided
    p_holm: float  # p_randomization after Holm correction across the compared metrics
    wins: int  # items where A > B
    ties: int
    losses: int
    n: int


@dataclass
class Comparison:
    name_a: str
    name_b: str
    rows: list[ComparisonRow]
    n_resamples: int
    seed: int
    notes: str = ""


@dataclass
class EvalReport:
    name: str
    benchmark: str
    metrics: list[str]
    per_item: list[dict[str, Any]]
    aggregates: dict[str, Aggregate]
    conventions: dict[str, str] = field(default_factory=dict)
    inputs: dict[str, str] = field(default_factory=dict)
    counts: dict[str, Any] = field(default_factory=dict)
    coverage: Coverage | None = None
    breakdowns: dict[str, dict[str, dict[str, Aggregate]]] = field(default_factory=dict)
    comparison: Comparison | None = None
    headline: list[str] = field(default_factory=list)  # metrics shown first / in the terminal table
    extra: dict[str, Any] = field(default_factory=dict)

    def shown_metrics(self) -> list[str]:
        return self.headline or self.metrics

    @gc_paused()
    def to_dict(self) -> dict[str, Any]:
        # Field by field: dataclasses.asdict would deep-copy every per-item row first.
        d: dict[str, Any] = {f.name: getattr(self, f.name) for f in fields(self)}
        d["aggregates"] = {m: asdict(a) for m, a in self.aggregates.items()}
        d["breakdowns"] = {
            by: {g: {m: asdict(a) for m, a in aggs.items()} for g, aggs in groups.items()}
            for by, groups in self.breakdowns.items()
        }
        if self.coverage is not None:
            d["coverage"] = {**asdict(self.coverage), "fraction": self.coverage.fraction}
        if self.comparison is not None:
            d["comparison"] = asdict(self.comparison)
        out: dict[str, Any] = _clean(d)
        return out


_PLAIN = frozenset({str, int, bool, type(None)})


def _clean(obj: Any) -> Any:
    """JSON-safe copy: NaN/inf become None, tuples become lists, paths become strings.

    Dispatches on the exact type first: a 10,000-item report holds over a million values, nearly all
    plain strings, ints and finite floats in dicts and lists.
    """
    t = type(obj)
    if t in _PLAIN:
        return obj
    if t is float:
        return obj if math.isfinite(obj) else None
    if t is dict:
        return {
            k if type(k) is str else str(k): v if type(v) in _PLAIN else _clean(v) for k, v in obj.items()
        }
    if t is list or t is tuple:
        return [v if type(v) in _PLAIN else _clean(v) for v in obj]
    return _clean_other(obj)


def _clean_other(obj: Any) -> Any:
    if isinstance(obj, str | bool | int) or obj is None:  # subclasses of the plain types
        return obj
    if isinstance(obj, float):
        return obj if math.isfinite(obj) else None
    if isinstance(obj, dict):
        return {k if isinstance(k, str) else str(k): _clean(v) for k, v in obj.items()}
    if isinstance(obj, list | tuple | set):
        return [_clean(v) for v in obj]
    if isinstance(obj, Path):
        return str(obj)
    if hasattr(obj, "item") and callable(obj.item):  # numpy scalar
        return _clean(obj.item())
    return obj


@gc_paused()
def write_json(report: EvalReport, path: str | Path, indent: int | None = None) -> None:
    """Write ``report.to_dict()``; indented up to 2,000 items, compact beyond (json's C encoder is faster: docs/evaluator.md, «Speed»)."""
    if indent is None and len(report.per_item) <= 2000:
        indent = 2
    # to_dict() is a fresh tree (its walk would not end on a cycle), so the encoder need not look for one.
    text = json.dumps(report.to_dict(), indent=indent, ensure_ascii=False, check_circular=False)
    Path(path).write_text(text + "\n", encoding="utf-8")


def fmt(v: Any, digits: int = 4) -> str:
    if v is None:
        return "–"
    if isinstance(v, bool):
        return str(v)
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        return "nan" if math.isnan(v) else f"{v:.{digits}f}"
    return str(v)


def aggregate_rows(report: EvalReport) -> list[list[str]]:
    """Metric, mean, 95% CI and n per shown metric: the aggregates table of every report format."""
    rows = []
    for m in report.shown_metrics():
        a = report.aggregates.get(m)
        if a is None:
            continue
        ci = f"[{fmt(a.ci_low)}, {fmt(a.ci_high)}]" if a.ci_low is not None else ""
        rows.append([m, fmt(a.value), ci, str(a.n)])
    return rows


def _table(header: list[str], rows: list[list[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h) for i, h in enumerate(header)]
    line = "  ".join(h.ljust(w) for h, w in zip(header, widths, strict=True))
    out = [line, "  ".join("-" * w for w in widths)]
    out += ["  ".join(c.ljust(w) for c, w in zip(r, widths, strict=True)) for r in rows]
    return "\n".join(out)


def render_terminal(report: EvalReport) -> str:
    """Plain-text summary: aggregates with CIs, coverage, breakdowns and the comparison."""
    parts = [f"{report.name}  ({report.benchmark})"]
    if report.coverage is not None:
        c = report.coverage
        parts.append(f"coverage: {c.answered}/{c.total} gold items answered ({c.fraction:.1%})")
    if "judge" in report.conventions:  # judged metrics: who judged, or why nothing was
        parts.append(f"judge: {report.conventions['judge']}")
    parts.append(_table(["metric", "mean", "95% CI", "n"], aggregate_rows(report)))
    for by, groups in report.breakdowns.items():
        shown = [m for m in report.shown_metrics() if any(m in g for g in groups.values())][:6]
        rows = [[g, *(fmt(groups[g][m].value) if m in groups[g] else "–" for m in shown)] for g in groups]
        parts.append(f"by {by}:\n" + _table([by, *shown], rows))
    if report.comparison is not None:
        parts.append(_comparison_text(report.comparison))
    return "\n\n".join(parts)


def _comparison_rows(comp: Comparison) -> list[list[str]]:
    return [
        [
            r.metric,
            fmt(r.mean_a),
            fmt(r.mean_b),
            fmt(r.diff),
            f"[{fmt(r.ci_low)}, {fmt(r.ci_high)}]",
            fmt(r.p_randomization),
            fmt(r.p_holm),
            f"{r.wins}/{r.ties}/{r.losses}",
        ]
        for r in comp.rows
    ]


_COMP_HEADER = ["metric", "A", "B", "A-B", "95% CI (A-B)", "p (rand.)", "p (Holm)", "win/tie/loss"]


def _comparison_text(comp: Comparison) -> str:
    head = (
        f"A = {comp.name_a}  vs  B = {comp.name_b}  (paired, {comp.n_resamples} resamples, seed {comp.seed})"
    )
    return head + "\n" + _table(_COMP_HEADER, _comparison_rows(comp))


def _md_table(header: list[str], rows: list[list[str]]) -> str:
    esc = [[c.replace("|", "\\|") for c in r] for r in rows]
    out = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    out += ["| " + " | ".join(r) + " |" for r in esc]
    return "\n".join(out)


@gc_paused()
def render_markdown(report: EvalReport, max_items: int = 500) -> str:
    """Markdown report: aggregates, coverage, conventions, breakdowns, comparison, per-item table."""
    out = [f"# {report.name}", "", f"Benchmark: `{report.benchmark}`", ""]
    if report.inputs:
        out += [f"- {k}: `{v}`" for k, v in report.inputs.items()] + [""]
    if report.coverage is not None:
        c = report.coverage
        out += [f"Coverage: **{c.answered}/{c.total}** gold items answered ({c.fraction:.1%}).", ""]
    out += ["## Aggregates", "", _md_table(["metric", "mean", "95% CI", "n"], aggregate_rows(report)), ""]
    if report.counts:
        out += [
            "## Counts",
            "",
            _md_table(["count", "value"], [[k, fmt(v)] for k, v in report.counts.items()]),
            "",
        ]
    for by, groups in report.breakdowns.items():
        shown = [m for m in report.shown_metrics() if any(m in g for g in groups.values())]
        rows = [[g, *(fmt(groups[g][m].value) if m in groups[g] else "–" for m in shown)] for g in groups]
        out += [f"## By {by}", "", _md_table([by, *shown], rows), ""]
    if report.comparison is not None:
        comp = report.comparison
        out += [f"## Comparison: A = `{comp.name_a}`, B = `{comp.name_b}`", ""]
        out += [_md_table(_COMP_HEADER, _comparison_rows(comp)), ""]
        if comp.notes:
            out += [comp.notes, ""]
    if report.conventions:
        out += ["## Conventions", ""] + [f"- **{k}**: {v}" for k, v in report.conventions.items()] + [""]
    shown = report.shown_metrics()
    out += ["## Per item", ""]
    rows = []
    for row in report.per_item[:max_items]:
        det = row.get("details") or {}
        notes = "; ".join(f"{k}: {len(v)}" for k, v in det.items() if isinstance(v, list) and v)
        rows.append(
            [
                str(row["item_id"]),
                _short(str(row.get("label", "")), 60),
                *(fmt(row.get(m)) for m in shown),
                notes,
            ]
        )
    out += [_md_table(["item", "label", *shown, "details"], rows), ""]
    if len(report.per_item) > max_items:
        out += [f"({len(report.per_item) - max_items} more items in the JSON report)", ""]
    return "\n".join(out)


def _short(text: str, n: int) -> str:
    text = " ".join(text.split())
    return text if len(text) <= n else text[: n - 1] + "…"
