"""``openxiv ingest`` and ``openxiv stats``: the corpus part of the command line."""

from __future__ import annotations

import json
import signal
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import click
from sqlalchemy.exc import DatabaseError

from openxiv.corpus.completeness import completeness
from openxiv.corpus.inputs import InputLedger, file_keys
from openxiv.corpus.parallel import ReadTask, read_tasks
from openxiv.corpus.readers import FORMATS, read_file, read_path
from openxiv.corpus.records import PaperRecord, ReadError
from openxiv.corpus.runs import Interrupted, run_errors, terminate_as_interrupt
from openxiv.corpus.settings.model import Settings
from openxiv.corpus.settings.options import (
    EXIT_FAILED,
    EXIT_INTERRUPTED,
    EXIT_OK,
    EXIT_SKIPPED,
    EXIT_USAGE,
    db_option,
    emit_json,
    json_option,
    progress_option,
    setting_option,
    settings_from_flags,
)
from openxiv.corpus.store import IngestSummary, Store

__all__ = ["EXIT_FAILED", "EXIT_INTERRUPTED", "EXIT_OK", "EXIT_SKIPPED", "EXIT_USAGE", "ingest", "stats"]

SHOW_ERRORS = 20


def _items(
    tasks: Sequence[ReadTask | ReadError],
    fmt: str | None,
    progress: bool | None,
    settings: Settings,
    ray: bool = False,
) -> Iterator[PaperRecord | ReadError]:
    from tqdm import tqdm

    with tqdm(unit=" records", disable=None if progress is None else not progress, file=sys.stderr) as bar:
        if settings.ingest_workers > 1 or ray:
            from openxiv.corpus.parallel import read_parallel

            bar.set_description(f"{'ray' if ray else settings.ingest_workers} workers")
            split = settings.ingest_split_bytes
            for item in read_parallel(tasks, fmt, settings.ingest_workers, settings.ray_address, ray, split):
                bar.update(1)
                yield item
            return
        for task in tasks:
            if isinstance(task, ReadError):  # a folder or link that cannot be read (`walk_inputs`)
                yield task
                continue
            path, _, in_folder = task
            file = Path(path)
            bar.set_description(file.name)
            for item in read_file(file, fmt, in_folder) if file.exists() else read_path(file, fmt):
                bar.update(1)
                yield item


def _write_report(path: Path, inputs: Sequence[Path], summary: IngestSummary, store: Store) -> None:
    """The summary, then every skipped input, streamed from ``ingest_errors`` (memory holds only a
    sample of them, `openxiv.corpus.ingest.ERROR_SAMPLE`)."""
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("w", encoding="utf-8") as fh, store.engine.connect() as conn:
            head = {
                "type": "summary",
                "db": str(store.path),
                "inputs": [str(p) for p in inputs],
                **summary.as_dict(),
            }
            fh.write(json.dumps(head) + "\n")
            assert summary.run_id is not None
            for e in run_errors(conn, summary.run_id):
                row = {"type": "skipped", "source": e.source, "location": e.location, "reason": e.reason}
                fh.write(json.dumps(row, ensure_ascii=False) + "\n")
    except OSError as exc:  # not the database's problem (the ingest is committed)
        raise click.ClickException(f"cannot write the report {path}: {exc}") from exc


