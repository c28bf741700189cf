"""``openxiv index build`` and ``openxiv index info``."""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any

import click

from openxiv.corpus.config import ConfigError, Settings
from openxiv.corpus.extras import MissingExtra
from openxiv.corpus.options import (
    db_option,
    deprecated_alias,
    emit_json,
    index_option,
    json_option,
    progress_option,
    setting_option,
    show_progress,
)
from openxiv.indexer import layout
from openxiv.indexer.embed_cli import embed_cmd, encoder_options

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


@click.group()
def index() -> None:
    """Build and inspect index snapshots (BM25 + dense vectors)."""


@index.command()
@db_option()
@index_option(help="Where the snapshot is built.")
@click.option(
    "--out",
    "out",
    type=click.Path(file_okay=False, path_type=Path),
    default=None,
    help="Deprecated spelling of --index (still works, with a warning).",
)
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
@progress_option()
@click.pass_context
def build(
    ctx: click.Context,
    db: Path | None,
    index_dir: Path | None,
    out: Path | None,
    embed: str | None,
    model: str | None,
    embed_max_tokens: int | None,
    cache: Path | None,
    keep: int,
    if_changed: bool,
    wait: float,
    backend: str | None,
    milvus_uri: str | None,
    progress: bool | None,
) -> None:
    """Build a new snapshot of the corpus and switch INDEX/CURRENT to it atomically.

    One build runs per index root at a time (INDEX/build.lock): a second one fails at once
    naming the first, or queues behind it with --wait. Snapshots that a running server still reads
    are never pruned (kept beyond --keep until it lets go of them)."""
    from openxiv.indexer.build import BuildError, build_index_report

    index_dir = deprecated_alias(ctx, "index_dir", out, "--out", "--index")
    settings = Settings.from_env().replace(
        db=db,
        index_dir=index_dir,
        embed=embed,
        model=model,
        embed_max_tokens=embed_max_tokens,
        backend=backend,
        milvus_uri=milvus_uri,
    )
    db_path = settings.db_path
    root = settings.index_root
    show = show_progress(progress)
    try:
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
    m = report.manifest
    if report.reused:
        click.echo(
            f"Index is up to date: {report.path} (corpus fingerprint {m['corpus']['fingerprint'][:12]})"
        )
        return
    c, emb = m["counts"], m.get("embedding", {})
    click.echo(f"Built snapshot {report.path}")
    click.echo(f"  papers:   {c['papers']:,}")
    click.echo(f"  passages: {c['passages']:,}")
    vec = f"{c['paper_vectors']:,} paper + {c['passage_vectors']:,} passage"
    if emb.get("embedded", "none") != "none":
        vec += f" ({emb.get('encoder')}, dim {emb.get('dim')}, {emb.get('max_tokens')} tokens; encoded {emb.get('encoded', 0):,}, reused {emb.get('reused_from_cache', 0):,} from cache)"
    click.echo(f"  vectors:  {vec}")
    sizes = m.get("sizes_bytes", {})
    click.echo(
        "  size:     "
        + ", ".join(f"{k} {_size(v)}" for k, v in sizes.items() if k != "total")
        + f"; total {_size(sizes.get('total'))}"
    )
    click.echo(
        "  time:     "
        + ", ".join(f"{k} {v:.1f}s" for k, v in report.stages.items())
        + f"; total {m['build']['seconds']:.1f}s"
    )
    click.echo(f"  live:     {Path(root) / layout.CURRENT} -> {report.path.name}")
    if m["build"].get("pruned"):
        click.echo(f"  pruned:   {', '.join(m['build']['pruned'])}")


@index.command()
@index_option()
@click.argument("index_arg", metavar="[INDEX_DIR]", required=False, type=click.Path(path_type=Path))
@json_option(help="Print the manifest as JSON.")
@click.pass_context
def info(ctx: click.Context, index_dir: Path | None, index_arg: Path | None, json_out: str | None) -> None:
    """Show the manifest of the index's live snapshot (or of a snapshot directory).

    The positional INDEX_DIR is the deprecated spelling of --index (still works, with a warning)."""
    from openxiv.indexer.manifest import read as read_manifest
    from openxiv.indexer.snapshot import BadIndexError, list_snapshots, resolve_snapshot

    index_dir = (
        Settings.from_env()
        .replace(index_dir=deprecated_alias(ctx, "index_dir", index_arg, "the INDEX_DIR argument", "--index"))
        .index_root
    )
    try:
        snap = resolve_snapshot(index_dir)
        manifest = read_manifest(snap)
    except BadIndexError as exc:
        raise click.ClickException(str(exc)) from exc
    manifest = {"path": str(snap), **manifest}
    if json_out is not None:
        emit_json(manifest, json_out)
        return
    click.echo(_human(manifest, [p.name for p in list_snapshots(index_dir)] if snap != index_dir else []))


def _human(m: dict[str, Any], others: list[str]) -> str:
    c, emb, bm, fu, b = m["counts"], m.get("embedding", {}), m["bm25"], m["fusion"], m["build"]
    lines = [
        f"snapshot     {m.get('snapshot')}  ({m['path']})",
        f"created      {m.get('created_at')}  format v{m['format_version']}",
        f"corpus       {m['corpus']['fingerprint'][:16]}…  from {m.get('source_db')}",
        f"papers       {c['papers']:,} ({m['corpus'].get('papers_with_fulltext') or 0:,} with full text)",
        f"passages     {c['passages']:,}",
        f"vectors      {c['paper_vectors']:,} paper, {c['passage_vectors']:,} passage",
    ]
    if emb.get("embedded", "none") != "none":
        lines.append(
            f"embedding    {emb.get('encoder')} dim {emb.get('dim')}, {emb.get('max_tokens')} tokens, embeds {emb['embedded']}"
        )
    else:
        lines.append("embedding    none (BM25 only)")
    tok = bm["tokenizer"]
    lines += [
        f"bm25         bm25s {bm.get('method')} k1={bm['k1']} b={bm['b']}, stemmer {tok['stemmer']}, stopwords {tok['stopwords']}",
        f"fusion       {fu['fusion']} (rrf_k={fu['rrf_k']}, w_bm25={fu['weight_bm25']}, w_dense={fu['weight_dense']}, candidates={fu['candidates']})",
        f"build        {b['seconds']:.1f}s: " + ", ".join(f"{k} {v:.1f}s" for k, v in b["stages_s"].items()),
        f"size         {_size(m.get('sizes_bytes', {}).get('total'))}",
        "versions     " + ", ".join(f"{k} {v}" for k, v in m.get("versions", {}).items() if v),
    ]
    if m.get("backend") == "milvus":
        mv = m["milvus"]
        lines.append(
            f"milvus       {mv['uri']}: " + ", ".join(f"{k} {v}" for k, v in mv["collections"].items())
        )
    if others:
        lines.append("snapshots    " + ", ".join(others))
    return "\n".join(lines)


index.add_command(embed_cmd)
