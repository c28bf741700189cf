"""`openxiv mcp` driven by the official MCP client, over stdio and over streamable HTTP.

Both transports run the real command in a subprocess on the session's real index; every tool is
called, results are checked against the HTTP API's answers for the same question, and bad arguments,
unknown papers and sections must come back as tool errors (``isError``) that say what is wrong.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Awaitable, Callable, Iterator
from pathlib import Path
from typing import Any

import anyio
import httpx
import httpx2
import pytest
from live_index import BIN, N_CS, SHARED, BuiltIndex, build, copy_index, free_port, ingest_more
from mcp import Client
from mcp.client import Transport
from mcp.client.stdio import StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared.exceptions import MCPError
from mcp_types import CallToolResult, TextContent

from openxiv.service.mcp.server import MCP_PATH, TOOLS

PAPER = "1706.03762"  # read from its real PDF (v7): has sections
TOKEN = "mcp-test-token"


def _env(index: BuiltIndex, **extra: str) -> dict[str, str]:
    """The subprocess environment: the session's data dir (its exported model) and no other OPENXIV_*."""
    env = {
        "HF_HUB_OFFLINE": "1",
        "OPENXIV_SHARED": str(SHARED.root),
        "OPENXIV_DATA_DIR": str(index.root.parent),
    }
    if "PYTHONPATH" in os.environ:  # the code under test when it is not the installed checkout's
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
    return env | extra


def _text(result: CallToolResult) -> str:
    return "\n".join(c.text for c in result.content if isinstance(c, TextContent))


def run_client(target: Any, session: Callable[[Client], Awaitable[None]]) -> None:
    async def main() -> None:
        async with Client(target) as client:
            await session(client)

    anyio.run(main)


# ------------------------------------------------------------------------------ the checks
async def check_tools(client: Client, http: httpx.Client) -> None:
    """Every tool, its text and structured content, against the HTTP API's answers."""
    listed = {t.name: t for t in (await client.list_tools()).tools}
    assert set(listed) == set(TOOLS)
    assert listed["search_papers"].input_schema["required"] == ["query"]
    assert {"size", "offset", "categories", "authors", "date_from", "date_to"} <= set(
        listed["search_papers"].input_schema["properties"]
    )
    assert listed["get_paper_section"].input_schema["required"] == ["arxiv_id", "section_name"]
    assert all(t.output_schema for t in listed.values())
    assert all(t.input_schema["additionalProperties"] is False for t in listed.values())

    query = "attention is all you need transformer"
    found = await client.call_tool("search_papers", {"query": query, "size": 5})
    assert not found.is_error, _text(found)
    expected = http.post("/search", json={"query": query, "top_k": 5}).json()
    assert found.structured_content == expected
    ids = [h["arxiv_id"] for h in expected["result"]]
    assert PAPER in ids
    text = _text(found)
    assert f"Found {expected['total_count']} papers for '{query}' (showing 1-5)" in text
    assert all(f"arXiv ID: {i}" in text for i in ids)

    page2 = await client.call_tool("search_papers", {"query": query, "size": 2, "offset": 2})
    assert [h["arxiv_id"] for h in page2.structured_content["result"]] == ids[2:4]
    assert "(showing 3-4)" in _text(page2)

    astro = await client.call_tool(
        "search_papers", {"query": "galaxy cluster", "size": 5, "categories": "astro-ph", "date_from": "2025"}
    )
    hits = astro.structured_content["result"]
    assert hits and all(any(c.startswith("astro-ph") for c in h["categories"]) for h in hits)
    assert all(h["date"] >= "2025-01-01" for h in hits)

    one = {"query": "transformer", "authors": "Vaswani", "categories": ["cs.CL", "cs.LG"], "size": 3}
    single = await client.call_tool("search_papers", one)
    assert [h["arxiv_id"] for h in single.structured_content["result"]] == [PAPER]
    assert "Found 1 paper for 'transformer' (showing 1-1):" in _text(single)  # probe: was "1 papers"

    head = await client.call_tool("get_paper_metadata", {"arxiv_id": f"arXiv:{PAPER}v7"})
    assert not head.is_error, _text(head)
    expected_head = http.get("/arxiv/", params={"type": "head", "arxiv_id": PAPER}).json()
    assert head.structured_content == expected_head
    sections = expected_head["sections"]
    assert sections and expected_head["title"] in _text(head)
    assert all(f"{s['token_count']} tokens" in _text(head) for s in sections)

    name = sections[1]["name"]
    section = await client.call_tool("get_paper_section", {"arxiv_id": PAPER, "section_name": name.upper()})
    assert not section.is_error, _text(section)
    want = http.get("/arxiv/", params={"type": "section", "arxiv_id": PAPER, "section": name}).json()
    assert section.structured_content == want
    assert want["content"].strip() in _text(section)

    brief = await client.call_tool("get_paper_brief", {"arxiv_id": PAPER})
    assert brief.structured_content == http.get("/arxiv/", params={"type": "brief", "arxiv_id": PAPER}).json()
    assert f"PDF: https://arxiv.org/pdf/{PAPER}" in _text(brief)

    full = await client.call_tool("get_full_paper", {"arxiv_id": PAPER})
    raw = http.get("/arxiv/", params={"type": "raw", "arxiv_id": PAPER}).json()["raw"]
    assert _text(full) == raw and raw.startswith(f"# {expected_head['title']}")

    preview = await client.call_tool("get_paper_preview", {"arxiv_id": PAPER, "characters": 300})
    assert preview.structured_content["content"] == raw[:300]
    assert preview.structured_content["is_truncated"] is True
    assert f"Total paper size: {len(raw)} characters" in _text(preview)


