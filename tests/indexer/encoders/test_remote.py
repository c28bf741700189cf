"""The ``http`` encoder and rerankers against a scripted model server on loopback: every fault gets
a retry, a clear refusal or a degraded answer, and recorded answers replay bit for bit.

The server's vectors here are stand-ins (a hash of the text); the end-to-end test with a real model's
vectors behind the same server is tests/service/http/test_remote_search.py.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from model_server import ModelServer, hashed_embed

from openxiv.corpus.settings.model import Settings
from openxiv.corpus.settings.sources import ConfigError
from openxiv.indexer.building.embcache import EmbeddingCache, encode_cached
from openxiv.indexer.encoders.embed import load_encoder
from openxiv.indexer.encoders.remote import PROBE_TEXT, RemoteEncoder, connect_remote_encoder
from openxiv.indexer.encoders.remote_http import RemoteRefused, RemoteUnavailable, parse_remote
from openxiv.indexer.encoders.remote_rerank import PROMPT_VERSION, remote_reranker
from openxiv.indexer.encoders.rerankers import Reranker, RerankerUnavailable
from openxiv.indexer.encoders.vectors import EncoderUnavailable

TEXTS = [f"paper {i}: a study of dense retrieval number {i}" for i in range(23)]


def _settings(tmp_path: Path, server: ModelServer, **kw: object) -> Settings:
    values: dict[str, object] = {
        "data_dir": tmp_path,
        "model": server.spec,
        "embed_batch_size": 5,
        "remote_backoff": 0.0,
        "remote_retries": 3,
        "remote_timeout": 1.0,
        "remote_query_timeout": 0.5,
    }
    values.update(kw)
    return Settings(**values)  # type: ignore[arg-type]


@pytest.fixture()
def server() -> ModelServer:
    with ModelServer(hashed_embed) as s:
        yield s


def test_the_setting_names_a_server_and_its_model() -> None:
    ep = parse_remote("http://127.0.0.1:7997/v1/#BAAI/bge-m3")
    assert (ep.base_url, ep.model, ep.url("embeddings")) == (
        "http://127.0.0.1:7997/v1",
        "BAAI/bge-m3",
        "http://127.0.0.1:7997/v1/embeddings",
    )
    assert parse_remote("http:http://h:1/v1#m").base_url == "http://h:1/v1"
    with pytest.raises(ConfigError, match=r"OPENXIV_MODEL=.*name the served model after '#'"):
        parse_remote("http://127.0.0.1:7997/v1")
    with pytest.raises(ConfigError, match=r"expected http://host:port/v1#<model name>"):
        parse_remote("http://#model")


def test_a_build_survives_every_transient_fault(tmp_path: Path, server: ModelServer) -> None:
    server.faults = ["429", "500", "malformed", "timeout", "ok", "ok", "500", "429"]
    server.slow_s = 2.0  # past remote_timeout: the client gives up on it and retries
    enc = load_encoder(_settings(tmp_path, server, remote_retries=5))  # the probe meets them all
    assert isinstance(enc, RemoteEncoder) and enc.dim == 16
    vecs = enc.encode(TEXTS)
    np.testing.assert_allclose(vecs, hashed_embed(TEXTS), atol=1e-6)
    # 4 failed attempts of the probe, the probe, 5 batches of 5: no text lost
    bodies = server.calls("/v1/embeddings")
    assert len(bodies) == 4 + 1 + 5 + 2
    sent = {t for b in bodies for t in b["input"]} - {PROBE_TEXT}
    assert sorted(sent) == sorted(TEXTS)


def test_retry_after_is_obeyed(tmp_path: Path) -> None:
    with ModelServer(hashed_embed, retry_after="1") as server:
        server.faults = ["ok", "429"]
        enc = connect_remote_encoder(_settings(tmp_path, server))
        enc.encode(TEXTS[:3])
        times = [t for t, path, _ in server.requests if path == "/v1/embeddings"]
        assert times[2] - times[1] >= 0.9  # the server asked for a second between them


def test_a_server_that_keeps_failing_stops_the_build_with_its_message(
    tmp_path: Path, server: ModelServer
) -> None:
    enc = connect_remote_encoder(_settings(tmp_path, server))
    server.always = "500"
    with pytest.raises(
        RemoteUnavailable,
        match=r"gave up after 4 attempts: http://127.0.0.1:\d+/v1/embeddings .*HTTP 500 .*scripted failure",
    ):
        enc.encode(TEXTS[:3])


@pytest.mark.parametrize(
    ("fault", "message"),
    [("wrong_dim", "answered 15-d vectors, recorded 16-d"), ("wrong_model", "model 'another-model', not")],
)
def test_another_width_or_model_is_refused_at_once(
    tmp_path: Path, server: ModelServer, fault: str, message: str
) -> None:
    enc = connect_remote_encoder(_settings(tmp_path, server))
    server.always = fault
    before = len(server.requests)
    with pytest.raises(RemoteRefused, match=message):
        enc.encode(TEXTS[:3])
    assert len(server.requests) == before + 1  # not retried


def test_matryoshka_width_is_asked_and_checked(tmp_path: Path, server: ModelServer) -> None:
    enc = connect_remote_encoder(_settings(tmp_path, server, embed_dimensions=8))
    assert enc.dim == 8 and all(b["dimensions"] == 8 for b in server.calls("/v1/embeddings"))
    vecs = enc.encode(TEXTS[:4])
    assert vecs.shape == (4, 8)
    np.testing.assert_allclose(np.linalg.norm(vecs, axis=1), 1.0, atol=1e-6)


def test_prefixes_are_sent_and_part_of_the_key(tmp_path: Path, server: ModelServer) -> None:
    plain = connect_remote_encoder(_settings(tmp_path, server))
    e5 = connect_remote_encoder(
        _settings(tmp_path, server, embed_query_prefix="query: ", embed_passage_prefix="passage: ")
    )
    e5.encode(["a text"])
    e5.encode_query("a query")
    inputs = [b["input"] for b in server.calls("/v1/embeddings")]
    assert ["passage: a text"] in inputs and ["query: a query"] in inputs and [PROBE_TEXT] in inputs
    assert plain.fingerprint != e5.fingerprint


def test_the_cache_is_shared_by_servers_of_one_model_never_by_another(tmp_path: Path) -> None:
    cache = EmbeddingCache(tmp_path / "embcache.sqlite")
    with ModelServer(hashed_embed) as one, ModelServer(hashed_embed) as two:
        a = connect_remote_encoder(_settings(tmp_path, one))
        b = connect_remote_encoder(_settings(tmp_path, two))
        a.bind_cache(cache)
        b.bind_cache(cache)
        assert a.fingerprint == b.fingerprint  # two hosts, one model: one key
        encode_cached(a, TEXTS, cache, progress=False)
        encode_cached(b, TEXTS, cache, progress=False)  # all from the cache
        assert len(two.calls("/v1/embeddings")) == 1  # the probe only
    other = ModelServer(lambda t: hashed_embed([s + "!" for s in t]))  # another model, same name
    with other:
        c = connect_remote_encoder(_settings(tmp_path, other))
        c.bind_cache(cache)
        assert c.fingerprint != a.fingerprint and c.fingerprint.endswith("~1")
        encode_cached(c, TEXTS, cache, progress=False)
        assert len(other.calls("/v1/embeddings")) > 1
    cache.close()


def test_a_query_fails_fast_and_clearly_when_the_server_is_down_or_slow(tmp_path: Path) -> None:
    with ModelServer(hashed_embed) as server:
        enc = connect_remote_encoder(_settings(tmp_path, server))
        server.faults = ["timeout"]
        with pytest.raises(EncoderUnavailable, match="ReadTimeout"):
            enc.encode_query("slow")
        assert len(server.calls("/v1/embeddings")) == 2  # one call, no retry within a search
    with pytest.raises(EncoderUnavailable, match="ConnectError"):
        enc.encode_query("down")


@pytest.mark.anyio
async def test_a_prefetched_vector_is_used_by_the_search_without_a_second_call(
    tmp_path: Path, server: ModelServer
) -> None:
    enc = connect_remote_encoder(_settings(tmp_path, server))
    await enc.prefetch(["fetched early"])
    before = len(server.requests)
    np.testing.assert_allclose(
        enc.encode_query("fetched early"), hashed_embed(["fetched early"])[0], atol=1e-6
    )
    assert len(server.requests) == before
    server.always = "500"
    await enc.prefetch(["fails early"])
    with pytest.raises(EncoderUnavailable, match="HTTP 500"):
        enc.encode_query("fails early")  # the failure is kept: not asked twice
    assert len(server.requests) == before + 1


def test_recorded_query_vectors_replay_bit_for_bit_with_the_server_gone(tmp_path: Path) -> None:
    replay = tmp_path / "replay.jsonl"
    with ModelServer(hashed_embed) as server:
        enc = connect_remote_encoder(
            _settings(tmp_path, server, remote_replay="record", remote_replay_file=replay)
        )
        enc._verified = False  # a fresh server-side check, as a serving process does first
        recorded = [enc.encode_query(q) for q in ("alpha", "beta")]
        spec = server.spec
    offline = RemoteEncoder(
        parse_remote(spec),
        Settings(data_dir=tmp_path, remote_replay="replay", remote_replay_file=replay),
        dim=enc.dim,
        probe=enc.probe,
        fingerprint=enc.fingerprint,
    )
    for q, vec in zip(("beta", "alpha"), recorded[::-1], strict=True):  # any order
        assert offline.encode_query(q).tobytes() == vec.tobytes()
    with pytest.raises(EncoderUnavailable, match="was not recorded"):
        offline.encode_query("never asked")


# ------------------------------------------------------------------------------- rerank
def test_each_rerank_shape_gives_the_servers_scores_in_input_order(
    tmp_path: Path, server: ModelServer
) -> None:
    docs = ["dense retrieval of papers", "galaxy rotation curves", "retrieval with dense vectors"]
    settings = _settings(tmp_path, server)
    want = hashed_embed(docs) @ hashed_embed(["dense retrieval"])[0]
    tei_url = f"http://127.0.0.1:{server.port}/tei#m"
    for spec, api in ((server.spec, "cohere"), (server.spec, "vllm"), (tei_url, "tei"), (tei_url, "auto")):
        rr = remote_reranker(spec, api, settings)
        assert isinstance(rr, Reranker)
        np.testing.assert_allclose(rr.score("dense retrieval", docs), want, atol=1e-5)
    assert rr.api == "tei"  # auto found the texts form after the documents form's 422


def test_a_chat_model_orders_the_list_with_a_versioned_prompt(tmp_path: Path, server: ModelServer) -> None:
    rr = remote_reranker(server.spec, "chat", _settings(tmp_path, server))
    server.chat_answer = "3, 1, 3, 9"  # repeats and numbers out of range are ignored
    scores = rr.score("q", ["a", "b", "c"])
    assert list(np.argsort(-scores)) == [2, 0, 1]
    body = server.calls("/v1/chat/completions")[0]
    content = body["messages"][0]["content"]
    assert "[1] a\n[2] b\n[3] c" in content and "Order the 3 passages" in content and body["temperature"] == 0
    assert rr.replay_id.endswith(":" + PROMPT_VERSION) and PROMPT_VERSION.startswith("listwise-rerank@")
    rr.score("a {passages} query {n}", ["x", "y"])  # the query's braces are its own text, not fields
    assert (
        "Query: a {passages} query {n}\n" in server.calls("/v1/chat/completions")[1]["messages"][0]["content"]
    )


@pytest.mark.parametrize("api", ["cohere", "chat"])
@pytest.mark.parametrize("fault", ["timeout", "500", "malformed", "429"])
def test_a_rerank_fault_is_reranker_unavailable(
    tmp_path: Path, server: ModelServer, fault: str, api: str
) -> None:
    server.slow_s = 2.0
    rr = remote_reranker(server.spec, api, _settings(tmp_path, server))
    server.faults = [fault]
    with pytest.raises(RerankerUnavailable, match=r"127\.0\.0\.1"):
        rr.score("q", ["a", "b"])


@pytest.mark.parametrize("answer", ["I cannot rank these.", "7, 9"])
def test_a_chat_answer_naming_no_passage_is_reranker_unavailable(
    tmp_path: Path, server: ModelServer, answer: str
) -> None:
    rr = remote_reranker(server.spec, "chat", _settings(tmp_path, server))
    server.chat_answer = answer
    with pytest.raises(RerankerUnavailable, match="the chat model named no passage"):
        rr.score("q", ["a", "b"])


@pytest.mark.anyio
async def test_the_event_loop_rerank_gives_the_same_scores_and_faults(
    tmp_path: Path, server: ModelServer
) -> None:
    docs = ["dense retrieval of papers", "galaxy rotation curves"]
    for api in ("cohere", "chat"):
        rr = remote_reranker(server.spec, api, _settings(tmp_path, server))
        assert (await rr.ascore("dense retrieval", docs)).tobytes() == rr.score(
            "dense retrieval", docs
        ).tobytes()
    tei = remote_reranker(f"http://127.0.0.1:{server.port}/tei#m", "auto", _settings(tmp_path, server))
    await tei.ascore("q", docs)
    assert tei.api == "tei"  # auto finds the texts form on the event loop too
    server.faults = ["500"]
    with pytest.raises(RerankerUnavailable, match="HTTP 500"):
        await rr.ascore("q", docs)


@pytest.mark.parametrize("api", ["cohere", "chat"])
def test_recorded_reranks_replay_with_the_server_gone(tmp_path: Path, api: str) -> None:
    replay = tmp_path / "replay.jsonl"
    docs = ["a", "b", "c"]
    with ModelServer(hashed_embed) as server:
        server.chat_answer = "3, 1"
        live = remote_reranker(
            server.spec,
            api,
            _settings(tmp_path, server, remote_replay="record", remote_replay_file=replay),
        )
        scores = live.score("query", docs)
        spec = server.spec
    offline = remote_reranker(
        spec, api, Settings(data_dir=tmp_path, remote_replay="replay", remote_replay_file=replay)
    )
    assert offline.score("query", docs).tobytes() == scores.tobytes()
    with pytest.raises(RerankerUnavailable, match="was not recorded"):
        offline.score("another query", docs)


def test_the_rerank_setting_names_a_server(
    tmp_path: Path, server: ModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from openxiv.indexer.encoders.cross_encoder import resolve_reranker

    monkeypatch.setenv("OPENXIV_RERANK_API", "cohere")
    rr = resolve_reranker(server.spec)
    assert rr is not None and rr.name == f"cohere:{server.model}"
    np.testing.assert_allclose(
        rr.score("q", ["a", "b"]), hashed_embed(["a", "b"]) @ hashed_embed(["q"])[0], atol=1e-5
    )
