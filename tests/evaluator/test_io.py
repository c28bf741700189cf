"""Readers: formats, type inference, line-numbered errors."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from openxiv.evaluator.io import EvalInputError, read_arb_gold, read_qrels, read_run, read_submission


def write(tmp_path: Path, name: str, lines: list[object]) -> Path:
    p = tmp_path / name
    p.write_text(
        "\n".join(x if isinstance(x, str) else json.dumps(x) for x in lines) + "\n", encoding="utf-8"
    )
    return p


def test_gold_type_inference_and_deep_string_is_one_id(tmp_path: Path) -> None:
    p = write(tmp_path, "g.jsonl", [
        {"question": "q1", "answer": ["T"], "arxiv_id": "2204.05525"},
        {"question": "q2", "answer": ["A", "B"], "arxiv_id": ["2301.00001", "2301.00002"]},
        {"question": "q3", "answer": ["None"], "arxiv_id": "None"},
        {"question": "q4", "answer": [], "arxiv_id": [], "type": "deep", "qid": "x"},
    ])  # fmt: skip
    g = read_arb_gold(p)
    assert [x.type for x in g] == ["deep", "wide", "deep", "deep"]
    assert g[0].ids == ["2204.05525"]  # one id, not ten characters
    assert g[1].ids == ["2301.00001", "2301.00002"]
    assert g[2].none_answer and g[2].ids == [] and g[2].titles == []
    assert g[3].none_answer and g[3].item_id == "x"
    assert [x.item_id for x in g[:3]] == ["1", "2", "3"]  # line numbers


def test_shared_gold_files(arb_dir: Path) -> None:
    deep = read_arb_gold(arb_dir / "academic_deepsearch_example.jsonl")
    wide = read_arb_gold(arb_dir / "academic_widesearch_example.jsonl")
    assert len(deep) == 10 and all(x.type == "deep" and len(x.ids) == 1 for x in deep)
    assert len(wide) == 5 and [len(x.ids) for x in wide] == [4, 2, 11, 5, 16]
    # an inference output can serve as its own gold (its input_data lines)
    inline = read_arb_gold(arb_dir / "sample_inference_output_wide.jsonl")
    assert sorted(len(x.ids) for x in inline) == [2, 4, 5, 11, 16]


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        (['{"question": "a", "arxiv_id": "2301.00001"}', "{not json"], "g.jsonl line 2: invalid JSON"),
        (
            ['{"question": "a", "arxiv_id": "2301.00001"}', "", "[1, 2]"],
            "g.jsonl line 3: expected a JSON object",
        ),
        ([{"answer": ["x"]}], "g.jsonl line 1: a gold item needs 'question' or 'qid'"),
        ([{"question": "a", "arxiv_id": {"x": 1}, "type": "wide", "answer": 3}], "g.jsonl line 1: 'answer'"),
        ([{"question": "a", "arxiv_id": "2301.00001", "type": "broad"}], "line 1: 'type' must be"),
        ([{"qid": "a", "question": "x"}, {"qid": "a", "question": "y"}], "line 2: duplicate item id 'a'"),
    ],
)
def test_gold_errors_are_line_numbered(tmp_path: Path, lines: list[object], message: str) -> None:
    with pytest.raises(EvalInputError, match=message):
        read_arb_gold(write(tmp_path, "g.jsonl", lines))


def test_inference_output_parsing(arb_dir: Path) -> None:
    subs = read_submission(arb_dir / "sample_inference_output_wide.jsonl")
    assert len(subs) == 5
    p = subs[0].passes[0]
    assert p.state == "none" and p.candidates == [] and p.status == "finished"
    assert (p.turn_count, p.tool_call_count, p.last_tokens, p.total_duration) == (5, 4, 2597, 11.4464)
    errors = next(s.passes[0] for s in subs if s.passes[0].turn_count == 7)
    assert errors.tool_call_count == 4  # two 'error' turns are not tool calls


def test_simple_submission_and_passes(tmp_path: Path) -> None:
    p = write(tmp_path, "s.jsonl", [
        {"qid": "1", "predictions": ["2301.00001", "A Title Of A Paper"], "pass_id": 0},
        {"qid": "1", "predictions": [{"arxiv_id": "2301.00002", "title": "t"}], "pass_id": 1},
        {"question": "q  two", "predictions": [], "state": "none"},
    ])  # fmt: skip
    subs = read_submission(p)
    assert len(subs) == 2 and len(subs[0].passes) == 2
    c = subs[0].passes[0].candidates
    assert c[0].arxiv_id == "2301.00001" and c[1].title == "A Title Of A Paper" and c[1].arxiv_id is None
    assert subs[1].passes[0].state == "none"


@pytest.mark.parametrize(
    ("lines", "message"),
    [
        ([{"qid": "1"}], "s.jsonl line 1: expected 'predictions'"),
        ([{"predictions": []}], "line 1: a submission line needs 'qid' or 'question'"),
        ([{"qid": "1", "predictions": "2301.00001"}], "line 1: predictions/final_candidates must be a list"),
        ([{"qid": "1", "predictions": [], "state": "maybe"}], "line 1: 'state' must be"),
        ([{"qid": "1", "predictions": []}, {"qid": "1", "predictions": []}], "line 2: pass 0 of this item"),
        (
            [{"input_data": {"question": "q"}, "inference_results": [{"final_candidate_state": "x"}]}],
            "line 1 pass 0",
        ),
        # the first bad line is named, whatever is wrong further down (the reader looks ahead for ids)
        ([{"qid": "1", "predictions": [], "state": "maybe"}, "{not json"], "line 1: 'state' must be"),
        ([{"qid": "1", "predictions": ["2301.00001"]}, "{not json"], "line 2: invalid JSON"),
    ],
)
def test_submission_errors(tmp_path: Path, lines: list[object], message: str) -> None:
    with pytest.raises(EvalInputError, match=message):
        read_submission(write(tmp_path, "s.jsonl", lines))


def test_trec_and_jsonl_ranked_inputs(tmp_path: Path) -> None:
    q = tmp_path / "q.txt"
    q.write_text("q1 0 d1 1\nq1 0 d2 0\n# comment\nq2 0 d3 2\n")
    assert read_qrels(q) == {"q1": {"d1": 1, "d2": 0}, "q2": {"d3": 2}}
    r = tmp_path / "r.txt"
    r.write_text("q1 Q0 d1 1 2.5 run\nq1 Q0 d2 2 1.5 run\n")
    assert read_run(r) == {"q1": [("d1", 2.5), ("d2", 1.5)]}
    j = write(tmp_path, "r.jsonl", [{"qid": "q1", "results": ["d2", {"id": "d1", "score": 0.1}]}])
    assert read_run(j) == {"q1": [("d2", -0.0), ("d1", 0.1)]}
    qs = write(tmp_path, "qs.jsonl", [{"qid": "a", "query": "x", "relevant": ["2301.00001"]}])
    assert read_qrels(qs) == {"a": {"2301.00001": 1}}
    bad = tmp_path / "bad.txt"
    bad.write_text("q1 Q0 d1 1 2.5 run\nq1 Q0 d2 2 high run\n")
    with pytest.raises(EvalInputError, match=r"bad\.txt line 2: score 'high'"):
        read_run(bad)
    bad.write_text("q1 0 d1\n")
    with pytest.raises(EvalInputError, match=r"bad\.txt line 1: a qrels line has 4 fields"):
        read_qrels(bad)
    with pytest.raises(EvalInputError, match="cannot open"):
        read_qrels(tmp_path / "missing.txt")
