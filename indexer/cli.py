"""``openxiv index build`` and ``openxiv index info``."""

from __future__ import annotations

import contextlib
import logging
import math
import sqlite3
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import TYPE_CHECKING

import click

from openxiv.corpus.extras import MissingExtra
from openxiv.corpus.settings.model import Settings
from openxiv.corpus.settings.options import (
    db_option,
    emit_json,
    index_option,
    json_option,
    progress_option,
    setting_option,
    settings_from_flags,
    show_progress,
)
from openxiv.corpus.settings.sources import ConfigError
from openxiv.indexer import layout
from openxiv.indexer.embed_cli import embed_cmd, encoder_options
from openxiv.indexer.manifest import Manifest

if TYPE_CHECKING:
    from openxiv.indexer.building.job import BuildReport

__all__ = ["index"]


def _size(n: int | None) -> str:
    if n is None:
        return "-"
    size = float(n)
    for unit in ("B", "KiB", "MiB", "GiB"):
        if size < 1024 or unit == "GiB":
            return f"{size:.0f} {unit}" if unit == "B" else f"{size:.1f} {unit}"
        size /= 1024
    return f"{size:.1f} GiB"  # pragma: no cover


class _StderrLines(logging.Handler):
    """One plain line per record on the current ``sys.stderr`` (looked up at each line)."""

    def emit(self, record: logging.LogRecord) -> None:
        try:
            sys.stderr.write(self.format(record) + "\n")
            sys.stderr.flush()
        except Exception:  # pragma: no cover - a closed stream must not stop the build
            self.handleError(record)


@contextlib.contextmanager
def stage_lines(progress: bool | None) -> Iterator[None]:
    """Neither --progress nor --no-progress, and stderr is not a terminal (a container's log, a CI
    job): the build's stages and the embedding's progress (logger ``openxiv.indexer``, INFO) as
    timestamped lines on stderr, where progress bars would be one endless line."""
    if progress is not None or sys.stderr.isatty():
        yield
        return
    logger = logging.getLogger("openxiv.indexer")
    handler = _StderrLines()
    handler.setFormatter(logging.Formatter("%(asctime)s openxiv index build: %(message)s", "%H:%M:%S"))
    level, propagate = logger.level, logger.propagate
    logger.addHandler(handler)
    logger.setLevel(logging.INFO)
    logger.propagate = False  # a library's logging.basicConfig (the ONNX export) would print them twice
    try:
        yield
    finally:
        logger.removeHandler(handler)
        logger.setLevel(level)
        logger.propagate = propagate


@click.group()
def index() -> None:
    """Build and inspect index snapshots (BM25 + dense vectors)."""


@index.command()
@settings_from_flags
@db_option()
@index_option(help="Where the snapshot is built.")
@encoder_options(["papers", "passages", "both", "none"], "Embedding cache file")
@click.option("--keep", type=int, default=2, show_default=True, help="Snapshots kept (the live one always).")
@click.option(
    "--if-changed",
    is_flag=True,
    help="Do nothing when the live snapshot already matches the corpus and settings.",
)
@click.option(
    "--wait",
    type=click.FloatRange(min=0),
    is_flag=False,
    flag_value=math.inf,
    default=0.0,
    metavar="[SECONDS]",
    help="When another build runs on the same --index: wait for it (up to SECONDS, or as long as it "
    "takes) instead of failing at once.",
)
@setting_option("backend", type=click.Choice(["embedded", "milvus"]))
@setting_option("milvus_uri")
@setting_option("build_until", "--until", type=click.DateTime(formats=["%Y-%m-%d"]), metavar="YYYY-MM-DD")
@progress_option()
def build(
    settings: Settings, cache: Path | None, keep: int, if_changed: bool, wait: float, progress: bool | None
) -> None:
    """Build a new snapshot of the corpus and switch INDEX/CURRENT to it atomically.

    One build runs per index root at a time (INDEX/build.lock): a second one fails at once
    naming the first, or queues behind it with --wait. Snapshots that a running server still reads
    are never pruned (kept beyond --keep until it lets go of them)."""
    from openxiv.indexer.building.job import BuildError, build_index_report

    db_path = settings.db_path
    root = settings.index_root
    show = show_progress(progress)
    try:
        with stage_lines(progress):
            report = build_index_report(
                db_path,
                root,
                settings,
                progress=show,
                cache_path=cache,
                keep=keep,
                force=not if_changed,
                wait=None if math.isinf(wait) else wait,
                on_wait=lambda message: click.echo(f"openxiv: {message}", err=True),
            )
    except ConfigError as exc:  # a setting with an unusable value: a usage error (exit 2)
        raise click.UsageError(str(exc)) from exc
    except (BuildError, FileExistsError, MissingExtra) as exc:  # MissingExtra: pip install names the extra
        raise click.ClickException(str(exc)) from exc
    except (OSError, sqlite3.Error) as exc:  # disk full, read-only index: one line, not a traceback
        raise click.ClickException(f"the build failed: {_os_reason(exc)}") from exc
    _summary(report, Path(root))


def _os_reason(exc: BaseException) -> str:
    """``No space left on device (<path>)`` for an OSError, the message for anything else."""
    if isinstance(exc, OSError) and exc.strerror:
        return exc.strerror + (f" ({exc.filename})" if exc.filename else "")
    return str(exc) or type(exc).__name__


