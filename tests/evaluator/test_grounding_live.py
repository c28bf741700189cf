"""The grounding check on answers a live `openxiv serve` gave: the baseline agent's candidates and
agent search responses quote the served evidence, so every quote must be found in its paper's stored
text (exact or normalised: the served text is the stored one, TeX residue shown as `…`)."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner
from live_index import BuiltIndex, LiveServer

from openxiv.evaluator.agent import agent
from openxiv.evaluator.cli import eval_group

QUERIES = [
    "batch normalization speeds up training",
    "planetary nebulae interacting with the interstellar medium",
    "retrieval augmented generation for vision",
    "binary protostars formation",
]


def grounding(db: Path, out: Path, *submissions: Path) -> dict:  # type: ignore[type-arg]
    args = [
        "grounding",
        *(x for s in submissions for x in ("-s", str(s))),
        "--db",
        str(db),
        "--json",
        str(out),
        "-q",
    ]
    res = CliRunner().invoke(eval_group, args, catch_exceptions=False)
    assert res.exit_code == 0, res.output
    report: dict = json.loads(out.read_text())  # type: ignore[type-arg]
    return report


def test_the_baseline_agents_evidence_is_grounded(
    server: LiveServer, test_index: BuiltIndex, tmp_path: Path
) -> None:
    items = tmp_path / "items.jsonl"
    items.write_text(
        "".join(
            json.dumps({"question": q, "answer": [], "arxiv_id": [], "type": "wide"}) + "\n" for q in QUERIES
        )
    )
    run = tmp_path / "run.jsonl"
    res = CliRunner().invoke(agent, ["baseline", "--url", server.url + "/search", "--input", str(items),
                                     "--out", str(run), "--wide-max", "5"], catch_exceptions=False)  # fmt: skip
    assert res.exit_code == 0, res.output
    report = grounding(test_index.db, tmp_path / "g.json", run)
    claims = [c for row in report["per_item"] for c in row["claims"]]
    assert len(claims) >= 10
    assert {c["verdict"] for c in claims} <= {"exact", "normalised"}, [c for c in claims if not c["faithful"]]
    assert report["counts"]["overall_faithfulness"] == 1.0


def test_agent_search_sources_are_grounded(
    server: LiveServer, test_index: BuiltIndex, tmp_path: Path
) -> None:
    path = tmp_path / "responses.jsonl"
    with httpx.Client(timeout=60) as http, path.open("w") as fh:
        for q in QUERIES:
            r = http.post(server.url + "/arxiv/agent/search", json={"query": q, "top_k": 5})
            assert r.status_code == 200, r.text
            fh.write(json.dumps({"id": q[:20], "query": q, **r.json()}) + "\n")
    report = grounding(test_index.db, tmp_path / "g.json", path)
    claims = [c for row in report["per_item"] for c in row["claims"]]
    assert len(claims) >= 10 and all(c["origin"] == "source" for c in claims)
    assert {c["verdict"] for c in claims} <= {"exact", "normalised"}, [c for c in claims if not c["faithful"]]
    # a source's evidence names its section (the abstract as "Abstract"); the check finds it there
    named = [c for c in claims if c.get("section_claimed") not in (None, "TLDR")]
    assert named and all(c["section"].lower() == c["section_claimed"].lower() for c in named), named


@pytest.mark.parametrize("model", ["openxiv-extractive"])
def test_an_extractive_answer_is_not_checked_twice(server: LiveServer, test_index: BuiltIndex, tmp_path: Path,
                                                   model: str) -> None:  # fmt: skip
    with httpx.Client(timeout=60) as http:
        body = http.post(server.url + "/arxiv/agent/search", json={"query": QUERIES[0], "top_k": 3}).json()
    assert body["stats"]["model"] == model
    path = tmp_path / "one.json"
    path.write_text(json.dumps(body))
    report = grounding(test_index.db, tmp_path / "g.json", path)
    (row,) = report["per_item"]
    assert all(c["origin"] == "source" for c in row["claims"])
    # the same answer read as a plain report: its blockquotes credited to the block's paper, all found
    text = tmp_path / "answer.md"
    text.write_text(body["answer"])
    as_text = grounding(test_index.db, tmp_path / "t.json", text)
    quoted = [c for c in as_text["per_item"][0]["claims"] if c["quoted"]]
    assert quoted and all(c["cited"] for c in quoted)
    assert {c["verdict"] for c in quoted} <= {"exact", "normalised"}, quoted


def test_an_agent_search_stream_is_read_as_one_answer(
    server: LiveServer, test_index: BuiltIndex, tmp_path: Path
) -> None:
    """The NDJSON stream (`/arxiv/agent/search/stream`) as it arrived: its sources event is checked."""
    with httpx.Client(timeout=60) as http:
        r = http.post(server.url + "/arxiv/agent/search/stream", json={"query": QUERIES[1], "top_k": 4})
    assert r.status_code == 200 and r.text.count("\n") > 3
    path = tmp_path / "stream.ndjson"
    path.write_text(r.text)
    report = grounding(test_index.db, tmp_path / "g.json", path)
    (row,) = report["per_item"]
    assert row["kind"] == "agent_search" and row["quotes"] >= 4
    assert {c["verdict"] for c in row["claims"]} <= {"exact", "normalised"}
