"""``openxiv eval``: score submissions against gold files and write terminal / JSON / HTML / Markdown reports.

Subcommands: ``autoresearchbench``, ``drmi``, ``ranked`` and ``taxobench``, all with
``--gold G --submission S [--compare S2] [--db DB] [--json [OUT]] [--html OUT] [--md OUT] [--seed N]``.
A missing file or a bad option value is a usage error (exit status 2); bad content ends with a
one-line message naming the file and line, and exit status 1.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import Any

import click

from openxiv.corpus.extras import MissingExtra
from openxiv.corpus.settings.options import EXIT_FAILED, IntList, db_option, emit_json, json_option
from openxiv.evaluator.io import EvalInputError
from openxiv.evaluator.judged_cli import DRMI_TASK, judge_options, register, run_drmi_task, title_judge
from openxiv.evaluator.report import EvalReport, render_markdown, render_terminal, write_json
from openxiv.evaluator.stats import DEFAULT_RESAMPLES, compare_rows

__all__ = ["eval_group"]

NON_COMPARABLE = {"turns", "tool_calls", "last_tokens", "duration_sec"}


class EvalCliError(click.ClickException):
    """Bad input content or an unwritable output: exit 1 (`EXIT_FAILED`); usage errors are click's 2."""

    exit_code = EXIT_FAILED


_EXISTING = click.Path(exists=True, dir_okay=False, path_type=Path)
_OUTPUT = click.Path(dir_okay=False, path_type=Path)


def _common(fn: Callable[..., Any]) -> Callable[..., Any]:
    opts = [
        click.option("--gold", "-g", required=True, type=_EXISTING, help="Gold file."),
        click.option("--submission", "-s", required=True, type=_EXISTING, help="Submission (system A)."),
        click.option(
            "--compare",
            "compare_path",
            type=_EXISTING,
            default=None,
            help="A second submission (system B) to compare.",
        ),
        json_option(help="Write the full JSON report."),
        click.option(
            "--html", "html_out", type=_OUTPUT, default=None, help="Write a self-contained HTML report here."
        ),
        click.option("--md", "md_out", type=_OUTPUT, default=None, help="Write a Markdown report here."),
        click.option("--seed", default=0, show_default=True, type=int, help="Seed of bootstrap and tests."),
        click.option(
            "--resamples",
            default=DEFAULT_RESAMPLES,
            show_default=True,
            type=click.IntRange(10),
            help="Bootstrap resamples for the confidence intervals and the paired comparison.",
        ),
        click.option("--quiet", "-q", is_flag=True, help="Do not print the terminal table."),
    ]
    for o in reversed(opts):
        fn = o(fn)
    return fn


def _set_options(fn: Callable[..., Any]) -> Callable[..., Any]:
    opts = [
        db_option(
            exists=True,
            use_env=False,
            help="openxiv corpus database: titles resolve to ids; corpus checks (only when given).",
        ),
        click.option(
            "--cutoff",
            type=click.DateTime(["%Y-%m-%d"]),
            default=None,
            help="Flag predicted papers dated after this day (YYYY-MM-DD).",
        ),
        click.option(
            "--threshold", default=0.6, show_default=True, type=float, help="Title alignment threshold."
        ),
    ]
    for o in reversed(opts):
        fn = o(fn)
    return fn


def _run(
    score: Callable[[Path], EvalReport],
    submission: Path,
    compare_path: Path | None,
    inputs: dict[str, str],
    json_out: str | None,
    html_out: Path | None,
    md_out: Path | None,
    seed: int,
    resamples: int,
    quiet: bool,
) -> None:
    """Score, optionally compare, render; every input problem becomes a clean exit-1 message.

    ``--json`` without a path prints the JSON report to stdout instead of the terminal table."""
    sub, cmp_path = submission, compare_path
    try:
        report = score(sub)
        report.inputs = {**inputs, "submission": str(sub), **({"compare": str(cmp_path)} if cmp_path else {})}
        if cmp_path is not None:
            other = score(cmp_path)
            metrics = [m for m in report.shown_metrics() if m not in NON_COMPARABLE]
            report.comparison = compare_rows(
                report.per_item, other.per_item, metrics, str(sub.name), str(cmp_path.name), seed, resamples
            )
            b = {r["item_id"]: r for r in other.per_item}
            report.extra["comparison_diffs"] = {
                m: [
                    r[m] - b[r["item_id"]][m]
                    for r in report.per_item
                    if r.get(m) is not None and b[r["item_id"]].get(m) is not None
                ]
                for m in metrics[:1]
            }
    except (EvalInputError, ValueError, FileNotFoundError, MissingExtra) as exc:
        raise EvalCliError(str(exc)) from None
    to_stdout = json_out == "-"
    if not quiet and not to_stdout:
        click.echo(render_terminal(report))
    if to_stdout:
        emit_json(report.to_dict(), "-")
        json_out = None
    for out, writer in ((json_out, write_json), (md_out, None), (html_out, "html")):
        if out is None:
            continue
        try:
            if writer == "html":
                from openxiv.evaluator.html_report import write_html

                write_html(report, out)
            elif writer is None:
                Path(out).write_text(render_markdown(report), encoding="utf-8")
            else:
                write_json(report, out)
        except OSError as exc:
            raise EvalCliError(f"cannot write {out}: {exc.strerror}") from None
        if not quiet:
            click.echo(f"wrote {out}", err=to_stdout)


