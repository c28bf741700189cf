"""``openxiv eval``: reports on the shared files, self-contained HTML, clean errors (exit 1 for bad
content, 2 for usage)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from click.testing import CliRunner

from openxiv.evaluator.cli import eval_group


def invoke(*args: str):
    return CliRunner().invoke(eval_group, list(args), catch_exceptions=False)


def test_autoresearchbench_writes_json_html_md(arb_dir: Path, tmp_path: Path) -> None:
    out = tmp_path / "r"
    res = invoke(
        "autoresearchbench", "--gold", str(arb_dir / "academic_widesearch_example.jsonl"),
        "--submission", str(arb_dir / "sample_inference_output_wide.jsonl"),
        "--json", f"{out}.json", "--html", f"{out}.html", "--md", f"{out}.md", "--resamples", "100",
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    assert "coverage: 5/5" in res.output and "iou" in res.output
    data = json.loads(Path(f"{out}.json").read_text())
    official = json.loads((arb_dir / "sample_inference_output_wide_eval_results.json").read_text())
    assert data["extra"]["official_wide"] == official["aggregate_stats"]
    assert data["aggregates"]["iou"]["value"] == 0.0 and len(data["per_item"]) == 5
    assert data["conventions"]["none_answer"] and data["inputs"]["submission"].endswith("wide.jsonl")
    html = Path(f"{out}.html").read_text()
    assert not re.search(r"""(src|href)\s*=\s*["']?\s*(https?:)?//""", html, re.I)  # opens offline
    assert "<style>" in html and '<svg class="plot"' in html and "missed" in html
    md = Path(f"{out}.md").read_text()
    assert md.startswith("# autoresearchbench") and "## Per item" in md


def test_compare_two_submissions(arb_dir: Path, tmp_path: Path) -> None:
    gold = arb_dir / "academic_widesearch_example.jsonl"
    lines = [json.loads(x) for x in gold.read_text().splitlines()]
    good = tmp_path / "good.jsonl"
    good.write_text(
        "\n".join(json.dumps({"question": x["question"], "predictions": x["arxiv_id"][:2]}) for x in lines)
    )
    res = invoke(
        "autoresearchbench", "-g", str(gold), "-s", str(good), "--compare", str(arb_dir / "sample_inference_output_wide.jsonl"),
        "--json", str(tmp_path / "c.json"), "--html", str(tmp_path / "c.html"), "--seed", "3", "--resamples", "200",
    )  # fmt: skip
    assert res.exit_code == 0, res.output
    comp = json.loads((tmp_path / "c.json").read_text())["comparison"]
    rows = {r["metric"]: r for r in comp["rows"]}
    assert rows["precision"]["mean_a"] == 1.0 and rows["precision"]["wins"] == 5
    assert rows["iou"]["p_randomization"] == pytest.approx(2 / 32)  # n=5: exact enumeration
    assert comp["seed"] == 3 and "Comparison" in (tmp_path / "c.html").read_text()


def test_ranked_and_drmi(tmp_path: Path) -> None:
    q = tmp_path / "q.jsonl"
    q.write_text(json.dumps({"qid": "a", "query": "x", "relevant": ["2301.00001", "2301.00002"]}) + "\n")
    r = tmp_path / "r.jsonl"
    r.write_text(json.dumps({"qid": "a", "results": ["2301.00002", "9999"]}) + "\n")
    res = invoke("ranked", "-g", str(q), "-s", str(r), "--k", "1,10", "--json", str(tmp_path / "o.json"))
    assert res.exit_code == 0, res.output
    agg = json.loads((tmp_path / "o.json").read_text())["aggregates"]
    assert agg["recall@10"]["value"] == 0.5 and agg["mrr"]["value"] == 1.0
    g = tmp_path / "g.jsonl"
    g.write_text(
        json.dumps({"qid": "1", "question": "q", "answer": ["Large Language Models are Zero-Shot Reasoners"]})
        + "\n"
    )
    s = tmp_path / "s.jsonl"
    s.write_text(json.dumps({"qid": "1", "predictions": ["Large language models: a survey"]}) + "\n")
    res = invoke("drmi", "-g", str(g), "-s", str(s), "--json", str(tmp_path / "d.json"))
    assert res.exit_code == 0, res.output
    assert json.loads((tmp_path / "d.json").read_text())["aggregates"]["recall"]["value"] == 1.0
    res = invoke("autoresearchbench", "-g", str(g), "-s", str(s), "--json", str(tmp_path / "e.json"))
    assert json.loads((tmp_path / "e.json").read_text())["aggregates"]["recall"]["value"] == 0.0


