"""``openxiv search`` and ``openxiv paper``: query and read a snapshot from the terminal, no server.

Both open the snapshot in-process through a `Library` (the service's own search and reading
functions), so ``openxiv search --json`` prints exactly what ``POST /search`` answers and
``openxiv paper --json`` what ``GET /arxiv/?type=head|section|raw`` answers. A bad parameter exits 2
with the message the HTTP API would give (a 400 there); an unknown paper or section exits 1.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
import textwrap
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import click

from openxiv.corpus.settings.model import Settings
from openxiv.corpus.settings.options import emit_json, index_option, json_option, settings_from_flags
from openxiv.service.errors import ApiError, BadRequest
from openxiv.service.launch import check_index
from openxiv.service.search_params import (
    AUTHORS,
    CATEGORIES,
    DATE_FROM,
    DATE_SEARCH_TYPE,
    DATE_SEARCH_TYPES,
    DATE_STR,
    DATE_TO,
    DEFAULT_TOP_K,
    FINE_RERANK,
    MIN_CITATION,
    MODE,
    OFFSET,
    SORT,
    SORTS,
    TOP_K,
    VENUE,
    VENUE_YEAR,
)

__all__ = ["filter_options", "open_library", "paper", "results_table", "search", "wrap_lines"]

F = TypeVar("F", bound=Callable[..., Any])

FILTER_OPTIONS = (
    click.option(
        "--category",
        "categories",
        multiple=True,
        help=CATEGORIES.cli,
    ),
    click.option(
        "--author",
        "authors",
        multiple=True,
        help=AUTHORS.cli,
    ),
    click.option("--date-from", default=None, help=DATE_FROM.cli),
    click.option("--date-to", default=None, help=DATE_TO.cli),
    click.option(
        "--date-search-type",
        type=click.Choice(DATE_SEARCH_TYPES),
        default=None,
        help=DATE_SEARCH_TYPE.cli,
    ),
    click.option("--date-str", multiple=True, help=DATE_STR.cli),
    click.option("--venue", multiple=True, help=VENUE.cli),
    click.option("--venue-year", type=int, default=None, help=VENUE_YEAR.cli),
    click.option(
        "--min-citation",
        type=int,
        default=None,
        help=MIN_CITATION.cli,
    ),
)
"""The filters of ``POST /search`` on the command line; each option's name is a `FilterParams` field,
so the command passes them on as ``FilterParams(**filter_args)``."""


def filter_options(command: F) -> F:
    """Add `FILTER_OPTIONS` to a command (its callback takes them as ``**filter_args``)."""
    for option in reversed(FILTER_OPTIONS):
        command = option(command)
    return command


@contextmanager
def open_library(settings: Settings) -> Iterator[Any]:
    """The snapshot ``CURRENT`` names, open for the duration; API errors become CLI errors."""
    from openxiv.service.library import Library  # loads FastAPI and the index code: only when run

    check_index(settings.index_root)
    library = Library(settings.index_root, settings)
    library.load()
    try:
        yield library
    except BadRequest as exc:
        raise click.UsageError(exc.detail) from exc
    except ApiError as exc:
        raise click.ClickException(exc.detail) from exc
    finally:
        library.close()


def _width() -> int | None:
    """The width to wrap text to: ``COLUMNS`` when set, else the terminal's; ``None`` when the output
    is no terminal (a pipe or a file keeps its lines: ``openxiv paper ID --full > paper.md``)."""
    if os.environ.get("COLUMNS", "").strip().isdigit() or sys.stdout.isatty():
        return shutil.get_terminal_size().columns
    return None


_NUMBERED = re.compile(r"\d+\. ")


def wrap_lines(text: str, width: int | None) -> str:
    """Every line of ``text`` longer than ``width`` wrapped at spaces; continuation lines keep the
    line's indent (a numbered line's under its text). Long words (URLs) are not broken. ``None``:
    ``text`` as it is."""
    if width is None:
        return text
    out: list[str] = []
    for line in text.split("\n"):
        if len(line) <= width:
            out.append(line)
            continue
        indent = line[: len(line) - len(line.lstrip(" "))]
        hang = " " * len(m.group(0)) if (m := _NUMBERED.match(line)) else ""
        out += textwrap.wrap(
            line,
            max(20, width),
            initial_indent="",
            subsequent_indent=indent + hang,
            break_long_words=False,
            break_on_hyphens=False,
        ) or [line]
    return "\n".join(out)


def results_table(response: Any, offset: int, width: int) -> str:
    """Rank, id, date, score and title per hit (titles cut to the terminal width)."""
    rows = [
        (str(offset + i), h.arxiv_id, h.date or "", f"{h.score:.4f}", " ".join((h.title or "").split()))
        for i, h in enumerate(response.result, start=1)
    ]
    head = ("#", "arxiv_id", "date", "score", "title")
    widths = [max(len(r[c]) for r in [head, *rows]) for c in range(4)]
    room = max(20, width - sum(widths) - 8)

    def line(r: tuple[str, ...]) -> str:
        title = r[4] if len(r[4]) <= room else r[4][: room - 1] + "…"
        return "  ".join([r[0].rjust(widths[0]), *(r[c].ljust(widths[c]) for c in (1, 2, 3)), title]).rstrip()

    return "\n".join([line(head), *(line(r) for r in rows)])


@click.command("search")
@settings_from_flags
@click.argument("query")
@index_option(help="The index to search.")
@click.option("--top-k", "-k", type=int, default=DEFAULT_TOP_K, show_default=True, help=TOP_K.cli)
@click.option("--offset", type=int, default=0, show_default=True, help=OFFSET.cli)
@filter_options
@click.option("--mode", default=None, help=MODE.cli)
@click.option(
    "--contents/--no-contents", default=True, show_default=True, help="Add each hit's evidence passage."
)
@click.option(
    "--fine-rerank/--no-fine-rerank",
    default=False,
    show_default=True,
    help=FINE_RERANK.cli,
)
@click.option(
    "--sort",
    type=click.Choice(SORTS),
    default="relevance",
    show_default=True,
    help=SORT.cli,
)
@click.option("--long", "long_form", is_flag=True, help="Print authors, TLDR and evidence under each hit.")
@click.option(
    "--passages",
    "as_passages",
    is_flag=True,
    help="The top passages across papers instead of papers (GET /v1/passages); not with --mode.",
)
@click.option(
    "--paper-id",
    "paper_ids",
    multiple=True,
    metavar="ARXIV_ID",
    help="With --passages: only passages of this paper (repeat or comma-separate).",
)
@json_option(help="Print one JSON object, the POST /search response (GET /v1/passages with --passages).")
def search(
    settings: Settings,
    query: str,
    top_k: int,
    offset: int,
    mode: str | None,
    contents: bool,
    fine_rerank: bool,
    sort: str,
    long_form: bool,
    as_passages: bool,
    paper_ids: tuple[str, ...],
    json_out: str | None,
    **filter_args: Any,
) -> None:
    """Search a snapshot without a server (the filters of POST /search).

    \b
    openxiv search "retrieval augmented generation" --category cs.CL --date-from 2025 -k 5
    openxiv search "diffusion language models" --json | jq '.result[].arxiv_id'
    openxiv search "label smoothing" --passages -k 5
    """
    from openxiv.service.params import FilterParams
    from openxiv.service.readable import search_text
    from openxiv.service.search import search_json

    if as_passages or paper_ids:
        _passages(settings, query, top_k, offset, mode, paper_ids, as_passages, json_out, filter_args)
        return
    with open_library(settings) as library:
        response = library.search(
            query,
            top_k=top_k,
            offset=offset,
            filters=FilterParams(**filter_args),
            mode=mode,
            contents=contents or long_form,
            fine_rerank=fine_rerank,
            sort=sort,
        )
        snapshot = library.snapshot
    if json_out is not None:
        emit_json(json.loads(search_json(response)), json_out)
    elif long_form or not response.result:
        click.echo(wrap_lines(search_text(response, query.strip(), offset), _width()), nl=False)
    else:
        shown = f"{offset + 1}-{offset + len(response.result)}"
        click.echo(f"{response.total_count} papers match; showing {shown} (snapshot {snapshot})")
        click.echo(results_table(response, offset, _width() or shutil.get_terminal_size().columns))
        for w in response.warnings or []:
            click.echo(f"Note: {w}", err=True)


def _passages(
    settings: Settings,
    query: str,
    top_k: int,
    offset: int,
    mode: str | None,
    paper_ids: tuple[str, ...],
    as_passages: bool,
    json_out: str | None,
    filter_args: dict[str, Any],
) -> None:
    """``openxiv search --passages``: the passages use case's answer as text or JSON."""
    from openxiv.service.params import FilterParams
    from openxiv.service.passages import passages_text

    if not as_passages:
        raise click.UsageError("--paper-id: only with --passages")
    if mode is not None:
        raise click.UsageError("--mode: not with --passages (passages are ranked by BM25)")
    with open_library(settings) as library:
        found = library.passages(
            query, top_k=top_k, offset=offset, filters=FilterParams(**filter_args), paper_ids=list(paper_ids)
        )
    if json_out is not None:
        emit_json(json.loads(found.model_dump_json()), json_out)
    else:
        click.echo(wrap_lines(passages_text(found), _width()), nl=False)


