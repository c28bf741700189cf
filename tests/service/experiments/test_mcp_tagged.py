"""``openxiv mcp --transport http`` with the experiment controls: an MCP agent's URL carries the tags
(``/runs/<run>/q/<question>/mcp``), each JSON-RPC call is a ledger record (``mcp:<tool>``) with the
papers its tool returned, and the question's cutoff holds the tool's search, title match and author
view too. Replay is refused
on MCP (its answers carry session headers a ledger does not keep)."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from live_index import BIN, SHARED, free_port
from mcp import Client
from mcp.client.streamable_http import streamable_http_client

from openxiv.corpus.ledger.store import LedgerReader
from openxiv.corpus.store import Store

pytestmark = pytest.mark.live_server

CUTOFF = "2016-12-31"
LATER = "2504.11531"  # Pengjun Lu et al., 2025; the snapshot's other Lu before the cutoff is T. Lu (2000)


def _env(data_dir: Path) -> dict[str, str]:
    env = {"HF_HUB_OFFLINE": "1", "OPENXIV_SHARED": str(SHARED.root), "OPENXIV_DATA_DIR": str(data_dir)}
    if "PYTHONPATH" in os.environ:
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env


def test_mcp_calls_are_tagged_recorded_and_held_to_the_cutoff(bm25_snapshot: Path, tmp_path: Path) -> None:
    cutoffs = tmp_path / "cutoffs.json"
    cutoffs.write_text(json.dumps({"1": CUTOFF}))
    port = free_port()
    cmd = [
        str(BIN / "openxiv"),
        "mcp",
        "--index",
        str(bm25_snapshot),
        "--transport",
        "http",
        "--port",
        str(port),
    ]
    cmd += ["--ledger", str(tmp_path / "ledger"), "--cutoffs", str(cutoffs)]
    log = (tmp_path / "mcp.log").open("w")
    proc = subprocess.Popen(cmd, env=_env(tmp_path), stdout=log, stderr=subprocess.STDOUT)
    got: dict[str, list[tuple[str, str]]] = {}
    nav: dict[str, dict[str, Any]] = {}
    with Store.open_readonly(bm25_snapshot.parent / "corpus.sqlite") as store:
        late = store.get_paper(LATER)
    assert late is not None and late.title

    async def session(question: str) -> None:
        url = f"http://127.0.0.1:{port}/runs/m1/q/{question}/mcp"
        async with Client(streamable_http_client(url, http_client=httpx2.AsyncClient())) as mcp:
            result = await mcp.call_tool(
                "search_papers", {"query": "galaxy cluster star formation", "size": 8}
            )
            assert result.structured_content is not None
            got[question] = [(h["arxiv_id"], h["date"]) for h in result.structured_content["result"]]
            for tool, args in (("match_title", {"title": late.title}), ("author_papers", {"name": "Lu"})):
                answer = await mcp.call_tool(tool, args)
                assert answer.structured_content is not None
                nav[f"{question}:{tool}"] = answer.structured_content

    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                httpx.get(f"http://127.0.0.1:{port}/mcp", timeout=2)
                break
            except httpx.HTTPError:
                assert time.monotonic() < deadline and proc.poll() is None, (tmp_path / "mcp.log").read_text()
                time.sleep(0.3)
        for question in ("1", "2"):
            anyio.run(session, question)
    finally:
        proc.terminate()
        proc.wait(30)
        log.close()
    assert got["1"] and all(d <= CUTOFF for _, d in got["1"])
    later = {aid for aid, d in got["2"] if d > CUTOFF}
    assert later
    calls = {
        q: [r for r in LedgerReader(tmp_path / "ledger").records(run="m1", question=q)] for q in ("1", "2")
    }
    for q in ("1", "2"):
        (search,) = [r for r in calls[q] if r.kind == "mcp:search_papers"]
        assert search.front == "mcp" and search.route == "/mcp" and search.status == 200
        assert [r.id for r in search.returned] == [aid for aid, _ in got[q]]
        assert search.params["query"] == "galaxy cluster star formation"
    held = next(r for r in calls["1"] if r.kind == "mcp:search_papers")
    assert held.cutoff == CUTOFF and later <= set(held.leaked)
    assert nav["2:match_title"]["match"]["arxiv_id"] == LATER
    assert nav["1:match_title"]["match"] is None
    assert all(c["date"] <= CUTOFF for c in nav["1:match_title"]["candidates"])
    assert LATER in {p["arxiv_id"] for p in nav["2:author_papers"]["result"]}
    assert [(p["date"] <= CUTOFF) for p in nav["1:author_papers"]["result"]] == [True]
    for tool in ("match_title", "author_papers"):
        (record,) = [r for r in calls["1"] if r.kind == f"mcp:{tool}"]
        assert record.cutoff == CUTOFF and LATER in record.leaked, tool
    (author,) = [r for r in calls["2"] if r.kind == "mcp:author_papers"]  # its own `name` argument kept
    assert author.params == {"tool": "author_papers", "name": "Lu"}


def test_mcp_refuses_replay_and_controls_off_http(bm25_snapshot: Path, tmp_path: Path) -> None:
    base = [str(BIN / "openxiv"), "mcp", "--index", str(bm25_snapshot)]
    for extra, env, named in (
        (["--transport", "http"], {"OPENXIV_REPLAY": str(tmp_path)}, "session headers"),
        (["--ledger", str(tmp_path / "l")], {}, "need --transport http"),
    ):
        out = subprocess.run(
            [*base, *extra],
            env=_env(tmp_path) | env,
            capture_output=True,
            text=True,
            timeout=120,
            stdin=subprocess.DEVNULL,
        )
        assert out.returncode == 2 and named in out.stderr, out.stderr
