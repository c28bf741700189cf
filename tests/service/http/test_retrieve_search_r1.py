"""Search-R1's own retrieval client, unmodified, against ``POST /retrieve`` (issue #36, item 2).

The client is ``LLMGenerationManager.batch_search`` / ``_batch_search`` / ``_passages2string`` of
Search-R1's ``search_r1/llm_agent/generation.py``: it posts every active rollout's query in one
request and reads ``["result"]`` without looking at the status. Its module imports torch and verl,
so the test compiles those three methods from the file's own source text (nothing copied into this
repository, nothing changed) and calls them on an object with the ``config`` they read.

The source is read from a checkout or a git mirror of https://github.com/PeterGriffinJin/Search-R1
named by ``OPENXIV_SEARCH_R1``, else from ``.mirror/PeterGriffinJin+Search-R1/repo`` in a folder
above this repository; without either the test is skipped, saying so.
"""

from __future__ import annotations

import ast
import os
import subprocess
import textwrap
import types
from pathlib import Path
from typing import Any

import pytest
from live_index import LiveServer

CLIENT = "search_r1/llm_agent/generation.py"
METHODS = ("batch_search", "_batch_search", "_passages2string")
MIRROR = Path(".mirror/PeterGriffinJin+Search-R1/repo")


def _source() -> str:
    given = os.environ.get("OPENXIV_SEARCH_R1")
    here = Path(__file__).resolve()
    candidates = [Path(given)] if given else [p / MIRROR for p in here.parents]
    for root in candidates:
        if (root / CLIENT).is_file():
            return (root / CLIENT).read_text()
        if (root / "HEAD").is_file():  # a bare mirror
            out = subprocess.run(
                ["git", "--git-dir", str(root), "show", f"HEAD:{CLIENT}"], capture_output=True, text=True
            )
            if out.returncode == 0:
                return out.stdout
    pytest.skip(
        "Search-R1's source not found: set OPENXIV_SEARCH_R1 to a checkout (or git mirror) of "
        "github.com/PeterGriffinJin/Search-R1"
    )


def _search_r1_client(search_url: str, topk: int) -> Any:
    """An object with Search-R1's own retrieval methods, compiled from its source unmodified."""
    pytest.importorskip("requests")
    source = _source()
    tree = ast.parse(source)
    [manager] = [n for n in tree.body if isinstance(n, ast.ClassDef) and n.name == "LLMGenerationManager"]
    namespace: dict[str, Any] = {}
    for node in manager.body:
        if isinstance(node, ast.FunctionDef) and node.name in METHODS:
            code = textwrap.dedent(ast.get_source_segment(source, node) or "")
            exec(compile(code, CLIENT, "exec"), {"requests": __import__("requests"), "List": list}, namespace)
    assert set(namespace) == set(METHODS), f"Search-R1's client changed: {sorted(namespace)}"
    client = types.SimpleNamespace(config=types.SimpleNamespace(search_url=search_url, topk=topk))
    for name in METHODS:
        setattr(client, name, types.MethodType(namespace[name], client))
    return client


def test_a_512_query_batch_with_empty_queries(server: LiveServer) -> None:
    words = [
        "attention",
        "galaxy",
        "normalization",
        "graph",
        "reinforcement",
        "quantum",
        "decoding",
        "spectra",
    ]
    asked = [f"{a} {b} {i}" for i in range(9) for a in words for b in words if a != b][:500]
    batch = asked[:100] + [""] * 6 + asked[100:300] + ["  "] * 6 + asked[300:]
    assert len(batch) == 512
    search_r1 = _search_r1_client(server.url + "/retrieve", topk=3)
    observations = search_r1.batch_search(batch)  # raises KeyError: 'result' on a 400
    assert len(observations) == 512
    blank = [i for i, q in enumerate(batch) if not q.strip()]
    assert [observations[i] for i in blank] == [""] * 12
    assert all(o.count("Doc ") == 3 for i, o in enumerate(observations) if i not in blank)
    # The slots stay in order: a query answers as it does alone.
    for i in (0, 150, 511):
        [alone] = search_r1.batch_search([batch[i]])
        assert observations[i] == alone
    [bn] = search_r1.batch_search(["batch normalization internal covariate shift"])
    assert bn.startswith('Doc 1(Title: "Batch Normalization')
