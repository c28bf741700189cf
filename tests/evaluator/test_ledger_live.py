"""`openxiv eval ledger` and `openxiv runs` on ledgers a live `openxiv serve --ledger` wrote: the
baseline agent through a tagged base URL (`{question}` per item) and the unmodified deepxiv-sdk
`Reader` (its base URL carries the tags), measured by the same evaluator from the server's record."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import deepxiv_sdk
import pytest
from click.testing import CliRunner
from live_index import BuiltIndex, LiveServer

from openxiv.corpus.ledger.store import LedgerReader
from openxiv.evaluator.agent import agent
from openxiv.evaluator.cli import eval_group
from openxiv.evaluator.ledger.cli import runs

pytestmark = pytest.mark.live_server

N_ITEMS = 6


@pytest.fixture(scope="module")
def ledger_server(
    test_index: BuiltIndex, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[LiveServer, Path]]:
    ledger = tmp_path_factory.mktemp("ledger") / "ledger"
    live = LiveServer(test_index.root, extra_env={"OPENXIV_LEDGER": str(ledger)})
    try:
        yield live, ledger
    finally:
        live.stop()


@pytest.fixture(scope="module")
def gold(test_index: BuiltIndex, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Wide items whose question is a real paper's title and whose gold is that paper; ids q1..q6."""
    from openxiv.corpus.store import Store

    with Store.open_readonly(test_index.db) as store:
        docs = [d for d in store.iter_papers() if d.title and d.abstract and "/" not in d.arxiv_id]
    path = tmp_path_factory.mktemp("gold") / "gold.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for k, d in enumerate(docs[: N_ITEMS * 7 : 7], 1):
            fh.write(json.dumps({"qid": f"q{k}", "question": d.title, "answer": [d.title],
                                 "arxiv_id": [d.arxiv_id], "type": "wide"}) + "\n")  # fmt: skip
    return path


def run(cmd: Any, *args: str) -> str:
    res = CliRunner().invoke(cmd, list(args), catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res.output


def test_the_baseline_agents_run_is_measured_from_the_ledger(
    ledger_server: tuple[LiveServer, Path], gold: Path, tmp_path: Path
) -> None:
    live, ledger = ledger_server
    answers = tmp_path / "answers.jsonl"
    url = live.url + "/runs/base1/q/{question}/search"
    run(agent, "baseline", "--url", url, "--input", str(gold), "--out", str(answers), "--wide-max", "3")
    records = list(LedgerReader(ledger).records(run="base1"))
    assert sorted(r.question or "" for r in records) == [f"q{k}" for k in range(1, N_ITEMS + 1)]
    out, html = tmp_path / "ledger.json", tmp_path / "ledger.html"
    run(eval_group, "ledger", "--ledger", str(ledger), "--gold", str(gold), "--run", "base1",
        "--answers", str(answers), "--json", str(out), "--html", str(html), "-q")  # fmt: skip
    report = json.loads(out.read_text())
    rows = report["per_item"]
    assert len(rows) == N_ITEMS and all(r["calls"] == 1 and r["status"] == "scored" for r in rows)
    # a title query finds its paper: the gold paper was returned, at the first call, near the top
    assert report["aggregates"]["evidence_returned_recall"]["value"] >= 5 / 6
    assert all(r["first_gold_call"] == 1 for r in rows if r["evidence_returned_recall"])
    assert all(r["tokens_returned"] > 100 and r["evidence_read_recall"] == 0.0 for r in rows)
    # the baseline names only papers its one search returned
    assert all(r["named_unseen_rate"] == 0.0 for r in rows if r["named"])
    assert html.read_text().count("<details><summary>base1 / q") == N_ITEMS


def test_the_deepxiv_sdk_run_is_measured_from_the_ledger(
    ledger_server: tuple[LiveServer, Path], gold: Path, tmp_path: Path
) -> None:
    live, ledger = ledger_server
    items = [json.loads(line) for line in gold.open()]
    for item in items[:3]:
        reader = deepxiv_sdk.Reader(base_url=f"{live.url}/runs/sdk1/q/{item['qid']}", token="any", timeout=60,
                                    max_retries=0)  # fmt: skip
        found = reader.search(item["question"], size=5)
        first = found["result"][0]["arxiv_id"] if isinstance(found, dict) else found[0]["arxiv_id"]
        reader.head(first)
        reader.search(item["question"], size=5)  # the same request again
    out = tmp_path / "sdk.json"
    run(
        eval_group,
        "ledger",
        "--ledger",
        str(ledger),
        "--gold",
        str(gold),
        "--run",
        "sdk1",
        "--json",
        str(out),
        "-q",
    )
    rows = {r["question"]: r for r in json.loads(out.read_text())["per_item"]}
    for item in items[:3]:
        row = rows[item["qid"]]
        assert row["calls"] == 3 and row["repeated_calls"] == 1 and row["wasted_calls"] >= 1
        assert row["papers_read"] == 1
    assert sum(rows[i["qid"]]["evidence_read_recall"] for i in items[:3]) >= 2  # the top hit was the paper
    assert all(rows[i["qid"]]["status"] == "missing" for i in items[3:])
    listing = json.loads(run(runs, "list", "--ledger", str(ledger), "--json"))
    assert {"base1", "sdk1"} <= {r["run"] for r in listing["runs"]}
    calls = tmp_path / "calls.jsonl"
    run(runs, "export", "--ledger", str(ledger), "--run", "sdk1", "--jsonl", str(calls))
    kinds = [json.loads(line)["kind"] for line in calls.read_text().splitlines()]
    assert kinds.count("head") == 3 and len(kinds) == 9