def _store(corpus_db: Path | None) -> Any:
    if corpus_db is None:
        return None
    from openxiv.corpus.store import Store

    try:
        return Store.open_readonly(corpus_db)
    except Exception as exc:  # a broken or foreign file: report it, no traceback
        raise EvalCliError(f"cannot open corpus database {corpus_db}: {exc}") from None


@click.group("eval")
def eval_group() -> None:
    """Score agent answers against gold sets (AutoResearchBench, TaxoBench, Dr.Mi-Bench, ranked retrieval)."""


def _set_command(title_mode: str, name: str, benchmark: str) -> Callable[..., None]:
    def command(gold: Path, submission: Path, compare_path: Path | None, db: Path | None, cutoff: datetime | None,
                threshold: float, max_candidates: int, json_out: str | None, html_out: Path | None,
                md_out: Path | None, seed: int, resamples: int, quiet: bool, judge_backend: str | None = None,
                judge_cache: Path | None = None, prompt_path: Path | None = None, parser: str = "strict") -> None:  # fmt: skip
        from openxiv.evaluator.arb import score_arb
        from openxiv.evaluator.arb_rows import ArbOptions
        from openxiv.evaluator.io import read_arb_gold, read_submission
        from openxiv.evaluator.matching import Matcher

        try:
            gold_items = read_arb_gold(gold)
        except EvalInputError as exc:
            raise EvalCliError(str(exc)) from None
        store = _store(db)
        day = cutoff.date() if cutoff is not None else None
        matcher = Matcher(store, title_mode=title_mode, threshold=threshold, cutoff=day)
        opts = ArbOptions(max_candidates=max_candidates or None, seed=seed, n_boot=resamples)
        judge = (
            title_judge(gold, judge_backend, judge_cache, prompt_path, parser)
            if benchmark == "autoresearchbench"
            else None
        )

        def score(path: Path) -> EvalReport:
            rep = score_arb(gold_items, read_submission(path), matcher, opts, name=f"{name}: {path.name}",
                            title_judge=judge)  # fmt: skip
            rep.benchmark = benchmark
            return rep

        inputs = {"gold": str(gold), **({"corpus_db": str(db)} if db else {})}
        try:
            _run(score, submission, compare_path, inputs, json_out, html_out, md_out, seed, resamples, quiet)
        finally:
            if store is not None:
                store.close()

    return command


_MAX_CAND = click.option(
    "--max-candidates", default=1, show_default=True, type=click.IntRange(0),
    help="Candidates per pass that count for deep items (0 = all).",
)  # fmt: skip
_MAX_CAND_DRMI = click.option(
    "--max-candidates", default=1, show_default=True, type=click.IntRange(0),
    help="Candidates per pass that count (0 = all), on deep gold items only ('type': 'deep', or a single "
    "arxiv_id string); Dr.Mi gold that lists titles is wide: there every candidate counts.",
)  # fmt: skip


@eval_group.command("autoresearchbench")
@_common
@_set_options
@_MAX_CAND
@judge_options
def autoresearchbench(**kw: Any) -> None:
    """AutoResearchBench: deep items by exact-set accuracy, wide items by IoU/precision/recall/F1.

    The gold is the benchmark's JSONL (or an inference output, whose input_data lines are the gold); the
    submission is the benchmark's inference output or a simple JSONL (qid|question, predictions). Deep
    title pairs the id and title rules leave open go to the judge (--judge; prompt: --prompt, else
    title_match_prompt.txt beside --gold, else openxiv's); without one they are counted as unresolved.
    """
    _set_command("fuzzy", "autoresearchbench", "autoresearchbench")(**kw)


