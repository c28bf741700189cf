"""Self-contained HTML report of an `EvalReport`: inline CSS, plots as inline SVG, no external URL.

The page opens offline: the template (``templates/report.html``) and stylesheet (``templates/report.css``)
are inlined, and the plots (score distributions, recall against precision, paired differences when
comparing) are inline SVG drawn by `openxiv.evaluator.svg_plots`.
"""

from __future__ import annotations

import math
from html import escape
from importlib import resources
from pathlib import Path
from string import Template
from typing import Any

from openxiv.evaluator.gcpause import gc_paused
from openxiv.evaluator.report import EvalReport, aggregate_rows, fmt
from openxiv.evaluator.svg_plots import density_scatter, histogram

__all__ = ["render_html", "write_html"]

MAX_ROWS = 5000
DETAIL_CLASSES = {"matched": "matched", "missed": "missed", "extra": "extra", "flags": "flag"}


def _template(name: str) -> str:
    return resources.files("openxiv.evaluator").joinpath("templates", name).read_text(encoding="utf-8")


def _table(header: list[str], rows: list[list[str]], table_id: str = "", raw_cells: bool = False) -> str:
    """HTML table; cells are escaped unless ``raw_cells`` (then the caller escaped them)."""
    ident = f' id="{table_id}"' if table_id else ""
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    body = []
    for r in rows:
        cells = "".join(c if raw_cells else f"<td>{escape(c)}</td>" for c in r)
        body.append(f"<tr>{cells}</tr>")
    return f"<table{ident}><thead><tr>{head}</tr></thead><tbody>{''.join(body)}</tbody></table>"


def _num_cell(v: Any) -> str:
    cls = "num"
    if isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v):
        if v == 0:
            cls += " zero"
        elif v == 1:
            cls += " one"
    return f'<td class="{cls}">{escape(fmt(v))}</td>'


def _aggregates(report: EvalReport) -> str:
    rows = aggregate_rows(report)
    others = [m for m in report.aggregates if m not in report.shown_metrics()]
    html = _table(["metric", "mean", "95% CI", "n items"], rows)
    if others:
        more = [[m, fmt(report.aggregates[m].value), str(report.aggregates[m].n)] for m in others]
        html += f"<details><summary>{len(others)} more metrics</summary>{_table(['metric', 'mean', 'n'], more)}</details>"
    return html


def _comparison(report: EvalReport) -> str:
    comp = report.comparison
    if comp is None:
        return ""
    rows = []
    for r in comp.rows:
        sig = ' class="sig"' if r.p_holm < 0.05 else ""
        cells = [r.metric, fmt(r.mean_a), fmt(r.mean_b), fmt(r.diff), f"[{fmt(r.ci_low)}, {fmt(r.ci_high)}]"]
        tds = "".join(f"<td>{escape(c)}</td>" for c in cells)
        tds += f"<td>{escape(fmt(r.p_randomization))}</td><td{sig}>{escape(fmt(r.p_holm))}</td>"
        tds += f"<td>{escape(fmt(r.p_bootstrap))}</td><td>{r.wins}/{r.ties}/{r.losses}</td>"
        rows.append([tds])
    header = ["metric", "A", "B", "A−B", "95% CI (A−B)", "p rand.", "p Holm", "p boot.", "win/tie/loss"]
    title = f"A = {comp.name_a}, B = {comp.name_b}"
    return (
        f"<section><h2>Comparison</h2><p>{escape(title)}</p>{_table(header, rows, raw_cells=True)}"
        f'<p class="note">{escape(comp.notes)} B = {comp.n_resamples}, seed {comp.seed}.</p></section>'
    )


def _breakdowns(report: EvalReport) -> str:
    out = []
    for by, groups in report.breakdowns.items():
        shown = [m for m in report.shown_metrics() if any(m in g for g in groups.values())][:8]
        rows = []
        for g, aggs in groups.items():
            n = max((a.n for a in aggs.values()), default=0)
            rows.append([g, str(n), *(fmt(aggs[m].value) if m in aggs else "–" for m in shown)])
        out.append(f"<section><h2>By {escape(by)}</h2>{_table([by, 'n', *shown], rows)}</section>")
    return "".join(out)


