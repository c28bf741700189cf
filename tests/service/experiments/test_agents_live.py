"""The unmodified AutoResearchBench agent and deepxiv-sdk through a tagged base URL (issue 40): their
calls land in the ledger, a per-question cutoff holds back later papers though neither sends
``date_to``, and ``--replay`` gives them the same bytes with another index loaded.

The AutoResearchBench agent is the benchmark's own ``inference.py`` (github CherYou/AutoResearchBench),
run as a subprocess in its own venv with its own packages (qwen-agent, aiohttp, openai): give its
checkout as ``OPENXIV_TEST_ARB_DIR`` and the venv's python as ``OPENXIV_TEST_ARB_PYTHON`` (``make
arb-venv`` makes one); without them the agent's test is skipped. Its planner and its paper summariser
are LLMs; here one scripted chat server on loopback plays both (search with the question's first
words, then keep the first paper), so the agent's real search client, parsing and candidate
bookkeeping run, and the only thing pointed at openxiv is ``PAPER_SEARCH_API_URL``.
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from arb_agent import arb_checkout, planner, run_inference
from live_index import BIN, BuiltIndex, LiveServer

from openxiv.corpus.shared import SharedData

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "http"))
from chat_server import ChatServer

pytestmark = pytest.mark.live_server

CUTOFF = "2016-12-31"
agent_rule = planner(words=12)
"""The planner: search once with the question's first twelve words, then keep paper 1 and stop."""


@pytest.fixture(scope="module")
def arb() -> tuple[Path, Path]:
    return arb_checkout()


