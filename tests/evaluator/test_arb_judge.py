"""AutoResearchBench deep items: the title judge decides only the pairs the id and title rules leave
open, on the shared deep gold, against a scripted OpenAI-compatible judge over real HTTP; replay gives
the same report, ``none`` counts the pairs as unresolved, wide items are never judged."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from click.testing import CliRunner

from openxiv.evaluator.cli import eval_group
from openxiv.evaluator.io import Candidate, GoldItem
from openxiv.evaluator.judge.parse import is_match_strict, is_match_upstream
from openxiv.evaluator.judge.scripted import ScriptedServer
from openxiv.evaluator.matching import Matcher, OpenPairs

# Crafted predictions for the first six items of academic_deepsearch_example.jsonl:
SUBMISSION = [
    {"qid": "1", "predictions": ["TopFormer"]},  # open: too short for the title rule; the judge: same paper
    {"qid": "2", "predictions": [{"title": "Inverse RL by matching state marginal distributions"}]},  # open: same
    {"qid": "3", "predictions": ["Symmetric Parallax Attention for Stereo Image Super-Resolution"]},  # title rule
    {"qid": "4", "predictions": ["arXiv:2203.15859v2"]},  # id rule
    # a wrong valid id carrying the gold title: the id rule says no, never asked
    {"qid": "5", "predictions": [{"arxiv_id": "2301.00001",
                                  "title": "daBNN: A Super Fast Inference Framework for Binary Neural Networks on ARM devices"}]},
    {"qid": "6", "predictions": ["Ultra fast structure-aware deep lane detection"]},  # open: another paper
]  # fmt: skip
ANSWERS = {
    "TopFormer": '{"is_match": true}',
    "Inverse RL by matching state marginal distributions": 'Same work.\n```json\n{"is_match": true}\n```',
    "Ultra fast structure-aware deep lane detection": "Not a match: the true paper detects lane key points.",
}


def _rule(msgs: list[dict[str, str]]) -> str:
    """The scripted judge: a table keyed by the candidate title of the user message."""
    line = next(x for x in msgs[-1]["content"].splitlines() if x.startswith("Candidate title: "))
    return ANSWERS[line.removeprefix("Candidate title: ")]


@pytest.fixture()
def files(arb_dir: Path, tmp_path: Path) -> tuple[Path, Path]:
    sub = tmp_path / "deep_sub.jsonl"
    sub.write_text("".join(json.dumps(x) + "\n" for x in SUBMISSION), encoding="utf-8")
    return arb_dir / "academic_deepsearch_example.jsonl", sub


def _arb(gold: Path, sub: Path, *args: str, **env: str) -> dict:
    res = CliRunner().invoke(
        eval_group,
        ["autoresearchbench", "-g", str(gold), "-s", str(sub), "--resamples", "50", *args],
        env=env,
    )
    assert res.exit_code == 0, res.output
    return json.loads(res.stdout) if "-" in args else {"output": res.output}


def _numbers(doc: dict) -> dict:
    """The report without what says where the verdicts came from (back end, cache hits, inputs)."""
    doc = json.loads(json.dumps(doc))
    doc.pop("inputs"), doc["extra"].pop("judge"), doc["conventions"].pop("judge")
    doc["counts"].pop("judge_cache_hits")
    return doc


def test_the_judge_decides_only_open_pairs_then_replay_is_identical(files: tuple[Path, Path],
                                                                     tmp_path: Path) -> None:  # fmt: skip
    gold, sub = files
    env = {"OPENXIV_JUDGE_MODEL": "scripted", "OPENXIV_JUDGE_CACHE": str(tmp_path / "cache.jsonl"),
           "OPENXIV_JUDGE_BACKOFF": "0.01"}  # fmt: skip
    outs = [x for f in ("md", "html") for x in (f"--{f}", str(tmp_path / f"live.{f}"))]
    with ScriptedServer(_rule, faults={"Candidate title: TopFormer": ["500"]}) as srv:
        live = _arb(gold, sub, "--judge", "openai", "--json", "-", *outs, **env,
                    OPENXIV_JUDGE_BASE_URL=srv.base_url)  # fmt: skip
        assert srv.calls == 3 + 1 and srv.fault_log == ["500"]  # three open pairs, one retried
    counts = live["counts"]
    assert (counts["judge_open_pairs"], counts["judge_decided"], counts["judge_matched"]) == (3, 2, 2)
    assert counts["judge_unresolved"] == 1  # the strict parser finds no JSON in the lane answer
    acc = {r["item_id"]: r["accuracy"] for r in live["per_item"]}
    assert acc == {"1": 1.0, "2": 1.0, "3": 1.0, "4": 1.0, "5": 0.0, "6": 0.0, "7": 0.0, "8": 0.0,
                   "9": 0.0, "10": 0.0}  # fmt: skip
    assert live["aggregates"]["accuracy"]["value"] == pytest.approx(0.4)
    assert live["per_item"][0]["details"]["matched"] == ["2204.05525  <-  TopFormer (judge)"]
    pairs = {p["predicted"]: p["same_paper"] for p in live["extra"]["title_judge"]["pairs"]}
    assert pairs == {"TopFormer": True, "Inverse RL by matching state marginal distributions": True,
                     "Ultra fast structure-aware deep lane detection": None}  # fmt: skip
    stats = live["extra"]["judge"]["deep_title_match"]
    assert (stats["live_calls"], stats["retries"], stats["unjudged"], stats["failures"]) == (
        3,
        1,
        1,
        {"unparseable": 1},
    )
    assert live["extra"]["title_judge"]["prompt_source"] == "evaluator/judge/prompts/arb_title_match.txt"
    assert (live["extra"]["title_judge"]["temperature"], live["extra"]["title_judge"]["max_tokens"]) == (
        0.5,
        512,
    )
    for page in ("live.md", "live.html"):
        text = (tmp_path / page).read_text(encoding="utf-8")
        assert "judge openai:scripted, prompt arb-title-match@" in text
        assert "2 of 3 open title pairs decided by the judge (2 the same paper), 1 left unresolved" in text

    replay = _arb(gold, sub, "--judge", "replay", "--json", "-", **env)
    assert _numbers(replay) == _numbers(live)
    assert replay["counts"]["judge_cache_hits"] == 3
    table = _arb(gold, sub, "--judge", "replay", **env)["output"]
    assert "judge: judge replay:scripted, prompt arb-title-match@" in table and "3 from cache" in table

    # the deep scorer's own parsing: not JSON, so any "true" is a match ("the true paper" included)
    upstream = _arb(gold, sub, "--judge", "replay", "--parser", "upstream", "--json", "-", **env)
    assert upstream["counts"]["judge_matched"] == 3 and upstream["counts"]["judge_unresolved"] == 0
    assert upstream["per_item"][5]["accuracy"] == 1.0


def test_without_a_judge_the_open_pairs_are_counted_unresolved(files: tuple[Path, Path]) -> None:
    gold, sub = files
    doc = _arb(gold, sub, "--judge", "none", "--json", "-")
    c = doc["counts"]
    assert (c["judge_open_pairs"], c["judge_decided"], c["judge_unresolved"]) == (3, 0, 3)
    assert doc["conventions"]["judge"].startswith("not judged: no judge configured")
    assert "3 open title pairs left unresolved" in doc["conventions"]["judge"]
    assert doc["aggregates"]["accuracy"]["value"] == pytest.approx(0.2)  # the id and title rules alone
    table = _arb(gold, sub)["output"]  # no judge configured: the default is none
    assert "judge: not judged: no judge configured" in table


def test_no_open_pair_and_no_judge_leave_the_report_as_it_was(arb_dir: Path, tmp_path: Path) -> None:
    """Wide items are never judged (the wide scorer compares ids), and a deep run without an open pair
    and without a judge has no judge line at all."""
    wide = arb_dir / "academic_widesearch_example.jsonl"
    first = json.loads(wide.read_text(encoding="utf-8").splitlines()[0])
    sub = tmp_path / "wide_titles.jsonl"
    sub.write_text(json.dumps({"qid": "1", "predictions": ["An unrelated paper title about graphs"]}) + "\n",
                   encoding="utf-8")  # fmt: skip
    assert first["answer"]
    doc = _arb(wide, sub, "--json", "-")
    assert "judge" not in doc["conventions"] and "judge_open_pairs" not in doc["counts"]
    deep_sub = tmp_path / "deep_ids.jsonl"
    deep_sub.write_text(json.dumps({"qid": "1", "predictions": ["2204.05525"]}) + "\n", encoding="utf-8")
    doc = _arb(arb_dir / "academic_deepsearch_example.jsonl", deep_sub, "--json", "-")
    assert "judge" not in doc["conventions"] and "title_judge" not in doc["extra"]
    # a configured judge with nothing open says so, and is never called (nothing listens at this URL)
    env = {"OPENXIV_JUDGE_MODEL": "m", "OPENXIV_JUDGE_BASE_URL": "http://127.0.0.1:9/v1",
           "OPENXIV_JUDGE_CACHE": str(tmp_path / "c.jsonl")}  # fmt: skip
    doc = _arb(
        arb_dir / "academic_deepsearch_example.jsonl", deep_sub, "--judge", "openai", "--json", "-", **env
    )
    assert doc["conventions"]["judge"].endswith("no open title pair: nothing to judge")
    assert doc["counts"]["judge_open_pairs"] == 0 and doc["aggregates"]["accuracy"]["value"] == pytest.approx(
        0.1
    )


def test_the_prompt_is_the_users_file_beside_the_gold_or_named(
    files: tuple[Path, Path], tmp_path: Path
) -> None:
    gold, sub = files
    own = tmp_path / "arb"
    own.mkdir()
    shutil.copy(gold, own / gold.name)
    (own / "title_match_prompt.txt").write_text(
        "Same paper? {gold_title} / {predicted_title}\n", encoding="utf-8"
    )
    beside = _arb(own / gold.name, sub, "--judge", "none", "--json", "-")["extra"]["title_judge"]
    assert beside["prompt_source"] == str(own / "title_match_prompt.txt")
    named = tmp_path / "arb_prompt.txt"
    named.write_text("[user]\nIs {predicted_title} the paper {gold_title}?\n", encoding="utf-8")
    chosen = _arb(gold, sub, "--judge-prompt", str(named), "--json", "-")["extra"]["title_judge"]
    assert chosen["prompt_source"] == str(named)
    assert (
        chosen["prompt_version"].startswith("arb-title-match@")
        and chosen["prompt_version"] != beside["prompt_version"]
    )
    res = CliRunner().invoke(eval_group, ["autoresearchbench", "-g", str(gold), "-s", str(sub), "--judge-prompt",
                                          str(tmp_path / "missing.txt")])  # fmt: skip
    assert res.exit_code == 2 and "--prompt" in res.output


def test_open_pairs_are_one_to_one_and_never_between_two_ids() -> None:
    m = Matcher()
    titles_only = GoldItem("q", "question", ["Alpha Networks for Graphs", "Beta Transformers"], [], "deep", 1)
    gold = m.gold_entries(titles_only)
    pred, _ = m.pred_entries([Candidate("2101.00002", "Alpha nets"), Candidate(None, "AlphaNet"),
                              Candidate(None, "Beta-T")])  # fmt: skip
    collected = OpenPairs()
    assert m.match(gold, pred, judged=collected).hits == 0  # the title rule matches none of them
    assert collected.open == {
        (g, p) for g in titles_only.titles for p in ("Alpha nets", "AlphaNet", "Beta-T")
    }
    every = dict.fromkeys(collected.open, True)  # a judge that says yes to everything still pairs one-to-one
    second = m.match(gold, pred, judged=OpenPairs(decided=every))
    assert second.hits == 2 and second.extra == ["Beta-T"] and second.title_matches == 0
    assert second.matched == ["Alpha Networks for Graphs  <-  2101.00002 (judge)",
                              "Beta Transformers  <-  AlphaNet (judge)"]  # fmt: skip

    # a gold id against a different valid id: the id rule has decided, whatever the titles say
    with_id = GoldItem("q", "question", ["Alpha Networks for Graphs"], ["2101.00001"], "deep", 1)
    gold = m.gold_entries(with_id)
    pred, _ = m.pred_entries([Candidate("2101.00002", "Alpha nets")])
    collected = OpenPairs()
    assert m.match(gold, pred, judged=collected).hits == 0 and collected.open == set()
    pred, _ = m.pred_entries([Candidate(None, "Alpha nets")])  # a title alone is open against it
    assert m.match(gold, pred, judged=collected).hits == 0
    assert collected.open == {("Alpha Networks for Graphs", "Alpha nets")}


def test_title_match_parsers() -> None:
    assert is_match_strict('{"is_match": false}') is False
    assert is_match_strict('Reasoning {"note": 1} then {"is_match": true}') is True
    assert is_match_strict("They are the same paper: true") is None
    assert is_match_strict('{"is_match": "yes"}') is None
    assert is_match_upstream('{"is_match": false}') is False
    assert is_match_upstream('{"verdict": true}') is False  # JSON without is_match: no match
    assert is_match_upstream("Not a match, although true in spirit") is True
    assert is_match_upstream("No.") is False
