"""``openxiv search --passages``, ``openxiv facets``, ``match``, ``author`` and ``bibtex`` on the
session's real index: ``--json`` prints the HTTP API's answer, bad values exit 2 naming them."""

from __future__ import annotations

import json

import httpx
import pytest
from click.testing import CliRunner, Result
from live_index import BuiltIndex

from openxiv.service.cli import cli

PAPER = "1706.03762"


@pytest.fixture(scope="module")
def run(test_index: BuiltIndex):  # type: ignore[no-untyped-def]
    def invoke(*args: str) -> Result:
        return CliRunner().invoke(cli, [*args, "--index", str(test_index.root)], catch_exceptions=False)

    return invoke


def test_passages_and_navigation_print_the_http_answers(run, client: httpx.Client) -> None:  # type: ignore[no-untyped-def]
    out = run("search", "label smoothing", "--passages", "-k", "3", "--json")
    assert out.exit_code == 0, out.output
    got, want = (
        json.loads(out.output),
        client.get("/v1/passages", params={"q": "label smoothing", "top_k": 3}).json(),
    )
    assert got.pop("timings_ms") is not None and want.pop("timings_ms") is not None and got == want
    text = run("search", "attention", "--passages", "--paper-id", PAPER, "-k", "2")
    assert text.exit_code == 0 and f"(arXiv {PAPER}," in text.output and "**" in text.output
    facets = run("facets", "diffusion", "--category", "cs", "--json")
    assert (
        json.loads(facets.output)
        == client.get("/v1/facets", params={"q": "diffusion", "category": "cs"}).json()
    )
    match = run("match", "attention is all you need")
    assert match.exit_code == 0 and match.output.startswith(
        "Match (confidence 1.00): Attention Is All You Need"
    )
    assert run("match", "a survey of quantum gravity for bakers").exit_code == 1
    author = run("author", "Jiri Matas", "--json")
    assert json.loads(author.output) == client.get("/v1/authors", params={"name": "Jiri Matas"}).json()
    bib = run("bibtex", PAPER, "1502.03167")
    assert bib.exit_code == 0 and bib.output.count("@misc{") == 2


@pytest.mark.parametrize(
    ("args", "named"),
    [
        (("search", "x", "--paper-id", PAPER), "--paper-id"),
        (("search", "x", "--passages", "--mode", "bm25"), "--mode"),
        (("search", "x", "--passages", "--paper-id", "nope"), "paper_ids"),
        (("facets", "x", "--top-authors", "500"), "top_authors"),
        (("match", " "), "title"),
        (("author", "  "), "name"),
        (("bibtex", "nope"), "arxiv_id"),
    ],
)
def test_bad_values_exit_2_naming_them(run, args: tuple[str, ...], named: str) -> None:  # type: ignore[no-untyped-def]
    out = run(*args)
    assert out.exit_code == 2 and named in out.output, out.output
