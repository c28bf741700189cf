"""Reliability probes of issue 21 for `scripts/bench_reliability.py`: the MCP server's streamable HTTP
transport (slow clients, a session flood) and ingest input that used to be lost or to grow memory
(a folder with unreadable parts, a flood of bad lines)."""

from __future__ import annotations

import ctypes
import gzip
import json
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from typing import Any

import httpx

from harness.ingest_inputs import make_bad_lines, run_ingest
from harness.reliability_probes import probe_slow
from harness.server import LoopbackProcess

LEGACY = "2025-06-18"  # a handshake-era protocol version: the one that opens sessions
ACCEPT = {"Accept": "application/json, text/event-stream"}
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": LEGACY,
        "capabilities": {},
        "clientInfo": {"name": "probe", "version": "0"},
    },
}


class McpServer(LoopbackProcess):
    """``openxiv mcp --transport http`` on a free loopback port; ``url`` (``/mcp``) once it answers."""

    what = "openxiv mcp"

    def __init__(self, root: Path, log: Path, timeout: float = 300) -> None:
        super().__init__(["mcp", "--index", str(root), "--transport", "http"], log, timeout)

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def ready(self) -> bool:
        httpx.get(self.url, timeout=2)  # any answer: the transport is up
        return True

    def rss_mb(self) -> float:
        for line in Path(f"/proc/{self.proc.pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return round(int(line.split()[1]) / 1024, 1)
        return 0.0


def _initialize(client: httpx.Client, url: str) -> tuple[str, str | None]:
    """(status or exception name, session id) of one ``initialize``."""
    try:
        r = client.post(url, json=INIT, headers=ACCEPT, timeout=60)
    except httpx.HTTPError as exc:
        return type(exc).__name__, None
    return str(r.status_code), r.headers.get("mcp-session-id")


def _agent_works(url: str) -> bool:
    """A new agent: initialize, then ``tools/list`` in its session."""
    with httpx.Client() as c:
        status, session = _initialize(c, url)
        if status != "200" or session is None:
            return False
        headers = ACCEPT | {"mcp-session-id": session, "mcp-protocol-version": LEGACY}
        c.post(url, json={"jsonrpc": "2.0", "method": "notifications/initialized"}, headers=headers)
        r = c.post(url, json={"jsonrpc": "2.0", "id": 2, "method": "tools/list"}, headers=headers, timeout=60)
        return r.status_code == 200 and "search_papers" in r.text


def probe_mcp_flood(server: McpServer, n: int, clients: int = 8) -> dict[str, Any]:
    """``n`` ``initialize`` calls from ``clients`` threads, never closing a session; then a new agent."""
    statuses: Counter[str] = Counter()
    first: list[str] = []
    lock = threading.Lock()
    counter = iter(range(n))
    rss_before = server.rss_mb()
    t0 = time.monotonic()

    def flood() -> None:
        with httpx.Client() as c:
            while True:
                with lock:
                    if next(counter, None) is None:
                        return
                status, session = _initialize(c, server.url)
                with lock:
                    statuses[status] += 1
                    if session and len(first) < 1:
                        first.append(session)

    threads = [threading.Thread(target=flood) for _ in range(clients)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    seconds = time.monotonic() - t0
    oldest = None
    if first:
        headers = ACCEPT | {"mcp-session-id": first[0], "mcp-protocol-version": LEGACY}
        ping = {"jsonrpc": "2.0", "id": 3, "method": "ping"}
        oldest = httpx.post(server.url, json=ping, headers=headers, timeout=60).status_code
    new_agents = [_agent_works(server.url) for _ in range(5)]
    return {
        "requests": n,
        "seconds": round(seconds, 1),
        "statuses": dict(statuses),
        "5xx": sum(v for k, v in statuses.items() if k.startswith("5")),
        "resets": sum(v for k, v in statuses.items() if not k.isdigit()),
        "new_agents_ok": sum(new_agents),
        "new_agents": len(new_agents),
        "oldest_session_status": oldest,
        "rss_before_mb": rss_before,
        "rss_after_mb": server.rss_mb(),
    }


def probe_mcp_slow(server: McpServer, n: int, hold: float) -> dict[str, Any]:
    """`probe_slow` against ``POST /mcp``; the normal requests meanwhile are ``initialize`` calls."""
    return probe_slow(server.url.removesuffix("/mcp"), server.port, n, hold, path="/mcp", normal=_normal_mcp)


def _normal_mcp(base: str) -> int:
    return httpx.post(base + "/mcp", json=INIT, headers=ACCEPT, timeout=30).status_code


# ------------------------------------------------------------------------------ ingest input
def _without_dac_override() -> None:
    """Drop the capabilities that let root read any file, so ``chmod 000`` means what it says."""
    libc = ctypes.CDLL(None, use_errno=True)
    for cap in (1, 2):  # CAP_DAC_OVERRIDE, CAP_DAC_READ_SEARCH
        libc.prctl(24, cap, 0, 0, 0)  # PR_CAPBSET_DROP


def probe_unreadable_folder(listing: Path, work: Path) -> dict[str, Any]:
    """An input folder with a readable listing (100 papers), a mode-000 sub-folder (100 more), a
    broken link, a link to itself and a link to the folder above: what `openxiv ingest` reports."""
    root = work / "damaged" / "inputs"
    if root.exists():
        (root / "locked").chmod(0o755)
        subprocess.run(["rm", "-rf", str(root.parent)], check=True)
    with gzip.open(listing, "rt", encoding="utf-8") as fh:
        lines = [next(fh) for _ in range(200)]
    for name, part in (("a.jsonl.gz", lines[:100]), ("locked/b.jsonl.gz", lines[100:])):
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        with gzip.open(root / name, "wt", encoding="utf-8") as out:
            out.writelines(part)
    (root / "gone.jsonl.gz").symlink_to(root.parent / "nowhere.jsonl.gz")
    (root / "self.jsonl").symlink_to("self.jsonl")
    (root / "sub").mkdir()
    (root / "sub" / "up").symlink_to("..", target_is_directory=True)
    (root / "locked").chmod(0)
    report = root.parent / "report.jsonl"
    cmd = [
        sys.executable,
        "-m",
        "openxiv.service.cli",
        "ingest",
        str(root),
        "--db",
        str(root.parent / "c.sqlite"),
    ]
    run = subprocess.run(
        [*cmd, "--report", str(report), "--no-progress"],
        capture_output=True,
        text=True,
        timeout=600,
        preexec_fn=_without_dac_override,
    )
    (root / "locked").chmod(0o755)
    rows = [json.loads(line) for line in report.read_text().splitlines()] if report.exists() else [{}]
    reported = len(rows) - 1
    return {"exit": run.returncode, "unreadable": 4, "reported": reported, "lost": max(0, 4 - reported)}


def probe_bad_lines(work: Path, n: int) -> dict[str, Any]:
    """``n`` invalid JSON lines after 100 real ones: peak RSS, exit status, lines reported."""
    folder = work / "bad-lines"
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / f"bad-lines-{n}.jsonl.gz"
    if not path.exists():
        make_bad_lines(path, n)
    r = run_ingest(path, folder)
    return r | {"bad_lines": n, "lost": max(0, n - int(str(r["report_lines"])))}
