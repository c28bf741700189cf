"""``openxiv similar --facet --not`` on the session's real index: the HTTP API's answer, and bad
values exit like the other errors with the parameter named."""

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


def test_similar_facet_and_not_print_the_http_answer(run, client: httpx.Client) -> None:  # type: ignore[no-untyped-def]
    first = client.get("/arxiv/", params={"type": "similar", "arxiv_id": PAPER, "top_k": 1}).json()["result"][
        0
    ]
    ruled_out = first["arxiv_id"]
    out = run("similar", PAPER, "-k", "4", "--facet", "result", "--not", ruled_out, "--json")
    assert out.exit_code == 0, out.output
    want = client.get(
        "/arxiv/",
        params={
            "type": "similar",
            "arxiv_id": PAPER,
            "top_k": 4,
            "facet": "result",
            "negative_ids": ruled_out,
        },
    ).json()
    assert json.loads(out.output) == want and ruled_out not in [h["arxiv_id"] for h in want["result"]]
    table = run("similar", PAPER, "-k", "3", "--facet", "method", "--not", ruled_out)
    assert table.exit_code == 0 and f"ranked similar to {PAPER} (method), not {ruled_out}" in table.output


def test_similar_bad_steering_exits_naming_it(run) -> None:  # type: ignore[no-untyped-def]
    facet = run("similar", PAPER, "--facet", "conclusion")
    assert facet.exit_code == 2 and "--facet" in facet.output
    bad = run("similar", PAPER, "--not", "not-an-id")
    assert bad.exit_code == 2 and "negative_ids" in bad.output
    unknown = run("similar", PAPER, "--not", "2501.99999")
    assert unknown.exit_code == 1 and "negative_ids: 2501.99999 not in this corpus" in unknown.output
    seed = run("similar", PAPER, "--not", PAPER)
    assert seed.exit_code == 2 and "also a seed" in seed.output
