"""Lucene BM25 (Anserini through Pyserini) behind a JSON-lines protocol on stdin/stdout.

Runs in Pyserini's own venv (``make pyserini-venv``), never in openxiv's: `harness.lucene` starts it
as a subprocess, so neither the product nor the benchmark imports pyserini or Java. It imports only
this file's standard library and Pyserini's JVM bridge (`pyserini.pyclass`: pyjnius with the
Anserini fatjar the wheel ships on the classpath). Pyserini's Python wrappers (``LuceneSearcher``,
``pyserini.index.lucene``) would pull faiss, torch, pandas and tqdm through their package imports;
they are thin wrappers over the same Java classes used here (``io.anserini.index.IndexCollection``,
``io.anserini.search.SimpleSearcher``), so the calls and the ranking are theirs.

One request per line, one answer per line (``{"error": ...}`` when a request fails):

- ``{"op": "index", "input": DIR, "index": DIR, "threads": N}`` -> ``{"seconds": s, "docs": n}``
- ``{"op": "open", "index": DIR}`` -> ``{"docs": n}``
- ``{"op": "bm25", "k1": x, "b": y}`` -> ``{"k1": x, "b": y}``
- ``{"op": "search", "query": Q, "k": K}`` -> ``{"hits": [[docid, score], ...], "ms": t}``
- ``{"op": "batch", "queries": [Q, ...], "k": K, "threads": N}`` -> ``{"hits": [[[docid, score], ...], ...], "ms": wall}``

``ms`` is measured inside this process around the Java call, so the pipe is not part of it.
"""

from __future__ import annotations

import json
import os
import sys
import time
from typing import Any

from pyserini.pyclass import autoclass


class Worker:
    def __init__(self) -> None:
        self.searcher: Any = None

    def index(self, req: dict[str, Any]) -> dict[str, Any]:
        args = [
            "-collection", "JsonCollection",
            "-generator", "DefaultLuceneDocumentGenerator",
            "-input", req["input"],
            "-index", req["index"],
            "-threads", str(req.get("threads", 1)),
        ]  # fmt: skip
        t = time.perf_counter()
        autoclass("io.anserini.index.IndexCollection").main(args)
        seconds = time.perf_counter() - t
        return {"seconds": seconds, **self.open({"index": req["index"]})}

    def open(self, req: dict[str, Any]) -> dict[str, Any]:
        if self.searcher is not None:
            self.searcher.close()
        self.searcher = autoclass("io.anserini.search.SimpleSearcher")(req["index"])
        return {"docs": int(self.searcher.get_total_num_docs())}

    def bm25(self, req: dict[str, Any]) -> dict[str, Any]:
        self.searcher.set_bm25(float(req["k1"]), float(req["b"]))
        return {"k1": req["k1"], "b": req["b"]}

    def search(self, req: dict[str, Any]) -> dict[str, Any]:
        t = time.perf_counter()
        hits = self.searcher.search(req["query"], int(req["k"]))
        ms = (time.perf_counter() - t) * 1000
        return {"hits": [[h.docid, h.score] for h in hits], "ms": ms}

    def batch(self, req: dict[str, Any]) -> dict[str, Any]:
        array = autoclass("java.util.ArrayList")
        queries, qids = array(), array()
        for i, q in enumerate(req["queries"]):
            queries.add(q)
            qids.add(str(i))
        t = time.perf_counter()
        found = self.searcher.batch_search(queries, qids, int(req["k"]), int(req["threads"]))
        ms = (time.perf_counter() - t) * 1000
        hits = [[[h.docid, h.score] for h in found.get(str(i))] for i in range(len(req["queries"]))]
        return {"hits": hits, "ms": ms}


def main() -> None:
    # the protocol keeps fd 1 to itself: what Java or Anserini's log4j print goes to stderr
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    worker = Worker()
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            req = json.loads(line)
            answer = getattr(worker, req["op"])(req)
        except Exception as exc:  # every failure goes back to the caller, which raises it
            answer = {"error": f"{type(exc).__name__}: {exc}"}
        out.write(json.dumps(answer) + "\n")
        out.flush()


if __name__ == "__main__":
    main()
