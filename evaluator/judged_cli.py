"""``openxiv eval finder`` and ``openxiv eval deft``: the judged benchmarks (docs/evaluator.md, "Judge").

The judge comes from the settings (``OPENXIV_JUDGE_*``, ``openxiv config``); ``--judge`` and
``--judge-cache`` override the back end and the cache file for one run. Without a judge the
judged numbers are reported as not computed, with the reason.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import click

from openxiv.evaluator.report import EvalReport

__all__ = ["DRMI_TASK", "judge_options", "register", "run_drmi_task", "title_judge"]

_PARSER = click.option(
    "--parser", type=click.Choice(["strict", "upstream"]), default="strict", show_default=True,
    help="strict: the last yes/no word decides (DEFT: lines naming a known mode, or None; AutoResearchBench: a JSON "
    "is_match); upstream: the benchmark's own parsing, quirks included (FINDER: a 'no' inside 'not' makes an item "
    "fail; AutoResearchBench: an answer that is not JSON matches when it contains 'true').",
)  # fmt: skip
_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)


def judge_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    opts = [
        click.option("--judge", "judge_backend", type=click.Choice(["none", "openai", "replay"]), default=None,
                     help="Judge back end for this run (default: OPENXIV_JUDGE_BACKEND)."),
        click.option("--judge-cache", type=click.Path(dir_okay=False, path_type=Path), default=None,
                     help="Judge cache file for this run (default: OPENXIV_JUDGE_CACHE)."),
        click.option("--prompt", "--judge-prompt", "prompt_path", type=_FILE, default=None,
                     help="Prompt file (default: the benchmark's own; see docs/evaluator.md)."),
        _PARSER,
    ]  # fmt: skip
    for o in reversed(opts):
        fn = o(fn)
    return fn


def _judge(judge_backend: str | None, judge_cache: Path | None) -> Any:
    from openxiv.corpus.settings.model import Settings
    from openxiv.corpus.settings.sources import ConfigError
    from openxiv.evaluator.judge import make_judge

    try:
        return make_judge(Settings.from_env(), cache_path=judge_cache, backend=judge_backend)
    except (ConfigError, ValueError) as exc:
        raise click.UsageError(str(exc)) from None


def title_judge(gold: Path, judge_backend: str | None, judge_cache: Path | None, prompt_path: Path | None,
                parser: str) -> Any:  # fmt: skip
    """AutoResearchBench's deep title judge (`openxiv.evaluator.arb_judge.TitleJudge`), built when first needed."""
    from openxiv.evaluator.arb_judge import TitleJudge, title_prompt

    return TitleJudge(
        lambda: _judge(judge_backend, judge_cache), lambda: title_prompt(gold, prompt_path), parser
    )


def _finder_prompt(gold: Path, prompt_path: Path | None) -> Any:
    from openxiv.evaluator.judge import load_prompt, package_prompt

    if prompt_path is not None:
        return load_prompt(prompt_path, "finder-checklist")
    own = gold.parent / "checklist_prompt.txt"  # the benchmark's file, when a copy of it carries one
    return load_prompt(own, "finder-checklist") if own.exists() else package_prompt("finder_checklist")


