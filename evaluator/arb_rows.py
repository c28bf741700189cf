"""The per-item rows of an AutoResearchBench report: match every pass, then score all of them at once.

Matching stays per pass (its lists of matched, missed and extra papers are per pass). The numbers are
computed afterwards over arrays, with the metric registry's array forms (`openxiv.evaluator.metrics`,
"Array forms"), which give the scalar functions' floats bit for bit:

1. every pass's hits, |P| and |G| -> its set metrics (IoU, precision, recall, F1, accuracy);
2. the items, grouped by their number of passes n, as ``(items, n)`` matrices of pass values ->
   mean@k, accuracy@1, pass@k and best_iou@k, and the efficiency means.

The rows are built with ``None`` in those places first, so the keys keep their order in the reports.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from openxiv.evaluator import metrics as M
from openxiv.evaluator.idcache import try_canonical_id
from openxiv.evaluator.io import GoldItem, PassRecord, SubmissionItem
from openxiv.evaluator.matching import GoldEntry, Matcher, OpenPairs
from openxiv.evaluator.stats import DEFAULT_RESAMPLES

__all__ = ["EFFICIENCY", "KS", "SET_METRICS", "ArbOptions", "item_rows"]

KS = (1, 2, 4, 8, 16)

SET_METRICS = ("iou", "precision", "recall", "f1", "accuracy")
EFFICIENCY = ("turns", "tool_calls", "last_tokens", "duration_sec")
_FIRST_PASS_COUNTS = ("hits", "n_pred", "n_duplicates", "n_malformed", "n_title_matches", "n_hallucinated",
                      "n_after_cutoff")  # fmt: skip
_LISTS = ("matched", "missed", "extra", "duplicates", "malformed", "hallucinated", "after_cutoff", "flags")


@dataclass
class ArbOptions:
    """How an AutoResearchBench submission is scored (`openxiv.evaluator.arb.score_arb`)."""

    max_candidates: int | None = 1  # deep items; None = all
    ks: Sequence[int] = KS
    seed: int = 0
    n_boot: int = DEFAULT_RESAMPLES


def item_rows(
    gold: Sequence[GoldItem],
    paired: dict[str, SubmissionItem],
    matcher: Matcher,
    opts: ArbOptions,
    judged: OpenPairs | None = None,
) -> list[dict[str, Any]]:
    """One row per gold item, in gold order, with its passes' rows under ``"passes"``.

    ``judged``: the title judge's verdicts on deep items, and where the pairs still open are collected."""
    rows = [_item_row(g, paired.get(g.item_id), matcher, opts, judged) for g in gold]
    _fill_metrics([r for r in rows if r["passes"]], opts.ks)
    return rows


def _score_pass(
    item: GoldItem,
    ps: PassRecord,
    matcher: Matcher,
    gold_entries: Sequence[GoldEntry],
    gold_index: dict[str, int],
    opts: ArbOptions,
    judged: OpenPairs | None = None,
) -> dict[str, Any]:
    flags = []
    cands = ps.candidates
    if ps.state == "none":
        if cands:
            flags.append(f"state 'none' with {len(cands)} leftover candidates (ignored)")
        cands = []
    if item.type == "deep" and opts.max_candidates is not None:
        cands = cands[: opts.max_candidates]
    entries, dups = matcher.pred_entries(cands)
    m = matcher.match(gold_entries, entries, dups, gold_index, judged if item.type == "deep" else None)
    return {
        **dict.fromkeys(SET_METRICS),  # filled in by _fill_metrics
        "pass_id": ps.pass_id,
        "state": ps.state,
        "status": ps.status,
        **m.counts(),
        "turns": ps.turn_count,
        "tool_calls": ps.tool_call_count,
        "last_tokens": ps.last_tokens,
        "duration_sec": ps.total_duration,
        "matched": m.matched,
        "missed": m.missed,
        "extra": m.extra,
        "duplicates": m.duplicates,
        "malformed": m.malformed,
        "hallucinated": m.hallucinated,
        "after_cutoff": m.after_cutoff,
        "flags": flags,
    }


