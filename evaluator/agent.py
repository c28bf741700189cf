"""A deterministic, retrieval-only baseline agent: no LLM, one search per question.

It calls a running openxiv ``POST /search`` over HTTP exactly as the AutoResearchBench agent does and
writes the benchmark's own inference-output format, so ``openxiv eval autoresearchbench`` scores it.

Policy (parameters chosen on dev data by ``openxiv agent calibrate``, which searches each calibration
question once and grid-searches the thresholds for the best mean IoU):

* deep items: the top hit, or the explicit ``none`` state when the top hit's score is below
  ``deep_min_score`` (0 by default: the dev sets hold no unanswerable item to calibrate on);
* wide items: the hits whose score is at least ``wide_rel`` times the top score, at most ``wide_max``.

The scores come from the service's fused ranking, so ``wide_rel`` is relative to each query's own
top score rather than an absolute cut.
"""

from __future__ import annotations

import json
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import asdict, dataclass, replace
from pathlib import Path
from typing import Any

import click
import httpx

from openxiv.corpus.settings.model import Settings
from openxiv.corpus.settings.options import (
    db_option,
    input_option,
    output_option,
    settings_from_flags,
    url_option,
)

__all__ = ["AgentPolicy", "BaselineAgent", "agent", "calibrate_wide", "make_wide_items"]

WIDE_REL_GRID = tuple(round(0.05 * i, 2) for i in range(20))
WIDE_MAX_GRID = (1, 2, 3, 5, 8, 10, 15, 20, 30, 50, 75, 100)


@dataclass(frozen=True)
class AgentPolicy:
    top_k: int = 50
    deep_min_score: float = 0.0
    wide_rel: float = 0.0
    wide_max: int = 10


class BaselineAgent:
    def __init__(self, url: str, policy: AgentPolicy, timeout: float = 120.0) -> None:
        self.url = url
        self.policy = policy
        self._client = httpx.Client(timeout=timeout)

    def close(self) -> None:
        self._client.close()

    def search(self, query: str, url: str | None = None) -> list[dict[str, Any]]:
        body = {"query": query, "top_k": self.policy.top_k, "return_contents": True}
        response = self._client.post(url or self.url, json=body)
        response.raise_for_status()
        payload = response.json()
        if not isinstance(payload, dict) or not isinstance(payload.get("result"), list):
            raise RuntimeError(f"{self.url} did not answer with a JSON object holding a 'result' list")
        return list(payload["result"])

    def answer(self, item: dict[str, Any], url: str | None = None) -> dict[str, Any]:
        """One inference-output line for one benchmark item (``url``: this question's, else the agent's)."""
        started = time.perf_counter()
        question = str(item.get("question", ""))
        hits = self.search(question, url)
        searched = time.perf_counter()
        chosen, state = select(hits, item_type(item), self.policy)
        turn = {
            "turn": 1,
            "duration": round(searched - started, 6),
            "input_tokens": 0,
            "output_tokens": 0,
            "action": "tool",
            "action_content": json.dumps({"name": "search", "arguments": {"query": question}}),
            "papers_retrieved_this_turn": len(hits),
        }
        finish = dict(turn, turn=2, duration=0.0, action="finish", action_content="Done")
        finish["papers_retrieved_this_turn"] = 0
        return {
            "input_data": item,
            "inference_results": [
                {
                    "status": "finished",
                    "total_time": round(time.perf_counter() - started, 6),
                    "messages": [],
                    "final_candidates": [candidate_record(i, hit) for i, hit in enumerate(chosen)],
                    "final_candidate_state": state,
                    "turn_details": [turn, finish],
                    "pass_id": 0,
                    "agent": {"name": "openxiv-baseline", "policy": asdict(self.policy)},
                }
            ],
        }


def item_type(item: dict[str, Any]) -> str:
    declared = str(item.get("type") or "").lower()
    if declared in ("deep", "wide"):
        return declared
    return "wide" if isinstance(item.get("arxiv_id"), list) else "deep"


