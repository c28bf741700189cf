"""Run every example of docs/SKILL.md against a live openxiv: the guide an agent is given must work.

An example is a fenced block: ```` ```http ```` holds ``METHOD PATH`` and, for a POST, the JSON body
on the next lines (a ``# expect NNN`` line sets the status it must answer; 200 otherwise);
```` ```mcp ```` holds ``tool {json arguments}`` for ``openxiv mcp``'s DeepXiv tools. HTTP examples go
to ``--url``; MCP examples to ``openxiv mcp`` on stdio over ``--index`` (skipped without it). A 200
must be a JSON body without ``"status": "error"`` and, for a search, with at least one hit; an MCP
call must not be a tool error. Prints one line per example and exits 1 when any failed.

    .venv/bin/python scripts/check_skill.py --url http://127.0.0.1:8000 --index data/index
"""

from __future__ import annotations

import argparse
import json
import re
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parents[1]
SKILL = ROOT / "docs" / "SKILL.md"
_BLOCK = re.compile(r"^```(http|mcp)\n(.*?)^```", re.S | re.M)
_EXPECT = re.compile(r"^#\s*expect\s+(\d{3})\s*$", re.M)


@dataclass(frozen=True)
class Example:
    kind: str  # "http" or "mcp"
    target: str  # "POST /search" or a tool name
    body: Any
    status: int

    def __str__(self) -> str:
        return f"{self.target} {json.dumps(self.body) if self.body is not None else ''}".strip()


def examples(text: str) -> list[Example]:
    """The examples of a SKILL.md text, in order."""
    out = []
    for kind, block in _BLOCK.findall(text):
        expect = _EXPECT.search(block)
        lines = [ln for ln in block.splitlines() if ln.strip() and not ln.lstrip().startswith("#")]
        if kind == "http":
            body = json.loads("\n".join(lines[1:])) if len(lines) > 1 else None
            out.append(Example("http", lines[0].strip(), body, int(expect.group(1)) if expect else 200))
        else:
            tool, _, args = lines[0].strip().partition(" ")
            out.append(Example("mcp", tool, json.loads(args or "{}"), 200))
    return out


def check_http(client: httpx.Client, ex: Example) -> str | None:
    """``None`` when the example answers as the guide says, else what went wrong."""
    method, path = ex.target.split(" ", 1)
    resp = client.request(method, path, json=ex.body)
    if resp.status_code != ex.status:
        return f"status {resp.status_code}, expected {ex.status}: {resp.text[:300]}"
    body = resp.json()
    if ex.status != 200:
        return None if body.get("detail") else "an error without a detail"
    if body.get("status") == "error":
        return f"error body: {body}"
    if "result" in body and not body["result"]:
        return "no hits"
    if "sources" in body and not body["sources"]:
        return "no sources"
    return None


async def check_mcp(index: Path, todo: list[Example]) -> list[str | None]:
    from mcp import Client
    from mcp.client.stdio import StdioServerParameters

    binary = Path(sys.executable).parent / "openxiv"
    params = StdioServerParameters(command=str(binary), args=["mcp", "--index", str(index)])
    out: list[str | None] = []
    async with Client(params) as client:
        for ex in todo:
            result = await client.call_tool(ex.target, ex.body)
            text = " ".join(getattr(c, "text", "") for c in result.content)
            out.append(f"tool error: {text[:300]}" if result.is_error else (None if text else "empty result"))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--url", required=True, help="base URL of a running openxiv serve")
    ap.add_argument("--index", type=Path, help="index root for the MCP examples (openxiv mcp on stdio)")
    ap.add_argument("--skill", type=Path, default=SKILL)
    ap.add_argument("--token", help="bearer token of the server, if it has one")
    args = ap.parse_args(argv)
    todo = examples(args.skill.read_text(encoding="utf-8"))
    headers = {"Authorization": f"Bearer {args.token}"} if args.token else {}
    results: list[tuple[Example, str | None]] = []
    with httpx.Client(base_url=args.url, headers=headers, timeout=120) as client:
        results += [(ex, check_http(client, ex)) for ex in todo if ex.kind == "http"]
    mcp = [ex for ex in todo if ex.kind == "mcp"]
    if mcp and args.index is not None:
        import anyio

        problems = anyio.run(check_mcp, args.index, mcp)
        results += list(zip(mcp, problems, strict=True))
    failed = 0
    for ex, problem in results:
        failed += problem is not None
        print(f"{'FAIL' if problem else 'ok  '} {ex.kind} {ex}" + (f"\n     {problem}" if problem else ""))
    skipped = len(mcp) if args.index is None else 0
    print(f"{len(results) - failed} passed, {failed} failed" + (f", {skipped} skipped" if skipped else ""))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
