"""Readers for gold files and submissions; every problem is an `EvalInputError` naming file and line.

Formats (full descriptions with examples in docs/evaluator.md):

* AutoResearchBench gold JSONL: ``question``, ``answer`` (titles), ``arxiv_id`` (a string for deep
  items, a list for wide ones), optional ``type`` (deep|wide), ``qid``/``id``, ``category``. Without a
  type, a string ``arxiv_id`` means deep and a list means wide. A deep item's string is ONE id.
* AutoResearchBench inference output JSONL: ``input_data`` (the gold line) and ``inference_results``
  (one per pass: ``final_candidates`` [{arxiv_id, title, ...}], ``final_candidate_state``
  (empty|ids|none), ``turn_details``, ``pass_id``, ``status``, ``total_time``, ``messages``).
* Simple submission JSONL: ``qid`` or ``question``, ``predictions`` (ids or titles, or objects with
  ``arxiv_id``/``id``/``title``), optional ``pass_id``, optional ``state`` ("none" = explicit abstention).
* Ranked: TREC qrels (``qid iter docno rel``) and runs (``qid Q0 docno rank score tag``); openxiv JSONL
  query sets (``qid``, ``query``, ``relevant`` = ids or {id: grade}) and JSONL runs (``qid`` plus
  ``results``/``ranked`` = ids best first, or objects with ``id``/``arxiv_id`` and ``score``).
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openxiv.evaluator.gcpause import gc_paused
from openxiv.evaluator.idcache import canonical_ids, looks_like_id

__all__ = [
    "Candidate",
    "EvalInputError",
    "GoldItem",
    "PassRecord",
    "SubmissionItem",
    "iter_jsonl",
    "read_arb_gold",
    "read_qrels",
    "read_run",
    "read_submission",
]

NONE_WORDS = {"none", "null", "n/a", ""}


class EvalInputError(ValueError):
    """A gold or submission file cannot be read; the message names the file and line."""


@dataclass
class GoldItem:
    item_id: str
    question: str
    titles: list[str]
    ids: list[str]  # raw id strings as written (normalised later by matching)
    type: str  # "deep" | "wide"
    line: int
    category: str | None = None
    none_answer: bool = False  # the gold answer is explicitly "None" / empty: no paper qualifies


@dataclass
class Candidate:
    arxiv_id: str | None
    title: str | None

    @property
    def display(self) -> str:
        return self.arxiv_id or self.title or ""


@dataclass
class PassRecord:
    pass_id: int
    candidates: list[Candidate]
    state: str = "ids"  # "ids" | "empty" | "none"
    status: str = ""
    turn_count: int | None = None
    tool_call_count: int | None = None
    last_input_tokens: int | None = None
    last_output_tokens: int | None = None
    total_duration: float | None = None

    @property
    def last_tokens(self) -> int | None:
        if self.last_input_tokens is None and self.last_output_tokens is None:
            return None
        return (self.last_input_tokens or 0) + (self.last_output_tokens or 0)


@dataclass
class SubmissionItem:
    qid: str | None
    question: str | None
    line: int
    passes: list[PassRecord] = field(default_factory=list)


def _where(path: Path, line: int) -> str:
    return f"{path.name} line {line}"


def iter_jsonl(path: str | Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line_number, object)`` for every non-blank line; bad JSON or non-objects raise with the line."""
    p = Path(path)
    try:
        fh = p.open(encoding="utf-8")
    except OSError as exc:
        raise EvalInputError(f"{p}: cannot open ({exc.strerror})") from None
    with fh:
        try:
            for n, raw in enumerate(fh, 1):
                if not raw.strip():
                    continue
                try:
                    obj = json.loads(raw)
                except json.JSONDecodeError as exc:
                    raise EvalInputError(
                        f"{_where(p, n)}: invalid JSON ({exc.msg} at column {exc.colno})"
                    ) from None
                if not isinstance(obj, dict):
                    raise EvalInputError(f"{_where(p, n)}: expected a JSON object, got {type(obj).__name__}")
                yield n, obj
        except UnicodeDecodeError:
            raise EvalInputError(f"{p}: not UTF-8 text") from None