@click.command("paper")
@settings_from_flags
@click.argument("arxiv_id")
@index_option(help="The index to read from.")
@click.option(
    "--section",
    default=None,
    help="Print this section: its printed number (3.2; 4 serves 4.1, 4.2, ... together), name (case-insensitive), Abstract, or idx:N (0-based).",
)
@click.option("--full", is_flag=True, help="Print the whole paper as markdown.")
@click.option("--brief", is_flag=True, help="Print only title, authors, date, PDF link and TLDR.")
@click.option(
    "--references",
    is_flag=True,
    help="Print its bibliography (full texts with a reference list), with titles in the corpus and citing sentences.",
)
@click.option("--cited-by", is_flag=True, help="Print the corpus papers whose bibliography cites it.")
@click.option(
    "--find", "find_query", default=None, help="Print the passages that best match this query, words marked."
)
@click.option("--top-k", "-k", type=int, default=3, show_default=True, help="Passages --find shows, 1-20.")
@json_option(help="Print one JSON object, the GET /arxiv/ response.")
def paper(
    settings: Settings,
    arxiv_id: str,
    section: str | None,
    full: bool,
    brief: bool,
    references: bool,
    cited_by: bool,
    find_query: str | None,
    top_k: int,
    json_out: str | None,
) -> None:
    """Read a paper: its metadata and sections (default), one --section, --brief, --full, its
    --references, what it is --cited-by, or where it says something (--find).

    \b
    openxiv paper 1706.03762
    openxiv paper 1706.03762 --section introduction
    openxiv paper 2212.11790 --references
    openxiv paper 1706.03762 --find "learning rate schedule"
    """
    from openxiv.service import readable
    from openxiv.service.references import cited_by_text, references_text

    flags = [("--section", section is not None), ("--full", full), ("--brief", brief)]
    flags += [("--references", references), ("--cited-by", cited_by), ("--find", find_query is not None)]
    chosen = [name for name, on in flags if on]
    if len(chosen) > 1:
        raise click.UsageError(f"{' and '.join(chosen)} exclude each other; give one")
    if find_query is not None:
        with open_library(settings) as library:
            found = library.find(arxiv_id, find_query, top_k)
        if json_out is not None:
            emit_json(json.loads(found.model_dump_json()), json_out)
        else:
            click.echo(wrap_lines(readable.find_text(found), _width()), nl=False)
        return
    kind = "section" if section is not None else "raw" if full else "brief" if brief else "head"
    kind = "references" if references else "cited_by" if cited_by else kind
    render: dict[str, Callable[[Any], str]] = {
        "head": readable.head_text,
        "section": readable.section_text,
        "raw": readable.raw_text,
        "brief": readable.brief_text,
        "references": lambda r: references_text(r) + "\n",
        "cited_by": lambda r: cited_by_text(r) + "\n",
    }
    with open_library(settings) as library:
        if kind in ("references", "cited_by"):
            out = library.references(kind, arxiv_id)
        else:
            out = library.paper(kind, arxiv_id, section)
    if json_out is not None:
        emit_json(json.loads(out.model_dump_json()), json_out)
    else:
        click.echo(wrap_lines(render[kind](out), _width()), nl=False)