@pytest.fixture(scope="module")
def questions(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The first two public deep-search example questions; their cutoffs: question 1 (line 1) at
    2016-12-31, question 2 none."""
    gold = SharedData.default().gold("autoresearchbench") / "academic_deepsearch_example.jsonl"
    if not gold.is_file():
        pytest.skip(f"AutoResearchBench examples not found ({gold})")
    tmp = tmp_path_factory.mktemp("arb")
    lines = gold.read_text(encoding="utf-8").splitlines()[:2]
    (tmp / "questions.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    (tmp / "cutoffs.json").write_text(json.dumps({"1": CUTOFF}), encoding="utf-8")
    return tmp / "questions.jsonl"


@pytest.fixture(scope="module")
def chat() -> Iterator[ChatServer]:
    with ChatServer(agent_rule) as server:
        yield server


@pytest.fixture(scope="module")
def recording(test_index: BuiltIndex, questions: Path) -> Iterator[tuple[LiveServer, Path]]:
    ledger = questions.parent / "ledger"
    env = {"OPENXIV_LEDGER": str(ledger), "OPENXIV_CUTOFFS": str(questions.parent / "cutoffs.json")}
    live = LiveServer(test_index.root, extra_env=env, log=questions.parent / "serve.log")
    try:
        yield live, ledger
    finally:
        live.stop()


def run_agent(
    arb: tuple[Path, Path], base: str, chat: ChatServer, questions: Path, n: int, out: Path
) -> dict[str, Any]:
    """The agent on question ``n`` (1-based line) with ``PAPER_SEARCH_API_URL`` under ``base``."""
    text = run_inference(arb, f"{base}/runs/arb/q/{n}/search", chat.base_url, questions, n, out)
    (line,) = text.splitlines()
    return dict(json.loads(line))


def candidates(result: dict[str, Any]) -> list[str]:
    (run,) = result["inference_results"]
    return [c["arxiv_id"] for c in run["final_candidates"]]


def dates(url: str, ids: list[str]) -> dict[str, str]:
    return {aid: httpx.get(f"{url}/v1/papers/{aid}", timeout=30).json()["date"] for aid in ids}


def test_the_agent_is_recorded_held_to_its_cutoff_and_replayed_over_another_index(
    arb: tuple[Path, Path],
    chat: ChatServer,
    questions: Path,
    recording: tuple[LiveServer, Path],
    bm25_snapshot: Path,
) -> None:
    from openxiv.corpus.ledger.store import LedgerReader

    live, ledger = recording
    tmp = questions.parent
    first = {n: run_agent(arb, live.url, chat, questions, n, tmp / f"rec{n}.jsonl") for n in (1, 2)}
    reader = LedgerReader(ledger)
    calls = {n: list(reader.records(run="arb", question=str(n))) for n in (1, 2)}
    for n in (1, 2):
        (search,) = calls[n]
        assert search.kind == "search" and search.route == "/search" and search.status == 200
        assert search.params["return_contents"] is True and "date_to" not in search.params
        assert len(search.returned) == 10 and set(candidates(first[n])) <= {r.id for r in search.returned}
    held, free = calls[1][0], calls[2][0]
    assert held.cutoff == CUTOFF and held.leaks > 0 and free.cutoff is None and free.leaks == 0
    assert all(d <= CUTOFF for d in dates(live.url, [r.id for r in held.returned]).values())
    assert any(d > CUTOFF for d in dates(live.url, [r.id for r in free.returned]).values())
    assert all(d > CUTOFF for d in dates(live.url, list(held.leaked)).values())

    # what the evaluator reads from this ledger: evidence-seen recall for both questions of the run
    report = tmp / "eval.json"
    cmd = [str(BIN / "openxiv"), "eval", "ledger", "--ledger", str(ledger), "-g", str(questions)]
    done = subprocess.run(
        [*cmd, "--json", str(report), "-q", "--resamples", "10"], capture_output=True, text=True, timeout=300
    )
    assert done.returncode == 0, done.stderr
    scored = json.loads(report.read_text())
    assert scored["counts"]["calls_scored"] == 2 and scored["counts"]["rows_with_calls"] == 2
    assert {row["item_id"] for row in scored["per_item"]} == {"arb/1", "arb/2"}
    assert scored["aggregates"]["evidence_seen_recall"]["n"] == 2

    again = tmp / "replayed"
    env = {"OPENXIV_REPLAY": str(ledger), "OPENXIV_LEDGER": str(again)}
    replay = LiveServer(bm25_snapshot, extra_env=env, log=tmp / "replay.log")
    try:
        second = {n: run_agent(arb, replay.url, chat, questions, n, tmp / f"rep{n}.jsonl") for n in (1, 2)}
        other = httpx.post(
            replay.url + "/runs/arb/q/1/search", json={"query": "not asked before"}, timeout=30
        )
    finally:
        replay.stop()
    assert other.status_code == 409 and "not in the replayed ledger" in other.json()["detail"]
    for n in (1, 2):
        assert candidates(second[n]) == candidates(first[n])
        rep, *unrecorded = LedgerReader(again).records(run="arb", question=str(n))
        assert [r.status for r in unrecorded] == ([409] if n == 1 else [])
        assert (
            rep.replayed
            and rep.body_sha256 == calls[n][0].body_sha256
            and rep.request_key == calls[n][0].request_key
        )


def test_deepxiv_sdk_through_a_tagged_base_url(
    recording: tuple[LiveServer, Path], bm25_snapshot: Path, questions: Path
) -> None:
    from deepxiv_sdk import Reader
    from deepxiv_sdk.exceptions import APIError, NotFoundError

    from openxiv.corpus.ledger.store import LedgerReader

    live, ledger = recording
    free = Reader(base_url=f"{live.url}/runs/sdk/q/2", token="any")
    held = Reader(base_url=f"{live.url}/runs/sdk/q/1", token="any")
    query = "attention is all you need transformer"
    later = [h["arxiv_id"] for h in free.search(query, size=10)["result"] if h["date"] > CUTOFF]
    assert later
    got = held.search(query, size=10)["result"]
    assert got and all(h["date"] <= CUTOFF for h in got)
    with pytest.raises(NotFoundError):
        held.head(later[0])
    assert free.head(later[0])["arxiv_id"] == later[0]
    recorded = {r.kind: r for r in LedgerReader(ledger).records(run="sdk", question="1")}
    assert recorded["search"].leaks >= len(later) and recorded["head"].leaked == (later[0],)

    replay = LiveServer(
        bm25_snapshot, extra_env={"OPENXIV_REPLAY": str(ledger)}, log=questions.parent / "sdk-replay.log"
    )
    try:
        again = Reader(base_url=f"{replay.url}/runs/sdk/q/1", token="any")
        assert again.search(query, size=10)["result"] == got
        with pytest.raises(NotFoundError):
            again.head(later[0])
        with pytest.raises(APIError, match="409"):
            again.search("a query never recorded", size=10)
    finally:
        replay.stop()
