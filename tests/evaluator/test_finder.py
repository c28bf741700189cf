"""FINDER end to end on the shared files: 100 real reports judged by a scripted judge over HTTP, then
replayed offline with identical output; RACE aggregates reproduce the official file; DEFT modes."""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path

import pytest
from click.testing import CliRunner

from openxiv.corpus.shared import SharedData
from openxiv.evaluator.cli import eval_group
from openxiv.evaluator.deft import parse_modes, positive_metric, read_taxonomy
from openxiv.evaluator.finder import read_checklist, read_reports
from openxiv.evaluator.judge.scripted import ScriptedServer
from openxiv.evaluator.race import fact_aggregates, race_check, race_item


@pytest.fixture(scope="module")
def finder_dir() -> Path:
    d = SharedData.default().gold("finder")
    if not (d / "checklist.jsonl").is_file():
        pytest.skip(f"FINDER files not found under {d} (set OPENXIV_SHARED)")
    return d


def _says_yes(title: str) -> bool:
    return hashlib.sha256(title.encode("utf-8")).digest()[0] % 3 != 0


def _rule(msgs: list[dict[str, str]]) -> str:
    """The scripted judge: a fixed verdict per checklist item title, worded with upstream traps."""
    title = msgs[-1]["content"].split("\n", 1)[0].removeprefix("Checklist item: ")
    return "Yes, nothing is missing." if _says_yes(title) else "No."


def _numbers(doc: dict) -> dict:
    """The report without what says where the verdicts came from (back end, cache hits)."""
    doc = json.loads(json.dumps(doc))
    doc.pop("inputs"), doc["extra"].pop("judge"), doc["conventions"].pop("judge")
    doc["counts"].pop("judge_cache_hits")
    return doc


def test_finder_end_to_end_live_then_replay(finder_dir: Path, tmp_path: Path) -> None:
    gold, reports = finder_dir / "checklist.jsonl", finder_dir / "reports" / "claude-3-7-sonnet-latest.jsonl"
    cache = tmp_path / "judge-cache.jsonl"
    env = {
        "OPENXIV_JUDGE_MODEL": "scripted",
        "OPENXIV_JUDGE_CACHE": str(cache),
        "OPENXIV_JUDGE_BACKOFF": "0.01",
    }
    runner = CliRunner()

    def finder(*args: str, **extra_env: str) -> str:
        argv = ["finder", "-g", str(gold), "-s", str(reports), "--resamples", "100", *args]
        res = runner.invoke(eval_group, argv, env={**env, **extra_env})
        assert res.exit_code == 0, res.output
        return res.output

    live_out = [x for f in ("json", "md", "html") for x in (f"--{f}", str(tmp_path / f"live.{f}"))]
    with ScriptedServer(_rule, faults={"Checklist item: ": ["500", "timeout"]}, hang=3.0) as srv:
        finder(
            "--judge",
            "openai",
            "-q",
            *live_out,
            OPENXIV_JUDGE_BASE_URL=srv.base_url,
            OPENXIV_JUDGE_TIMEOUT="1",
        )
        assert srv.calls == 419 + 2 and srv.fault_log == ["500", "timeout"]
    finder("--judge", "replay", "-q", "--json", str(tmp_path / "replay.json"))
    a = json.loads((tmp_path / "live.json").read_text(encoding="utf-8"))
    b = json.loads((tmp_path / "replay.json").read_text(encoding="utf-8"))
    assert _numbers(a) == _numbers(b)
    live_judge, replay_judge = a["extra"]["judge"]["pass_rate"], b["extra"]["judge"]["pass_rate"]
    assert (
        live_judge["live_calls"] == 419 and live_judge["retries"] == 2 and replay_judge["cache_hits"] == 419
    )

    tasks, arts = read_checklist(gold), read_reports(reports)
    assert sum(len(t.items) for t in tasks) == 419 and all(arts[t.id].strip() for t in tasks)
    met = sum(_says_yes(title) for t in tasks for title, _ in t.items)
    assert a["counts"]["micro_pass_rate"] == pytest.approx(met / 419)
    per_task = [sum(_says_yes(x) for x, _ in t.items) / len(t.items) for t in tasks]
    assert a["aggregates"]["pass_rate"]["value"] == pytest.approx(sum(per_task) / 100)
    assert set(a["breakdowns"]["language"]) == {"en", "zh"} and len(a["breakdowns"]["topic"]) > 3
    assert a["extra"]["race"]["reproduced"] is True
    for page in ("live.md", "live.html"):
        text = (tmp_path / page).read_text(encoding="utf-8")
        assert "judge openai:scripted, prompt finder-checklist@" in text and "0 not judged" in text

    # the upstream parser reads "Yes, nothing is missing" as a fail ("no" in "nothing"): 0 items met
    upstream = json.loads(finder("--judge", "replay", "--parser", "upstream", "--json", "-"))
    assert upstream["counts"]["micro_pass_rate"] == 0.0


