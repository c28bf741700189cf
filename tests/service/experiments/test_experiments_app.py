"""The experiment controls in the HTTP app, in process (a BM25-only snapshot of 60 astro listing papers
from 2025 and 100 plain texts of 1991-2016, ``bm25_snapshot``): tags and the ledger, answers identical
with the controls on, per-question cutoffs, seeded faults and quotas, replay over another index."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient

from openxiv.corpus.ledger.records import LedgerRecord
from openxiv.corpus.ledger.store import LedgerReader
from openxiv.corpus.settings.model import Settings
from openxiv.service.experiments.controls import BadControls, Controls
from openxiv.service.http.app import create_app

ASTRO = "galaxy cluster star formation"


def app(root: Path, tmp: Path, **controls: Any) -> TestClient:
    settings = Settings(data_dir=tmp, embed="none", **controls)
    return TestClient(create_app(settings, root))


@pytest.fixture
def ledger(tmp_path: Path) -> Path:
    return tmp_path / "ledger"


@pytest.fixture
def cutoffs(tmp_path: Path) -> Path:
    path = tmp_path / "cutoffs.jsonl"
    lines = [{"qid": "old", "date": "2016-12"}, {"qid": "new", "cutoff": "2026-12-31"}, {"qid": "none"}]
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    return path


@pytest.fixture
def client(bm25_snapshot: Path, tmp_path: Path, ledger: Path, cutoffs: Path) -> Iterator[TestClient]:
    faults = (
        "seed=3; 429=0.4 run=chaos retry_after=2; 503=0.2 run=chaos; quota=minute:3 run=quota route=/arxiv/"
    )
    with app(bm25_snapshot, tmp_path, ledger=ledger, cutoffs=cutoffs, faults=faults) as c:
        yield c


def records(ledger: Path, **tags: str) -> list[LedgerRecord]:
    return list(LedgerReader(ledger).records(**tags))


def test_tagged_calls_are_recorded_with_what_they_returned_and_read(client: TestClient, ledger: Path) -> None:
    base = "/runs/r1/q/none"
    found = client.post(base + "/search", json={"query": ASTRO, "top_k": 5, "offset": 2})
    assert found.status_code == 200
    ids = [h["arxiv_id"] for h in found.json()["result"]]
    head = client.get(base + "/arxiv/", params={"type": "head", "arxiv_id": ids[0], "token": "secret"})
    section = client.get(f"{base}/v1/papers/{ids[0]}/sections/idx:0")
    missing = client.get(base + "/arxiv/", params={"type": "head", "arxiv_id": "2501.99999"})
    untagged = client.get("/v1/search", params={"q": ASTRO, "top_k": 3}, headers={"X-Openxiv-Run": "r2"})
    assert (head.status_code, section.status_code, missing.status_code, untagged.status_code) == (
        200,
        200,
        404,
        200,
    )
    got = records(ledger, run="r1")
    assert [r.kind for r in got] == ["search", "head", "section", "head"]
    search = got[0]
    assert search.question == "none" and search.route == "/search" and search.method == "POST"
    assert [(r.id, r.rank) for r in search.returned] == [(aid, i + 3) for i, aid in enumerate(ids)]
    assert search.params == {"query": ASTRO, "top_k": 5, "offset": 2} and search.status == 200
    assert search.snapshot == client.get("/healthz").json()["snapshot"] and search.latency_ms > 0
    assert LedgerReader(ledger).body(search.body_sha256) == found.content  # the bytes the client got
    assert search.cutoff is None and search.leaks == 0 and search.fault is None
    assert [r.to_json() for r in got[1].read] == [{"id": ids[0], "what": "head"}]
    assert "token" not in got[1].params  # a credential is never recorded
    assert got[2].read[0].section == "idx:0" and got[3].status == 404
    (v1,) = records(ledger, run="r2")
    assert v1.question is None and v1.kind == "search" and [r.rank for r in v1.returned] == [1, 2, 3]
    assert client.get("/healthz").json()["experiments"]["ledger"]["active"] is True
    assert records(ledger, run="r1")[-1].kind == "head"  # probes are not recorded


@pytest.mark.parametrize(
    ("path", "headers", "named"),
    [
        ("/runs//q/x/search", {}, "run tag is missing"),
        ("/runs/r1/q//search", {}, "question tag is missing"),
        ("/runs/-bad/search", {}, "run tag"),
        ("/runs/r1/q/a%20b/search", {}, "question tag"),
        ("/search", {"X-Openxiv-Question": "q1"}, "question tag without a run tag"),
        ("/runs/r1/search", {"X-Openxiv-Run": "r2"}, "the path says 'r1'"),
    ],
)
def test_bad_tags_are_a_400_naming_them(
    client: TestClient, path: str, headers: dict[str, str], named: str
) -> None:
    r = client.post(path, json={"query": ASTRO}, headers=headers)
    assert r.status_code == 400 and named in r.json()["detail"]


def test_answers_are_byte_identical_with_the_controls_on(
    bm25_snapshot: Path, client: TestClient, tmp_path: Path
) -> None:
    calls = [
        ("POST", "/search", {"json": {"query": ASTRO, "top_k": 10}}),
        ("POST", "/search", {"json": {"query": ["dark matter", "neutron star"], "top_k": 4}}),
        ("GET", "/arxiv/", {"params": {"type": "retrieve", "query": "quantum field", "top_k": 7}}),
        ("GET", "/v1/search", {"params": {"q": "black hole", "top_k": 5}}),
        ("POST", "/retrieve", {"json": {"queries": ["spectral lines"], "topk": 3}}),
    ]
    with app(bm25_snapshot, tmp_path / "plain") as plain:
        assert "experiments" not in plain.get("/healthz").json()
        assert "experiments" not in plain.get("/v1/index").json()
        assert "experiments" not in plain.get("/readyz").json()  # was null there once: a changed body
        assert plain.post("/runs/r1/search", json={"query": ASTRO}).status_code == 404  # off: no tags
        for method, path, kw in calls:
            want = plain.request(method, path, **kw)
            for prefix in ("", "/runs/r1", "/runs/r1/q/new"):  # "new": a ceiling no paper reaches
                got = client.request(method, prefix + path, **kw)
                assert got.status_code == want.status_code == 200
                if path != "/v1/search":  # its timings differ from call to call
                    assert got.content == want.content, (prefix, path)
                else:
                    assert got.json()["hits"] == want.json()["hits"]


def test_a_cutoff_holds_back_later_papers_without_date_to_and_counts_the_leaks(
    client: TestClient, ledger: Path
) -> None:
    free = client.post("/runs/r1/q/none/search", json={"query": ASTRO, "top_k": 10}).json()["result"]
    later = [h["arxiv_id"] for h in free if h["date"] > "2016-12-31"]
    assert later, "the astro listing papers of 2025 rank for an astro query"
    held = client.post("/runs/r1/q/old/search", json={"query": ASTRO, "top_k": 10}).json()["result"]
    assert held and all(h["date"] <= "2016-12-31" for h in held)
    asked_later = client.post(
        "/runs/r1/q/old/search", json={"query": ASTRO, "top_k": 10, "date_from": "2025-01-01"}
    ).json()
    assert asked_later["result"] == []
    for kind in ("head", "section", "raw"):
        r = client.get(
            "/runs/r1/q/old/arxiv/", params={"type": kind, "arxiv_id": later[0], "section": "Abstract"}
        )
        assert r.status_code == 404 and "not in this corpus" in r.json()["detail"]
    assert client.get(f"/runs/r1/q/old/v1/papers/{later[0]}").status_code == 404
    found = client.get(
        "/runs/r1/q/old/arxiv/", params={"type": "find", "arxiv_id": later[0], "query": "star"}
    )
    assert found.status_code == 404
    assert (
        client.get("/runs/r1/q/none/arxiv/", params={"type": "head", "arxiv_id": later[0]}).status_code == 200
    )
    got = records(ledger, run="r1", question="old")
    assert [r.cutoff for r in got] == ["2016-12-31"] * len(got)
    assert got[0].leaks == len(later) and set(got[0].leaked) == set(later)
    assert got[1].leaks >= 1 and all(r.leaks == 1 and r.leaked == (later[0],) for r in got[2:])
    free_passages = client.get("/runs/r4/q/none/v1/passages", params={"q": ASTRO, "top_k": 20}).json()[
        "result"
    ]
    assert {p["arxiv_id"] for p in free_passages} & set(later)
    held_passages = client.get("/runs/r4/q/old/v1/passages", params={"q": ASTRO, "top_k": 20}).json()[
        "result"
    ]
    assert held_passages and not {p["arxiv_id"] for p in held_passages} & set(later)
    years = {
        q: {y["value"] for y in client.get(f"/runs/r4/q/{q}/v1/facets", params={"q": ASTRO}).json()["years"]}
        for q in ("none", "old")
    }
    assert "2025" in years["none"] and years["old"] and max(years["old"]) <= "2016"
    agent = client.post("/runs/r3/q/old/arxiv/agent/search", json={"query": ASTRO, "top_k": 10})
    sources = agent.json()["sources"]
    assert agent.status_code == 200 and sources and all(src["date"] <= "2016-12-31" for src in sources)
    (answered,) = records(ledger, run="r3")
    assert answered.kind == "agent_search" and set(later) <= set(answered.leaked)
    assert [r.id for r in answered.returned] == [src["arxiv_id"] for src in sources]


def test_a_seeded_fault_spec_gives_the_same_sequence_twice(bm25_snapshot: Path, tmp_path: Path) -> None:
    spec = "seed=11; 429=0.3 retry_after=4; 500=0.15; 502=0.1 route=/arxiv/"
    runs = []
    for attempt in range(2):
        with app(bm25_snapshot, tmp_path / str(attempt), faults=spec, ledger=tmp_path / f"l{attempt}") as c:
            statuses = []
            for i in range(30):
                r = c.post("/runs/agent/q/1/search", json={"query": f"star {i}", "top_k": 2})
                statuses.append(r.status_code)
                if r.status_code == 429:
                    assert r.headers["retry-after"] == "4" and "rate limit" in r.json()["detail"]
                r = c.get("/runs/agent/q/1/arxiv/", params={"type": "retrieve", "query": "gas"})
                statuses.append(r.status_code)
            assert c.get("/healthz").json()["experiments"]["faults"] == {
                "active": True,
                "seed": 11,
                "spec": spec,
            }
            assert c.get("/v1/index").json()["experiments"]["faults"]["seed"] == 11
        runs.append(statuses)
        faults = [r.fault for r in records(tmp_path / f"l{attempt}")]
        assert faults.count("429") == statuses.count(429) and faults.count("502") == statuses.count(502)
    assert runs[0] == runs[1]
    assert {200, 429, 500}.issubset(runs[0]) and 502 in runs[0][1::2] and 502 not in runs[0][0::2]
    with app(bm25_snapshot, tmp_path / "other", faults=spec.replace("seed=11", "seed=12")) as c:
        other = [
            c.post("/runs/agent/q/1/search", json={"query": "x", "top_k": 1}).status_code for _ in range(30)
        ]
    assert other != runs[0][0::2]  # another seed, another sequence


def test_quotas_in_arxiv_and_deepxiv_shapes(client: TestClient, bm25_snapshot: Path, tmp_path: Path) -> None:
    got = [client.get("/runs/quota/arxiv/", params={"type": "retrieve", "query": "gas"}) for _ in range(5)]
    assert [r.status_code for r in got] == [200, 200, 200, 503, 503]
    assert got[3].text == "Rate exceeded." and 1 <= int(got[3].headers["retry-after"]) <= 60
    assert client.post("/runs/quota/search", json={"query": "gas"}).status_code == 200  # another route
    with app(bm25_snapshot, tmp_path / "day", faults="quota=day:2") as c:
        codes = [c.post("/search", json={"query": "gas"}) for _ in range(3)]
        assert [r.status_code for r in codes] == [200, 200, 429]
        assert "Daily limit reached" in codes[2].json()["detail"] and codes[2].headers["daily-limit"] == "2"
        assert c.post("/runs/other/search", json={"query": "gas"}).status_code == 200  # per run


def test_replay_answers_byte_for_byte_over_another_index(
    client: TestClient, ledger: Path, tmp_path: Path, other_index: Path
) -> None:
    calls = [
        ("POST", "/runs/r1/q/none/search", {"json": {"query": ASTRO, "top_k": 5}}),
        ("GET", "/runs/r1/q/none/arxiv/", {"params": {"type": "retrieve", "query": "galaxy"}}),
        ("POST", "/runs/r1/q/old/search", {"json": {"query": ASTRO, "top_k": 5}}),
        ("GET", "/runs/r1/q/none/arxiv/", {"params": {"type": "head", "arxiv_id": "2501.99999"}}),
        ("POST", "/runs/chaos/q/1/search", {"json": {"query": "gas", "top_k": 1}}),
    ]
    recorded = [client.request(m, p, **kw) for m, p, kw in calls]
    with app(other_index, tmp_path / "replay", replay=ledger, ledger=tmp_path / "l2") as c:
        live = c.post("/search", json={"query": ASTRO, "top_k": 5})
        assert live.status_code == 409  # untagged and never recorded
        for (m, p, kw), want in zip(calls, recorded, strict=True):
            got = c.request(m, p, **kw)
            assert (got.status_code, got.content) == (want.status_code, want.content), p
        r = c.post("/runs/r1/q/none/search", json={"query": ASTRO, "top_k": 6})
        assert r.status_code == 409
        detail = r.json()["detail"]
        assert "POST /search" in detail and "run 'r1' question 'none'" in detail and '"top_k":6' in detail
        assert c.get("/healthz").json()["experiments"]["replay"]["calls"] >= len(calls)
    again = records(tmp_path / "l2", run="r1")
    assert all(r.replayed for r in again if r.status != 409) and again[0].snapshot is None


def test_replay_sends_the_recorded_retry_after_again(
    bm25_snapshot: Path, tmp_path: Path, other_index: Path
) -> None:
    calls = [
        ("/runs/slow/q/1/search", {"query": "gas", "top_k": 1}),  # an injected 429, Retry-After: 7
        ("/runs/daily/q/1/search", {"query": "gas", "top_k": 1}),  # within DeepXiv's daily quota
        ("/runs/daily/q/1/search", {"query": "gas", "top_k": 1}),  # past it: 429, Retry-After, Daily-Limit
    ]
    spec = "429=1 retry_after=7 run=slow; quota=day:1 run=daily"
    with app(bm25_snapshot, tmp_path / "rec", faults=spec, ledger=tmp_path / "l") as c:
        recorded = [c.post(path, json=body) for path, body in calls]
    assert [r.status_code for r in recorded] == [429, 200, 429]
    assert recorded[0].headers["retry-after"] == "7" and recorded[2].headers["daily-limit"] == "1"
    with app(other_index, tmp_path / "replay", replay=tmp_path / "l", ledger=tmp_path / "l2") as c:
        for (path, body), want in zip(calls, recorded, strict=True):
            got = c.post(path, json=body)
            assert (got.status_code, got.content) == (want.status_code, want.content)
            for name in ("retry-after", "daily-limit"):
                assert got.headers.get(name) == want.headers.get(name), (path, name)
    kept = [r.headers for r in records(tmp_path / "l")]
    assert kept[0] == {"retry-after": "7"} and kept[1] == {}  # not Server-Timing nor content-length
    assert kept[2] == {"retry-after": recorded[2].headers["retry-after"], "daily-limit": "1"}
    assert [r.headers for r in records(tmp_path / "l2")] == kept  # kept again by a replayed run
    # a ledger recorded before headers were kept (its records have no "headers") still replays
    for segment in (tmp_path / "l").glob("*.sqlite"):
        with sqlite3.connect(segment) as db:
            for seq, text in db.execute("SELECT seq, record FROM calls").fetchall():
                old = {k: v for k, v in json.loads(text).items() if k != "headers"}
                db.execute("UPDATE calls SET record = ? WHERE seq = ?", (json.dumps(old), seq))
    assert all(r.headers == {} for r in records(tmp_path / "l"))
    with app(other_index, tmp_path / "replay-old", replay=tmp_path / "l") as c:
        got = [c.post(path, json=body) for path, body in calls]
    assert [(g.status_code, g.content) for g in got] == [(r.status_code, r.content) for r in recorded]
    assert "retry-after" not in got[0].headers


@pytest.fixture(scope="module")
def other_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A BM25-only index of 20 plain texts: not the one the ledger was recorded on."""
    import itertools

    from openxiv.corpus.readers import read_path
    from openxiv.corpus.shared import SharedData
    from openxiv.corpus.store import Store
    from openxiv.indexer.building.job import build_index

    tmp_path = tmp_path_factory.mktemp("other")
    db = tmp_path / "other.sqlite"
    with Store(db) as store:
        store.ingest(itertools.islice(read_path(SharedData.default().plaintext), 20))
    build_index(db, tmp_path / "other-index", Settings(data_dir=tmp_path, embed="none"), progress=False)
    return tmp_path / "other-index"