def select(
    hits: Sequence[dict[str, Any]], kind: str, policy: AgentPolicy
) -> tuple[list[dict[str, Any]], str]:
    """The hits the policy answers with, and the benchmark's candidate state (ids, none, empty)."""
    if not hits:
        return [], "empty"
    top = float(hits[0].get("score") or 0.0)
    if kind == "deep":
        if top < policy.deep_min_score:
            return [], "none"
        return [hits[0]], "ids"
    cut = policy.wide_rel * top
    chosen = [h for h in hits if float(h.get("score") or 0.0) >= cut][: policy.wide_max]
    return chosen, ("ids" if chosen else "empty")


def candidate_record(index: int, hit: dict[str, Any]) -> dict[str, Any]:
    """A candidate in the shape the benchmark agent keeps (``tool_deepxivsearch`` records)."""
    contents = hit.get("contents") or []
    evidence = ""
    if contents and isinstance(contents[0], dict):
        passages = contents[0].get("section_contents") or []
        evidence = str(passages[0]) if passages else ""
    return {
        "id": index,
        "paper_id": index,
        "paper_title": hit.get("title"),
        "arxiv_id": hit.get("arxiv_id"),
        "authors": hit.get("authors"),
        "tldr": hit.get("tldr"),
        "pub_date": hit.get("date"),
        "retrieval_evidence": evidence,
        "metadata": {"title": hit.get("title")},
    }


def read_numbered(path: Path) -> Iterator[tuple[int, dict[str, Any]]]:
    """``(line number, object)`` of a JSONL input, read by the evaluator's own reader; a bad line is a
    CLI error."""
    from openxiv.evaluator.io import EvalInputError, iter_jsonl

    try:
        yield from iter_jsonl(path)
    except EvalInputError as exc:
        raise click.ClickException(str(exc)) from None


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """The objects of a JSONL input (`read_numbered` without the numbers)."""
    for _, value in read_numbered(path):
        yield value


def make_wide_items(queries: Iterable[dict[str, Any]], titles: dict[str, str]) -> Iterator[dict[str, Any]]:
    """AutoResearchBench wide items from openxiv topic queries (question = topic, gold = listed papers)."""
    for q in queries:
        ids = [str(i) for i in q["relevant"]]
        yield {
            "question": q["query"],
            "answer": [titles.get(i, i) for i in ids],
            "arxiv_id": ids,
            "type": "wide",
            "qid": q.get("qid"),
        }


def load_policy(path: Path) -> AgentPolicy:
    """A policy written by ``openxiv agent calibrate`` (its ``policy`` object)."""
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        fields = data.get("policy", data) if isinstance(data, dict) else None
        if not isinstance(fields, dict):
            raise ValueError("expected a JSON object")
        return AgentPolicy(**{k: v for k, v in fields.items() if k in AgentPolicy.__dataclass_fields__})
    except (OSError, ValueError, TypeError) as exc:
        raise click.ClickException(f"{path}: not a policy file ({exc})") from exc


def _gold_ids(item: dict[str, Any], n: int, where: str) -> set[str]:
    """Canonical gold ids of one question, read by the evaluator's own gold parser."""
    from openxiv.corpus.ids import try_canonical_id
    from openxiv.evaluator.io import EvalInputError, gold_from_obj

    try:
        ids = gold_from_obj(item, n, where).ids
    except EvalInputError as exc:
        raise click.ClickException(str(exc)) from exc
    return {c for c in map(try_canonical_id, ids) if c}


