"""``openxiv index embed``: fill the embedding cache on Ray (this machine or a cluster) before a build."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import asdict
from pathlib import Path
from typing import Any, TypeVar

import click

from openxiv.corpus.settings.model import Settings
from openxiv.corpus.settings.options import (
    db_option,
    emit_json,
    json_option,
    setting_option,
    settings_from_flags,
)
from openxiv.corpus.settings.sources import ConfigError

__all__ = ["embed_cmd", "encoder_options"]

F = TypeVar("F", bound=Callable[..., Any])


def encoder_options(embed_choices: list[str], cache_help: str) -> Callable[[F], F]:
    """``--embed``, ``--model``, ``--embed-max-tokens`` and ``--cache``: which vectors, by which
    encoder, kept where (``index build`` and ``index embed`` must agree on them to share vectors)."""

    def apply(fn: F) -> F:
        for deco in reversed(
            [
                setting_option("embed", type=click.Choice(embed_choices)),
                setting_option("model"),
                setting_option(
                    "embed_max_tokens", "--embed-max-tokens", "--max-tokens", type=click.IntRange(min=1)
                ),
                click.option(
                    "--cache",
                    type=click.Path(dir_okay=False, path_type=Path),
                    default=None,
                    help=f"{cache_help} (default: <data_dir>/embcache.sqlite).",
                ),
            ]
        ):
            fn = deco(fn)
        return fn

    return apply


@click.command("embed")
@settings_from_flags
@db_option(exists=True)
@encoder_options(["papers", "passages", "both"], "Embedding cache file to fill")
@setting_option("ray_address")
@setting_option("embed_actors", "--actors", type=click.IntRange(min=0))
@click.option(
    "--gpus",
    type=click.FloatRange(min=0),
    default=0.0,
    show_default=True,
    help="GPUs per actor (0: each actor takes one CPU). A GPU needs a torch model (OPENXIV_MODEL without "
    "onnx-int8) and OPENXIV_EMBED_DEVICE=cuda.",
)
@json_option(help="Print the report as JSON.")
def embed_cmd(settings: Settings, cache: Path | None, gpus: float, json_out: str | None) -> None:
    """Encode the texts of the corpus that the embedding cache lacks on a pool of Ray actors, and store
    their vectors in the cache, so that the next `openxiv index build` (same model, max tokens and
    cache) encodes nothing.

    Without --ray-address a local Ray starts (one actor per core); with `auto` or
    `ray://HOST:10001` the actors run on that cluster, whose nodes need openxiv and the same model
    (each actor checks the encoder fingerprint). Needs the [ray] extra."""
    from openxiv.indexer.building.ray_embed import corpus_texts, ray_fill_cache
    from openxiv.indexer.encoders.embed import load_encoder

    if settings.embed == "none":
        raise click.UsageError("OPENXIV_EMBED=none: nothing to embed (give --embed papers|passages|both)")
    cache_file = cache if cache is not None else Path(settings.data_dir) / "embcache.sqlite"
    try:
        encoder = load_encoder(settings)
        texts = corpus_texts(settings.db_path, settings.embed, settings.paper_lead)
        report = ray_fill_cache(texts, cache_file, settings, encoder, num_gpus=gpus)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from exc
    except ImportError as exc:  # the [ray] extra
        raise click.ClickException(str(exc)) from exc
    data = {**asdict(report), "texts_per_s": report.texts_per_s, "cache": str(cache_file)}
    if json_out is not None:
        emit_json(data, json_out)
        return
    click.echo(
        f"{cache_file}: {report.texts:,} distinct texts, {report.cached:,} already cached, "
        f"{report.encoded:,} encoded by {report.actors} Ray actor(s) in {report.seconds:.1f} s "
        f"(startup {report.startup_s:.1f} s, then {report.texts_per_s:,.0f} texts/s)"
    )
