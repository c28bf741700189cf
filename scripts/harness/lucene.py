"""Lucene beside openxiv (issue 42): the corpus exported as a Pyserini JsonCollection, and a client
of `harness.lucene_worker`, Lucene BM25 running in Pyserini's own venv.

Pyserini is never a dependency of openxiv: it lives in its own venv (``make pyserini-venv``;
``OPENXIV_PYSERINI_VENV`` or ``.venv-pyserini`` in the checkout) with the JDK Debian ships
(Pyserini 0.22.1, whose Anserini fatjar runs on Java 11 and 17; later releases need Java 21).
"""

from __future__ import annotations

import json
import os
import shutil
import sqlite3
import subprocess
from pathlib import Path
from typing import Any

from openxiv.indexer.encoders.embed import paper_text

ROOT = Path(__file__).resolve().parents[2]
WORKER = Path(__file__).resolve().parent / "lucene_worker.py"
LUCENE_DEFAULT = (0.9, 0.4)
"""Anserini's BM25 defaults (k1, b)."""
DOCS_PER_FILE = 25_000
"""Papers per JSON-lines file of the export: several files let Anserini index with several threads."""


def pyserini_venv() -> Path:
    return Path(os.environ.get("OPENXIV_PYSERINI_VENV") or ROOT / ".venv-pyserini")


def missing() -> str | None:
    """Why Lucene cannot run here (no venv, no Java), or None."""
    python = pyserini_venv() / "bin" / "python"
    if not python.exists():
        return f"Pyserini is not installed at {python.parent.parent}: run `make pyserini-venv` (or set OPENXIV_PYSERINI_VENV)"
    if java_home() is None:
        return "no `java` on PATH (Debian: apt-get install openjdk-17-jre-headless)"
    return None


def java_home() -> str | None:
    """``JAVA_HOME``, or the JDK of the ``java`` on PATH (pyjnius needs it to find libjvm)."""
    if os.environ.get("JAVA_HOME"):
        return os.environ["JAVA_HOME"]
    java = shutil.which("java")
    return str(Path(java).resolve().parent.parent) if java else None


def export_collection(db: Path, out: Path, per_file: int = DOCS_PER_FILE) -> int:
    """Write every paper of the corpus SQLite ``db`` (opened read-only) as Pyserini JsonCollection
    lines ``{"id": arXiv id, "contents": title + abstract}`` into ``out`` (replaced), in the text
    openxiv's ``bm25_papers`` indexes (`paper_text`). Papers with neither are left out. Returns
    the number of papers written."""
    if out.exists():
        shutil.rmtree(out)
    out.mkdir(parents=True)
    conn = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    written = 0
    fh = None
    try:
        rows = conn.execute("SELECT arxiv_id, title, abstract FROM papers ORDER BY id")
        for arxiv_id, title, abstract in rows:
            text = paper_text(title, abstract)
            if not text:
                continue
            if written % per_file == 0:
                if fh is not None:
                    fh.close()
                fh = (out / f"docs{written // per_file:03d}.jsonl").open("w", encoding="utf-8")
            assert fh is not None
            fh.write(json.dumps({"id": arxiv_id, "contents": text}, ensure_ascii=False) + "\n")
            written += 1
    finally:
        if fh is not None:
            fh.close()
        conn.close()
    return written


class Lucene:
    """One `lucene_worker` process (one JVM) in Pyserini's venv; each method is one request."""

    def __init__(self, heap: str = "2g") -> None:
        reason = missing()
        if reason:
            raise RuntimeError(reason)
        env = {**os.environ, "JAVA_HOME": java_home() or "", "JAVA_TOOL_OPTIONS": f"-Xmx{heap}"}
        env.pop("PYTHONPATH", None)  # the worker sees Pyserini's venv only, never openxiv
        self.proc = subprocess.Popen(
            [str(pyserini_venv() / "bin" / "python"), str(WORKER)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL if not os.environ.get("OPENXIV_LUCENE_LOG") else None,
            env=env,
            text=True,
        )

    def call(self, op: str, **req: Any) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        self.proc.stdin.write(json.dumps({"op": op, **req}) + "\n")
        self.proc.stdin.flush()
        line = self.proc.stdout.readline()
        if not line:
            raise RuntimeError(f"lucene worker exited ({self.proc.wait()}) during {op}")
        answer: dict[str, Any] = json.loads(line)
        if "error" in answer:
            raise RuntimeError(f"lucene worker, {op}: {answer['error']}")
        return answer

    def index(self, collection: Path, index: Path, threads: int = 2) -> dict[str, Any]:
        if index.exists():
            shutil.rmtree(index)
        return self.call("index", input=str(collection), index=str(index), threads=threads)

    def open(self, index: Path) -> int:
        return int(self.call("open", index=str(index))["docs"])

    def bm25(self, k1: float, b: float) -> None:
        self.call("bm25", k1=k1, b=b)

    def search(self, query: str, k: int) -> tuple[list[tuple[str, float]], float]:
        """The top ``k`` (arXiv id, score) pairs and the milliseconds Lucene took (pipe excluded)."""
        got = self.call("search", query=query, k=k)
        return [(d, float(s)) for d, s in got["hits"]], float(got["ms"])

    def batch(self, queries: list[str], k: int, threads: int) -> tuple[list[list[tuple[str, float]]], float]:
        """Every query's top ``k`` searched by ``threads`` Java threads at once, and the wall ms."""
        got = self.call("batch", queries=queries, k=k, threads=threads)
        return [[(d, float(s)) for d, s in hits] for hits in got["hits"]], float(got["ms"])

    def close(self) -> None:
        if self.proc.stdin is not None:
            self.proc.stdin.close()
        try:
            self.proc.wait(timeout=30)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def __enter__(self) -> Lucene:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