def register(group: click.Group, common: Callable[..., Any], run: Callable[..., None],
             error: type[click.ClickException]) -> None:  # fmt: skip
    """Add ``finder`` and ``deft`` to ``openxiv eval`` (``common``/``run``: `openxiv.evaluator.cli`'s)."""

    @group.command("finder")
    @common
    @judge_options
    @click.option("--race-dir", type=click.Path(exists=True, file_okay=False, path_type=Path), default=None,
                  help="Folder with raw_results.jsonl and race_result.txt (default: race/ beside --gold): "
                  "the RACE aggregates are recomputed and compared with the official file.")  # fmt: skip
    def finder(gold: Path, submission: Path, compare_path: Path | None, judge_backend: str | None,
               judge_cache: Path | None, prompt_path: Path | None, parser: str, race_dir: Path | None,
               json_out: str | None, html_out: Path | None, md_out: Path | None, seed: int,
               resamples: int, quiet: bool) -> None:  # fmt: skip
        """FINDER: checklist pass rate judged per (report, item); RACE aggregates from the official scores.

        --gold is the benchmark's checklist.jsonl, --submission the reports (JSONL: id, article)."""
        from openxiv.evaluator.finder import read_checklist, read_reports, score_checklist
        from openxiv.evaluator.io import EvalInputError
        from openxiv.evaluator.race import race_check

        judge = _judge(judge_backend, judge_cache)
        try:
            tasks = read_checklist(gold)
            prompt = _finder_prompt(gold, prompt_path)
        except (EvalInputError, FileNotFoundError) as exc:
            raise error(str(exc)) from None
        rdir = race_dir or (gold.parent / "race")

        def score(path: Path) -> EvalReport:
            rep = score_checklist(tasks, read_reports(path), judge, prompt, parser=parser, seed=seed,
                                  n_boot=resamples, name=f"finder: {path.name}")  # fmt: skip
            if (rdir / "raw_results.jsonl").exists() and (rdir / "race_result.txt").exists():
                check = race_check(rdir / "raw_results.jsonl", rdir / "race_result.txt")
                rep.extra["race"] = check
                rep.conventions["race"] = "official per-report RACE scores averaged: " + (
                    "reproduces race_result.txt exactly"
                    if check["reproduced"]
                    else "DIFFERS from race_result.txt"
                )
                for col, row in check["columns"].items():
                    rep.counts[f"race_{col}"] = row["recomputed"]
            return rep

        run(score, submission, compare_path, {"gold": str(gold), "prompt": prompt.source}, json_out, html_out,
            md_out, seed, resamples, quiet)  # fmt: skip

    @group.command("deft")
    @common
    @judge_options
    def deft(gold: Path, submission: Path, compare_path: Path | None, judge_backend: str | None,
             judge_cache: Path | None, prompt_path: Path | None, parser: str, json_out: str | None,
             html_out: Path | None, md_out: Path | None, seed: int, resamples: int, quiet: bool) -> None:  # fmt: skip
        """DEFT: the judge assigns failure modes to execution records (counts per mode and dimension, S).

        --gold is the failure-mode taxonomy (DEFT's seeds.md or final_DEFT.md), --submission the
        execution records (JSONL: id, question, article). The prompt is assignment.txt beside --gold."""
        from openxiv.evaluator.deft import read_taxonomy, score_deft
        from openxiv.evaluator.io import EvalInputError
        from openxiv.evaluator.judge import load_prompt

        judge = _judge(judge_backend, judge_cache)
        try:
            tax = read_taxonomy(gold)
            prompt = load_prompt(prompt_path or gold.parent / "assignment.txt", "deft-assignment")
        except (EvalInputError, FileNotFoundError) as exc:
            raise error(str(exc)) from None

        def score(path: Path) -> EvalReport:
            return score_deft(path, tax, judge, prompt, parser=parser, seed=seed, n_boot=resamples,
                              name=f"deft: {path.name}")  # fmt: skip

        run(score, submission, compare_path, {"gold": str(gold), "prompt": prompt.source}, json_out, html_out,
            md_out, seed, resamples, quiet)  # fmt: skip


DRMI_TASK = click.option(
    "--task", type=click.Choice(["retrieval", "planning", "reasoning"]), default="retrieval", show_default=True,
    help="retrieval: cited papers against the gold (no judge); planning: predicted plans against gold "
    "sub-tasks; reasoning: diagnostic claims answered from the report (both with the judge).",
)  # fmt: skip


def run_drmi_task(task: str, judge_backend: str | None, judge_cache: Path | None, prompt_path: Path | None,
                  parser: str, run: Callable[..., None], error: type[click.ClickException], *, gold: Path,
                  submission: Path, compare_path: Path | None, json_out: str | None, html_out: Path | None,
                  md_out: Path | None, seed: int, resamples: int, quiet: bool, **_set_opts: Any) -> None:  # fmt: skip
    """``openxiv eval drmi --task planning|reasoning`` (the retrieval options do not apply)."""
    from openxiv.evaluator.drmi_judged import score_drmi_judged
    from openxiv.evaluator.judge import load_prompt, package_prompt

    judge = _judge(judge_backend, judge_cache)
    try:
        prompt = load_prompt(prompt_path, f"drmi-{task}") if prompt_path else package_prompt(f"drmi_{task}")
    except FileNotFoundError as exc:
        raise error(str(exc)) from None

    def score(path: Path) -> EvalReport:
        return score_drmi_judged(task, gold, path, judge, prompt, parser=parser, seed=seed, n_boot=resamples)

    run(score, submission, compare_path, {"gold": str(gold), "prompt": prompt.source}, json_out, html_out, md_out,
        seed, resamples, quiet)  # fmt: skip