@eval_group.command("drmi")
@_common
@_set_options
@_MAX_CAND_DRMI
@DRMI_TASK
@judge_options
def drmi(task: str, judge_backend: str | None, judge_cache: Path | None, prompt_path: Path | None, parser: str,
         **kw: Any) -> None:  # fmt: skip
    """Dr.Mi-Bench: retrieval (ids first, titles on their first 20 normalised characters); planning and
    reasoning with the judge (--task; formats in docs/evaluator.md)."""
    if task != "retrieval":
        run_drmi_task(task, judge_backend, judge_cache, prompt_path, parser, _run, EvalCliError, **kw)
        return
    _set_command("drmi", "drmi", "drmi")(**kw)


@eval_group.command("ranked")
@_common
@click.option(
    "--k",
    "ks",
    type=IntList(min=1),
    default="1,5,10,20,100",
    show_default=True,
    help="Cutoffs, comma separated.",
)
@click.option(
    "--rel-level", default=1, show_default=True, type=int, help="Minimum relevance grade that counts."
)
def ranked(gold: Path, submission: Path, compare_path: Path | None, ks: tuple[int, ...], rel_level: int,
           json_out: str | None, html_out: Path | None, md_out: Path | None, seed: int, resamples: int,
           quiet: bool) -> None:  # fmt: skip
    """Ranked retrieval: TREC qrels or JSONL query set (--gold) against TREC or JSONL runs."""
    from openxiv.evaluator.io import iter_jsonl, read_qrels, read_run
    from openxiv.evaluator.ranked import score_ranked

    cutoffs, gpath = ks, gold
    try:
        qrels = read_qrels(gpath)
        queries: dict[str, str] = {}
        if gpath.read_text(encoding="utf-8").lstrip().startswith("{"):
            queries = {str(o.get("qid")): str(o.get("query", "")) for _, o in iter_jsonl(gpath)}
    except EvalInputError as exc:
        raise EvalCliError(str(exc)) from None

    def score(path: Path) -> EvalReport:
        return score_ranked(
            qrels, read_run(path), cutoffs, rel_level, queries, seed, resamples, name=f"ranked: {path.name}"
        )

    inputs = {"gold": str(gold)}
    _run(score, submission, compare_path, inputs, json_out, html_out, md_out, seed, resamples, quiet)


@eval_group.command("taxobench")
@_common
@click.option(
    "--similarity", default=None, help="Label similarity passed to the TaxoBench scorer (e.g. exact)."
)
def taxobench(gold: Path, submission: Path, compare_path: Path | None, similarity: str | None,
              json_out: str | None, html_out: Path | None, md_out: Path | None, seed: int, resamples: int,
              quiet: bool) -> None:  # fmt: skip
    """TaxoBench: retrieval, leaf clustering, US-TED/US-NTED and Sem-Path per survey."""
    try:
        from openxiv.evaluator.taxobench import evaluate_taxobench
    except ImportError as exc:
        raise EvalCliError(f"the TaxoBench scorer is not available: {exc}") from None
    gpath = gold
    accepted = inspect.signature(evaluate_taxobench).parameters
    kwargs: dict[str, Any] = {
        k: v
        for k, v in (("seed", seed), ("n_boot", resamples), ("similarity", similarity))
        if k in accepted and v is not None
    }

    def score(path: Path) -> EvalReport:
        return evaluate_taxobench(gpath, path, **kwargs)

    inputs = {"gold": str(gold)}
    _run(score, submission, compare_path, inputs, json_out, html_out, md_out, seed, resamples, quiet)


register(eval_group, _common, _run, EvalCliError)  # openxiv eval finder / deft (evaluator/judged_cli.py)


def _register_grounding() -> None:
    from openxiv.evaluator.grounding.cli import register_grounding

    register_grounding(eval_group)  # openxiv eval grounding (evaluator/grounding/cli.py)


_register_grounding()


def _register_ledger() -> None:
    from openxiv.evaluator.ledger.cli import register_ledger_eval

    register_ledger_eval(eval_group)  # openxiv eval ledger (evaluator/ledger/cli.py)


_register_ledger()