def calibrate_wide(
    hit_lists: Sequence[Sequence[dict[str, Any]]],
    golds: Sequence[set[str]],
    top_k: int,
    rel_grid: Sequence[float] = WIDE_REL_GRID,
    max_grid: Sequence[int] = WIDE_MAX_GRID,
) -> tuple[AgentPolicy, float, list[dict[str, float]]]:
    """The ``(wide_rel, wide_max)`` with the best mean IoU over the calibration items.

    Every grid point is scored with the evaluator's IoU on canonical ids; ties go to the smaller
    answer (higher ``wide_rel``, then lower ``wide_max``) so the choice is deterministic.
    Returns the policy, its mean IoU and the whole grid (for the record).
    """
    from openxiv.corpus.ids import try_canonical_id
    from openxiv.evaluator.metrics import iou, set_counts

    if not hit_lists:
        raise ValueError("no calibration items")
    # each hit's id is parsed once, not once per grid point
    canonical = [{id(h): try_canonical_id(h.get("arxiv_id")) for h in hits} for hits in hit_lists]
    grid: list[dict[str, float]] = []
    best_key: tuple[float, float, int] | None = None
    for rel in rel_grid:
        for cap in (c for c in max_grid if c <= top_k):
            policy = AgentPolicy(top_k=top_k, wide_rel=rel, wide_max=cap)
            total = 0.0
            for hits, ids, gold in zip(hit_lists, canonical, golds, strict=True):
                chosen, _ = select(hits, "wide", policy)
                pred = {c for c in (ids[id(h)] for h in chosen) if c}
                total += iou(*set_counts(pred, gold))
            mean = total / len(hit_lists)
            grid.append({"wide_rel": rel, "wide_max": cap, "mean_iou": mean})
            key = (mean, rel, -cap)
            if best_key is None or key > best_key:
                best_key = key
    assert best_key is not None
    mean, rel, neg_cap = best_key
    return AgentPolicy(top_k=top_k, wide_rel=rel, wide_max=-neg_cap), mean, grid


QUESTION_SLOT = "{question}"
"""In ``--url``, replaced per question by its id (``qid``/``id``, else its line number): a run-ledger tag
(``http://host:8000/runs/RUN/q/{question}/search``, docs/experiments.md)."""


def question_tag(item: dict[str, Any], line: int) -> str:
    """The id `openxiv eval` gives a gold item: its ``qid``/``id``, else its line number."""
    qid = item.get("qid", item.get("id"))
    return str(qid) if qid is not None else str(line)


def run_agent(
    url: str, items: Iterable[dict[str, Any]], policy: AgentPolicy, lines: Sequence[int] | None = None
) -> list[dict[str, Any]]:
    """Answer every item; a ``{question}`` in ``url`` becomes each item's id (``lines``: the items'
    line numbers in their file, for items without one; else their position)."""
    bot = BaselineAgent(url, policy)
    try:
        out = []
        for k, item in enumerate(items):
            line = lines[k] if lines is not None else k + 1
            tagged = url.replace(QUESTION_SLOT, question_tag(item, line)) if QUESTION_SLOT in url else None
            out.append(bot.answer(item, tagged))
        return out
    finally:
        bot.close()


