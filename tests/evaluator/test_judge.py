"""The judge back ends over real HTTP: a scripted OpenAI-compatible server on loopback, faults injected."""

from __future__ import annotations

import json
from pathlib import Path

from openxiv.evaluator.judge import (
    JudgeCache,
    JudgeRequest,
    NoJudge,
    OpenAIJudge,
    Prompt,
    ReplayJudge,
    messages,
    package_prompt,
    run_yes_no,
)
from openxiv.evaluator.judge.parse import yes_no_strict, yes_no_upstream
from openxiv.evaluator.judge.protocol import cache_key
from openxiv.evaluator.judge.scripted import ScriptedServer

PROMPT = Prompt("test", "[system]\nOnly answer Yes or No.\n[user]\nItem {name}", "inline")
TABLE = {"alpha": "Yes", "bravo": "No.", "charlie": "yes", "delta": "No", "echo": "Yes", "fox": "Yes",
         "golf": "The answer is no", "hotel": "Yes"}  # fmt: skip


def _rule(msgs: list[dict[str, str]]) -> str:
    return TABLE[msgs[-1]["content"].split()[-1]]


def _requests() -> list[JudgeRequest]:
    return [JudgeRequest(n, PROMPT.version, messages(PROMPT, name=n), 0.1, 50) for n in TABLE]


def test_faults_are_retried_or_counted_and_every_answer_is_cached(tmp_path: Path) -> None:
    faults = {"alpha": ["timeout"], "bravo": ["429", "500"], "charlie": ["malformed"], "delta": ["reasoning"],
              "echo": ["empty"] * 10, "fox": ["nochoices", "503"], "golf": ["500"] * 10}  # fmt: skip
    cache = tmp_path / "cache.jsonl"
    with ScriptedServer(_rule, faults=faults, hang=2.0) as srv:
        judge = OpenAIJudge(srv.base_url, "scripted-1", JudgeCache(cache), concurrency=3, timeout=0.5,
                            retries=3, backoff=0.01)  # fmt: skip
        verdicts, stats = run_yes_no(judge, _requests(), "strict", PROMPT)
        assert srv.max_in_flight <= 3
    assert dict(zip(TABLE, verdicts, strict=True)) == {
        "alpha": True, "bravo": False, "charlie": True, "delta": False,
        "echo": None, "fox": True, "golf": None, "hotel": True,
    }  # fmt: skip
    assert stats.requests == 8 and stats.unjudged == 2 and stats.cache_hits == 0
    assert stats.failures == {"empty": 1, "http_500": 1}
    assert stats.retries == 1 + 2 + 1 + 3 + 2 + 3  # every fault was retried, the hopeless ones 3 times
    lines = [json.loads(x) for x in cache.read_text(encoding="utf-8").splitlines()]
    assert sorted(x["item"] for x in lines) == ["alpha", "bravo", "charlie", "delta", "fox", "hotel"]
    delta = next(x for x in lines if x["item"] == "delta")
    assert delta["text"] == "" and delta["reasoning"].endswith("No")
    req = _requests()[0]
    assert any(x["key"] == cache_key(PROMPT.version, "scripted-1", req.payload_messages()) for x in lines)

    # replay: the same verdicts, all from the cache, no server needed; the failures stay not judged
    replay = ReplayJudge("scripted-1", JudgeCache(cache))
    again, rstats = run_yes_no(replay, _requests(), "strict", PROMPT)
    assert again == verdicts and rstats.cache_hits == 6 and rstats.failures == {"not_in_cache": 2}
    # a live run with the cache sends only what the cache lacks
    with ScriptedServer(_rule) as srv:
        judge = OpenAIJudge(srv.base_url, "scripted-1", JudgeCache(cache), backoff=0.01)
        third, tstats = run_yes_no(judge, _requests(), "strict", PROMPT)
        assert srv.calls == 2 and tstats.cache_hits == 6 and tstats.unjudged == 0
    assert third[4] is True and third[6] is False


def test_a_bad_key_is_not_retried_and_another_model_misses_the_cache(tmp_path: Path) -> None:
    with ScriptedServer(_rule) as srv:
        judge = OpenAIJudge(
            srv.base_url.replace("/v1", "/v2"), "m", JudgeCache(None), retries=3, backoff=0.01
        )
        verdicts, stats = run_yes_no(judge, _requests()[:2], "strict", PROMPT)
        assert srv.calls == 2 and verdicts == [None, None] and stats.failures == {"http_404": 2}
        good = OpenAIJudge(srv.base_url, "m", JudgeCache(tmp_path / "c.jsonl"))
        run_yes_no(good, _requests()[:2], "strict", PROMPT)
    other, ostats = run_yes_no(ReplayJudge("other-model", JudgeCache(tmp_path / "c.jsonl")), _requests()[:2],
                               "strict", PROMPT)  # fmt: skip
    assert other == [None, None] and ostats.cache_hits == 0


def test_no_judge_and_a_missing_replay_cache_say_why(tmp_path: Path) -> None:
    verdicts, stats = run_yes_no(NoJudge(), _requests(), "strict", PROMPT)
    assert verdicts == [None] * 8 and "no judge configured" in stats.line()
    _, rstats = run_yes_no(
        ReplayJudge("m", JudgeCache(tmp_path / "absent.jsonl")), _requests(), "strict", PROMPT
    )
    assert rstats.reason is not None and "does not exist" in rstats.reason


def test_upstream_parser_counts_the_no_inside_not() -> None:
    crafted = "Yes, the report does not omit any of the required sources."
    assert yes_no_strict(crafted) is True
    assert yes_no_upstream(crafted) is False  # "no" in "not": FINDER's checklist parser fails the item
    assert yes_no_upstream("Yes") is True and yes_no_upstream("YES.") is True
    assert yes_no_strict("I cannot tell.") is None and yes_no_upstream("I cannot tell.") is False
    assert yes_no_strict("**No**") is False and yes_no_strict("是") is True


def test_prompt_versions_follow_the_text() -> None:
    p = package_prompt("finder_checklist")
    assert p.version.startswith("finder-checklist@") and len(p.version.split("@")[1]) == 12
    assert Prompt(p.name, p.text + " ", p.source).version != p.version
    msgs = messages(p, title="T", description="D", article="{braces} kept")
    assert [r for r, _ in msgs] == ["system", "user"] and "{braces} kept" in msgs[1][1]
