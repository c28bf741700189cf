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
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from click.testing import CliRunner
from live_index import BuiltIndex, LiveServer

from openxiv.evaluator.cli import eval_group

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "service" / "http"))
from chat_server import ChatServer

pytestmark = pytest.mark.live_server

SUMMARISER = "You are an expert in the field of AI academia."
N = 3


def agent_rule(messages: list[dict[str, str]]) -> str:
    if messages[0]["content"] == SUMMARISER:
        return "A paper about the query."
    if any(m["role"] == "assistant" for m in messages):
        return "<candidates>[1]</candidates>\n<answer>Done</answer>"
    question = messages[1]["content"].removeprefix("User Query: ")
    call = {"name": "PaperSearchTool", "arguments": {"query": question}}
    return f"<tool_call>{json.dumps(call)}</tool_call>"


@pytest.fixture(scope="module")
def arb() -> tuple[Path, Path]:
    checkout, python = os.environ.get("OPENXIV_TEST_ARB_DIR"), os.environ.get("OPENXIV_TEST_ARB_PYTHON")
    if not checkout or not (Path(checkout) / "inference.py").is_file():
        pytest.skip("OPENXIV_TEST_ARB_DIR does not name an AutoResearchBench checkout (with inference.py)")
    if not python or not Path(python).is_file():
        pytest.skip("OPENXIV_TEST_ARB_PYTHON does not name the agent venv's python (make arb-venv)")
    return Path(checkout), Path(python)


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
    checkout, python = arb
    live, ledger = recording
    outputs = []
    with ChatServer(agent_rule) as chat:
        for n in range(1, N + 1):
            out = questions.parent / f"out{n}.jsonl"
            env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENXIV_", "PYTHON"))}
            env.update(
                PAPER_SEARCH_API_URL=f"{live.url}/runs/arb/q/{n}/search",  # the only change to the agent
                PAPER_SEARCH_OPENAI_API_KEY="unused",
                PAPER_SEARCH_OPENAI_API_BASE=chat.base_url,
                PAPER_SEARCH_SUMMARY_MODEL_NAME="gpt-4o",
            )
            cmd = [str(python), "inference.py", "--input-file", str(questions), "--output-file", str(out),
                   "--model", "gpt-4o", "--api-key", "unused", "--api-base", chat.base_url, "--max-turns", "3",
                   "--eval-start", str(n - 1), "--eval-end", str(n), "--max-workers", "1"]  # fmt: skip
            done = subprocess.run(cmd, cwd=checkout, env=env, capture_output=True, text=True, timeout=600)
            assert done.returncode == 0, done.stderr[-2000:]
            outputs.append(out.read_text(encoding="utf-8"))
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