def test_corpus_db_option(corpus_db: Path, tmp_path: Path) -> None:
    from openxiv.corpus.store import Store

    with Store.open_readonly(corpus_db) as store:
        doc = next(iter(store.iter_papers()))
    g = tmp_path / "g.jsonl"
    g.write_text(json.dumps({"qid": "1", "question": "q", "arxiv_id": [doc.arxiv_id, "2101.00001"]}) + "\n")
    s = tmp_path / "s.jsonl"
    s.write_text(json.dumps({"qid": "1", "predictions": [doc.title, "2605.99999"]}) + "\n")
    res = invoke("autoresearchbench", "-g", str(g), "-s", str(s), "--corpus-db", str(corpus_db),
                 "--cutoff", "2020-01-01", "--json", str(tmp_path / "o.json"), "--html", str(tmp_path / "o.html"))  # fmt: skip
    assert res.exit_code == 0, res.output
    data = json.loads((tmp_path / "o.json").read_text())
    row = data["per_item"][0]
    assert row["hits"] == 1 and row["n_hallucinated"] == 1 and row["n_after_cutoff"] == 2
    assert row["n_gold_not_in_corpus"] == 1 and row["details"]["gold_not_in_corpus"] == ["2101.00001"]
    assert data["counts"]["n_gold_not_in_corpus"] == 1 and data["extra"]["micro"]["recall"] == 0.5
    assert any(doc.title in m for m in row["details"]["matched"])  # titles shown from the corpus DB
    assert data["breakdowns"]["category"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ('{"qid": "1", "predictions": []}\n{oops\n', "s.jsonl line 2: invalid JSON"),
        ('{"qid": "1"}\n', "s.jsonl line 1: expected 'predictions'"),
    ],
)
def test_bad_submission_exits_1_with_line_number(
    arb_dir: Path, tmp_path: Path, content: str, message: str
) -> None:
    s = tmp_path / "s.jsonl"
    s.write_text(content)
    res = CliRunner().invoke(
        eval_group,
        ["autoresearchbench", "-g", str(arb_dir / "academic_deepsearch_example.jsonl"), "-s", str(s)],
    )
    assert res.exit_code == 1  # bad content is a data error; 2 is for usage errors only
    assert message in res.output and "Traceback" not in res.output


def test_usage_errors_exit_2(tmp_path: Path) -> None:
    """A missing file or a bad option value is a click usage error: exit 2, the message names the option."""
    g = tmp_path / "g.jsonl"
    g.write_text('{"qid": "1", "question": "q", "arxiv_id": ["2301.00001"]}\n')
    cases = [
        ["autoresearchbench", "-g", str(tmp_path / "none.jsonl"), "-s", str(g)],
        ["autoresearchbench", "-g", str(g), "-s", str(tmp_path / "none.jsonl")],
        ["autoresearchbench", "-g", str(g), "-s", str(g), "--cutoff", "yesterday"],
        ["autoresearchbench", "-g", str(g), "-s", str(g), "--corpus-db", str(tmp_path / "no.sqlite")],
        ["ranked", "-g", str(g), "-s", str(g), "--k", "a,b"],
    ]
    for args in cases:
        res = CliRunner().invoke(eval_group, args)
        assert res.exit_code == 2, (args, res.output)
        assert "Error: Invalid value for" in res.output and "Traceback" not in res.output


def test_taxobench_subcommand_on_the_toy_files(tmp_path: Path) -> None:
    from openxiv.corpus.shared import SharedData

    d = SharedData.default().gold("taxobench")
    if not (d / "toy_reference.jsonl").is_file():
        pytest.skip(f"TaxoBench toy files not found under {d}")
    res = invoke("taxobench", "-g", str(d / "toy_reference.jsonl"), "-s", str(d / "toy_prediction.jsonl"),
                 "--similarity", "exact", "--json", str(tmp_path / "t.json"), "--html", str(tmp_path / "t.html"))  # fmt: skip
    assert res.exit_code == 0, res.output
    agg = json.loads((tmp_path / "t.json").read_text())["aggregates"]
    for m in ("recall", "precision", "f1", "ari", "v_measure"):
        assert agg[m]["value"] == 1.0
    assert '<svg class="plot"' in (tmp_path / "t.html").read_text()
