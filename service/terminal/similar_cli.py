"""``openxiv similar``: papers similar to one or more seed papers, from the terminal, no server.

The same use case as ``GET /arxiv/?type=similar`` (`openxiv.service.similar`, through `Library`), so
``--json`` prints exactly what that answers. A bad id exits 2, an unknown paper 1, a snapshot without
paper vectors 1 with the message saying how to build one with them.
"""

from __future__ import annotations

import json
import shutil
from typing import Any

import click

from openxiv.corpus.settings.model import Settings
from openxiv.corpus.settings.options import emit_json, index_option, json_option, settings_from_flags
from openxiv.service.search_params import DEFAULT_TOP_K, OFFSET, TOP_K
from openxiv.service.terminal.cli import filter_options, open_library, results_table

__all__ = ["similar"]


@click.command("similar")
@settings_from_flags
@click.argument("arxiv_ids", nargs=-1, required=True)
@index_option(help="The index to search.")
@click.option("--top-k", "-k", type=int, default=DEFAULT_TOP_K, show_default=True, help=TOP_K.cli)
@click.option("--offset", type=int, default=0, show_default=True, help=OFFSET.cli)
@filter_options
@click.option(
    "--facet",
    type=click.Choice(["background", "method", "result"], case_sensitive=False),
    default=None,
    help="Similar in this respect only: the seeds' sentences of that kind.",
)
@click.option(
    "--not",
    "negative_ids",
    multiple=True,
    metavar="ARXIV_ID",
    help="A paper ruled out (repeat, at most 20): the ranking moves away from it; left out.",
)
@click.option("--long", "long_form", is_flag=True, help="Print authors and TLDR under each hit.")
@json_option(help="Print one JSON object, the GET /arxiv/?type=similar response.")
def similar(
    settings: Settings,
    arxiv_ids: tuple[str, ...],
    top_k: int,
    offset: int,
    long_form: bool,
    json_out: str | None,
    facet: str | None,
    negative_ids: tuple[str, ...],
    **filter_args: Any,
) -> None:
    """Papers most similar to ARXIV_ID by its stored vector (several ids: their mean), itself left out.

    \b
    openxiv similar 1706.03762 -k 5
    openxiv similar 2503.00001 2503.00002 --category cs.CL --date-from 2025-04
    openxiv similar 1706.03762 --facet method --not 1409.0473
    """
    from openxiv.service.params import FilterParams
    from openxiv.service.readable import search_text
    from openxiv.service.search import search_json

    with open_library(settings) as library:
        response = library.similar(
            list(arxiv_ids),
            top_k=top_k,
            offset=offset,
            filters=FilterParams(**filter_args),
            facet=facet,
            negative_ids=list(negative_ids) or None,
        )
        snapshot = library.snapshot
    label = "similar to " + ", ".join(arxiv_ids) + (f" ({facet})" if facet else "")
    label += ", not " + ", ".join(negative_ids) if negative_ids else ""
    if json_out is not None:
        emit_json(json.loads(search_json(response)), json_out)
    elif long_form or not response.result:
        click.echo(search_text(response, label, offset), nl=False)
    else:
        shown = f"{offset + 1}-{offset + len(response.result)}"
        click.echo(f"{response.total_count} papers ranked {label}; showing {shown} (snapshot {snapshot})")
        click.echo(results_table(response, offset, shutil.get_terminal_size().columns))