@click.command()
@settings_from_flags
@click.argument(
    "inputs", nargs=-1, required=True, type=click.Path(exists=True, path_type=Path), metavar="INPUT..."
)
@db_option(help="Created if missing.")
@click.option(
    "--format", "fmt", type=click.Choice(FORMATS), default=None, help="Read every input as this format."
)
@click.option(
    "--report",
    type=click.Path(dir_okay=False, path_type=Path),
    default=None,
    help="Write the full ingest report (summary + every skipped input) as JSON lines.",
)
@setting_option("passage_words", type=click.IntRange(min=1))
@setting_option("passage_overlap", type=click.IntRange(min=0))
@setting_option("ingest_workers", type=click.IntRange(min=1))
@setting_option("ingest_split_bytes")
@click.option(
    "--ray",
    "on_ray",
    is_flag=True,
    help="Parse the input files as Ray tasks (on OPENXIV_RAY_ADDRESS, else a local Ray); the nodes must "
    "see the same paths. Needs the [ray] extra.",
)
@setting_option("ray_address")
@click.option(
    "--skip-unchanged",
    is_flag=True,
    help="Do not read input files again that a finished ingest into this database read without error "
    "and that are unchanged since (same size and mtime, or same content hash).",
)
@progress_option()
def ingest(
    settings: Settings,
    inputs: tuple[Path, ...],
    fmt: str | None,
    report: Path | None,
    on_ray: bool,
    skip_unchanged: bool,
    progress: bool | None,
) -> None:
    """Read papers from INPUT files or folders into the corpus database.

    Formats (detected per file from its first JSON lines unless --format is given): arXiv listing
    JSONL, arXiv OAI/Kaggle metadata JSONL, plain-text full texts ({id, text}), unarXive JSONL, and
    PDFs. .gz files and folders (read recursively) are accepted. With --ingest-workers N the files are
    parsed by N processes (one file each at a time; a big uncompressed JSON-lines file in byte ranges
    of OPENXIV_INGEST_SPLIT_BYTES) and stored in input order by this one, so the result is the
    serial one. The same paper from several inputs
    or versions is stored once; re-running an ingest changes nothing. Bad lines and files are
    reported and skipped, the rest lands.

    Exit status: 0 all landed; 3 finished, but some input was skipped; 1 nothing could be read or
    the database failed; 2 usage error; 130/143 interrupted by Ctrl-C/SIGTERM (the run is marked
    interrupted and the batches committed so far stay).
    """
    if settings.passage_words < 1 or not 0 <= settings.passage_overlap < settings.passage_words:
        raise click.BadParameter(
            f"need passage_words >= 1 and 0 <= passage_overlap < passage_words "
            f"(got {settings.passage_words}, {settings.passage_overlap})"
        )
    db_path = settings.db_path
    tasks = read_tasks(inputs)
    passed_over = 0
    try:
        with terminate_as_interrupt(), Store(db_path) as store:
            ledger = InputLedger(store.engine, file_keys(fmt, settings)) if skip_unchanged else None
            if ledger is not None:
                left = _unchanged_passed_over(ledger, tasks, db_path)
                passed_over, tasks = len(tasks) - len(left), left
            summary = store.ingest(_items(tasks, fmt, progress, settings, on_ray), settings=settings)
            if ledger is not None and summary.status == "finished" and summary.run_id is not None:
                with store.engine.connect() as conn:  # every skipped input, not the in-memory sample
                    failed = {e.source for e in run_errors(conn, summary.run_id)}
                ledger.record(_task_files(tasks), failed, summary.run_id)
            _print_summary(summary, db_path, has_report=report is not None)
            if report is not None:
                _write_report(report, inputs, summary, store)
                click.echo(f"Report written to {report}")
    except KeyboardInterrupt as exc:
        signum = exc.signum if isinstance(exc, Interrupted) else signal.SIGINT
        click.echo(
            f"Interrupted ({signal.Signals(signum).name}): the run is marked interrupted in {db_path}; "
            "the batches committed before stay, and running the same ingest again completes it.",
            err=True,
        )
        sys.exit(EXIT_INTERRUPTED + signum)
    except DatabaseError as exc:
        raise click.ClickException(f"{db_path} is not a usable corpus database: {exc.orig}") from exc
    except OSError as exc:
        raise click.ClickException(f"cannot write the corpus database {db_path}: {exc}") from exc
    except ImportError as exc:  # --ray without the [ray] extra (MissingExtra names it)
        raise click.ClickException(str(exc)) from exc
    if summary.read == 0 and not passed_over:
        click.echo("Error: nothing could be read from the inputs.", err=True)
        sys.exit(EXIT_FAILED)
    if summary.skipped:
        click.echo(f"Ingest finished with {summary.skipped} skipped input(s) (exit status {EXIT_SKIPPED}).")
        sys.exit(EXIT_SKIPPED)


