"""References and cited-by on every front, against a real ``openxiv serve`` (and ``openxiv mcp``,
``openxiv paper``) on a real index of the unArXive sample and the ResNet PDF (tests/refs_index.py).

``test_deepxiv_references_answer`` fails on main: ``type=references`` was a 400 there (not a type).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

import anyio
import httpx
import pytest
from click.testing import CliRunner
from live_index import BIN, SHARED, BuiltIndex, LiveServer
from mcp import Client
from mcp.client.stdio import StdioServerParameters
from mcp_types import TextContent

from openxiv.indexer import layout
from openxiv.indexer.snapshot import current_snapshot

CITING = "2212.11790"  # Normalized Contrastive Learning for Text-Video Retrieval: 40 entries
RESNET = "1512.03385"  # its 15th entry, the one cited paper in this corpus (from its PDF)


@pytest.fixture(scope="module")
def refs_server(refs_index: BuiltIndex) -> Iterator[httpx.Client]:
    live = LiveServer(refs_index.root)
    try:
        with httpx.Client(base_url=live.url, timeout=60) as c:
            yield c
    finally:
        live.stop()


def test_deepxiv_references_answer(refs_server: httpx.Client) -> None:
    r = refs_server.get("/arxiv/", params={"type": "references", "arxiv_id": f"arXiv:{CITING}v2"})
    assert r.status_code == 200, r.text
    body = r.json()
    assert (
        body["arxiv_id"] == CITING
        and body["title"] == "Normalized Contrastive Learning for Text-Video Retrieval"
    )
    assert (body["has_bibliography"], body["count"], body["resolved"], body["in_corpus"]) == (True, 40, 23, 1)
    refs = body["references"]
    assert [r["position"] for r in refs] == list(range(40))
    resnet = refs[14]
    assert resnet["arxiv_id"] == RESNET and resnet["in_corpus"] is True
    assert resnet["title"] == "Deep Residual Learning for Image Recognition"
    adam = next(r for r in refs if r["arxiv_id"] == "1412.6980")
    assert adam["in_corpus"] is False and adam["title"] is None and "Adam" in adam["text"]
    assert adam["url"] == "https://arxiv.org/abs/1412.6980"
    unresolved = [r for r in refs if r["arxiv_id"] is None]
    assert unresolved and all(r["text"] and not r["in_corpus"] for r in unresolved)
    assert refs_server.get(f"/v1/papers/{CITING}/references").json() == body  # the /v1 shape is the same


def test_cited_by_in_and_out_of_the_corpus(refs_server: httpx.Client) -> None:
    body = refs_server.get("/arxiv/", params={"type": "cited_by", "arxiv_id": RESNET}).json()
    assert body["in_corpus"] is True and body["title"] == "Deep Residual Learning for Image Recognition"
    assert [c["arxiv_id"] for c in body["cited_by"]] == ["1706.03762", "2212.11772", CITING, "2212.11803"]
    assert all(c["title"] for c in body["cited_by"])
    # the Transformer PDF's citing sentence of its entry [11] (ResNet, resolved by title)
    assert "residual connection [11]" in body["cited_by"][0]["context"]
    assert "within this corpus" in body["note"]
    adam = refs_server.get("/v1/papers/1412.6980/cited_by").json()  # cited, but not in the corpus
    assert (adam["in_corpus"], adam["title"], adam["count"]) == (False, None, 1)
    none = refs_server.get("/arxiv/", params={"type": "cited_by", "arxiv_id": CITING}).json()
    assert none["count"] == 0 and none["cited_by"] == []


def test_a_paper_without_bibliography_says_why(refs_server: httpx.Client) -> None:
    body = refs_server.get("/arxiv/", params={"type": "references", "arxiv_id": "2212.11739"}).json()
    assert body["has_bibliography"] is False and body["references"] == []
    assert "references come from full texts" in body["note"]


@pytest.mark.parametrize(
    ("params", "status", "words"),
    [
        ({"type": "references", "arxiv_id": "2212.1179x"}, 400, "arxiv_id: '2212.1179x' is not an arXiv id"),
        ({"type": "cited_by"}, 400, "arxiv_id: required for type=cited_by"),
        ({"type": "references", "arxiv_id": "2101.00001"}, 404, "paper 2101.00001 is not in this corpus"),
        ({"type": "cited_by", "arxiv_id": "2101.00001"}, 404, "no paper of it cites it"),
    ],
)
def test_bad_requests_name_the_parameter(
    refs_server: httpx.Client, params: dict[str, str], status: int, words: str
) -> None:
    r = refs_server.get("/arxiv/", params=params)
    assert r.status_code == status and words in r.json()["detail"]


def test_the_paper_page_expands_references_and_cited_by(refs_server: httpx.Client) -> None:
    page = refs_server.get(f"/ui/paper/{CITING}", params={"expand": "references"})
    assert page.status_code == 200
    html = page.text
    assert f'<a href="/ui/paper/{RESNET}">Deep Residual Learning for Image Recognition</a>' in html
    assert "Adam: A method for stochastic optimization" in html and "(not in this corpus)" in html
    cited = refs_server.get(f"/ui/paper/{RESNET}", params={"expand": "cited_by"}).text
    assert (
        f'<a href="/ui/paper/{CITING}">Normalized Contrastive Learning for Text-Video Retrieval</a>' in cited
    )
    bad = refs_server.get(f"/ui/paper/{CITING}", params={"expand": "everything"})
    assert (
        bad.status_code == 400
        and "expand: &#39;everything&#39; is not one of references, cited_by" in bad.text
    )


def test_the_terminal_and_the_mcp_tools_answer_the_same(
    refs_index: BuiltIndex, refs_server: httpx.Client
) -> None:
    from openxiv.service.cli import cli

    http = refs_server.get("/arxiv/", params={"type": "references", "arxiv_id": CITING}).json()
    runner = CliRunner()
    args = ["paper", CITING, "--references", "--index", str(refs_index.root)]
    out = runner.invoke(cli, [*args, "--json"])
    assert out.exit_code == 0, out.output
    assert json.loads(out.output) == http
    text = runner.invoke(cli, args).output
    assert "[14] Deep Residual Learning for Image Recognition (arXiv 1512.03385, in corpus)" in text
    both = runner.invoke(cli, [*args, "--cited-by"])
    assert both.exit_code == 2 and "--references and --cited-by exclude each other" in both.output

    params = StdioServerParameters(
        command=str(BIN / "openxiv"),
        args=["mcp", "--index", str(refs_index.root)],
        env={
            "HF_HUB_OFFLINE": "1",
            "OPENXIV_SHARED": str(SHARED.root),
            "OPENXIV_DATA_DIR": str(refs_index.root.parent),
            # a worktree's checkout rather than the venv's editable install, when the run names one
            **({"PYTHONPATH": os.environ["PYTHONPATH"]} if os.environ.get("PYTHONPATH") else {}),
        },
    )

    async def session() -> None:
        async with Client(params) as mcp:
            refs = await mcp.call_tool("references", {"arxiv_id": CITING})
            assert not refs.is_error and refs.structured_content == http
            cited = await mcp.call_tool("cited_by", {"arxiv_id": RESNET})
            assert [c["arxiv_id"] for c in (cited.structured_content or {})["cited_by"]] == [
                "1706.03762",
                "2212.11772",
                CITING,
                "2212.11803",
            ]
            text = "\n".join(c.text for c in cited.content if isinstance(c, TextContent))
            assert "Normalized Contrastive Learning for Text-Video Retrieval (arXiv 2212.11790)" in text
            bad = await mcp.call_tool("references", {"arxiv_id": "nonsense"})
            assert bad.is_error and "arxiv_id: 'nonsense' is not an arXiv id" in str(bad.content)

    anyio.run(session)


def test_a_snapshot_built_before_references_is_a_409(refs_index: BuiltIndex, tmp_path: Path) -> None:
    snap = current_snapshot(refs_index.root)
    assert snap is not None
    root = tmp_path / "index"
    old = root / layout.SNAPSHOTS / snap.name
    shutil.copytree(snap, old, ignore=shutil.ignore_patterns(layout.REFERENCES, layout.LEASE))
    manifest = json.loads((old / layout.MANIFEST).read_text())  # as a build before this stage wrote it
    del manifest["references"], manifest["sizes_bytes"]["references"]
    (old / layout.MANIFEST).write_text(json.dumps(manifest))
    (old / layout.LEASE).touch()
    (root / layout.CURRENT).write_text(snap.name)
    live = LiveServer(root)
    try:
        r = httpx.get(live.url + "/arxiv/", params={"type": "references", "arxiv_id": CITING})
        assert r.status_code == 409
        assert f"snapshot {snap.name} was built before references were stored" in r.json()["detail"]
        assert "openxiv index build" in r.json()["detail"]
        assert httpx.get(live.url + f"/v1/papers/{RESNET}/cited_by").status_code == 409
        assert httpx.get(live.url + f"/arxiv/?type=head&arxiv_id={CITING}").status_code == 200
    finally:
        live.stop()