def _str_list(value: Any, where: str, key: str) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [value]
    if isinstance(value, list) and all(isinstance(v, str | int | float) for v in value):
        return [str(v) for v in value]
    raise EvalInputError(f"{where}: '{key}' must be a string or a list of strings")


def _is_none_answer(titles: list[str], ids: list[str]) -> bool:
    vals = [t.strip().lower() for t in titles + ids]
    return not vals or all(v in NONE_WORDS for v in vals)


@gc_paused()
def read_arb_gold(path: str | Path) -> list[GoldItem]:
    """AutoResearchBench gold (or any ``question``/``answer``/``arxiv_id`` JSONL); also openxiv query sets."""
    p = Path(path)
    items: list[GoldItem] = []
    seen: dict[str, int] = {}
    for n, obj in iter_jsonl(p):
        if isinstance(obj.get("input_data"), dict):  # an inference output carries its gold line
            obj = obj["input_data"]
        items.append(gold_from_obj(obj, n, _where(p, n)))
        key = items[-1].item_id
        if key in seen:
            raise EvalInputError(f"{_where(p, n)}: duplicate item id {key!r} (first on line {seen[key]})")
        seen[key] = n
    if not items:
        raise EvalInputError(f"{p}: no gold items")
    canonical_ids([i for item in items for i in item.ids])  # one batch: matching then reads the cache
    return items


def gold_from_obj(obj: dict[str, Any], n: int, where: str) -> GoldItem:
    question = obj.get("question", obj.get("query"))
    if question is not None and not isinstance(question, str):
        raise EvalInputError(f"{where}: 'question' must be a string")
    raw_ids = obj.get("arxiv_id", obj.get("relevant"))
    if isinstance(raw_ids, dict):  # graded {id: grade}
        raw_ids = [k for k, v in raw_ids.items() if float(v) > 0]
    ids = _str_list(raw_ids, where, "arxiv_id")
    titles = _str_list(obj.get("answer"), where, "answer")
    kind = obj.get("type")
    if kind is None:
        kind = "deep" if isinstance(raw_ids, str) else "wide"
    if kind not in ("deep", "wide"):
        raise EvalInputError(f"{where}: 'type' must be 'deep' or 'wide', got {kind!r}")
    qid = obj.get("qid", obj.get("id"))
    if question is None and qid is None:
        raise EvalInputError(f"{where}: a gold item needs 'question' or 'qid'")
    none_answer = _is_none_answer(titles, ids)
    if none_answer:
        ids, titles = [], []
    cat = obj.get("category")
    return GoldItem(
        item_id=str(qid) if qid is not None else str(n),
        question=question or "",
        titles=[t for t in titles if t.strip()],
        ids=[i for i in ids if i.strip()],
        type=kind,
        line=n,
        category=str(cat) if cat is not None else None,
        none_answer=none_answer,
    )


def _int(value: Any) -> int | None:
    try:
        return int(float(value))
    except (TypeError, ValueError):
        return None


def _candidates(value: Any, where: str) -> list[Candidate]:
    if value is None:
        return []
    if not isinstance(value, list):
        raise EvalInputError(f"{where}: predictions/final_candidates must be a list")
    out = []
    for k, c in enumerate(value):
        if isinstance(c, str | int | float):
            s = str(c).strip()
            out.append(Candidate(s, None) if looks_like_id(s) else Candidate(None, s))
        elif isinstance(c, dict):
            meta: dict[str, Any] = c["metadata"] if isinstance(c.get("metadata"), dict) else {}
            aid = c.get("arxiv_id", c.get("id", meta.get("arxiv_id")))
            title = c.get("title", meta.get("title"))
            out.append(Candidate(str(aid).strip() if aid else None, str(title).strip() if title else None))
        else:
            raise EvalInputError(f"{where}: candidate {k} is neither a string nor an object")
    return out


