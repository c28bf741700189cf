"""The issue's end-to-end criterion: the unmodified AutoResearchBench agent run through a tagged base URL
produces a ledger from which ``openxiv eval ledger`` reports evidence-seen recall for its questions.

The agent is the benchmark's own ``inference.py`` in its own venv (``OPENXIV_TEST_ARB_DIR``,
``OPENXIV_TEST_ARB_PYTHON``; ``make arb-venv``), skipped without them, as in
tests/service/experiments/test_agents_live.py. Its planner and summariser LLMs are one scripted chat
server on loopback (search with the question, keep paper 1); the questions are real papers' titles
with that paper as the deep gold, so the search the agent makes finds it.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from arb_agent import arb_checkout, planner, run_inference
from click.testing import CliRunner
from live_index import BuiltIndex, LiveServer

from openxiv.evaluator.cli import eval_group

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service" / "http"))
from chat_server import ChatServer

pytestmark = pytest.mark.live_server

N = 3
agent_rule = planner()
"""The planner: search once with the whole question (a paper's title), then keep paper 1 and stop."""


@pytest.fixture(scope="module")
def arb() -> tuple[Path, Path]:
    return arb_checkout()


@pytest.fixture(scope="module")
def questions(test_index: BuiltIndex, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from openxiv.corpus.store import Store

    with Store.open_readonly(test_index.db) as store:
        docs = [d for d in store.iter_papers() if d.title and d.abstract and "/" not in d.arxiv_id]
    path = tmp_path_factory.mktemp("arb-ledger") / "questions.jsonl"
    rows = [{"question": d.title, "answer": [d.title], "arxiv_id": d.arxiv_id} for d in docs[: N * 11 : 11]]
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


@pytest.fixture(scope="module")
def recording(test_index: BuiltIndex, questions: Path) -> Iterator[tuple[LiveServer, Path]]:
    ledger = questions.parent / "ledger"
    live = LiveServer(
        test_index.root, extra_env={"OPENXIV_LEDGER": str(ledger)}, log=questions.parent / "serve.log"
    )
    try:
        yield live, ledger
    finally:
        live.stop()


def test_the_benchmark_agents_run_gives_evidence_seen_recall(
    arb: tuple[Path, Path], recording: tuple[LiveServer, Path], questions: Path
) -> None:
    live, ledger = recording
    outputs = []
    with ChatServer(agent_rule) as chat:
        for n in range(1, N + 1):
            out = questions.parent / f"out{n}.jsonl"
            # the tagged URL is the only change to the agent
            outputs.append(
                run_inference(arb, f"{live.url}/runs/arb/q/{n}/search", chat.base_url, questions, n, out)
            )
    answers = questions.parent / "answers.jsonl"
    answers.write_text("".join(outputs), encoding="utf-8")
    report_path = questions.parent / "ledger.json"
    res = CliRunner().invoke(eval_group, ["ledger", "--ledger", str(ledger), "--gold", str(questions), "--run", "arb",
                                          "--answers", str(answers), "--json", str(report_path), "-q"],
                             catch_exceptions=False)  # fmt: skip
    assert res.exit_code == 0, res.output
    report = json.loads(report_path.read_text())
    rows = report["per_item"]
    assert [r["question"] for r in rows] == [str(n) for n in range(1, N + 1)]
    assert all(r["status"] == "scored" and r["calls"] >= 1 for r in rows)
    assert all(r["evidence_seen_recall"] is not None for r in rows)
    assert report["aggregates"]["evidence_seen_recall"]["value"] >= 2 / 3  # a title query finds its paper
    # the agent kept paper 1 of the search it made: named, and seen
    assert all(r["named"] == 1 and r["named_unseen_rate"] == 0.0 for r in rows)
