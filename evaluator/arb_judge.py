"""AutoResearchBench deep items: an LLM title judge on the pairs the id and title rules leave open.

The benchmark's deep scorer asks an LLM whether a candidate's title names the gold paper
(temperature 0.5, at most 512 tokens, a JSON answer ``{"is_match": bool}``). openxiv matches ids
first and titles deterministically (`openxiv.evaluator.matching`), so the judge only decides the
*open* pairs (matching step 4: a gold entry and a prediction the title rule could have matched but
did not), each distinct (gold title, predicted title) pair once; a pair judged the same paper
becomes a hit and the items are scored again. Wide items are never judged: the benchmark's wide
scorer compares ids only.

The prompt is the benchmark's own when the user has it: ``--prompt FILE``, else
``title_match_prompt.txt`` beside the gold file, else openxiv's
``evaluator/judge/prompts/arb_title_match.txt``; placeholders ``{gold_title}`` and
``{predicted_title}``. Without a judge (``none``, the default) the open pairs are counted and left
unresolved (no match), and the report says so; when nothing is open and no judge is configured the
report is exactly what it was without this module.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from openxiv.evaluator.arb_rows import ArbOptions, item_rows
from openxiv.evaluator.io import GoldItem, SubmissionItem
from openxiv.evaluator.judge import (
    MATCH_PARSERS,
    Judge,
    JudgeRequest,
    JudgeStats,
    Prompt,
    load_prompt,
    messages,
    package_prompt,
    run_yes_no,
)
from openxiv.evaluator.matching import Matcher, OpenPairs
from openxiv.evaluator.report import EvalReport

__all__ = ["PROMPT_BESIDE_GOLD", "TITLE_MATCH_PARAMS", "TitleJudge", "judged_rows", "title_prompt"]

TITLE_MATCH_PARAMS: tuple[float, int] = (0.5, 512)
"""The deep scorer's judge temperature and token limit (``evaluate/evaluate_deep_search.py``)."""
PROMPT_BESIDE_GOLD = "title_match_prompt.txt"

Pair = tuple[str, str]  # (gold title, predicted title)


def title_prompt(gold: Path, prompt_path: Path | None) -> Prompt:
    """``--prompt``, else the file beside the gold, else openxiv's own (versioned) prompt."""
    if prompt_path is not None:
        return load_prompt(prompt_path, "arb-title-match")
    own = gold.parent / PROMPT_BESIDE_GOLD
    return load_prompt(own, "arb-title-match") if own.exists() else package_prompt("arb_title_match")


@dataclass
class TitleJudge:
    """The judge of open title pairs; ``make`` builds the back end only when a pair is open."""

    make: Callable[[], Judge]
    prompt: Callable[[], Prompt]
    parser: str = "strict"
    _judge: Judge | None = field(default=None, init=False, repr=False)

    @property
    def judge(self) -> Judge:
        if self._judge is None:
            self._judge = self.make()
        return self._judge

    def decide(self, pairs: Sequence[Pair]) -> tuple[dict[Pair, bool | None], JudgeStats, Prompt]:
        prompt = self.prompt()
        requests = [
            JudgeRequest(f"{g[:80]} | {p[:80]}", prompt.version,
                         messages(prompt, gold_title=g, predicted_title=p), *TITLE_MATCH_PARAMS)
            for g, p in pairs
        ]  # fmt: skip
        if not requests:
            judge = self.judge
            return (
                {},
                JudgeStats(judge.backend, judge.model, prompt.version, reason=judge.unavailable),
                prompt,
            )
        verdicts, stats = run_yes_no(self.judge, requests, self.parser, prompt, MATCH_PARSERS)
        return dict(zip(pairs, verdicts, strict=True)), stats, prompt


def judged_rows(
    gold: Sequence[GoldItem],
    paired: dict[str, SubmissionItem],
    matcher: Matcher,
    opts: ArbOptions,
    title_judge: TitleJudge | None,
) -> tuple[list[dict[str, Any]], Callable[[EvalReport], None] | None]:
    """The item rows, with the judge's hits, and what to add to the report (None: nothing to say)."""
    if title_judge is None:
        return item_rows(gold, paired, matcher, opts), None
    collected = OpenPairs()
    rows = item_rows(gold, paired, matcher, opts, collected)
    pairs = sorted(collected.open)
    if not pairs and title_judge.judge.backend == "none":
        return rows, None
    decided, stats, prompt = title_judge.decide(pairs)
    if any(decided.values()):
        rows = item_rows(gold, paired, matcher, opts, OpenPairs(decided=decided))

    def annotate(report: EvalReport) -> None:
        _annotate(report, pairs, decided, stats, prompt, title_judge.parser)

    return rows, annotate


def _annotate(report: EvalReport, pairs: list[Pair], decided: dict[Pair, bool | None], stats: JudgeStats,
              prompt: Prompt, parser: str) -> None:  # fmt: skip
    n_decided = sum(v is not None for v in decided.values())
    n_matched = sum(v is True for v in decided.values())
    unresolved = len(pairs) - n_decided
    temperature, max_tokens = TITLE_MATCH_PARAMS
    report.conventions["deep"] = (
        "only the first max_candidates (default 1, as the benchmark) candidates of a pass count; the pass is "
        "correct iff the predicted set equals the gold set (ids first, title fallback; the title pairs these "
        "rules leave open are decided by an LLM judge, as the benchmark's deep scorer does: temperature "
        f"{temperature}, {max_tokens} tokens, JSON is_match; an unresolved pair is no match; wide items are never judged)"
    )
    if stats.reason is not None:
        report.conventions["judge"] = (
            f"not judged: {stats.reason} (backend {stats.backend}); {unresolved} open title pairs left "
            "unresolved (scored as no match)"
        )
    elif not pairs:
        report.conventions["judge"] = (
            f"judge {stats.backend}:{stats.model}, prompt {stats.prompt_version}; no open title pair: nothing to judge"
        )
    else:
        report.conventions["judge"] = (
            f"{stats.line()}; {n_decided} of {len(pairs)} open title pairs decided by the judge "
            f"({n_matched} the same paper), {unresolved} left unresolved (no match)"
        )
    report.conventions["parser"] = (
        "strict: the last JSON object with a boolean is_match decides, else unresolved"
        if parser == "strict"
        else "upstream: the answer parsed as JSON (is_match, absent = no match); not JSON: any 'true' in it is a match"
    )
    report.counts.update(
        judge_open_pairs=len(pairs), judge_decided=n_decided, judge_matched=n_matched,
        judge_unresolved=unresolved, judge_cache_hits=stats.cache_hits,
    )  # fmt: skip
    report.extra["judge"] = {"deep_title_match": stats.as_dict()}
    report.extra["title_judge"] = {
        "prompt_source": prompt.source, "prompt_version": prompt.version, "parser": parser,
        "temperature": temperature, "max_tokens": max_tokens,
        "pairs": [{"gold": g, "predicted": p, "same_paper": decided.get((g, p))} for g, p in pairs],
    }  # fmt: skip
