"""``openxiv similar`` and ``openxiv paper --find`` on the session's real index, against the live HTTP API."""

from __future__ import annotations

import json

import httpx
import pytest
from click.testing import CliRunner, Result
from live_index import BuiltIndex

from openxiv.service.cli import cli

PAPER = "1706.03762"
BN = "1502.03167"


@pytest.fixture(scope="module")
def run(test_index: BuiltIndex):  # type: ignore[no-untyped-def]
    def invoke(*args: str) -> Result:
        return CliRunner().invoke(cli, [*args, "--index", str(test_index.root)], catch_exceptions=False)

    return invoke


def test_similar_json_is_the_http_answer_and_the_table_lists_it(run, client: httpx.Client) -> None:  # type: ignore[no-untyped-def]
    out = run("similar", PAPER, BN, "-k", "4", "--category", "cs", "--json")
    assert out.exit_code == 0, out.output
    want = client.get(
        "/arxiv/", params={"type": "similar", "arxiv_id": f"{PAPER},{BN}", "top_k": 4, "categories": "cs"}
    ).json()
    assert json.loads(out.output) == want
    table = run("similar", PAPER, "-k", "3")
    assert table.exit_code == 0 and f"ranked similar to {PAPER}; showing 1-3" in table.output
    first = client.get("/arxiv/", params={"type": "similar", "arxiv_id": PAPER, "top_k": 1}).json()["result"][
        0
    ]
    assert first["arxiv_id"] in table.output


def test_similar_errors_exit_with_the_api_message(run) -> None:  # type: ignore[no-untyped-def]
    bad = run("similar", "not-an-id")
    assert bad.exit_code == 2 and "arxiv_id" in bad.output
    unknown = run("similar", "2501.99999")
    assert unknown.exit_code == 1 and "2501.99999 not in this corpus" in unknown.output


def test_paper_find_prints_the_best_passages_with_their_sections(run, client: httpx.Client) -> None:  # type: ignore[no-untyped-def]
    query = "learning rate schedule"
    out = run("paper", PAPER, "--find", query, "-k", "2", "--json")
    assert out.exit_code == 0, out.output
    want = client.get(
        "/arxiv/", params={"type": "find", "arxiv_id": PAPER, "query": query, "top_k": 2}
    ).json()
    assert json.loads(out.output) == want
    text = run("paper", PAPER, "--find", query).output
    assert f"'{query}' in {PAPER}" in text and "**learning** **rate**" in text and "1. [" in text
    both = run("paper", PAPER, "--find", query, "--full")
    assert both.exit_code == 2 and "exclude each other" in both.output
