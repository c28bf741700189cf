"""``openxiv search`` and ``openxiv paper`` on the session's real index, against the live HTTP API."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import httpx
import pytest
from click.testing import CliRunner, Result
from live_index import BuiltIndex

from openxiv.service.cli import cli

PAPER = "1706.03762"
QUERY = "attention is all you need transformer"
Run = Callable[..., Result]


@pytest.fixture(scope="module")
def run(test_index: BuiltIndex) -> Run:
    def invoke(*args: str) -> Result:
        return CliRunner().invoke(cli, [*args, "--index", str(test_index.root)], catch_exceptions=False)

    return invoke


def test_search_json_is_the_post_search_response(run: Run, client: httpx.Client) -> None:
    out = run("search", QUERY, "--top-k", "5", "--offset", "1", "--json")
    assert out.exit_code == 0, out.output
    body = json.loads(out.output)
    assert body == client.post("/search", json={"query": QUERY, "top_k": 5, "offset": 1}).json()
    assert len(body["result"]) == 5


def test_search_filters_are_those_of_post_search(run: Run, client: httpx.Client) -> None:
    args = [
        "search",
        "galaxy cluster",
        "-k",
        "10",
        "--category",
        "astro-ph",
        "--date-from",
        "2025-04-15",
        "--json",
    ]
    body = json.loads(run(*args).output)
    want = {"query": "galaxy cluster", "top_k": 10, "categories": ["astro-ph"], "date_from": "2025-04-15"}
    assert body == client.post("/search", json=want).json()
    assert body["result"] and all(h["date"] >= "2025-04-15" for h in body["result"])
    bm25 = json.loads(run("search", QUERY, "-k", "3", "--mode", "bm25", "--no-contents", "--json").output)
    want = {"query": QUERY, "top_k": 3, "mode": "bm25", "return_contents": False}
    assert bm25 == client.post("/search", json=want).json()
    between = ["--date-search-type", "between", "--date-str", "2025-04", "--date-str", "2025-05"]
    dated = json.loads(run("search", "neural networks", "-k", "20", *between, "--json").output)
    assert dated["result"] and all("2025-04-01" <= h["date"] <= "2025-05-31" for h in dated["result"])


def test_search_table_lists_the_hits(run: Run) -> None:
    out = run("search", QUERY, "-k", "3")
    assert out.exit_code == 0, out.output
    lines = out.output.splitlines()
    assert lines[0].startswith(f"{lines[0].split()[0]} papers match; showing 1-3 (snapshot ")
    assert lines[1].split()[:4] == ["#", "arxiv_id", "date", "score"]
    assert len(lines) == 5 and lines[2].split()[:2] == ["1", PAPER]
    long = run("search", QUERY, "-k", "2", "--long").output
    assert f"arXiv ID: {PAPER}" in long and "Authors: Ashish Vaswani" in long


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--top-k", "0"], "top_k: must be an integer between 1 and 100"),
        (["--top-k", "101"], "top_k"),
        (["--offset", "-1"], "offset"),
        (["--date-from", "yesterday"], "date_from"),
        (["--category", "not a category"], "categories"),
        (["--mode", "magic"], "mode"),
        (["--date-str", "2025"], "date_str needs date_search_type"),
    ],
)
def test_search_bad_parameters_exit_2_naming_them(run: Run, args: list[str], message: str) -> None:
    out = run("search", "transformers", *args)
    assert out.exit_code == 2, out.output
    assert message in out.output


def test_search_empty_query_is_a_usage_error(run: Run) -> None:
    out = run("search", "   ")
    assert out.exit_code == 2 and "query: empty query" in out.output


def test_paper_prints_metadata_sections_and_text(run: Run, client: httpx.Client) -> None:
    head = client.get("/arxiv/", params={"type": "head", "arxiv_id": PAPER}).json()
    out = run("paper", f"arXiv:{PAPER}v7")
    assert out.exit_code == 0, out.output
    assert f"Title: {head['title']}" in out.output
    assert all(
        f"] {s['number'] or ''} {s['name']} ({s['token_count']} tokens)".replace("]  ", "] ") in out.output
        for s in head["sections"]
    )
    assert json.loads(run("paper", PAPER, "--json").output) == head

    section = run("paper", PAPER, "--section", "introduction")
    want = client.get(
        "/arxiv/", params={"type": "section", "arxiv_id": PAPER, "section": "introduction"}
    ).json()
    assert section.exit_code == 0 and want["content"].strip() in section.output
    label = f"{want['number']} {want['name']}" if want["number"] else want["name"]
    where = f"section {want['number']}" if want["number"] else f"idx {want['idx']}"
    assert section.output.startswith(f"=== {label} (Paper: {PAPER}, {where}) ===")
    printed = json.loads(run("paper", PAPER, "--section", "2", "--json").output)  # printed "2 ...", not idx 2
    assert printed["name"] == next(s["name"] for s in head["sections"] if s["number"] == "2")

    raw = client.get("/arxiv/", params={"type": "raw", "arxiv_id": PAPER}).json()["raw"]
    assert run("paper", PAPER, "--full").output == raw
    assert f"PDF: https://arxiv.org/pdf/{PAPER}" in run("paper", PAPER, "--brief").output


@pytest.mark.parametrize(
    ("args", "code", "message"),
    [
        (["2501.99999"], 1, "paper 2501.99999 is not in this corpus"),
        (["not-an-id"], 2, "is not an arXiv id"),
        ([PAPER, "--section", "No Such Section"], 1, "its sections are: Introduction"),
        ([PAPER, "--section", "Introduction", "--full"], 2, "exclude each other"),
    ],
)
def test_paper_errors(run: Run, args: list[str], code: int, message: str) -> None:
    out = run("paper", *args)
    assert out.exit_code == code, out.output
    assert message in out.output


def test_search_without_an_index_says_how_to_build_one(tmp_path: Path) -> None:
    out = CliRunner().invoke(cli, ["search", "x", "--index", str(tmp_path / "none")])
    assert out.exit_code == 1
    assert "no index at" in out.output and "openxiv index build" in out.output
