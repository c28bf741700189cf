"""A real index of real shared data, served by a live ``openxiv serve`` process.

The session builds one small corpus from ``../shared`` with the corpus readers (the first 2,000
papers of the cs listing, 400 of the astro listing, 160 plain-text full texts, the unarXive sample and
four real PDFs, among them 1706.03762 read from its v7), indexes it with the real embedding model (papers embedded, 64 tokens, to keep the
suite fast) and starts ``openxiv serve`` on a free loopback port. Nothing is mocked.

``OPENXIV_TEST_EMBCACHE=/some/file.sqlite`` keeps the embedding cache between runs (vectors are
still the model's, computed once); by default it lives in the session's temporary directory.
"""

from __future__ import annotations

import gzip
import itertools
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from openxiv.corpus.settings.model import Settings
from openxiv.corpus.shared import SharedData

SHARED = SharedData.default()
BIN = Path(sys.executable).parent
LISTING_CS = SHARED.listing("cs")
LISTING_ASTRO = SHARED.listing("astro")
PLAINTEXT = SHARED.plaintext
UNARXIVE = SHARED.unarxive
PDFS = [
    SHARED.pdfs / "valid" / n
    for n in ("1502.03167.pdf", "1201.3077v1.pdf", "2007.01282.pdf", "1706.03762.pdf")
]
KNOWN_ITEM = SHARED.gold(SharedData.KNOWN_ITEM)
N_CS, N_ASTRO, N_PLAIN = 2000, 400, 160


def require_shared() -> None:
    missing = [
        p for p in (LISTING_CS, LISTING_ASTRO, PLAINTEXT, UNARXIVE, KNOWN_ITEM, *PDFS) if not p.exists()
    ]
    if missing:
        pytest.skip(f"shared data not found ({missing[0]}); set OPENXIV_SHARED to the shared folder")


def listing_texts(n: int) -> list[str]:
    """Title + newline + abstract (what BM25 indexes per paper) of the first ``n`` papers of the first
    shared listing file; skips the test when there is none."""
    data = SharedData.default()
    listings = data.listings if data.available else []
    if not listings:
        pytest.skip(f"no listing files under {data.root}")
    texts: list[str] = []
    with gzip.open(listings[0], "rt", encoding="utf-8") as fh:
        for line in fh:
            obj = json.loads(line)
            texts.append(f"{obj.get('title') or ''}\n{obj.get('abstract') or ''}")
            if len(texts) >= n:
                break
    return texts


def service_settings(tmp: Path) -> Settings:
    return Settings.from_env().replace(
        data_dir=tmp, embed="papers", embed_max_tokens=64, api_token=None, index_dir=tmp / "index"
    )


def ingest_subset(db: Path, settings: Settings, extra_cs: int = 0) -> dict[str, Any]:
    """Ingest the test corpus (and, with ``extra_cs``, that many more cs listing papers)."""
    from openxiv.corpus.readers import read_path
    from openxiv.corpus.store import Store

    items: Any = itertools.chain(
        itertools.islice(read_path(LISTING_CS), N_CS + extra_cs),
        itertools.islice(read_path(LISTING_ASTRO), N_ASTRO),
        itertools.islice(read_path(PLAINTEXT), N_PLAIN),
        read_path(UNARXIVE),
        *(read_path(p) for p in PDFS),
    )
    with Store(db) as store:
        summary = store.ingest(items, settings=settings)
        stats: dict[str, Any] = store.stats()
    stats["skipped_now"] = summary.skipped
    return stats


def seed_models(models: Path, data_dir: Path) -> None:
    """Copy ``models`` (a data dir's ``models/``: the encoder the session exported once, conftest's
    ``onnx_models``) into ``data_dir``, so a build there loads it instead of exporting it again."""
    if models.is_dir():
        shutil.copytree(models, data_dir / "models", dirs_exist_ok=True)


def build(db: Path, root: Path, settings: Settings, cache: Path) -> Path:
    from openxiv.indexer.building.job import build_index

    return build_index(db, root, settings, progress=False, cache_path=cache)