async def check_errors(client: Client) -> None:
    """Bad arguments, unknown papers and sections: tool errors naming the problem, server still up."""
    cases: list[tuple[str, dict[str, Any], str]] = [
        ("get_paper_brief", {"arxiv_id": "2501.99999"}, "paper 2501.99999 is not in this corpus"),
        ("get_paper_metadata", {"arxiv_id": "not-an-id"}, "is not an arXiv id"),
        ("get_paper_section", {"arxiv_id": PAPER, "section_name": "No Such Section"}, "its sections are:"),
        ("get_full_paper", {"arxiv_id": "2501.99999"}, "not in this corpus"),
        ("get_paper_preview", {"arxiv_id": PAPER, "characters": 0}, "characters"),
        ("search_papers", {"query": "transformers", "size": 0}, "size: must be an integer between 1 and 100"),
        ("search_papers", {"query": "transformers", "offset": -1}, "offset"),
        ("search_papers", {"query": "  "}, "query: empty query"),
        ("search_papers", {"query": "transformers", "date_from": "yesterday"}, "date_from"),
        ("search_papers", {"query": "transformers", "categories": "not a category"}, "categories"),
        ("search_papers", {"query": "transformers", "mode": "magic"}, "mode"),
        ("search_papers", {"size": 3}, "query"),
        ("get_paper_section", {"arxiv_id": PAPER, "section_name": " "}, "section_name: required"),
        # probes: undeclared arguments were dropped and the answer came back unfiltered
        (
            "search_papers",
            {"query": "transformers", "orgs": ["Google"]},
            "orgs: this corpus has no affiliations",
        ),
        ("search_papers", {"query": "transformers", "min_citation": -1}, "min_citation"),
        (
            "search_papers",
            {"query": "transformers", "source": "arxiv"},
            "source: not an argument of search_papers",
        ),
        (
            "search_papers",
            {"query": "x", "catgories": "cs.CL"},
            "catgories: not an argument of search_papers (did you mean 'categories'?)",
        ),
        (
            "get_paper_brief",
            {"arxiv_id": PAPER, "verbose": True},
            "verbose: not an argument of get_paper_brief",
        ),
    ]
    for tool, args, message in cases:
        result = await client.call_tool(tool, args)
        assert result.is_error, (tool, args, _text(result))
        assert message in _text(result), (tool, args, _text(result))
    listing = await client.call_tool("get_paper_section", {"arxiv_id": PAPER, "section_name": "nope"})
    assert "Introduction" in _text(listing)
    still = await client.call_tool("get_paper_brief", {"arxiv_id": PAPER})
    assert not still.is_error


# ------------------------------------------------------------------------------ stdio
def test_stdio_tools_answer_like_the_http_api(test_index: BuiltIndex, client: httpx.Client) -> None:
    params = StdioServerParameters(
        command=str(BIN / "openxiv"), args=["mcp", "--index", str(test_index.root)], env=_env(test_index)
    )

    async def session(mcp: Client) -> None:
        await check_tools(mcp, client)
        await check_errors(mcp)

    run_client(params, session)


# ------------------------------------------------------------------------------ streamable HTTP
class McpHttpServer:
    """``openxiv mcp --transport http`` (or ``sse``, with ``args``) in a subprocess; ``url`` once it
    accepts connections (for SSE, whose ``url`` is an endless event stream, its messages path)."""

    def __init__(
        self,
        index: BuiltIndex,
        token: str | None,
        root: Path | None = None,
        transport: str = "http",
        *args: str,
        **extra_env: str,
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}{MCP_PATH}"
        self.log = index.root.parent / f"mcp-{self.port}.log"
        cmd = [str(BIN / "openxiv"), "mcp", "--index", str(root or index.root), "--transport", transport]
        cmd += ["--port", str(self.port), *args] + (["--token", token] if token else [])
        probe = self.url if transport == "http" else f"http://127.0.0.1:{self.port}/messages/"
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENXIV_")} | _env(index, **extra_env)
        self._fh = self.log.open("w")
        self.proc = subprocess.Popen(cmd, env=env, stdout=self._fh, stderr=subprocess.STDOUT)
        deadline = time.monotonic() + 180
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"openxiv mcp exited with {self.proc.returncode}:\n{self.log.read_text()}")
            try:
                httpx.get(probe, timeout=2)
                return
            except httpx.HTTPError:
                time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"openxiv mcp not up after 180 s:\n{self.log.read_text()}")

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._fh.close()