def test_finder_without_a_judge_is_not_computed(finder_dir: Path) -> None:
    res = CliRunner().invoke(eval_group, ["finder", "-g", str(finder_dir / "checklist.jsonl"), "-s",
                                          str(finder_dir / "reports" / "claude-3-7-sonnet-latest.jsonl"),
                                          "--judge", "none", "--json", "-"])  # fmt: skip
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["aggregates"]["pass_rate"]["value"] is None and doc["counts"]["micro_pass_rate"] is None
    assert doc["conventions"]["judge"].startswith("not computed: no judge configured")
    assert all(r["pass_rate"] is None for r in doc["per_item"])
    table = CliRunner().invoke(eval_group, ["finder", "-g", str(finder_dir / "checklist.jsonl"), "-s",
                                            str(finder_dir / "reports" / "claude-3-7-sonnet-latest.jsonl"),
                                            "--judge", "none", "--resamples", "10"])  # fmt: skip
    assert "judge: not computed: no judge configured" in table.output and "pass_rate  –" in table.output


def test_race_aggregates_reproduce_the_official_file(finder_dir: Path) -> None:
    check = race_check(finder_dir / "race" / "raw_results.jsonl", finder_dir / "race" / "race_result.txt")
    assert check["reproduced"] is True
    assert check["columns"]["overall_score"]["recomputed_text"] == "0.4218"


def test_race_item_worked_by_hand() -> None:
    task = {
        "dimension_weight": {"comprehensiveness": 0.5, "insight": 0.5, "instruction_following": 0.0, "readability": 0.0},
        "criterions": {"comprehensiveness": [{"criterion": "Breadth", "weight": 0.25}, {"criterion": "Depth", "weight": 0.75}],
                       "insight": [{"criterion": "Novelty", "weight": 1.0}]},
    }  # fmt: skip
    target = {"comprehensiveness": [{"criterion": "breadth", "score": 8}, {"criterion": "Depth of data", "score": 4}],
              "insight": [{"criterion": "Novelty", "score": 6}]}  # fmt: skip
    reference = {"comprehensiveness": [{"criterion": "Breadth", "score": 4}, {"criterion": "Depth", "score": 4}],
                 "insight": [{"criterion": "Unlisted", "score": 2}]}  # fmt: skip
    out = race_item(task, target, reference)
    # comprehensiveness: target 0.25*8 + 0.75*4 = 5 ("breadth" case-insensitive, "Depth of data" contains
    # "Depth"); reference 0.25*4 + 0.75*4 = 4 -> 5/9. Insight: 6 vs 2 ("Unlisted": the average weight, 1.0)
    assert out["comprehensiveness"] == pytest.approx(5 / 9)
    assert out["insight"] == pytest.approx(6 / 8)
    # totals: target 0.5*5 + 0.5*6 = 5.5, reference 0.5*4 + 0.5*2 = 3 -> 5.5/8.5
    assert out["overall_score"] == pytest.approx(5.5 / 8.5)