@dataclass
class BuiltIndex:
    root: Path
    db: Path
    settings: Settings
    cache: Path
    stats: dict[str, Any]


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LiveServer:
    """``openxiv serve`` in a subprocess; ``url`` once ``/readyz`` answers."""

    def __init__(
        self,
        index_root: Path,
        token: str | None = None,
        log: Path | None = None,
        *,
        admin_token: str | None = None,
        access_log: bool = False,
        extra_env: dict[str, str] | None = None,
    ) -> None:
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        self.token = token
        self.log = log or index_root.parent / f"serve-{self.port}.log"
        env = {k: v for k, v in os.environ.items() if not k.startswith("OPENXIV_")}
        env.update(
            {
                "HF_HUB_OFFLINE": "1",
                "OPENXIV_SHARED": str(SHARED.root),
                "OPENXIV_DATA_DIR": str(index_root.parent),
            }
        )
        env.update(extra_env or {})
        cmd = [
            str(BIN / "openxiv"),
            "serve",
            "--index",
            str(index_root),
            "--port",
            str(self.port),
            "--access-log" if access_log else "--no-access-log",
        ]
        if token:
            cmd += ["--token", token]
        if admin_token:
            cmd += ["--admin-token", admin_token]
        self._fh = self.log.open("w")
        self.proc = subprocess.Popen(cmd, env=env, stdout=self._fh, stderr=subprocess.STDOUT)
        self._wait_ready()

    def _wait_ready(self, timeout: float = 180.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(
                    f"openxiv serve exited with {self.proc.returncode}:\n{self.log.read_text()}"
                )
            try:
                if httpx.get(self.url + "/readyz", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            time.sleep(0.3)
        self.stop()
        raise RuntimeError(f"openxiv serve not ready after {timeout}s:\n{self.log.read_text()}")

    def stop(self) -> int | None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._fh.close()
        return self.proc.returncode


@dataclass
class MilvusIndex:
    root: Path
    """Index root of the Milvus-backed snapshot (manifest, corpus copy, metadata, encoder)."""
    uri: str
    """The milvus-lite file the build wrote (opened by this test process)."""
    serve_uri: str
    """A copy of it for the server process (milvus-lite admits one process per file)."""
    build_s: float


def build_milvus(src: BuiltIndex, dest: Path) -> MilvusIndex:
    """``openxiv index build --backend milvus`` on the test corpus into a milvus-lite file, run as a
    subprocess (so its milvus-lite server is gone when it returns), then a copy for the server."""
    dest.mkdir(parents=True, exist_ok=True)
    seed_models(src.root.parent / "models", dest)  # the encoder the test index was built with
    uri = dest / "milvus.db"
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENXIV_")}
    env.update({"HF_HUB_OFFLINE": "1", "OPENXIV_SHARED": str(SHARED), "OPENXIV_DATA_DIR": str(dest)})
    cmd = [
        str(BIN / "openxiv"),
        "index",
        "build",
        "--db",
        str(src.db),
        "--index",
        str(dest / "index"),
        "--backend",
        "milvus",
        "--milvus-uri",
        str(uri),
        "--embed",
        src.settings.embed,
        "--max-tokens",
        str(src.settings.embed_max_tokens),
        "--cache",
        str(src.cache),
        "--no-progress",
    ]
    t = time.perf_counter()
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=900)
    if done.returncode != 0:
        raise RuntimeError(f"openxiv index build --backend milvus failed:\n{done.stdout}\n{done.stderr}")
    took = time.perf_counter() - t
    serve = dest / "milvus-serve.db"
    shutil.copytree(uri, serve)
    return MilvusIndex(dest / "index", str(uri), str(serve), took)


def copy_index(src: BuiltIndex, dest: Path) -> BuiltIndex:
    """A private copy (database + index root) for tests that rebuild or reload."""
    dest.mkdir(parents=True)
    from openxiv.corpus.store import Store

    with Store.open_readonly(src.db) as store:
        store.copy_to(dest / "corpus.sqlite")
    shutil.copytree(src.root, dest / "index")
    return BuiltIndex(
        root=dest / "index", db=dest / "corpus.sqlite", settings=src.settings, cache=src.cache, stats={}
    )


def ingest_more(db: Path, settings: Settings, start: int, count: int) -> list[str]:
    """Ingest cs listing papers ``start .. start+count`` (beyond the test corpus); their ids."""
    from openxiv.corpus.readers import read_path
    from openxiv.corpus.records import PaperRecord
    from openxiv.corpus.store import Store

    records = [
        r for r in itertools.islice(read_path(LISTING_CS), start, start + count) if isinstance(r, PaperRecord)
    ]
    with Store(db) as store:
        store.ingest(records, settings=settings)
    return [r.arxiv_id for r in records]