def _pass_from_arb(res: dict[str, Any], k: int, where: str) -> PassRecord:
    state = str(res.get("final_candidate_state") or "").strip().lower() or "ids"
    if state not in ("ids", "empty", "none"):
        raise EvalInputError(f"{where}: final_candidate_state must be empty|ids|none, got {state!r}")
    turns = res.get("turn_details")
    rec = PassRecord(
        pass_id=_int(res.get("pass_id")) if res.get("pass_id") is not None else k,  # type: ignore[arg-type]
        candidates=_candidates(res.get("final_candidates"), where),
        state=state,
        status=str(res.get("status") or ""),
    )
    if isinstance(turns, list) and turns:
        rec.turn_count = len(turns)
        rec.tool_call_count = sum(1 for t in turns if isinstance(t, dict) and t.get("action") == "tool")
        last = turns[-1] if isinstance(turns[-1], dict) else {}
        rec.last_input_tokens = _int(last.get("input_tokens"))
        rec.last_output_tokens = _int(last.get("output_tokens"))
        durations = [float(t.get("duration") or 0.0) for t in turns if isinstance(t, dict)]
        rec.total_duration = round(sum(durations), 4)
    elif res.get("total_time") is not None:
        rec.total_duration = round(float(res["total_time"]), 4)
    return rec


def _normalise_ids_at_once(objs: Iterable[dict[str, Any]]) -> None:
    """Put every candidate string of a submission through id normalisation in one batch (one regex
    pass, `openxiv.evaluator.idcache`): telling ids from titles and matching then read the cache.
    Only a warm-up: a string it misses is normalised when it is met."""
    texts: list[str] = []
    for obj in objs:
        results = obj.get("inference_results")
        lists = (
            [r.get("final_candidates") for r in results if isinstance(r, dict)]
            if isinstance(results, list)
            else []
        )
        for cands in (obj.get("predictions"), *lists):
            for c in cands if isinstance(cands, list) else ():
                if isinstance(c, dict):
                    c = c.get("arxiv_id", c.get("id"))
                if type(c) is str:
                    texts.append(c.strip())
    canonical_ids(texts)


@gc_paused()
def read_submission(path: str | Path) -> list[SubmissionItem]:
    """AutoResearchBench inference output or simple JSONL (detected per line); passes grouped per item."""
    p = Path(path)
    items: dict[str, SubmissionItem] = {}
    lines: list[tuple[int, dict[str, Any]]] = []
    unreadable: EvalInputError | None = None
    try:
        lines.extend(iter_jsonl(p))
    except EvalInputError as exc:  # raised after the lines before it, which may hold an earlier error
        unreadable = exc
    _normalise_ids_at_once(obj for _, obj in lines)
    for n, obj in lines:
        where = _where(p, n)
        if "inference_results" in obj:
            data = obj.get("input_data")
            if not isinstance(data, dict):
                raise EvalInputError(f"{where}: 'input_data' must be an object")
            qid, question = data.get("qid", data.get("id")), data.get("question")
            results = obj["inference_results"]
            if not isinstance(results, list):
                raise EvalInputError(f"{where}: 'inference_results' must be a list")
            passes = []
            for k, r in enumerate(results):
                if not isinstance(r, dict):
                    raise EvalInputError(f"{where}: inference_results[{k}] is not an object")
                passes.append(_pass_from_arb(r, k, f"{where} pass {k}"))
        else:
            qid, question = obj.get("qid", obj.get("id")), obj.get("question")
            if "predictions" not in obj:
                raise EvalInputError(f"{where}: expected 'predictions' (or 'inference_results')")
            state = str(obj.get("state") or "").strip().lower()
            cands = _candidates(obj["predictions"], where)
            if state not in ("", "ids", "empty", "none"):
                raise EvalInputError(f"{where}: 'state' must be empty|ids|none, got {state!r}")
            passes = [
                PassRecord(_int(obj.get("pass_id")) or 0, cands, state or ("ids" if cands else "empty"))
            ]
        if qid is None and not isinstance(question, str):
            raise EvalInputError(f"{where}: a submission line needs 'qid' or 'question'")
        key = f"qid:{qid}" if qid is not None else f"q:{' '.join(str(question).split())}"
        item = items.setdefault(key, SubmissionItem(str(qid) if qid is not None else None, question, n))
        known = {ps.pass_id for ps in item.passes}
        for ps in passes:
            if ps.pass_id in known:
                raise EvalInputError(
                    f"{where}: pass {ps.pass_id} of this item already given (line {item.line})"
                )
            known.add(ps.pass_id)
            item.passes.append(ps)
    if unreadable is not None:
        raise unreadable
    return list(items.values())


