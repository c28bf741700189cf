"""``similar`` with a facet and negative seeds (issue 39) against the live server on the session's
real index (real MiniLM paper vectors, real abstracts): both move the ranking, in the direction
asked, and bad values are 4xx naming their parameter on both routes."""

from __future__ import annotations

import httpx
import pytest

PAPER = "1706.03762"  # the Transformer: its abstract has background, method and result sentences
BN = "1502.03167"


def _ids(body: dict) -> list[str]:
    return [h["arxiv_id"] for h in body["result"]]


def _similar(client: httpx.Client, **params: object) -> dict:
    r = client.get("/arxiv/", params={"type": "similar", "arxiv_id": PAPER, "top_k": 20, **params})
    assert r.status_code == 200, r.text
    return r.json()


def test_each_facet_ranks_differently_and_keeps_the_seed_out(client: httpx.Client) -> None:
    plain = _ids(_similar(client))
    by_facet = {f: _ids(_similar(client, facet=f)) for f in ("background", "method", "result")}
    for facet, ids in by_facet.items():
        assert len(ids) == 20 and PAPER not in ids, facet
        assert ids != plain, facet  # the facet's sentences move the direction
    assert len({tuple(ids) for ids in by_facet.values()}) == 3
    upper = _similar(client, facet="METHOD")  # any case
    assert _ids(upper) == by_facet["method"]


def test_a_ruled_out_paper_is_left_out_and_its_neighbours_move_down(client: httpx.Client) -> None:
    plain = _ids(_similar(client))
    ruled_out = plain[0]
    near_it = set(
        _ids(client.get("/arxiv/", params={"type": "similar", "arxiv_id": ruled_out, "top_k": 50}).json())
    )
    steered = _ids(_similar(client, negative_ids=ruled_out))
    assert ruled_out not in steered and PAPER not in steered and len(steered) == 20
    # Rocchio: the papers like the ruled-out one lose places (one past the page when pushed off it)
    rest = plain[1:]
    near = [p for p in rest if p in near_it]
    assert near
    place = {p: steered.index(p) if p in steered else len(steered) for p in near}
    assert sum(place.values()) > sum(rest.index(p) for p in near), (place, [rest.index(p) for p in near])
    both = _similar(client, negative_ids=f"{plain[0]},{plain[1]}", facet="method")
    assert not {plain[0], plain[1]} & set(_ids(both))


def test_v1_similar_takes_facet_and_negative_ids(client: httpx.Client) -> None:
    plain = client.get("/v1/similar", params={"arxiv_id": PAPER, "top_k": 5}).json()
    first = plain["hits"][0]["arxiv_id"]
    r = client.get(
        "/v1/similar", params={"arxiv_id": PAPER, "top_k": 5, "facet": "result", "negative_ids": first}
    )
    assert r.status_code == 200, r.text
    body = r.json()
    assert body["query"] == f"similar to {PAPER} (result), not {first}"
    assert first not in [h["arxiv_id"] for h in body["hits"]]


MANY = ",".join(f"2503.{i:05d}" for i in range(1, 23))


@pytest.mark.parametrize(
    ("params", "status", "names"),
    [
        ({"facet": "conclusion"}, 400, "facet"),
        ({"negative_ids": "not-an-id"}, 400, "negative_ids"),
        ({"negative_ids": "2501.99999"}, 404, "negative_ids: 2501.99999"),
        ({"negative_ids": MANY}, 400, "negative_ids: at most 20"),
        ({"negative_ids": PAPER}, 400, "negative_ids: 1706.03762 is also a seed"),
    ],
)
def test_bad_steering_is_4xx_naming_the_parameter(
    client: httpx.Client, params: dict, status: int, names: str
) -> None:
    r = client.get("/arxiv/", params={"type": "similar", "arxiv_id": PAPER, **params})
    assert r.status_code == status, r.text
    assert names in r.json()["detail"]
    v1 = client.get("/v1/similar", params={"arxiv_id": PAPER, **params})
    assert v1.status_code == status, v1.text
    assert names in v1.json()["detail"]


def test_steering_is_refused_on_other_types(client: httpx.Client) -> None:
    r = client.get("/arxiv/", params={"type": "retrieve", "query": "attention", "facet": "method"})
    assert r.status_code == 400 and "facet: only for type=similar" in r.json()["detail"]
    r = client.get("/arxiv/", params={"type": "head", "arxiv_id": PAPER, "negative_ids": BN})
    assert r.status_code == 400 and "negative_ids" in r.json()["detail"]
