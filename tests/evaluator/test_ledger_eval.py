"""`openxiv eval ledger` and `openxiv runs` over ledgers written by the real ledger writer, with the
real AutoResearchBench wide gold: evidence-seen recall, first call and rank, repeated and wasted
calls, tokens, named-but-unseen papers, the exports, and bad input (exit 2)."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from openxiv.corpus.ledger.records import LedgerRecord, Read, Returned
from openxiv.corpus.ledger.store import LedgerWriter, body_sha256
from openxiv.evaluator.cli import eval_group
from openxiv.evaluator.io import read_arb_gold
from openxiv.evaluator.ledger.cli import runs

OTHER = ["2503.00001", "2503.00002", "2503.00003"]


def call(run: str, q: str | None, kind: str, key: str, returned: list[str] = (), read: list[Read] = (),  # type: ignore[assignment]
         status: int = 200, second: int = 0) -> tuple[LedgerRecord, bytes]:  # fmt: skip
    body = json.dumps({"result": [{"arxiv_id": i, "title": f"paper {i}"} for i in returned]}).encode()
    rec = LedgerRecord(
        time=f"2026-11-29T08:00:{second:02d}.000000+00:00", run=run, question=q, front="http",
        method="POST", route="/search", kind=kind, params={"query": key}, status=status, latency_ms=5.0,
        snapshot="s1", request_key=key, body_sha256=body_sha256(body), body_bytes=len(body),
        content_type="application/json",
        returned=tuple(Returned(i, r) for r, i in enumerate(returned, 1)), read=tuple(read),
        fault="429" if status == 429 else None,
    )  # fmt: skip
    return rec, body


@pytest.fixture()
def wide_gold(arb_dir: Path) -> Path:
    return arb_dir / "academic_widesearch_example.jsonl"


@pytest.fixture()
def ledger(tmp_path: Path, wide_gold: Path) -> tuple[Path, list[list[str]]]:
    """Run r1 on questions 1 and 2 of the wide gold, run r2 on question 1, and untagged calls."""
    gold = [[i for i in g.ids] for g in read_arb_gold(wide_gold)]
    g1 = gold[0]
    calls = [
        call("r1", "1", "search", "k1", [OTHER[0], g1[0], OTHER[1]], second=1),
        call("r1", "1", "search", "k1", [OTHER[0], g1[0], OTHER[1]], second=2),  # the same request again
        call("r1", "1", "section", "k2", read=[Read(g1[0], "section", section="Introduction")], second=3),
        call("r1", "1", "search", "k3", status=429, second=4),
        call("r1", "1", "search", "k4", [OTHER[2], g1[1]], second=5),
        call("r1", "1", "search", "k5", [g1[1], OTHER[0]], second=6),  # nothing new
        call("r1", "2", "search", "k6", [gold[1][0]], second=7),
        call("r2", "1", "search", "k7", [g1[2]] if len(g1) > 2 else [OTHER[0]], second=8),
        call("r1", "99", "search", "k8", [OTHER[0]], second=9),  # a question the gold does not have
        call("r1", None, "search", "k9", [OTHER[0]], second=10),  # untagged
    ]
    writer = LedgerWriter(tmp_path / "ledger")
    for rec, body in calls:
        writer.append(rec, body)
    writer.close()
    return tmp_path / "ledger", gold


def run(cmd: Any, *args: str, code: int = 0) -> Any:
    res = CliRunner().invoke(cmd, list(args), catch_exceptions=False)
    assert res.exit_code == code, res.output
    return res


def test_evidence_seen_recall_first_call_and_waste(ledger: tuple[Path, list[list[str]]], wide_gold: Path,
                                                   tmp_path: Path) -> None:  # fmt: skip
    path, gold = ledger
    g1 = gold[0]
    answers = tmp_path / "answers.jsonl"
    answers.write_text(json.dumps({"qid": "1", "predictions": [g1[0], g1[1], "2512.99999"]}) + "\n")
    out, html = tmp_path / "r.json", tmp_path / "r.html"
    run(eval_group, "ledger", "--ledger", str(path), "--gold", str(wide_gold), "--run", "r1",
        "--answers", str(answers), "--json", str(out), "--html", str(html), "-q")  # fmt: skip
    report = json.loads(out.read_text())
    rows = {r["item_id"]: r for r in report["per_item"]}
    assert len(rows) == 5  # one run × five gold questions
    q1 = rows["r1/1"]
    assert q1["evidence_returned_recall"] == pytest.approx(2 / len(g1))
    assert q1["evidence_read_recall"] == pytest.approx(1 / len(g1))
    assert q1["evidence_seen_recall"] == pytest.approx(2 / len(g1))
    assert q1["first_gold_call"] == 1 and q1["best_gold_rank"] == 1
    assert q1["calls"] == 6 and q1["failed_calls"] == 1 and q1["repeated_calls"] == 1
    assert q1["wasted_calls"] == 2  # the repeat and the call that showed nothing new; the 429 is failed
    assert any(
        m.startswith(f"{g1[0]}: returned first at call 1 rank 2, best rank 2")
        for m in q1["details"]["matched"]
    )
    assert q1["named"] == 3 and q1["named_unseen_rate"] == pytest.approx(1 / 3)
    assert q1["details"]["extra"] == ["2512.99999: named in the answer, never returned or read"]
    bodies = [call("r1", "1", "search", "k", [OTHER[0], g1[0], OTHER[1]])[1]]
    assert q1["tokens_returned"] >= 2 * round(len(bodies[0].decode().split()) * 1.3)
    assert rows["r1/3"]["status"] == "missing" and rows["r1/3"]["evidence_seen_recall"] == 0.0
    counts = report["counts"]
    assert counts["calls_unknown_question"] == 1 and report["extra"]["unknown_questions"] == ["r1/99"]
    assert report["coverage"]["answered"] == 2
    page = html.read_text()
    assert "<h2>Timelines</h2>" in page and "nothing new" in page and "fault 429" in page


def test_every_run_is_scored_and_broken_down(ledger: tuple[Path, list[list[str]]], wide_gold: Path) -> None:
    path, _ = ledger
    res = run(eval_group, "ledger", "--ledger", str(path), "--gold", str(wide_gold), "--json")
    report = json.loads(res.output)
    assert {r["run"] for r in report["per_item"]} == {"r1", "r2"}
    assert set(report["breakdowns"]["run"]) == {"r1", "r2"}
    assert report["counts"]["calls_untagged"] == 1


def test_runs_list_and_export(ledger: tuple[Path, list[list[str]]], wide_gold: Path, tmp_path: Path) -> None:
    path, gold = ledger
    listing = json.loads(run(runs, "list", "--ledger", str(path), "--json").output)
    assert [(r["run"], r["calls"], r["questions"]) for r in listing["runs"]] == [("r1", 9, 3), ("r2", 1, 1)]
    text = run(runs, "list", "--ledger", str(path)).output
    assert "r1" in text and "r2" in text
    out, html = tmp_path / "calls.jsonl", tmp_path / "t.html"
    run(runs, "export", "--ledger", str(path), "--run", "r1", "--question", "1", "--jsonl", str(out), "--bodies",
        "--html", str(html), "--gold", str(wide_gold))  # fmt: skip
    lines = [json.loads(x) for x in out.read_text().splitlines()]
    assert len(lines) == 6 and [x["params"]["query"] for x in lines] == ["k1", "k1", "k2", "k3", "k4", "k5"]
    assert json.loads(lines[0]["body"])["result"][1]["arxiv_id"] == gold[0][0]
    assert LedgerRecord.from_json(lines[0]).request_key == "k1"
    page = html.read_text()
    assert (
        page.count("<details>") == 1
        and f"gold: {gold[0][0]} (rank 2)" in page
        and "http" not in page.split("<main>")[0]
    )


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--ledger", "{missing}"], "no such file or folder"),
        (["--ledger", "{empty}"], "no ledger segments"),
        (["--ledger", "{notledger}"], "not an openxiv ledger"),
    ],
)
def test_bad_ledgers_are_usage_errors(args: list[str], message: str, tmp_path: Path, wide_gold: Path) -> None:
    (tmp_path / "empty").mkdir()
    (tmp_path / "notledger").mkdir()
    (tmp_path / "notledger" / "ledger-000001.sqlite").write_text("not sqlite at all")
    paths = {
        "missing": str(tmp_path / "nope"),
        "empty": str(tmp_path / "empty"),
        "notledger": str(tmp_path / "notledger"),
    }
    argv = [a.format(**paths) for a in args]
    for cmd, extra in ((eval_group, ["ledger", "--gold", str(wide_gold)]), (runs, ["list"])):
        res = run(cmd, *extra[:1], *argv, *extra[1:], code=2)
        assert "--ledger" in res.output and message in res.output and "Traceback" not in res.output


def test_answers_need_one_run(ledger: tuple[Path, list[list[str]]], wide_gold: Path, tmp_path: Path) -> None:
    path, _ = ledger
    answers = tmp_path / "a.jsonl"
    answers.write_text(json.dumps({"qid": "1", "predictions": ["2501.00001"]}) + "\n")
    res = run(
        eval_group,
        "ledger",
        "--ledger",
        str(path),
        "--gold",
        str(wide_gold),
        "--answers",
        str(answers),
        code=2,
    )
    assert "--answers" in res.output and "give --run" in res.output
    bad = tmp_path / "bad.jsonl"
    bad.write_text("{not json\n")
    res = run(eval_group, "ledger", "--ledger", str(path), "--gold", str(bad), code=2)
    assert "--gold" in res.output and "invalid JSON" in res.output
    res = run(runs, "export", "--ledger", str(path), code=2)
    assert "nothing to export" in res.output


def test_a_report_names_the_papers_it_cites(
    ledger: tuple[Path, list[list[str]]], wide_gold: Path, tmp_path: Path
) -> None:
    """An LLM agent's report (JSONL with qid and an answer citing [arXiv:ID]) as the answers."""
    path, gold = ledger
    g1 = gold[0]
    report = (
        f'The first is "{g1[0]}" [arXiv:{g1[0]}], and a paper it never saw says so too [arXiv:2512.99998].'
    )
    answers = tmp_path / "reports.jsonl"
    answers.write_text(json.dumps({"qid": "1", "answer": report}) + "\n")
    out = tmp_path / "r.json"
    run(eval_group, "ledger", "--ledger", str(path), "--gold", str(wide_gold), "--run", "r1", "--answers",
        str(answers), "--json", str(out), "-q")  # fmt: skip
    q1 = next(r for r in json.loads(out.read_text())["per_item"] if r["item_id"] == "r1/1")
    assert q1["named"] == 2 and q1["named_unseen_rate"] == 0.5
    assert q1["details"]["extra"] == ["2512.99998: named in the answer, never returned or read"]
