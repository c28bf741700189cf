"""The baseline agent against the live server: calibration, answers, and the evaluator's score of them."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from live_index import BuiltIndex, LiveServer

from openxiv.evaluator.agent import AgentPolicy, agent, calibrate_wide, select
from openxiv.evaluator.cli import eval_group

N_ITEMS = 30


@pytest.fixture(scope="module")
def title_items(test_index: BuiltIndex, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Wide items whose question is a real paper's title and whose gold is that one paper."""
    from openxiv.corpus.store import Store

    with Store.open_readonly(test_index.db) as store:
        docs = [d for d in store.iter_papers() if d.title and d.abstract and "/" not in d.arxiv_id]
    chosen = docs[: N_ITEMS * 5 : 5]
    path = tmp_path_factory.mktemp("agent") / "items.jsonl"
    with path.open("w", encoding="utf-8") as fh:
        for d in chosen:
            item = {"question": d.title, "answer": [d.title], "arxiv_id": [d.arxiv_id], "type": "wide"}
            fh.write(json.dumps(item) + "\n")
    return path


def run(cmd: Any, *args: str) -> str:
    res = CliRunner().invoke(cmd, list(args), catch_exceptions=False)
    assert res.exit_code == 0, res.output
    return res.output


def test_select_applies_the_relative_cut_and_the_cap() -> None:
    hits = [{"arxiv_id": f"2501.0000{i}", "score": s} for i, s in enumerate([1.0, 0.9, 0.5, 0.4])]
    chosen, state = select(hits, "wide", AgentPolicy(wide_rel=0.5, wide_max=10))
    assert [h["score"] for h in chosen] == [1.0, 0.9, 0.5] and state == "ids"
    chosen, _ = select(hits, "wide", AgentPolicy(wide_rel=0.0, wide_max=2))
    assert len(chosen) == 2
    assert select([], "wide", AgentPolicy()) == ([], "empty")
    assert select(hits, "deep", AgentPolicy(deep_min_score=2.0)) == ([], "none")


def test_calibration_is_the_grid_maximum(server: LiveServer, title_items: Path) -> None:
    import httpx

    items = [json.loads(line) for line in title_items.open()]
    with httpx.Client(timeout=60) as http:
        hit_lists = [
            http.post(server.url + "/search", json={"query": i["question"], "top_k": 20}).json()["result"]
            for i in items
        ]
    golds = [set(i["arxiv_id"]) for i in items]
    policy, best, grid = calibrate_wide(hit_lists, golds, top_k=20)
    assert best == max(g["mean_iou"] for g in grid)
    # one gold paper per question, found by its own title: answering with one paper is best
    assert policy.wide_max == 1 and best > 0.8
    # a looser policy answers with more papers and scores strictly lower on these items
    assert best > next(g["mean_iou"] for g in grid if g["wide_rel"] == 0.0 and g["wide_max"] == 5)


def test_calibrated_agent_scores_what_calibration_promised(
    server: LiveServer, title_items: Path, tmp_path: Path
) -> None:
    policy_file, answers, report = tmp_path / "policy.json", tmp_path / "out.jsonl", tmp_path / "r.json"
    url = server.url + "/search"
    out = run(
        agent,
        "calibrate",
        "--url",
        url,
        "--input",
        str(title_items),
        "--out",
        str(policy_file),
        "--top-k",
        "20",
    )
    assert "wide_max=1" in out
    calibrated = json.loads(policy_file.read_text())
    run(
        agent,
        "baseline",
        "--url",
        url,
        "--input",
        str(title_items),
        "--policy",
        str(policy_file),
        "--out",
        str(answers),
    )
    lines = [json.loads(line) for line in answers.open()]
    assert len(lines) == N_ITEMS
    first = lines[0]["inference_results"][0]
    assert first["final_candidate_state"] == "ids" and len(first["final_candidates"]) == 1
    assert first["agent"]["policy"] == calibrated["policy"]
    run(
        eval_group,
        "autoresearchbench",
        "--gold",
        str(title_items),
        "--submission",
        str(answers),
        "--json",
        str(report),
    )
    scored = json.loads(report.read_text())["aggregates"]["iou"]["value"]
    assert scored == pytest.approx(calibrated["mean_iou"], abs=1e-9)


def test_bad_policy_file_is_a_clear_error(tmp_path: Path, title_items: Path) -> None:
    bad = tmp_path / "policy.json"
    bad.write_text("[1, 2]")
    res = CliRunner().invoke(
        agent, ["baseline", "--input", str(title_items), "--out", str(tmp_path / "o"), "--policy", str(bad)]
    )
    assert res.exit_code != 0 and "not a policy file" in res.output
