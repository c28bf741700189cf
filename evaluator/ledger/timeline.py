"""Per-question HTML timelines of a ledger, in the evaluator's report style (its CSS, inline, offline).

Each (run, question) is a collapsible block with one row per call: when (seconds after the
question's first call), what (kind, route, the query or paper asked), the answer (status, fault,
latency, replayed), what it returned (papers, new ones, gold ones with their rank), what it read,
tokens, and whether it repeated an earlier request or added nothing.
"""

from __future__ import annotations

from datetime import datetime
from html import escape
from importlib import resources
from typing import Any

from openxiv.evaluator.grounding.report import evidence_css
from openxiv.evaluator.ledger.trace import Step, Trace

__all__ = ["render_page", "timeline_section"]

ASKED_KEYS = ("query", "queries", "arxiv_id", "id", "ids", "section", "name", "q", "type")


def _time(value: str) -> datetime | None:
    try:
        return datetime.fromisoformat(value)
    except ValueError:
        return None


def _asked(params: dict[str, Any]) -> str:
    parts = []
    for key in ASKED_KEYS:
        if key in params and params[key] not in (None, ""):
            value = params[key]
            text = ", ".join(map(str, value)) if isinstance(value, list) else str(value)
            parts.append(f"{key}={text if len(text) <= 120 else text[:119] + '…'}")
    return "; ".join(parts)


def _answer(step: Step) -> str:
    rec = step.record
    cls = "missed" if rec.status >= 400 else ""
    bits = [f"{rec.status}", f"{rec.latency_ms:.0f} ms"]
    if rec.fault:
        bits.append(f"fault {rec.fault}")
    if rec.replayed:
        bits.append("replayed")
    if rec.cutoff:
        bits.append(f"cutoff {rec.cutoff}" + (f", {rec.leaks} leaks blocked" if rec.leaks else ""))
    return f'<td class="{cls}">{escape(" · ".join(bits))}</td>'


def _step_row(step: Step, start: datetime | None) -> str:
    rec = step.record
    at = _time(rec.time)
    offset = f"+{(at - start).total_seconds():.2f} s" if at and start else escape(rec.time)
    gold = ", ".join(f"{g} (rank {r})" for g, r in step.gold_returned)
    returned = f"{len(rec.returned)} ({len(step.new_returned)} new)" if rec.returned else ""
    if gold:
        returned += f'<br><span class="matched">gold: {escape(gold)}</span>'
    read = ", ".join(f"{r.what} {r.id}" + (f" «{r.section}»" if r.section else "") for r in rec.read)
    if step.gold_read:
        read += " (gold)"
    flags = [x for x, on in (("repeat", step.repeated), ("nothing new", step.wasted)) if on]
    cls = ' class="missing"' if step.wasted or rec.status >= 400 else ""
    return (
        f"<tr{cls}><td>{step.n}</td><td>{escape(offset)}</td><td>{escape(rec.kind)}<br>"
        f'<span class="note">{escape(rec.method)} {escape(rec.route)}</span></td>'
        f"<td>{escape(_asked(rec.params))}</td>{_answer(step)}<td>{returned}</td><td>{escape(read)}</td>"
        f'<td class="num">{step.tokens}</td><td class="flag">{escape(", ".join(flags))}</td></tr>'
    )


def _trace_block(trace: Trace, label: str) -> str:
    start = _time(trace.steps[0].record.time) if trace.steps else None
    m = trace.metrics()
    calls = f"{m['calls']} call" + ("" if m["calls"] == 1 else "s")
    summary = f"{trace.run} / {trace.question}: {calls}, {m['tokens_returned']} tokens"
    if trace.gold:
        summary += f", evidence seen {sum(p.first_call is not None or p.first_read_call is not None for p in trace.gold.values())}/{len(trace.gold)}"
    if label:
        summary += f" — {label if len(label) <= 100 else label[:99] + '…'}"
    head = "".join(
        f"<th>{h}</th>" for h in ("#", "when", "call", "asked", "answer", "returned", "read", "tokens", "")
    )
    rows = "".join(_step_row(s, start) for s in trace.steps)
    missed = [g for g, p in trace.gold.items() if p.first_call is None and p.first_read_call is None]
    foot = f'<p class="note">gold never seen: {escape(", ".join(missed))}</p>' if missed else ""
    unseen = trace.named_unseen()
    if unseen:
        foot += (
            f'<p class="note">named in the answer, never returned or read: {escape(", ".join(unseen))}</p>'
        )
    body = (
        f"<table><thead><tr>{head}</tr></thead><tbody>{rows}</tbody></table>" if rows else "<p>no calls</p>"
    )
    return f"<details><summary>{escape(summary)}</summary>{body}{foot}</details>"


def timeline_section(traces: list[tuple[Trace, str]], title: str = "Timelines") -> str:
    """One section, one collapsible timeline per (run, question) (``label``: the question's text)."""
    blocks = "".join(_trace_block(t, label) for t, label in traces)
    note = '<p class="note">One row per call, in the order the ledger recorded them. Rows shaded: failed or added nothing new.</p>'
    return f"<style>{evidence_css()}</style><section><h2>{escape(title)}</h2>{note}{blocks}</section>\n"


def render_page(title: str, summary_html: str, traces: list[tuple[Trace, str]]) -> str:
    """A self-contained page: the evaluator's stylesheet inline, no script, no external URL."""
    css = resources.files("openxiv.evaluator").joinpath("templates", "report.css").read_text(encoding="utf-8")
    return (
        f'<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">'
        f'<meta name="viewport" content="width=device-width, initial-scale=1"><title>{escape(title)}</title>'
        f"<style>{css}</style></head><body><header><h1>{escape(title)}</h1>"
        f'<p class="sub">generated by openxiv runs export</p></header><main>'
        f"{summary_html}{timeline_section(traces)}</main></body></html>\n"
    )