def _summary(report: BuildReport, root: Path) -> None:
    """What `build` prints: the snapshot, its counts, sizes and stage times."""
    m = report.manifest
    if report.reused:
        click.echo(
            f"Index is up to date: {report.path} (corpus fingerprint {(m.corpus.fingerprint or '')[:12]})"
        )
        return
    c, emb = m.counts, m.embedding
    click.echo(f"Built snapshot {report.path}")
    click.echo(f"  papers:   {c.papers:,}")
    cut = m.corpus.cutoff
    if cut is not None:
        click.echo(
            f"  until:    {cut.until} (left out: {cut.removed_later:,} submitted later, "
            f"{cut.removed_undated:,} without a date)"
        )
    click.echo(f"  passages: {c.passages:,}")
    vec = f"{c.paper_vectors:,} paper + {c.passage_vectors:,} passage"
    if emb.embedded != "none":
        vec += f" ({emb.encoder}, dim {emb.dim}, {emb.max_tokens} tokens; encoded {emb.encoded:,}, reused {emb.reused_from_cache:,} from cache)"
    click.echo(f"  vectors:  {vec}")
    sizes = m.sizes_bytes
    click.echo(
        "  size:     "
        + ", ".join(f"{k} {_size(v)}" for k, v in sizes.items() if k != "total")
        + f"; total {_size(sizes.get('total'))}"
    )
    seconds = m.build.seconds if m.build is not None else 0.0
    click.echo(
        "  time:     "
        + ", ".join(f"{k} {v:.1f}s" for k, v in report.stages.items())
        + f"; total {seconds:.1f}s"
    )
    click.echo(f"  live:     {root / layout.CURRENT} -> {report.path.name}")
    if report.pruned:
        click.echo(f"  pruned:   {', '.join(report.pruned)}")


@index.command()
@settings_from_flags
@index_option()
@json_option(help="Print the manifest as JSON.")
def info(settings: Settings, json_out: str | None) -> None:
    """Show the manifest of the index's live snapshot (or of a snapshot directory)."""
    from openxiv.indexer.manifest import read as read_manifest
    from openxiv.indexer.snapshot import BadIndexError, list_snapshots, resolve_snapshot

    index_dir = settings.index_root
    try:
        snap = resolve_snapshot(index_dir)
        manifest = read_manifest(snap)
    except BadIndexError as exc:
        raise click.ClickException(str(exc)) from exc
    if json_out is not None:
        emit_json({"path": str(snap), **manifest.as_json()}, json_out)
        return
    click.echo(
        _human(manifest, snap, [p.name for p in list_snapshots(index_dir)] if snap != index_dir else [])
    )


def _cutoff_line(m: Manifest) -> list[str]:
    """The ``--until`` cutoff as the build printed it (what ``--json`` and ``/v1/index`` show)."""
    cut = m.corpus.cutoff
    if cut is None:
        return []
    return [
        f"until        {cut.until} (left out: {cut.removed_later:,} submitted later, "
        f"{cut.removed_undated:,} without a date)"
    ]


def _human(m: Manifest, path: Path, others: list[str]) -> str:
    c, emb, bm, fu, b = m.counts, m.embedding, m.bm25, m.fusion, m.build
    lines = [
        f"snapshot     {m.snapshot}  ({path})",
        f"created      {m.created_at}  format v{m.format_version}",
        f"corpus       {(m.corpus.fingerprint or '')[:16]}…  from {m.source_db}",
        f"papers       {c.papers:,} ({m.corpus.papers_with_fulltext or 0:,} with full text)",
        *_cutoff_line(m),
        f"passages     {c.passages:,}",
        f"vectors      {c.paper_vectors:,} paper, {c.passage_vectors:,} passage",
    ]
    if emb.embedded != "none":
        lines.append(
            f"embedding    {emb.encoder} dim {emb.dim}, {emb.max_tokens} tokens, embeds {emb.embedded}"
        )
    else:
        lines.append("embedding    none (BM25 only)")
    if bm is not None:
        tok = bm.tokenizer
        lines.append(
            f"bm25         bm25s {bm.method} k1={bm.k1} b={bm.b}, stemmer {tok['stemmer']}, stopwords {tok['stopwords']}"
        )
    if fu is not None:
        lines.append(
            f"fusion       {fu.fusion} (rrf_k={fu.rrf_k}, w_bm25={fu.weight_bm25}, w_dense={fu.weight_dense}, candidates={fu.candidates})"
        )
    if b is not None:
        lines.append(
            f"build        {b.seconds:.1f}s: " + ", ".join(f"{k} {v:.1f}s" for k, v in b.stages_s.items())
        )
    lines += [
        f"size         {_size(m.sizes_bytes.get('total'))}",
        "versions     " + ", ".join(f"{k} {v}" for k, v in m.versions.items() if v),
    ]
    if m.milvus is not None:
        lines.append(
            f"milvus       {m.milvus.uri}: " + ", ".join(f"{k} {v}" for k, v in m.milvus.collections.items())
        )
    if others:
        lines.append("snapshots    " + ", ".join(others))
    return "\n".join(lines)


index.add_command(embed_cmd)
