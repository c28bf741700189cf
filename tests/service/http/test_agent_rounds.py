"""Agent search rounds by ``effort`` (issue 41, item 5), without an LLM: ``high`` runs three rounds
(search, reformulation from the best titles, one hop over the citation graph) and the stream reports
each; against a live server on the real references index (tests/refs_index.py) through deepxiv-sdk's
own ``Reader.agent_search_stream``, and the round rules on their own.

On main every effort ran one round and said so in a warning."""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest
from live_index import BuiltIndex, LiveServer

from openxiv.service.agent_rounds import ROUNDS, Round, fuse, plan, reformulation
from openxiv.service.models import Hit

QUERY = "deep residual learning image recognition"
RESNET, TRANSFORMER, BATCHNORM = "1512.03385", "1706.03762", "1502.03167"


@pytest.fixture(scope="module")
def refs_live(refs_index: BuiltIndex) -> Iterator[LiveServer]:
    live = LiveServer(refs_index.root)
    try:
        yield live
    finally:
        live.stop()


def _reader(url: str) -> Any:
    deepxiv_sdk = pytest.importorskip("deepxiv_sdk")
    if not hasattr(deepxiv_sdk.Reader, "agent_search_stream"):
        pytest.skip("deepxiv-sdk < 1.2 has no agent search")
    return deepxiv_sdk.Reader(base_url=url, token="any", timeout=60, max_retries=0)


def _hit(aid: str, title: str) -> Hit:
    return Hit.model_validate(
        {"arxiv_id": aid, "title": title, "title_source": "metadata", "score": 0.0, "abstract": None,
         "tldr": None, "authors": [], "url": "", "date": None, "categories": [], "subject_classes": []}
    )  # fmt: skip


def test_effort_buys_rounds() -> None:
    assert ROUNDS == {"default": 1, "high": 3, "xhigh": 5}
    assert plan("default") == ["search"]
    assert plan("high") == ["search", "reformulate", "hop"]
    assert plan("xhigh") == ["search", "reformulate", "hop", "reformulate", "hop"]


def test_reformulation_adds_the_words_the_best_titles_share() -> None:
    best = [
        _hit("1", "Dense Passage Retrieval for Open-Domain Question Answering"),
        _hit("2", "Latent Retrieval for Weakly Supervised Open Domain Question Answering"),
        _hit("3", "Reading Wikipedia to Answer Open-Domain Questions"),
    ]
    # "open-domain" is in two titles: first; then the best title's other words
    assert (
        reformulation("retrieval question answering", best)
        == "retrieval question answering open-domain dense passage"
    )
    assert reformulation("x", []) is None
    resnet = [_hit("1512.03385", "Deep Residual Learning for Image Recognition")]
    assert reformulation("deep residual learning image recognition", resnet) is None  # nothing to add


def test_fusion_lifts_papers_several_rounds_find() -> None:
    a, b, c = _hit("a", "A"), _hit("b", "B"), _hit("c", "C")
    one = Round(1, "search", query="q", hits=[a, b])
    assert fuse([one], 1) == [a]  # one round: its list as it is
    two = Round(2, "hop", seeds=["a"], hits=[c, b])
    assert [h.arxiv_id for h in fuse([one, two], 3)] == ["b", "a", "c"]


def test_high_effort_runs_three_rounds_and_streams_each(refs_live: LiveServer) -> None:
    reader = _reader(refs_live.url)
    events = list(
        reader.agent_search_stream(QUERY, top_k=5, verbose=True, stream_answer=False, effort="high")
    )
    names = [e["event"] for e in events]
    assert events[0]["max_rounds"] == 3 and "warning" not in names
    rounds = [e for e in events if e["event"] == "round"]
    assert [(r["round"], r["kind"]) for r in rounds] == [(1, "search"), (2, "reformulate"), (3, "hop")]
    assert rounds[0]["query"] == QUERY and rounds[1]["query"].startswith(QUERY + " ")
    # the hop starts from the best papers, ResNet first, and follows its in-corpus citations
    assert rounds[2]["seeds"][0] == RESNET and rounds[2]["found"] >= 2
    assert names.index("sources") > names.index("round") and names[-1] == "done"
    sources = [p["arxiv_id"] for p in next(e for e in events if e["event"] == "sources")["papers"]]
    assert sources[0] == RESNET and {TRANSFORMER, BATCHNORM} <= set(sources)  # cites / is cited by
    blocking = reader.agent_search(QUERY, top_k=5, effort="high")
    assert blocking["stats"]["rounds"] == 3
    assert [s["arxiv_id"] for s in blocking["sources"]] == sources
