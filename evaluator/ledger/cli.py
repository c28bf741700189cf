"""``openxiv eval ledger`` (a ledger beside a gold file) and ``openxiv runs list|export``.

A ledger that cannot be opened, a gold or answers file that cannot be read, and ``--answers`` with
more than one run are usage errors: one line naming the option, exit status 2.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import click

from openxiv.corpus.settings.model import Settings
from openxiv.corpus.settings.options import emit_json, json_option, setting_option, settings_from_flags
from openxiv.evaluator.stats import DEFAULT_RESAMPLES

__all__ = ["register_ledger_eval", "runs"]

_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)
_OUTPUT = click.Path(dir_okay=False, path_type=Path)


def _ledger_option() -> Any:
    return setting_option(
        "ledger", "--ledger", help="The run ledger (a folder of segments, or one segment file)."
    )


def _open(settings: Settings) -> Any:
    from openxiv.corpus.ledger.store import LedgerError, LedgerReader, segments

    path = settings.ledger
    if path is None:
        raise click.UsageError("no ledger: give --ledger DIR (or set OPENXIV_LEDGER)")
    if not path.exists():
        raise click.BadParameter(f"{path}: no such file or folder", param_hint="'--ledger'")
    if not segments(path):
        raise click.BadParameter(
            f"{path}: no ledger segments (ledger-NNNNNN.sqlite) in it", param_hint="'--ledger'"
        )
    try:
        return LedgerReader(path)
    except LedgerError as exc:
        raise click.BadParameter(str(exc), param_hint="'--ledger'") from None


def _gold(path: Path) -> Any:
    from openxiv.evaluator.io import EvalInputError, read_arb_gold

    try:
        return read_arb_gold(path)
    except EvalInputError as exc:
        raise click.BadParameter(str(exc), param_hint="'--gold'") from None


def _named(gold: Any, path: Path | None, runs: list[str]) -> dict[str, list[str]] | None:
    if path is None:
        return None
    if len(runs) != 1:
        raise click.BadParameter(
            f"the answers belong to one run; the selection has {len(runs)} ({', '.join(runs[:5])}): give --run",
            param_hint="'--answers'",
        )
    from openxiv.evaluator.grounding.inputs import GroundingInputError, read_answers
    from openxiv.evaluator.io import EvalInputError, read_submission
    from openxiv.evaluator.ledger.score import named_by_item, named_in_reports

    try:
        return named_by_item(gold, read_submission(path))
    except EvalInputError as exc:
        first = str(exc)
    try:  # reports and agent search responses: the papers they cite
        return named_in_reports(gold, read_answers(path))
    except GroundingInputError:
        raise click.BadParameter(first, param_hint="'--answers'") from None


def register_ledger_eval(group: click.Group) -> None:
    @group.command("ledger")
    @settings_from_flags
    @_ledger_option()
    @click.option("--gold", "-g", required=True, type=_FILE,
                  help="Gold file (AutoResearchBench JSONL, an inference output, or a topic query set); "
                  "its item ids are the question tags.")  # fmt: skip
    @click.option(
        "--run", "runs", multiple=True, help="Only this run (repeatable; default: every tagged run)."
    )
    @click.option("--answers", type=_FILE, default=None,
                  help="The run's answers (AutoResearchBench inference output, simple JSONL, or JSONL "
                  "reports / agent search responses with qid or id: the papers they cite): papers named "
                  "but never returned or read are listed.")  # fmt: skip
    @json_option(help="Write the full JSON report.")
    @click.option("--html", "html_out", type=_OUTPUT, default=None,
                  help="Write a self-contained HTML report, with each question's timeline.")  # fmt: skip
    @click.option("--md", "md_out", type=_OUTPUT, default=None, help="Write a Markdown report here.")
    @click.option("--seed", default=0, show_default=True, type=int, help="Seed of the bootstrap.")
    @click.option("--resamples", default=DEFAULT_RESAMPLES, show_default=True, type=click.IntRange(10),
                  help="Bootstrap resamples for the confidence intervals.")  # fmt: skip
    @click.option("--quiet", "-q", is_flag=True, help="Do not print the terminal table.")
    def ledger(settings: Settings, gold: Path, runs: tuple[str, ...], answers: Path | None, json_out: str | None,
               html_out: Path | None, md_out: Path | None, seed: int, resamples: int, quiet: bool) -> None:  # fmt: skip
        """What the ledger makes measurable, per run and question: evidence-seen recall (each gold paper
        ever returned? ever read?), the first call and rank it appeared at, calls and tokens returned,
        repeated and wasted calls, and papers an answer names that its calls never showed."""
        from openxiv.evaluator.ledger.score import LedgerCalls, score_ledger
        from openxiv.evaluator.ledger.timeline import timeline_section
        from openxiv.evaluator.outputs import write_outputs
        from openxiv.evaluator.report import render_terminal

        reader = _open(settings)
        items = _gold(gold)
        calls = LedgerCalls.read(reader, list(runs) or None)
        if runs and not calls.runs():
            raise click.BadParameter(
                f"no calls of run {', '.join(runs)} in {settings.ledger}", param_hint="'--run'"
            )
        named = _named(items, answers, calls.runs())
        report, traces = score_ledger(calls, items, named, seed, resamples)
        report.inputs = {
            "ledger": str(settings.ledger),
            "gold": str(gold),
            **({"answers": str(answers)} if answers else {}),
        }
        if not quiet and json_out != "-":
            click.echo(render_terminal(report))
        section = ""
        if html_out is not None:
            labels = {g.item_id: g.question for g in items}
            section = timeline_section([(t, labels.get(t.question or "", "")) for t in traces if t.steps])
        write_outputs(report, json_out, md_out, html_out, section)


@click.group("runs")
def runs() -> None:
    """List and export the runs of a run ledger (docs/experiments.md)."""


@runs.command("list")
@settings_from_flags
@_ledger_option()
@json_option(help="Print the runs as JSON.")
def list_runs(settings: Settings, json_out: str | None) -> None:
    """Each run tag with its questions, calls and first/last call time (untagged calls as '-')."""
    reader = _open(settings)
    rows = [
        {"run": s.run, "questions": len(s.questions), "calls": s.calls, "first": s.first, "last": s.last}
        for s in reader.runs()
    ]
    if json_out is not None:
        emit_json({"ledger": str(settings.ledger), "runs": rows, "errors": reader.errors}, json_out)
        return
    click.echo(f"{'run':<28} {'questions':>9} {'calls':>7}  first call                        last call")
    for r in rows:
        click.echo(f"{r['run'] or '-':<28} {r['questions']:>9} {r['calls']:>7}  {r['first']:<33} {r['last']}")


@runs.command("export")
@settings_from_flags
@_ledger_option()
@click.option("--run", "runs_", multiple=True, help="Only this run (repeatable; default: all).")
@click.option("--question", "questions", multiple=True, help="Only this question tag (repeatable).")
@click.option("--jsonl", "jsonl_out", type=click.Path(dir_okay=False, allow_dash=True, path_type=Path), default=None,
              help="Write the calls as JSON lines (one record per call; - for stdout).")  # fmt: skip
@click.option("--bodies", is_flag=True, help="With --jsonl: add each call's response body (text) as 'body'.")
@click.option("--html", "html_out", type=_OUTPUT, default=None, help="Write a per-question HTML timeline.")
@click.option("--gold", "-g", type=_FILE, default=None, help="Mark this gold file's papers in the timeline.")
def export(settings: Settings, runs_: tuple[str, ...], questions: tuple[str, ...], jsonl_out: Path | None,
           bodies: bool, html_out: Path | None, gold: Path | None) -> None:  # fmt: skip
    """Export calls: JSON lines (the ledger record of each call, oldest first) and/or an HTML timeline."""
    from openxiv.evaluator.ledger.score import LedgerCalls
    from openxiv.evaluator.ledger.timeline import render_page
    from openxiv.evaluator.ledger.trace import analyse

    if jsonl_out is None and html_out is None:
        raise click.UsageError("nothing to export: give --jsonl PATH and/or --html PATH")
    reader = _open(settings)
    calls = LedgerCalls.read(reader, list(runs_) or None)
    keys = [k for k in calls.groups if not questions or k[1] in questions]
    if jsonl_out is not None:
        n = _write_jsonl(calls, keys, jsonl_out, bodies)
        click.echo(f"exported {n} calls -> {jsonl_out}", err=str(jsonl_out) == "-")
    if html_out is not None:
        items = {g.item_id: g for g in _gold(gold)} if gold else {}
        tokens = calls.tokens_of()
        traces = []
        for run, q in sorted(keys, key=lambda k: (k[0] is None, k[0] or "", k[1] is None, k[1] or "")):
            g = items.get(q or "")
            traces.append(
                (analyse(calls.groups[(run, q)], g.ids if g else [], tokens), g.question if g else "")
            )
        summary = _summary_table(traces)
        try:
            html_out.write_text(
                render_page(f"openxiv runs: {settings.ledger}", summary, traces), encoding="utf-8"
            )
        except OSError as exc:
            raise click.ClickException(f"cannot write {html_out}: {exc.strerror}") from None
        click.echo(f"wrote {len(traces)} question timelines -> {html_out}", err=str(jsonl_out) == "-")


def _write_jsonl(calls: Any, keys: list[Any], out: Path, bodies: bool) -> int:
    records = sorted((r for k in keys for r in calls.groups[k]), key=lambda r: (r.segment or "", r.seq or 0))
    lines = []
    for rec in records:
        row = rec.to_json()
        if bodies:
            try:
                row["body"] = calls.reader.body(rec.body_sha256).decode("utf-8", errors="replace")
            except KeyError:
                row["body"] = None
        lines.append(json.dumps(row, ensure_ascii=False) + "\n")
    try:
        if str(out) == "-":
            click.echo("".join(lines), nl=False)
        else:
            out.write_text("".join(lines), encoding="utf-8")
    except OSError as exc:
        raise click.ClickException(f"cannot write {out}: {exc.strerror}") from None
    return len(lines)


def _summary_table(traces: list[Any]) -> str:
    from html import escape

    per_run: dict[str, list[int]] = {}
    for t, _ in traces:
        m = t.metrics()
        acc = per_run.setdefault(str(t.run or "-"), [0, 0, 0, 0])
        acc[0] += 1
        acc[1] += m["calls"]
        acc[2] += m["tokens_returned"]
        acc[3] += m["failed_calls"]
    rows = "".join(
        f"<tr><td>{escape(run)}</td><td class='num'>{a}</td><td class='num'>{b}</td><td class='num'>{c}</td>"
        f"<td class='num'>{d}</td></tr>"
        for run, (a, b, c, d) in per_run.items()
    )
    head = "<tr><th>run</th><th>questions</th><th>calls</th><th>tokens returned</th><th>failed</th></tr>"
    return f"<section><h2>Runs</h2><table><thead>{head}</thead><tbody>{rows}</tbody></table></section>"