def write_jsonl(path: Path, rows: Iterable[dict[str, Any]]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", encoding="utf-8") as fh:
        for row in rows:
            fh.write(json.dumps(row, ensure_ascii=False) + "\n")


# --------------------------------------------------------------------------------------------- CLI


def _policy_option(field: str, kind: Any, text: str) -> Any:
    """A flag overriding one `AgentPolicy` field (default ``None``: the policy file's or built-in value)."""
    default = getattr(AgentPolicy, field)
    return click.option(
        "--" + field.replace("_", "-"), type=kind, default=None, help=f"{text}  [default: {default}]"
    )


@click.group("agent")
def agent() -> None:
    """Retrieval-only baseline agent for AutoResearchBench-format questions."""


@agent.command("baseline")
@url_option()
@input_option("AutoResearchBench questions (JSONL: question, answer, arxiv_id, optional type).")
@output_option("Where to write the inference output (JSONL).")
@input_option(
    "Policy JSON written by `openxiv agent calibrate`; the flags below override its values.",
    "--policy",
    "policy_path",
    required=False,
)
@_policy_option("top_k", click.IntRange(1, 100), "Hits asked for per question.")
@_policy_option("deep_min_score", float, "Deep items: answer only when the top hit scores at least this.")
@_policy_option(
    "wide_rel", click.FloatRange(0, 1), "Wide items: keep hits scoring at least this share of the top."
)
@_policy_option("wide_max", click.IntRange(1, 100), "Wide items: at most this many papers.")
def baseline(
    url: str,
    input_path: Path,
    out: Path,
    policy_path: Path | None,
    top_k: int | None,
    deep_min_score: float | None,
    wide_rel: float | None,
    wide_max: int | None,
) -> None:
    """Answer every question with one search and write the benchmark's inference output.

    A {question} in --url is replaced by each question's id (qid/id, else its line number), so each
    question's call is tagged in the run ledger: --url 'http://127.0.0.1:8000/runs/RUN/q/{question}/search'
    (docs/experiments.md)."""
    policy = load_policy(policy_path) if policy_path else AgentPolicy()
    flags: dict[str, Any] = {
        "top_k": top_k,
        "deep_min_score": deep_min_score,
        "wide_rel": wide_rel,
        "wide_max": wide_max,
    }
    policy = replace(policy, **{k: v for k, v in flags.items() if v is not None})
    numbered = list(read_numbered(input_path))
    try:
        rows = run_agent(url, [o for _, o in numbered], policy, [n for n, _ in numbered])
    except httpx.HTTPError as exc:
        raise click.ClickException(f"search service at {url} failed: {exc}") from exc
    write_jsonl(out, rows)
    click.echo(f"answered {len(rows)} questions -> {out}")


@agent.command("wide-set")
@settings_from_flags
@click.option(
    "--queries",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    required=True,
    help="openxiv topic query set (JSONL: qid, query, relevant).",
)
@db_option(exists=True, help="For gold titles.")
@output_option("Where to write the wide items (AutoResearchBench JSONL).")
def wide_set(settings: Settings, queries: Path, out: Path) -> None:
    """Turn topic queries into AutoResearchBench wide items (question = topic, gold = listed papers)."""
    from openxiv.corpus.store import Store

    db = settings.db_path
    if not db.is_file():
        raise click.UsageError(f"no corpus database at {db}: give --db")
    rows = list(read_jsonl(queries))
    store = Store.open_readonly(db)
    try:
        ids = sorted({str(i) for q in rows for i in q.get("relevant", [])})
        papers = store.get_papers(ids)
    finally:
        store.close()
    titles = {i: (p.title or i) for i, p in papers.items()}
    write_jsonl(out, make_wide_items(rows, titles))
    click.echo(f"wrote {len(rows)} wide items -> {out}")


@agent.command("calibrate")
@url_option()
@input_option("Calibration questions with gold ids (AutoResearchBench JSONL, wide items).")
@output_option("Where to write the chosen policy (JSON, read by `agent baseline --policy`).")
@click.option(
    "--top-k",
    type=click.IntRange(1, 100),
    default=100,
    show_default=True,
    help="Hits fetched per question; the grid chooses among them.",
)
def calibrate(url: str, input_path: Path, out: Path, top_k: int) -> None:
    """Choose the wide-item thresholds on dev questions: best mean IoU over a grid.

    Calibrate on one query set and score on another: the policy must not see the questions it is
    judged on.
    """
    items = [i for i in read_jsonl(input_path) if item_type(i) == "wide"]
    if not items:
        raise click.ClickException(f"{input_path}: no wide items (arxiv_id as a list) to calibrate on")
    golds = [_gold_ids(item, n, f"{input_path} wide item {n}") for n, item in enumerate(items, 1)]
    bot = BaselineAgent(url, AgentPolicy(top_k=top_k))
    try:
        hit_lists = [bot.search(str(i.get("question", ""))) for i in items]
    except httpx.HTTPError as exc:
        raise click.ClickException(f"search service at {url} failed: {exc}") from exc
    finally:
        bot.close()
    policy, score, grid = calibrate_wide(hit_lists, golds, top_k)
    record = {"policy": asdict(policy), "mean_iou": score, "items": len(items), "source": str(input_path)}
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({**record, "grid": grid}, indent=1) + "\n", encoding="utf-8")
    click.echo(
        f"calibrated on {len(items)} wide items: wide_rel={policy.wide_rel} wide_max={policy.wide_max} "
        f"(mean IoU {score:.4f}) -> {out}"
    )