def _item_row(
    item: GoldItem, sub: SubmissionItem | None, matcher: Matcher, opts: ArbOptions, judged: OpenPairs | None
) -> dict[str, Any]:
    gold_entries = matcher.gold_entries(item)
    passes = sorted(sub.passes, key=lambda p: p.pass_id) if sub is not None else []
    row: dict[str, Any] = {
        "item_id": item.item_id,
        "label": item.question,
        "type": item.type,
        "category": item.category or matcher.category(gold_entries),
        "n_gold": len(gold_entries),
        "n_passes": len(passes),
        "status": "scored" if passes else "missing",
    }
    unreachable = matcher.gold_not_in_corpus(gold_entries)
    row["n_gold_not_in_corpus"] = len(unreachable)
    if not passes:
        row.update(dict.fromkeys((*SET_METRICS, "accuracy@1"), 0.0))
        row.update(dict.fromkeys(EFFICIENCY))
        for k in opts.ks:
            row[f"pass@{k}"] = None
            row[f"best_iou@{k}"] = None
        missed = [g.label for g in gold_entries]
        row["details"] = {"missed": missed, "flags": ["no submission for this item"]}
        if unreachable:
            row["details"]["gold_not_in_corpus"] = unreachable
        row["passes"] = []
        return row
    index = matcher.gold_index(gold_entries)
    scored = [_score_pass(item, ps, matcher, gold_entries, index, opts, judged) for ps in passes]
    row.update(dict.fromkeys((*SET_METRICS, "accuracy@1")))  # filled in by _fill_metrics, as the rest
    for k in opts.ks:
        row[f"pass@{k}"] = None
        row[f"best_iou@{k}"] = None
    row.update(dict.fromkeys(EFFICIENCY))
    first = scored[0]
    for c in _FIRST_PASS_COUNTS:
        row[c] = first[c]
    row["details"] = {k: _decorate(first[k], matcher) for k in _LISTS if first[k]}
    if len(scored) > 1:
        row["details"]["flags"] = [
            *row["details"].get("flags", []),
            f"details of pass {first['pass_id']} of {len(scored)}",
        ]
    row["passes"] = scored  # fresh dicts, not shared with anything else
    if unreachable:
        row["details"]["gold_not_in_corpus"] = unreachable
    return row


def _decorate(values: list[str], matcher: Matcher) -> list[str]:
    """Add corpus titles to bare ids when a corpus DB is given."""
    if matcher.store is None:
        return list(values)
    out = []
    for v in values:
        c = try_canonical_id(v)
        t = matcher.title_of(c) if c else None
        out.append(f"{v} — {t}" if t else v)
    return out


def _fill_metrics(rows: list[dict[str, Any]], ks: Sequence[int]) -> None:
    """Set metrics of every pass, then the pass metrics and efficiency means of every item (rows with passes)."""
    passes = [p for r in rows for p in r["passes"]]
    if not passes:
        return
    counts = [
        np.fromiter((p[c] for p in passes), np.int64, len(passes)) for c in ("hits", "n_pred", "n_gold")
    ]
    values = {name: _array_fn(name)(*counts) for name in SET_METRICS}
    for p, metric_values in zip(
        passes, zip(*(v.tolist() for v in values.values()), strict=True), strict=True
    ):
        p.update(zip(SET_METRICS, metric_values, strict=True))
    present = {name: [p[name] is not None for p in passes] for name in EFFICIENCY}
    efficiency = {
        name: (np.array([p[name] if ok else 0.0 for p, ok in zip(passes, present[name], strict=True)],
                        dtype=np.float64), np.array(present[name]))
        for name in EFFICIENCY
    }  # fmt: skip
    starts = np.cumsum([0, *(len(r["passes"]) for r in rows[:-1])])
    groups: dict[int, list[int]] = {}
    for i, r in enumerate(rows):
        groups.setdefault(len(r["passes"]), []).append(i)
    for n, members in groups.items():
        at = starts[members][:, None] + np.arange(n)  # (items, n): the items' passes
        mean_at_k = _array_fn("mean@k")
        cols: dict[str, list[Any]] = {name: mean_at_k(values[name][at]).tolist() for name in SET_METRICS}
        cols["accuracy@1"] = values["accuracy"][at][:, 0].tolist()
        for k in ks:
            if k <= n:
                cols[f"pass@{k}"] = _array_fn("pass@k")(values["accuracy"][at], k).tolist()
                cols[f"best_iou@{k}"] = _array_fn("best_of_k")(values["iou"][at], k).tolist()
        for name, (vals, ok) in efficiency.items():
            cols[name] = _mean_rows(vals[at], ok[at])
        names = list(cols)
        for i, row_values in zip(members, zip(*cols.values(), strict=True), strict=True):
            rows[i].update(zip(names, row_values, strict=True))


def _array_fn(name: str) -> Any:
    fn = M.get_metric(name).array_fn
    if fn is None:
        raise KeyError(f"metric {name!r} has no array form")
    return fn


def _mean_rows(values: np.ndarray, present: np.ndarray) -> list[float | None]:
    """Per row, the mean of the present values summed left to right; ``None`` where none is present."""
    total = np.zeros(values.shape[0])
    count = np.zeros(values.shape[0], dtype=np.int64)
    for j in range(values.shape[1]):
        total = np.where(present[:, j], total + values[:, j], total)
        count += present[:, j]
    means = (total / np.maximum(count, 1)).tolist()
    return [m if c else None for m, c in zip(means, count.tolist(), strict=True)]