def _details(row: dict[str, Any]) -> str:
    det = row.get("details") or {}
    parts = []
    for key, values in det.items():
        if not isinstance(values, list) or not values:
            continue
        cls = DETAIL_CLASSES.get(key, "")
        items = "".join(f'<li class="{cls}">{escape(str(v))}</li>' for v in values[:200])
        more = f"<li>… {len(values) - 200} more</li>" if len(values) > 200 else ""
        parts.append(f"<b>{escape(key)}</b> ({len(values)})<ul>{items}{more}</ul>")
    if not parts:
        return "<td></td>"
    summary = ", ".join(f"{k} {len(v)}" for k, v in det.items() if isinstance(v, list) and v)
    return f"<td><details><summary>{escape(summary)}</summary>{''.join(parts)}</details></td>"


def _items(report: EvalReport) -> str:
    shown = report.shown_metrics()[:10]
    header = ["item", "label", *shown, "details"]
    rows = []
    for row in report.per_item[:MAX_ROWS]:
        label = str(row.get("label", ""))
        short = label if len(label) <= 90 else label[:89] + "…"
        cells = f'<td>{escape(str(row["item_id"]))}</td><td title="{escape(label)}">{escape(short)}</td>'
        cells += "".join(_num_cell(row.get(m)) for m in shown) + _details(row)
        cls = ' class="missing"' if row.get("status") == "missing" else ""
        rows.append(f"<tr{cls}>{cells}</tr>")
    head = "".join(f"<th>{escape(h)}</th>" for h in header)
    return f'<table id="items"><thead><tr>{head}</tr></thead><tbody>{"".join(rows)}</tbody></table>'


def _values(report: EvalReport, metric: str) -> list[float]:
    return [float(r[metric]) for r in report.per_item if isinstance(r.get(metric), int | float)]


def _plots(report: EvalReport) -> str:
    out = []
    for m in [m for m in report.shown_metrics() if _values(report, m)][:6]:
        vals = _values(report, m)
        unit = min(vals) >= 0.0 and max(vals) <= 1.0  # scores in [0, 1]: one fixed scale for all plots
        out.append(histogram(vals, f"{m} (per item)", value_range=(0.0, 1.0) if unit else None))
    pr = [(r["recall"], r["precision"]) for r in report.per_item if isinstance(r.get("recall"), int | float)]
    pr = [(x, y) for x, y in pr if isinstance(y, int | float)]
    if pr:
        xs, ys = zip(*pr, strict=True)
        title = "recall against precision (per item)"
        out.append(density_scatter(xs, ys, title, xlabel="recall", ylabel="precision"))
    if report.comparison is not None and report.comparison.rows:
        diffs = report.extra.get("comparison_diffs", {})
        m = report.comparison.rows[0].metric
        if diffs.get(m):
            out.append(histogram(diffs[m], f"paired differences A−B: {m}", color="#6a4ca8"))
    if not out:
        return '<p class="note">no numeric per-item metrics to plot</p>'
    return "".join(out)


@gc_paused()
def render_html(report: EvalReport, evidence: str = "") -> str:
    """The page; ``evidence`` is an extra section of ready HTML (the grounding check's claims)."""
    cov = report.coverage
    coverage = f"coverage {cov.answered}/{cov.total} ({cov.fraction:.1%})" if cov is not None else ""
    counts = _table(["count", "value"], [[k, fmt(v)] for k, v in report.counts.items()])
    conventions = _table(["convention", "rule"], [[k, v] for k, v in report.conventions.items()])
    inputs = _table(["input", "path"], [[k, v] for k, v in report.inputs.items()])
    note = (
        f"Showing the first {MAX_ROWS} of {len(report.per_item)} items."
        if len(report.per_item) > MAX_ROWS
        else ""
    )
    return Template(_template("report.html")).safe_substitute(
        title=escape(report.name),
        benchmark=escape(report.benchmark),
        coverage=escape(coverage),
        css=_template("report.css"),
        aggregates=_aggregates(report),
        comparison=_comparison(report),
        breakdowns=_breakdowns(report),
        plots=_plots(report),
        items=_items(report),
        item_note=escape(note),
        counts=counts,
        conventions=conventions,
        inputs=inputs,
        evidence=evidence,
    )


def write_html(report: EvalReport, path: str | Path, evidence: str = "") -> None:
    Path(path).write_text(render_html(report, evidence), encoding="utf-8")
