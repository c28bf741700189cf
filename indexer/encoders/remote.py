"""The ``http`` encoder: vectors from a model server's OpenAI-compatible ``POST /v1/embeddings``.

``OPENXIV_MODEL=http://127.0.0.1:8000/v1#Qwen/Qwen3-Embedding-0.6B`` (vLLM, text-embeddings-inference,
Infinity, Ollama, llama.cpp, LM Studio all answer it). The encoder satisfies `Encoder`, so builds and
serving use it like the in-process ones:

- **build** (`RemoteEncoder.encode`): batches of ``embed_batch_size`` texts, ``remote_concurrency`` in
  flight, each retried with backoff and ``Retry-After`` (`openxiv.indexer.encoders.remote_http`);
  `openxiv.indexer.building.embcache.encode_cached` stores every chunk, so a stopped build resumes.
- **identity**: the first call embeds a fixed probe text. The cache key (``fingerprint``) is
  ``http:<model>:d<dim>:<prefixes>~<n>``, ``n`` the class of answers to the probe the embedding
  cache has seen for that name (`EmbeddingCache.probe_class`, cosine ≥ `SAME_MODEL_COS`): two servers of
  the same model share vectors, another model served under the same name never does.
- **refusal**: an answer naming another model, or of another width than asked (or than the snapshot
  holds), is `RemoteRefused` with both named; at query time the probe is checked against the one the
  snapshot recorded.
- **query** (`encode_query`): one call within ``remote_query_timeout``, or the vector the HTTP front
  fetched for this text beforehand on the event loop (`prefetch`), so the wait holds no compute slot.
  A failure is `EncoderUnavailable`: the search answers with its lexical sides and a warning.
- **replay** (``OPENXIV_REMOTE_REPLAY``): query answers recorded and replayed bit for bit
  (`openxiv.indexer.encoders.replay`).

Prefixes (``embed_query_prefix``, ``embed_passage_prefix``) are put before the text here, and the
snapshot records them: serving uses the snapshot's, whatever the environment says now.
"""

from __future__ import annotations

import hashlib
import json
import threading
import time
from collections import OrderedDict
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import httpx
import numpy as np

from openxiv.corpus.settings.model import Settings
from openxiv.indexer.encoders.remote_http import (
    RemoteEndpoint,
    RemoteRefused,
    RemoteUnavailable,
    apost_json_once,
    parse_remote,
    post_json,
    post_json_once,
)
from openxiv.indexer.encoders.replay import ReplayCache, replay_cache
from openxiv.indexer.encoders.vectors import EncoderUnavailable, normalize_rows

__all__ = [
    "PROBE_TEXT",
    "SAME_MODEL_COS",
    "RemoteEncoder",
    "connect_remote_encoder",
    "load_remote_snapshot_encoder",
]

PROBE_TEXT = "openxiv probe: dense retrieval of arXiv papers by title and abstract."
SAME_MODEL_COS = 0.99
"""Two answers to the probe this close are one model (fp16 vs fp32 arithmetic agrees to ~0.9999)."""
DESCRIPTION = "encoder.json"
_MEMO = 4096
FAILURE_S = 30.0
"""Seconds a failure `prefetch` met answers for its text in `encode_query` (unless a new `prefetch`
asks again first); after them `encode_query` asks the server itself."""


def _prefix_tag(query_prefix: str, passage_prefix: str) -> str:
    if not query_prefix and not passage_prefix:
        return "noprefix"
    return "p" + hashlib.sha256(f"{query_prefix}\0{passage_prefix}".encode()).hexdigest()[:8]