# --------------------------------------------------------------------------------------------- ranked


def _is_jsonl(p: Path) -> bool:
    try:
        with p.open(encoding="utf-8") as fh:
            for raw in fh:
                if raw.strip():
                    return raw.lstrip().startswith("{")
    except OSError as exc:
        raise EvalInputError(f"{p}: cannot open ({exc.strerror})") from None
    return False


@gc_paused()
def read_qrels(path: str | Path) -> dict[str, dict[str, int]]:
    """TREC qrels or a JSONL query set -> ``{qid: {doc: relevance}}`` (relevance may be 0)."""
    p = Path(path)
    out: dict[str, dict[str, int]] = {}
    if _is_jsonl(p):
        for n, obj in iter_jsonl(p):
            qid, rel = obj.get("qid", obj.get("id")), obj.get("relevant")
            if qid is None or rel is None:
                raise EvalInputError(f"{_where(p, n)}: a query needs 'qid' and 'relevant'")
            if isinstance(rel, dict):
                out[str(qid)] = {str(k): _grade(v, p, n) for k, v in rel.items()}
            else:
                out[str(qid)] = {d: 1 for d in _str_list(rel, _where(p, n), "relevant")}
        return out
    for n, parts in _trec_lines(p):
        if len(parts) != 4:
            raise EvalInputError(
                f"{_where(p, n)}: a qrels line has 4 fields (qid iter docno rel), got {len(parts)}"
            )
        out.setdefault(parts[0], {})[parts[2]] = _grade(parts[3], p, n)
    return out


def _grade(v: Any, p: Path, n: int) -> int:
    g = _int(v)
    if g is None:
        raise EvalInputError(f"{_where(p, n)}: relevance {v!r} is not a number")
    return g


def _trec_lines(p: Path) -> Iterator[tuple[int, list[str]]]:
    try:
        with p.open(encoding="utf-8") as fh:
            for n, raw in enumerate(fh, 1):
                if raw.strip() and not raw.lstrip().startswith("#"):
                    yield n, raw.split()
    except OSError as exc:
        raise EvalInputError(f"{p}: cannot open ({exc.strerror})") from None


@gc_paused()
def read_run(path: str | Path) -> dict[str, list[tuple[str, float]]]:
    """TREC run or JSONL run -> ``{qid: [(doc, score), ...]}`` in file order (not yet sorted)."""
    p = Path(path)
    out: dict[str, list[tuple[str, float]]] = {}
    if _is_jsonl(p):
        for n, obj in iter_jsonl(p):
            where = _where(p, n)
            qid = obj.get("qid", obj.get("id"))
            docs = next((obj[k] for k in ("results", "ranked", "docs", "predictions") if k in obj), None)
            if qid is None or not isinstance(docs, list):
                raise EvalInputError(f"{where}: a run line needs 'qid' and a list 'results'")
            ranked: list[tuple[str, float]] = []
            for r, d in enumerate(docs):
                if isinstance(d, str):
                    ranked.append((d, float(-r)))  # list order is the ranking
                elif isinstance(d, dict) and (d.get("id") or d.get("arxiv_id") or d.get("doc")):
                    doc = str(d.get("id") or d.get("arxiv_id") or d.get("doc"))
                    score = d.get("score")
                    ranked.append((doc, float(score) if isinstance(score, int | float) else float(-r)))
                else:
                    raise EvalInputError(f"{where}: result {r} needs an 'id' (or be an id string)")
            out.setdefault(str(qid), []).extend(ranked)
        return out
    for n, parts in _trec_lines(p):
        if len(parts) != 6:
            raise EvalInputError(
                f"{_where(p, n)}: a run line has 6 fields (qid Q0 docno rank score tag), got {len(parts)}"
            )
        try:
            score = float(parts[4])
        except ValueError:
            raise EvalInputError(f"{_where(p, n)}: score {parts[4]!r} is not a number") from None
        out.setdefault(parts[0], []).append((parts[2], score))
    return out