@pytest.mark.parametrize(
    ("field", "value", "named"),
    [
        ("faults", "429=2", "not a probability"),
        ("faults", "seed=1; boom=0.1", "expected one of"),
        ("faults", "latency=fast", "not a duration"),
        ("faults", "quota=hour:3", "quota=minute:N"),
        ("faults", "503=0.1 where=/x", "option 'where=/x'"),
        ("cutoffs", "missing.json", "cutoffs: cannot read"),
        ("replay", "missing-ledger", "replay: ledger"),
    ],
)
def test_bad_controls_are_named(field: str, value: str, named: str, tmp_path: Path) -> None:
    arg: Any = value if field == "faults" else tmp_path / value
    with pytest.raises(BadControls, match=named) as err:
        Controls.of(Settings(data_dir=tmp_path, **{field: arg}))
    assert str(err.value).startswith(field)


def test_bad_cutoff_dates_name_the_line(tmp_path: Path) -> None:
    path = tmp_path / "c.jsonl"
    path.write_text('{"qid": "a", "date": "2020-01-01"}\n{"qid": "b", "date": "2020-13"}\n')
    with pytest.raises(BadControls, match=r"c.jsonl:2: '2020-13' is not a date"):
        Controls.of(Settings(data_dir=tmp_path, cutoffs=path))
    path.write_text('{"a": "2020", "b": "2021-02"}')
    controls = Controls.of(Settings(data_dir=tmp_path, cutoffs=path))
    assert controls is not None and controls.cutoffs is not None
    assert {k: v.isoformat() for k, v in controls.cutoffs.items()} == {"a": "2020-12-31", "b": "2021-02-28"}