class RemoteEncoder:
    """`Encoder` over ``/v1/embeddings`` (module docstring)."""

    max_tokens = 0
    """The server truncates with its own limit (its model's); 0 says so in the manifest."""

    def __init__(
        self,
        endpoint: RemoteEndpoint,
        settings: Settings,
        *,
        query_prefix: str = "",
        passage_prefix: str = "",
        dimensions: int | None = None,
        dim: int | None = None,
        probe: np.ndarray | None = None,
        fingerprint: str | None = None,
    ) -> None:
        self.endpoint = endpoint
        self.settings = settings
        self.query_prefix, self.passage_prefix = query_prefix, passage_prefix
        self.dimensions = dimensions
        self.name = f"http:{endpoint.model}"
        self.dim = int(dim or 0)
        self.probe = probe
        """The server's vector of `PROBE_TEXT` at build (recorded in the snapshot)."""
        self._verified = False
        self.fingerprint = fingerprint or ""
        self._client = httpx.Client(timeout=settings.remote_timeout)
        self._aclient: httpx.AsyncClient | None = None
        self._memo: OrderedDict[str, np.ndarray | tuple[str, float]] = OrderedDict()
        """Fetched query vectors, and failures with their time (`prefetch`, `encode_query`)."""
        self._lock = threading.Lock()
        self.replay: ReplayCache | None = replay_cache(settings)
        self.description: dict[str, Any] = {}

    # --- identity -------------------------------------------------------------------------------
    @property
    def family(self) -> str:
        """The cache key without the probe class: model, width and prefixes."""
        return f"http:{self.endpoint.model}:d{self.dim}:{_prefix_tag(self.query_prefix, self.passage_prefix)}"

    def _payload(self, texts: Sequence[str]) -> dict[str, Any]:
        payload: dict[str, Any] = {"model": self.endpoint.model, "input": list(texts)}
        if self.dimensions:
            payload["dimensions"] = int(self.dimensions)
        return payload

    def _vectors(self, answer: Any, n: int) -> np.ndarray:
        """The ``n`` unit-norm rows of an answer, checked: its model and width, one row per input."""
        where = self.endpoint.spec
        if not isinstance(answer, dict) or not isinstance(answer.get("data"), list):
            raise RemoteUnavailable(f"{where}: malformed answer (no 'data' list)")
        named = answer.get("model")
        if isinstance(named, str) and named and named != self.endpoint.model:
            raise RemoteRefused(
                f"{where}: the server answered with model {named!r}, not {self.endpoint.model!r}; "
                "name the model it serves after '#' (GET /v1/models lists them)"
            )
        try:
            rows = sorted(answer["data"], key=lambda d: int(d.get("index", 0)))
            vecs = np.asarray([r["embedding"] for r in rows], dtype=np.float32)
        except (TypeError, KeyError, ValueError) as exc:
            raise RemoteUnavailable(f"{where}: malformed embeddings ({exc})") from exc
        if vecs.ndim != 2 or vecs.shape[0] != n:
            raise RemoteUnavailable(f"{where}: {vecs.shape[0] if vecs.ndim else 0} vectors for {n} texts")
        want = self.dimensions or self.dim
        if want and vecs.shape[1] != want:
            asked = "asked" if self.dimensions else "recorded"
            raise RemoteRefused(
                f"{where}: the server answered {vecs.shape[1]}-d vectors, {asked} {want}-d; "
                "another model, or a server that ignores `dimensions` (OPENXIV_EMBED_DIMENSIONS)"
            )
        return normalize_rows(vecs)

    def connect(self) -> None:
        """Embed the probe (with retries): learn the width, record the probe, set the fingerprint."""
        answer = post_json(
            self._client,
            self.endpoint,
            "embeddings",
            self._payload([PROBE_TEXT]),
            timeout=self.settings.remote_timeout,
            retries=self.settings.remote_retries,
            backoff=self.settings.remote_backoff,
        )
        probe = self._vectors(answer, 1)[0]
        self.dim, self.probe, self._verified = int(probe.shape[0]), probe, True
        self.fingerprint = self.family + "~0"

    def bind_cache(self, cache: Any) -> None:
        """The fingerprint under which ``cache`` (an `EmbeddingCache`) keeps this server's vectors."""
        assert self.probe is not None, "connect() first"
        self.fingerprint = f"{self.family}~{cache.probe_class(self.family, self.probe, SAME_MODEL_COS)}"

    def adopt(self, fingerprint: str, probe: np.ndarray) -> None:
        """Take the key another process bound (`bind_cache`) for the same model, after checking this
        server's probe against that process's (a Ray actor of `openxiv index embed`): a server of
        another model under the same name is `RemoteRefused`, never written under that key."""
        if not self._verified:
            self.connect()
        family = fingerprint.rpartition("~")[0]
        if family != self.family:
            raise RemoteRefused(f"{self.endpoint.spec}: this server is {self.family}, the driver's {family}")
        own, self.probe = self.probe, np.asarray(probe, dtype=np.float32)
        assert own is not None
        self._check_probe(own)
        self.fingerprint = fingerprint

    def _check_probe(self, vec: np.ndarray) -> None:
        if self.probe is None:
            return
        cos = float(vec @ self.probe)
        if cos < SAME_MODEL_COS:
            raise RemoteRefused(
                f"{self.endpoint.spec}: the server's vector of the probe text differs from the one this "
                f"snapshot was built with (cosine {cos:.3f}): another model is served under this name"
            )

    # --- build ----------------------------------------------------------------------------------
    def _batch(self, texts: Sequence[str]) -> np.ndarray:
        answer = post_json(
            self._client,
            self.endpoint,
            "embeddings",
            self._payload([self.passage_prefix + t for t in texts]),
            timeout=self.settings.remote_timeout,
            retries=self.settings.remote_retries,
            backoff=self.settings.remote_backoff,
        )
        return self._vectors(answer, len(texts))

    def encode(
        self, texts: Sequence[str], batch_size: int | None = None, progress: bool = False
    ) -> np.ndarray:
        """Rows of ``texts`` (passage prefix added), ``remote_concurrency`` batches in flight."""
        if len(texts) == 0:
            return np.zeros((0, self.dim), dtype=np.float32)
        if not self._verified:
            self.connect()
        size = batch_size or self.settings.embed_batch_size
        batches = [texts[i : i + size] for i in range(0, len(texts), size)]
        with ThreadPoolExecutor(min(self.settings.remote_concurrency, len(batches))) as pool:
            return np.concatenate(list(pool.map(self._batch, batches)))

    # --- query ---------------------------------------------------------------------------------
    def _recorded(self, payload: dict[str, Any]) -> Any | None:
        return self.replay.get("embed", self.fingerprint, payload) if self.replay is not None else None

    def _record(self, payload: dict[str, Any], answer: Any) -> None:
        if self.replay is not None:
            self.replay.put("embed", self.fingerprint, self.endpoint.spec, payload, answer)

    def _one(self, texts: list[str]) -> tuple[dict[str, Any], Any | None]:
        """The request for ``texts`` and its recorded answer, if any."""
        payload = self._payload(texts)
        return payload, self._recorded(payload)

    def _steps(self, text: str) -> list[tuple[list[str], bool]]:
        """The calls a query vector takes: the probe once before the first (``True``: checked against
        the snapshot's, so another model under the same name is refused), then the query."""
        return ([([PROBE_TEXT], True)] if not self._verified else []) + [([self.query_prefix + text], False)]

    def _settle(self, payload: dict[str, Any], answer: Any, fresh: bool, probe: bool) -> np.ndarray:
        """The vector of one answer: a probe is checked (before a fresh answer is recorded, so a
        refused one never is), a fresh answer recorded."""
        vec = self._vectors(answer, 1)[0]
        if probe:
            self._check_probe(vec)
            self._verified = True
        if fresh:
            self._record(payload, answer)
        return vec

    def _query_vector(self, text: str) -> np.ndarray:
        """One call (or its recording) for ``text``, after the probe (`_steps`)."""
        for texts, probe in self._steps(text):
            payload, answer = self._one(texts)
            fresh = answer is None
            if fresh:
                answer = post_json_once(
                    self._client, self.endpoint, "embeddings", payload, self.settings.remote_query_timeout
                )
            vec = self._settle(payload, answer, fresh, probe)
        return vec

    async def _aquery_vector(self, text: str, limit: float) -> np.ndarray:
        """`_query_vector` on the event loop."""
        assert self._aclient is not None
        for texts, probe in self._steps(text):
            payload, answer = self._one(texts)
            fresh = answer is None
            if fresh:
                answer = await apost_json_once(self._aclient, self.endpoint, "embeddings", payload, limit)
            vec = self._settle(payload, answer, fresh, probe)
        return vec

    def _remember(self, text: str, value: np.ndarray | str) -> None:
        with self._lock:
            self._memo[text] = (value, time.monotonic()) if isinstance(value, str) else value
            self._memo.move_to_end(text)
            while len(self._memo) > _MEMO:
                self._memo.popitem(last=False)

    def encode_query(self, text: str) -> np.ndarray:
        """The query's vector: fetched beforehand (`prefetch`), replayed, or one call now. A fetched
        vector is kept (one search may rank its query more than once, e.g. a fine-rerank page below
        the reranked head); a fetched failure answers until the next `prefetch` of the text asks
        again, or for `FAILURE_S` seconds, so a search never waits for the server in its slot."""
        with self._lock:
            known = self._memo.get(text)
            if isinstance(known, tuple) and time.monotonic() - known[1] > FAILURE_S:
                del self._memo[text]
                known = None
        if isinstance(known, tuple):
            raise EncoderUnavailable(known[0])
        if known is not None:
            return known
        try:
            return self._query_vector(text)
        except (RemoteUnavailable, RemoteRefused) as exc:
            raise EncoderUnavailable(str(exc)) from exc

    async def prefetch(self, texts: Sequence[str], timeout: float | None = None) -> None:
        """Fetch the vectors of ``texts`` on the event loop for `encode_query` to find (a text whose
        vector is kept already is not asked again); a failure is remembered as its message, so the
        search does not call again."""
        if self._aclient is None:
            self._aclient = httpx.AsyncClient(timeout=self.settings.remote_query_timeout)
        limit = (
            min(self.settings.remote_query_timeout, timeout)
            if timeout
            else self.settings.remote_query_timeout
        )
        for text in dict.fromkeys(texts):
            with self._lock:
                if isinstance(self._memo.get(text), np.ndarray):
                    self._memo.move_to_end(text)
                    continue
            try:
                self._remember(text, await self._aquery_vector(text, limit))
            except (RemoteUnavailable, RemoteRefused) as exc:
                self._remember(text, str(exc))

    # --- snapshot -------------------------------------------------------------------------------
    def save(self, directory: Path) -> None:
        """The snapshot's ``encoder/encoder.json``: model, width, prefixes, probe, fingerprint."""
        if not self._verified:
            self.connect()
        assert self.probe is not None
        desc = {
            "backend": "http",
            "base_url": self.endpoint.base_url,
            "model": self.endpoint.model,
            "fingerprint": self.fingerprint,
            "dim": self.dim,
            "dimensions": self.dimensions,
            "max_tokens": 0,
            "query_prefix": self.query_prefix,
            "passage_prefix": self.passage_prefix,
            "probe_text": PROBE_TEXT,
            "probe": [float(x) for x in self.probe],
            "needs_torch": False,
            "files": [],
        }
        directory.mkdir(parents=True, exist_ok=True)
        (directory / DESCRIPTION).write_text(json.dumps(desc, indent=2) + "\n", encoding="utf-8")

    def close(self) -> None:
        self._client.close()