@pytest.fixture(scope="module")
def mcp_http(test_index: BuiltIndex) -> Iterator[McpHttpServer]:
    server = McpHttpServer(test_index, TOKEN)
    try:
        yield server
    finally:
        server.stop()


def _http_transport(url: str, token: str | None) -> Transport:
    headers = {"Authorization": f"Bearer {token}"} if token else {}
    return streamable_http_client(url, http_client=httpx2.AsyncClient(headers=headers))


def test_http_tools_answer_like_the_http_api(mcp_http: McpHttpServer, client: httpx.Client) -> None:
    async def session(mcp: Client) -> None:
        await check_tools(mcp, client)
        await check_errors(mcp)

    run_client(_http_transport(mcp_http.url, TOKEN), session)


def test_http_needs_the_token_like_the_http_api(mcp_http: McpHttpServer) -> None:
    init = {"jsonrpc": "2.0", "id": 1, "method": "tools/list", "params": {}}
    for headers in ({}, {"Authorization": "Bearer wrong"}):
        r = httpx.post(mcp_http.url, json=init, headers={**headers, "Accept": "application/json"})
        assert r.status_code == 401
        assert "needs a token" in r.json()["detail"]
        assert r.headers["www-authenticate"] == "Bearer"

    with pytest.raises(ExceptionGroup) as refused:
        run_client(_http_transport(mcp_http.url, None), _lists_tools)
    assert refused.group_contains(MCPError, depth=None)
    run_client(_http_transport(f"{mcp_http.url}?token={TOKEN}", None), _lists_tools)


async def _lists_tools(mcp: Client) -> None:
    assert {t.name for t in (await mcp.list_tools()).tools} == set(TOOLS)


def test_mcp_without_an_index_says_how_to_build_one(tmp_path: Path) -> None:
    out = subprocess.run(
        [str(BIN / "openxiv"), "mcp", "--index", str(tmp_path / "missing")],
        capture_output=True,
        text=True,
        timeout=120,
        stdin=subprocess.DEVNULL,
    )
    assert out.returncode == 1
    assert "no index at" in out.stderr and "openxiv index build" in out.stderr
    assert out.stdout == ""


# ------------------------------------------------------------------------------ reload
async def _wait_for(mcp: Client, arxiv_id: str, present: bool, timeout: float = 60) -> None:
    """Until ``get_paper_brief(arxiv_id)`` succeeds (``present``) or fails as unknown (not ``present``)."""
    deadline = time.monotonic() + timeout
    while True:
        result = await mcp.call_tool("get_paper_brief", {"arxiv_id": arxiv_id})
        if result.is_error != present:
            assert present or "not in this corpus" in _text(result)
            return
        assert time.monotonic() < deadline, f"{arxiv_id} still {'missing' if present else 'served'}"
        await anyio.sleep(0.3)


def test_reloads_on_sighup_and_by_watching_current(
    test_index: BuiltIndex, bm25_snapshot: Path, tmp_path: Path
) -> None:
    """The service's reload rules: SIGHUP (HTTP transport) and OPENXIV_WATCH_INTERVAL (stdio), on a
    private copy of the small BM25-only snapshot (tests/service/conftest.py): a reload is the same
    whatever the snapshots hold, and its rebuild takes seconds where the test corpus's takes long."""
    from openxiv.corpus.settings.model import Settings
    from openxiv.indexer.snapshot import current_snapshot, switch_current

    settings = Settings(data_dir=tmp_path, embed="none")
    small = BuiltIndex(
        bm25_snapshot, bm25_snapshot.parent / "corpus.sqlite", settings, tmp_path / "cache", {}
    )
    private = copy_index(small, tmp_path / "copy")
    first = current_snapshot(private.root)
    assert first is not None
    added = ingest_more(private.db, private.settings, N_CS, 5)[0]
    second = build(private.db, private.root, private.settings, private.cache)
    switch_current(private.root, first.name)

    server = McpHttpServer(test_index, TOKEN, root=private.root)
    try:

        async def on_sighup(mcp: Client) -> None:
            await _wait_for(mcp, added, present=False, timeout=0)
            switch_current(private.root, second.name)
            await _wait_for(mcp, added, present=False, timeout=0)  # nothing changes until asked
            os.kill(server.proc.pid, signal.SIGHUP)
            await _wait_for(mcp, added, present=True)

        run_client(_http_transport(server.url, TOKEN), on_sighup)
    finally:
        server.stop()

    watching = StdioServerParameters(
        command=str(BIN / "openxiv"),
        args=["mcp", "--index", str(private.root)],
        env=_env(test_index, OPENXIV_WATCH_INTERVAL="0.5"),
    )

    async def by_watching(mcp: Client) -> None:
        await _wait_for(mcp, added, present=True, timeout=0)
        switch_current(private.root, first.name)
        await _wait_for(mcp, added, present=False)

    run_client(watching, by_watching)