def test_deft_modes_from_the_shared_taxonomy(finder_dir: Path, tmp_path: Path) -> None:
    tax = read_taxonomy(finder_dir / "deft-prompts" / "seeds.md")
    assert len(tax.roots) == 3
    answers = {
        "example_001": "[1] Information Retrieval Bypass: it wrote from memory.",
        "example_002": "None",
        "example_003": "[1] failure to understand requirements: off topic.\n[1] Made Up Mode: x",
    }

    def rule(msgs: list[dict[str, str]]) -> str:
        return next(v for k, v in answers.items() if k in msgs[-1]["content"])

    cache = tmp_path / "c.jsonl"
    env = {"OPENXIV_JUDGE_MODEL": "scripted", "OPENXIV_JUDGE_CACHE": str(cache)}
    with ScriptedServer(rule) as srv:
        res = CliRunner().invoke(eval_group, ["deft", "-g", str(finder_dir / "deft-prompts" / "seeds.md"), "-s",
                                              str(finder_dir / "deft-records.example.jsonl"), "--judge", "openai",
                                              "--json", "-"], env={**env, "OPENXIV_JUDGE_BASE_URL": srv.base_url})  # fmt: skip
    assert res.exit_code == 0, res.output
    doc = json.loads(res.output)
    assert doc["counts"]["unknown_labels"] == 1 and doc["counts"]["judged"] == 3
    e = doc["extra"]["deft"]["E"]
    assert e == {"Failure to Understand Requirements": 1, "Information Retrieval Bypass": 1,
                 "Format and Structural Non-Compliance": 0}  # fmt: skip
    # S_i = 100 cos(E_i/N · π/2) with N = 3: two of 100·cos(π/6), one of 100
    assert doc["extra"]["deft"]["S"] == pytest.approx((2 * 100 * math.cos(math.pi / 6) + 100) / 3)
    assert positive_metric({"a": 50, "b": 0, "c": 100}, 100)["S"] == pytest.approx(56.9036, abs=1e-4)
    assert (
        parse_modes("no idea", tax, "strict")[0] is None
        and parse_modes("no idea", tax, "upstream")[0] == set()
    )


def test_fact_aggregates_worked_by_hand() -> None:
    records = [
        {"id": 1, "citations": [{"valid": True}, {"valid": False}, {"valid": True}]},
        {"id": 2, "citations": []},
    ]
    # 3 citations over 2 reports, 2 valid: 1.5 per report, 1.0 valid per report, rate 2/3
    assert fact_aggregates(records) == {
        "total_citations": 1.5,
        "total_valid_citations": 1.0,
        "valid_rate": 2 / 3,
    }


def test_a_judge_without_its_settings_is_a_usage_error_naming_the_variable(finder_dir: Path) -> None:
    argv = [
        "finder",
        "-g",
        str(finder_dir / "checklist.jsonl"),
        "-s",
        str(finder_dir / "query.jsonl"),
        "--judge",
    ]
    res = CliRunner().invoke(eval_group, [*argv, "openai"], env={"OPENXIV_JUDGE_MODEL": "m"})
    assert res.exit_code == 2 and "OPENXIV_JUDGE_BASE_URL is not set" in res.output
    res = CliRunner().invoke(eval_group, [*argv, "replay"], env={"OPENXIV_JUDGE_MODEL": ""})
    assert res.exit_code == 2 and "OPENXIV_JUDGE_MODEL is not set" in res.output


def test_config_shows_the_judge_settings_and_the_demo_says_when_none_is_configured(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    from openxiv.corpus.settings.command import config
    from openxiv.evaluator.demo import _judged_step

    res = CliRunner().invoke(
        config, [], env={"OPENXIV_JUDGE_API_KEY": "secret", "OPENXIV_JUDGE_CONCURRENCY": "8"}
    )
    assert res.exit_code == 0, res.output
    lines = {ln.split()[0]: ln for ln in res.output.splitlines() if ln.startswith("OPENXIV_JUDGE_")}
    assert "***" in lines["OPENXIV_JUDGE_API_KEY"] and "secret" not in res.output
    assert " 8 " in lines["OPENXIV_JUDGE_CONCURRENCY"] and " none " in lines["OPENXIV_JUDGE_BACKEND"]
    _judged_step("none", tmp_path, tmp_path, {})
    assert "no judge configured, OPENXIV_JUDGE_BACKEND=none" in capsys.readouterr().out