def _task_files(tasks: Sequence[ReadTask | ReadError]) -> list[Path]:
    """The input files of ``tasks`` (not the folders and links that could not be read)."""
    return [Path(t[0]) for t in tasks if not isinstance(t, ReadError)]


def _unchanged_passed_over(
    ledger: InputLedger, tasks: list[ReadTask | ReadError], db_path: Path
) -> list[ReadTask | ReadError]:
    """The ``tasks`` whose files must be read; says how many were passed over as unchanged."""
    files = [f for f in _task_files(tasks) if f.is_file()]
    _, unchanged = ledger.split(files)
    if not unchanged:
        return tasks
    same = {str(f) for f in unchanged}
    left = [t for t in tasks if isinstance(t, ReadError) or t[0] not in same]
    click.echo(
        f"{db_path}: {len(unchanged)} of {len(files)} input file(s) unchanged since they were ingested, "
        + ("not read again" if left else "nothing to read")
    )
    return left


def _print_summary(summary: IngestSummary, db_path: Path, has_report: bool) -> None:
    rate = summary.read / summary.seconds if summary.seconds > 0 else 0.0
    click.echo(
        f"{db_path}: read {summary.read}, added {summary.added}, updated {summary.updated}, "
        f"unchanged {summary.unchanged}, skipped {summary.skipped} "
        f"in {summary.seconds:.1f} s ({rate:,.0f} records/s)"
    )
    if summary.skipped:
        click.echo(f"Skipped {summary.skipped} input(s):")
        for e in summary.errors[:SHOW_ERRORS]:
            click.echo(f"  {e.source}, {e.location}: {e.reason}")
        if summary.skipped > SHOW_ERRORS:
            more = summary.skipped - SHOW_ERRORS
            hint = "" if has_report else " (use --report FILE for the full list)"
            click.echo(f"  and {more} more{hint}")


def _table(data: dict[str, Any]) -> str:
    rows: list[tuple[str, str]] = []
    for key, value in data.items():
        if isinstance(value, dict):
            rows.append((key, ""))
            rows.extend((f"  {k}", f"{v:,}" if isinstance(v, int) else str(v)) for k, v in value.items())
        else:
            rows.append((key, f"{value:,}" if isinstance(value, int) else str(value)))
    width = max(len(k) for k, _ in rows)
    vwidth = max(len(v) for _, v in rows)
    return "\n".join(f"{k:<{width}}  {v:>{vwidth}}" for k, v in rows)


@click.command()
@settings_from_flags
@db_option()
@json_option(help="Print the counts as one JSON object.")
def stats(settings: Settings, json_out: str | None) -> None:
    """Counts of papers, full texts, sections, passages and skipped inputs (all runs), and per
    field (title, abstract, authors, date and its precision, categories, full text) the share of
    papers that have it."""
    db_path = settings.db_path
    if not db_path.is_file():
        raise click.ClickException(
            f"no corpus database at {db_path}; create one with `openxiv ingest --db {db_path} INPUT...`"
        )
    try:
        with Store.open_readonly(db_path) as store:
            data = store.stats()
            with store.engine.connect() as conn:
                data["completeness"] = completeness(conn)
    except DatabaseError as exc:
        raise click.ClickException(f"{db_path} is not a usable corpus database: {exc.orig}") from exc
    if json_out is not None:
        emit_json(data, json_out)
    else:
        shares = data.pop("completeness")
        click.echo(f"{db_path}\n{_table(data)}\n\n{_completeness_table(shares)}")


def _completeness_table(shares: dict[str, Any]) -> str:
    """``field  papers  share`` rows, shares in percent."""
    lines = [f"{'field (of ' + format(shares['papers'], ',') + ' papers)':<28} {'papers':>9} {'share':>8}"]
    for name, value in shares.items():
        if not isinstance(value, dict):
            continue
        label = f"{name} (of {value['of']:,})" if "of" in value else name
        lines.append(f"{label:<28} {value['papers']:>9,} {100 * value['share']:>7.2f}%")
    return "\n".join(lines)