def test_injected_latency_holds_no_compute_slot_and_a_timeout_is_a_504(
    bm25_snapshot: Path, tmp_path: Path
) -> None:
    """One compute slot (``serve_concurrency=1``): a call delayed by the fault spec waits on the event
    loop, so an undelayed call sent after it is answered first; a ``timeout`` clause holds the call,
    then answers 504."""
    import threading
    import time

    spec = "latency=5s run=slow; timeout=1 run=hang after=0.5s"
    settings = Settings(
        data_dir=tmp_path, embed="none", faults=spec, ledger=tmp_path / "l", serve_concurrency=1
    )
    done: list[str] = []
    with TestClient(create_app(settings, bm25_snapshot)) as c:

        def call(run: str) -> None:
            r = c.post(f"/runs/{run}/search", json={"query": ASTRO, "top_k": 3})
            done.append(f"{run}:{r.status_code}")

        call("warm")  # caches filled, so the undelayed call is quick
        slow = threading.Thread(target=call, args=("slow",))
        slow.start()
        plan = c.app.state.experiments.faults  # type: ignore[attr-defined]
        while plan.calls_of("slow", "/search") == 0:  # the slow call is in its wait
            time.sleep(0.01)
        call("fast")
        slow.join(30)
        call("hang")
    assert done == ["warm:200", "fast:200", "slow:200", "hang:504"]
    faults = {r.run: r.fault for r in records(tmp_path / "l")}
    assert faults == {"warm": None, "fast": None, "hang": "timeout", "slow": "latency:5000"}
