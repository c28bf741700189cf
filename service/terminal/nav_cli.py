"""``openxiv facets``, ``openxiv match``, ``openxiv author`` and ``openxiv bibtex``: navigation from
the terminal, no server.

The same use cases as ``GET /v1/facets``, ``/v1/match``, ``/v1/authors`` and ``/v1/bibtex``
(`openxiv.service.navigation`, `openxiv.service.bibtex`, through `Library`), so ``--json`` prints
exactly what those answer. A bad parameter exits 2 with the message the HTTP API gives in its 400;
an unknown paper or author exits 1.
"""

from __future__ import annotations

import json
from typing import Any

import click

from openxiv.corpus.settings.model import Settings
from openxiv.corpus.settings.options import emit_json, index_option, json_option, settings_from_flags
from openxiv.service.search_params import OFFSET_MAX, TOP_K_MAX
from openxiv.service.terminal.cli import filter_options, open_library

__all__ = ["author", "bibtex", "facets", "match"]


@click.command("facets")
@settings_from_flags
@click.argument("query", required=False, default=None)
@index_option(help="The index to count in.")
@filter_options
@click.option("--top-authors", type=int, default=10, show_default=True, help="Authors to list, 0-100.")
@json_option(help="Print one JSON object, the GET /v1/facets response.")
def facets(
    settings: Settings, query: str | None, top_authors: int, json_out: str | None, **filter_args: Any
) -> None:
    """Counts by year, month, category and top authors of the papers QUERY matches (after the
    filters; every paper they keep without QUERY). Counts are within this corpus.

    \b
    openxiv facets "diffusion language models"
    openxiv facets --category cs.CL --date-from 2025-06 --json
    """
    from openxiv.service.nav_text import facets_text
    from openxiv.service.params import FilterParams

    with open_library(settings) as library:
        out = library.facets(query, filters=FilterParams(**filter_args), top_authors=top_authors)
    if json_out is not None:
        emit_json(json.loads(out.model_dump_json()), json_out)
    else:
        click.echo(facets_text(out), nl=False)


@click.command("match")
@settings_from_flags
@click.argument("title")
@index_option(help="The index to look in.")
@json_option(help="Print one JSON object, the GET /v1/match response.")
def match(settings: Settings, title: str, json_out: str | None) -> None:
    """The paper of a pasted TITLE, with a confidence (exit 1 when none is close enough).

    \b
    openxiv match "Attention is all you need"
    """
    from openxiv.service.nav_text import match_text

    with open_library(settings) as library:
        out = library.match_title(title)
    if json_out is not None:
        emit_json(json.loads(out.model_dump_json()), json_out)
    else:
        click.echo(match_text(out), nl=False)
    if out.match is None:
        raise SystemExit(1)


@click.command("author")
@settings_from_flags
@click.argument("name")
@index_option(help="The index to look in.")
@click.option(
    "--top-k", "-k", type=int, default=20, show_default=True, help=f"Papers to show, 1-{TOP_K_MAX}."
)
@click.option(
    "--offset", type=int, default=0, show_default=True, help=f"Papers to skip (paging), 0-{OFFSET_MAX}."
)
@json_option(help="Print one JSON object, the GET /v1/authors response.")
def author(settings: Settings, name: str, top_k: int, offset: int, json_out: str | None) -> None:
    """The papers of the author NAME, newest first, under every spelling that folds to it.

    \b
    openxiv author "Jiri Matas"
    """
    from openxiv.service.nav_text import author_text

    with open_library(settings) as library:
        out = library.author(name, top_k=top_k, offset=offset)
    if json_out is not None:
        emit_json(json.loads(out.model_dump_json()), json_out)
    else:
        click.echo(author_text(out), nl=False)


@click.command("bibtex")
@settings_from_flags
@click.argument("arxiv_ids", nargs=-1, required=True)
@index_option(help="The index to read from.")
@json_option(help="Print one JSON object, the GET /v1/bibtex response.")
def bibtex(settings: Settings, arxiv_ids: tuple[str, ...], json_out: str | None) -> None:
    """BibTeX entries of the papers ARXIV_IDS (a .bib file on stdout).

    \b
    openxiv bibtex 1706.03762 1502.03167 > refs.bib
    """
    with open_library(settings) as library:
        out = library.bibtex(list(arxiv_ids))
    if json_out is not None:
        emit_json(json.loads(out.model_dump_json()), json_out)
    else:
        click.echo(out.text(), nl=False)