def connect_remote_encoder(settings: Settings) -> RemoteEncoder:
    """The build's encoder for ``OPENXIV_MODEL=http://...#model``: connected (probe embedded, with
    retries), so a server that is down or serves another model stops the build before any work."""
    enc = RemoteEncoder(
        parse_remote(settings.model, "OPENXIV_MODEL", settings.remote_api_key),
        settings,
        query_prefix=settings.embed_query_prefix,
        passage_prefix=settings.embed_passage_prefix,
        dimensions=settings.embed_dimensions,
    )
    t = time.perf_counter()
    enc.connect()
    enc.description = {"connect_ms": round((time.perf_counter() - t) * 1000, 1)}
    return enc


def load_remote_snapshot_encoder(directory: Path, settings: Settings) -> RemoteEncoder | None:
    """The query encoder of a snapshot built through a server (None for any other snapshot): the
    snapshot's model, width, prefixes and probe; the URL of ``OPENXIV_MODEL`` when it names a server
    (the host may differ from the build's), else the build's. Nothing is sent until the first query."""
    from openxiv.indexer.encoders.remote_http import is_remote

    try:
        desc = json.loads((Path(directory) / DESCRIPTION).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(desc, dict) or desc.get("backend") != "http":
        return None
    url = settings.model.partition("#")[0] if is_remote(settings.model) else desc["base_url"]
    endpoint = parse_remote(f"{url}#{desc['model']}", "OPENXIV_MODEL", settings.remote_api_key)
    return RemoteEncoder(
        endpoint,
        settings,
        query_prefix=str(desc.get("query_prefix") or ""),
        passage_prefix=str(desc.get("passage_prefix") or ""),
        dimensions=desc.get("dimensions"),
        dim=int(desc["dim"]),
        probe=np.asarray(desc["probe"], dtype=np.float32),
        fingerprint=str(desc["fingerprint"]),
    )
