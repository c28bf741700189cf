"""``use_fine_rerank``: the shipped cross-encoder reorders the first stage's head, on every front.

Real index (the session's), real cross-encoder. In process: the head of ``rerank_depth`` papers is
the first stage's head reordered, the places below keep the first stage's order, pages tile, the
stage's time is ``rerank``, and a missing or failing reranker keeps the first-stage order with a
warning. Then each front (HTTP ``POST /search`` and ``/arxiv/``, ``POST /retrieve``, the agent search,
MCP, CLI) gives
the reranked order when asked.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import httpx
import numpy as np
import pytest
from click.testing import CliRunner
from live_index import BIN, BuiltIndex

from openxiv.corpus.settings.model import Settings
from openxiv.indexer.encoders.cross_encoder import OnnxCrossEncoder, resolve_reranker
from openxiv.indexer.encoders.rerankers import RerankerUnavailable
from openxiv.indexer.engine.rerank import NOT_CONFIGURED, rerank_head
from openxiv.service.cli import cli
from openxiv.service.fine_rerank import FineRerank, hit_texts
from openxiv.service.library import Library
from openxiv.service.search import run_search
from openxiv.service.spec import SearchSpec
from openxiv.service.views import ResolvedHit

QUERY = "graph neural networks"
DEPTH = 20


@pytest.fixture(scope="module")
def library(test_index: BuiltIndex) -> Iterator[Library]:
    lib = Library(test_index.root, test_index.settings.replace(rerank_depth=DEPTH))
    lib.load()
    yield lib
    lib.close()


def _spec(top_k: int, offset: int = 0) -> SearchSpec:
    return SearchSpec(queries=(QUERY,), top_k=top_k, offset=offset, contents=False, fine_rerank=True)


def _ids(hits: Sequence[ResolvedHit]) -> list[str]:
    return [h.hit.arxiv_id for h in hits]


def test_the_head_is_reordered_and_the_rest_keeps_the_first_stage_order(library: Library) -> None:
    plan = FineRerank(spec="shipped", depth=DEPTH)
    with library.holder.acquire() as index:
        plain = run_search(index, _spec(40))
        fine = run_search(index, _spec(40), rerank=plan)
        pages = [run_search(index, _spec(7, o), rerank=plan) for o in range(0, 42, 7)]
        deep = run_search(index, _spec(5, DEPTH + 3), rerank=plan)
    head, rest = _ids(fine.hits[:DEPTH]), _ids(fine.hits[DEPTH:])
    assert sorted(head) == sorted(_ids(plain.hits[:DEPTH])) and head != _ids(plain.hits[:DEPTH])
    assert rest == _ids(plain.hits[DEPTH:])
    ce = [h.hit.signals["rerank"] for h in fine.hits[:DEPTH]]
    assert ce == sorted(ce, reverse=True)
    scores = [h.hit.score for h in fine.hits]
    assert scores == [h.hit.score for h in plain.hits]  # places keep their scores: never increasing
    assert [a for p in pages for a in _ids(p.hits)][:40] == _ids(fine.hits)  # pages tile
    assert fine.timings_ms["rerank"] > 0 and "rerank" not in plain.timings_ms
    assert _ids(deep.hits) == _ids(plain.hits[DEPTH + 3 : DEPTH + 8]) and "rerank" not in deep.timings_ms
    assert fine.notes == plain.notes


def test_no_reranker_or_a_broken_one_keeps_the_first_stage_order_with_a_warning(
    library: Library, tmp_path: Path
) -> None:
    with library.holder.acquire() as index:
        plain = run_search(index, _spec(10))
        off = run_search(index, _spec(10), rerank=FineRerank("none", DEPTH))
        gone = run_search(index, _spec(10), rerank=FineRerank(str(tmp_path), DEPTH))
    assert _ids(off.hits) == _ids(plain.hits) and NOT_CONFIGURED in off.notes
    assert _ids(gone.hits) == _ids(plain.hits)
    assert any("cannot be loaded" in n for n in gone.notes)


def test_a_known_item_is_read_by_the_sentence_it_was_found_by(
    library: Library, known_item: dict[str, Any]
) -> None:
    """The full-text hit's passage reaches the reranker cut where the query's words are: the pair the
    model reads (its tokenizer's truncation) holds most of the query's terms. Read from the passage's
    start, as before issue 37's fix, a sentence from the later half of a paper was out of sight."""
    query, paper = known_item["query"], known_item["relevant"][0]
    with library.holder.acquire() as index:
        head = index.backend.search(query, top_k=DEPTH).hits
        texts = hit_texts(index, True, query)(head)
    at = [i for i, h in enumerate(head) if h.arxiv_id == paper]
    assert at and head[at[0]].passage_id is not None and len(texts[at[0]]) == 2
    ce = resolve_reranker("shipped")
    assert isinstance(ce, OnnxCrossEncoder)
    enc = ce.tokenizer.encode(query, texts[at[0]][1])
    doc = ce.tokenizer.decode([t for t, kind in zip(enc.ids, enc.type_ids, strict=True) if kind == 1])
    terms = {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z-]{3,}", query)}
    seen = {w.lower() for w in re.findall(r"[A-Za-z][A-Za-z-]{3,}", doc)}
    assert len(terms & seen) >= 0.6 * len(terms), (query, doc)


def test_unconfigured_a_request_that_asks_is_reranked_by_the_shipped_model(library: Library) -> None:
    """No ``OPENXIV_RERANK`` set: ``use_fine_rerank=true`` reranks (no warning), and a request that
    does not ask is the first stage's page, untouched."""
    plan = FineRerank.of(Settings(), True)
    assert plan is not None
    with library.holder.acquire() as index:
        plain = run_search(index, _spec(10))
        asked = run_search(index, _spec(10), rerank=plan)
    assert sorted(_ids(asked.hits)) == sorted(_ids(plain.hits))
    assert "rerank" in asked.timings_ms and NOT_CONFIGURED not in asked.notes and asked.notes == plain.notes


class Down:
    """A reranker whose server is down: what a remote one raises past its deadline."""

    name = "down"
    fingerprint = "down"

    def score(self, query: str, texts: Sequence[str]) -> np.ndarray:
        raise RerankerUnavailable("connection refused")


def test_an_unavailable_reranker_keeps_the_head_and_says_so(library: Library) -> None:
    with library.holder.acquire() as index:
        head = index.backend.search(QUERY, top_k=DEPTH).hits
        out = rerank_head(QUERY, head, lambda hits: [["text"] for _ in hits], Down())
    assert [h.arxiv_id for h in out.hits] == [h.arxiv_id for h in head]
    assert out.warnings and "down" in out.warnings[0] and "connection refused" in out.warnings[0]


def test_the_settings_name_the_reranker_and_its_depth() -> None:
    # unset: the shipped cross-encoder, 10 deep (BENCHMARKS.md, "Fine rerank: decision after the
    # longer run (issue 37)"); still only when a request asks
    assert FineRerank.of(Settings(), True) == FineRerank("shipped", 10, weight=2.0)
    assert FineRerank.of(Settings(), None) is None and FineRerank.of(Settings(), False) is None
    s = Settings(rerank="none", rerank_depth=150)
    assert FineRerank.of(s, True) == FineRerank("none", 150, weight=2.0)
    assert FineRerank.of(s, False) is None and FineRerank.of(s, None) is None
    with pytest.raises(ValueError, match="rerank_depth"):
        Settings(rerank_depth=0)


# ------------------------------------------------------------------------------ the fronts
def _served(client: httpx.Client) -> tuple[list[str], list[str]]:
    # the server loads the cross-encoder at its first use: that request may pass the time budget (503)
    client.post("/search", json={"query": "warm up", "top_k": 1, "use_fine_rerank": True})
    plain = client.post("/search", json={"query": QUERY, "top_k": 10}).json()
    fine = client.post("/search", json={"query": QUERY, "top_k": 10, "use_fine_rerank": True})
    assert fine.status_code == 200, fine.text
    assert "rerank;dur=" in fine.headers["server-timing"]
    body = fine.json()
    assert "warnings" not in body or not any("use_fine_rerank" in w for w in body["warnings"])
    return [h["arxiv_id"] for h in plain["result"]], [h["arxiv_id"] for h in body["result"]]


def test_http_search_and_arxiv_retrieve_rerank(client: httpx.Client, library: Library) -> None:
    plain, fine = _served(client)
    assert fine != plain
    got = client.get(
        "/arxiv/", params={"type": "retrieve", "query": QUERY, "top_k": 10, "use_fine_rerank": "true"}
    )
    assert [h["arxiv_id"] for h in got.json()["result"]] == fine
    retrieved = client.post(
        "/retrieve", json={"queries": [QUERY], "topk": 10, "use_fine_rerank": True}
    ).json()
    assert [d["id"] for d in retrieved["result"][0]] == fine
    agent = client.post("/arxiv/agent/search", json={"query": QUERY, "top_k": 10, "use_fine_rerank": True})
    assert agent.status_code == 200, agent.text
    assert [p["arxiv_id"] for p in agent.json()["sources"]] == fine


def test_cli_and_mcp_rerank_like_http(test_index: BuiltIndex, client: httpx.Client) -> None:
    _, fine = _served(client)
    out = CliRunner().invoke(
        cli,
        ["search", QUERY, "-k", "10", "--fine-rerank", "--json", "--index", str(test_index.root)],
        # 2 shared cores: no 503 for a slow machine; the cross-encoder alone, as the session's server
        env={"OPENXIV_REQUEST_BUDGET_S": "0", "OPENXIV_RERANK": "shipped", "OPENXIV_RERANK_WEIGHT": "0"},
    )
    assert out.exit_code == 0, out.output
    assert [h["arxiv_id"] for h in json.loads(out.output)["result"]] == fine

    import anyio
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    params = StdioServerParameters(
        command=str(BIN / "openxiv"),
        args=["mcp", "--index", str(test_index.root)],
        env={
            "HF_HUB_OFFLINE": "1",
            "OPENXIV_DATA_DIR": str(test_index.root.parent),
            "OPENXIV_RERANK": "shipped",
            "OPENXIV_RERANK_WEIGHT": "0",
            **{k: v for k, v in os.environ.items() if k == "PYTHONPATH"},  # a worktree's own code
        },
    )
    got: list[str] = []

    async def main() -> None:
        async with Client(params) as mcp:
            res = await mcp.call_tool("search_papers", {"query": QUERY, "size": 10, "use_fine_rerank": True})
            assert not res.is_error
            got.extend(h["arxiv_id"] for h in (res.structured_content or {})["result"])

    anyio.run(main)
    assert got == fine
