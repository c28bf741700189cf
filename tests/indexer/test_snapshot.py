"""Snapshots end to end on real shared data: build, open read-only, search, filters, paging, rebuilds.

Small corpora (a few hundred listing papers + a dozen plain-text full texts) keep the default suite
fast; BM25-only builds (``embed="none"``) cover the sparse paths, and the real MiniLM model embeds a
hundred-odd abstracts for the dense, incremental and interrupted-build tests.
"""

from __future__ import annotations

import itertools
import json
import threading
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from click.testing import CliRunner
from small_index import make_db as _make_db
from small_index import records as _records

from openxiv.corpus.normalize import normalize_name
from openxiv.corpus.readers import read_path
from openxiv.corpus.settings.model import Settings
from openxiv.corpus.shared import SharedData
from openxiv.corpus.store import Store
from openxiv.indexer import layout
from openxiv.indexer.backend import SearchBackend, SearchFilters
from openxiv.indexer.building.job import build_index, build_index_report
from openxiv.indexer.snapshot import BadIndexError, current_snapshot, list_snapshots, open_index


@pytest.fixture(scope="module")
def encoder(minilm: Any) -> Any:
    """The real MiniLM at 64 tokens (session fixture of tests/indexer/conftest.py)."""
    return minilm


class FailingEncoder:
    """The real encoder until ``fail_after`` texts have been encoded, then an I/O error."""

    def __init__(self, inner: Any, fail_after: int = 0) -> None:
        self.inner, self.left = inner, fail_after
        self.name, self.fingerprint, self.dim, self.max_tokens = (
            inner.name,
            inner.fingerprint,
            inner.dim,
            inner.max_tokens,
        )

    def encode(self, texts: Any, batch_size: int | None = None, progress: bool = False) -> np.ndarray:
        if len(texts) > self.left:
            raise OSError("simulated failure: device lost while encoding")
        self.left -= len(texts)
        return self.inner.encode(texts, batch_size=batch_size)

    def encode_query(self, text: str) -> np.ndarray:
        return self.inner.encode_query(text)


# --------------------------------------------------------------------------- sparse snapshot


def test_open_index_is_a_search_backend_with_manifest(sparse_index: Any) -> None:
    assert isinstance(sparse_index.backend, SearchBackend)
    m = sparse_index.manifest
    for key in (
        "format_version",
        "snapshot",
        "created_at",
        "corpus",
        "counts",
        "embedding",
        "bm25",
        "fusion",
        "versions",
        "build",
        "settings",
        "sizes_bytes",
    ):
        assert key in m.model_fields_set, key
    assert m.format_version == layout.FORMAT_VERSION
    assert m.corpus.fingerprint is not None and len(m.corpus.fingerprint) == 64
    assert m.counts.papers == 372 and m.counts.passages > 12
    assert m.bm25 is not None and m.bm25.k1 == 1.2 and m.bm25.tokenizer["stemmer"] == "english"
    assert m.versions["bm25s"] and m.versions["numpy"]
    assert m.build is not None and set(m.build.stages_s) >= {"copy", "read", "bm25_papers", "bm25_passages"}
    assert (sparse_index.path / layout.CORPUS).is_file()
    info = sparse_index.backend.info()
    assert info["sides"] == ["bm25_papers", "bm25_passages"] and info["papers"] == 372


def test_finds_paper_by_exact_title(sparse_index: Any) -> None:
    docs = list(sparse_index.store.iter_papers())
    for d in docs[::40]:
        res = sparse_index.backend.search(d.title, top_k=5)
        assert res.hits[0].arxiv_id == d.arxiv_id, d.title


def test_finds_fulltext_sentence_with_its_passage(sparse_index: Any) -> None:
    store, backend = sparse_index.store, sparse_index.backend
    fulltext = [d.arxiv_id for d in store.iter_papers() if store.passages(d.arxiv_id)]
    assert len(fulltext) >= 10
    for aid in fulltext[:6]:
        ps = store.passages(aid)
        p = ps[len(ps) // 2]
        sentence = " ".join(p.text.split()[20:50])
        res = backend.search(sentence, top_k=1, mode="bm25_passages")
        assert (res.hits[0].arxiv_id, res.hits[0].passage_id) == (aid, p.passage_id)
        fused = {h.arxiv_id: h for h in backend.search(sentence, top_k=5).hits}
        assert fused[aid].passage_id == p.passage_id
        assert store.get_passages([p.passage_id])[p.passage_id].arxiv_id == aid


def test_every_hit_with_fulltext_has_a_passage(sparse_index: Any) -> None:
    res = sparse_index.backend.search("magnetic field stars galaxy", top_k=50)
    papers = sparse_index.store.get_papers([h.arxiv_id for h in res.hits])
    for h in res.hits:
        assert (h.passage_id is not None) == papers[h.arxiv_id].has_fulltext


def test_results_are_deterministic(sparse_index: Any, tmp_path: Path) -> None:
    """Two runs and a reopened snapshot in one process: the same floats to the bit. A promise for one
    machine and one set of library versions (another CPU's kernels may round the last digit
    differently, docs/indexing.md «Dense scores across CPUs»), never compared with another's."""
    q = "vision language model benchmark"
    a = sparse_index.backend.search(q, top_k=30)
    b = sparse_index.backend.search(q, top_k=30)
    assert [(h.arxiv_id, h.score, h.passage_id) for h in a.hits] == [
        (h.arxiv_id, h.score, h.passage_id) for h in b.hits
    ]
    scores = [h.score for h in a.hits]
    assert scores == sorted(scores, reverse=True)
    for x, y in itertools.pairwise(a.hits):  # ties by ascending arxiv_id
        assert x.score > y.score or x.arxiv_id < y.arxiv_id
    with open_index(sparse_index.path, Settings(embed="none")) as again:
        c = again.backend.search(q, top_k=30)
    assert [h.arxiv_id for h in c.hits] == [h.arxiv_id for h in a.hits]


def test_concurrent_readers_get_the_same_answers(sparse_index: Any) -> None:
    queries = [
        "gaussian splatting",
        "galaxy clusters",
        "robot manipulation",
        "large language models",
        "dark matter halo",
    ]
    expected = {q: [h.arxiv_id for h in sparse_index.backend.search(q, top_k=20).hits] for q in queries}
    errors: list[str] = []

    def worker() -> None:
        for q in queries * 4:
            got = [h.arxiv_id for h in sparse_index.backend.search(q, top_k=20).hits]
            if got != expected[q]:
                errors.append(q)

    threads = [threading.Thread(target=worker) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []


@pytest.mark.parametrize("mode", ["bm25_papers", "rrf"])
def test_filter_restricts_before_the_cut(sparse_index: Any, mode: str) -> None:
    backend, q = sparse_index.backend, "observations of the galaxy and stars with spectra"
    f = SearchFilters(categories=("astro-ph",))
    full = backend.search(q, top_k=1000, mode=mode)
    papers = sparse_index.store.get_papers([h.arxiv_id for h in full.hits])
    allowed = [
        h.arxiv_id for h in full.hits if any(c.startswith("astro-ph") for c in papers[h.arxiv_id].categories)
    ]
    assert len(allowed) >= 10
    # the unfiltered top 10 holds fewer astro papers than the filtered query must return
    res = backend.search(q, top_k=10, filters=f, mode=mode)
    assert len(res.hits) == 10
    assert res.total_count == len(allowed)
    if mode == "bm25_papers":  # one side: the filtered list is the unfiltered one restricted
        assert [h.arxiv_id for h in res.hits] == allowed[:10]
    got = sparse_index.store.get_papers([h.arxiv_id for h in res.hits])
    assert all(any(c.startswith("astro-ph") for c in p.categories) for p in got.values())


def test_category_exact_vs_archive(sparse_index: Any) -> None:
    meta = sparse_index.backend.meta
    exact = meta.mask(SearchFilters(categories=("cs.RO",)))
    archive = meta.mask(SearchFilters(categories=("cs",)))
    assert 0 < exact.sum() < archive.sum() < meta.n
    assert not meta.mask(SearchFilters(categories=("cs.C",))).any()


def test_author_and_date_filters(sparse_index: Any) -> None:
    store, backend = sparse_index.store, sparse_index.backend
    doc = next(d for d in store.iter_papers() if d.authors and d.date)
    surname = doc.authors[0].split()[-1]
    res = backend.search(doc.title, top_k=10, filters=SearchFilters(authors=(surname.upper(),)))
    assert res.hits[0].arxiv_id == doc.arxiv_id
    for h in res.hits:
        authors = store.get_paper(h.arxiv_id).authors
        assert any(normalize_name(surname) in normalize_name(a) for a in authors)
    day = SearchFilters(date_from=doc.date, date_to=doc.date)
    res = backend.search("model", top_k=100, filters=day)
    assert doc.arxiv_id in {h.arxiv_id for h in backend.search(doc.title, top_k=5, filters=day).hits}
    assert all(store.get_paper(h.arxiv_id).date == doc.date for h in res.hits)
    none = backend.search(
        doc.title, top_k=5, filters=SearchFilters(date_from=date(1900, 1, 1), date_to=date(1900, 12, 31))
    )
    assert none.hits == [] and none.total_count == 0


def test_author_matching_is_accent_and_case_insensitive() -> None:
    assert normalize_name("José  Núñez-Pérez") == "jose nunez perez"
    from openxiv.corpus.records import Paper
    from openxiv.indexer.engine.meta import PaperMeta

    docs = [
        Paper(
            "2501.00001",
            title="t",
            abstract="a",
            categories=("cs.CL",),
            authors=("José Núñez", "Wei Li"),
            published=date(2025, 1, 2),
            content_hash="h1",
        ),
        Paper(
            "2501.00002",
            title="t",
            abstract="a",
            categories=("cs.CL",),
            authors=("Olivia Lin",),
            published=date(2025, 1, 3),
            content_hash="h2",
        ),
    ]
    meta = PaperMeta.from_docs(docs)
    assert meta.mask(SearchFilters(authors=("jose nunez",))).tolist() == [True, False]
    assert meta.mask(SearchFilters(authors=("NUÑEZ",))).tolist() == [True, False]
    assert meta.mask(SearchFilters(authors=("Li",))).tolist() == [True, False]  # short: whole word only
    assert meta.mask(SearchFilters(authors=("Oliv",))).tolist() == [False, True]  # 4+: start of a word


def test_paging_matches_the_unpaged_list(sparse_index: Any) -> None:
    q = "diffusion models for image generation"
    whole = sparse_index.backend.search(q, top_k=42)
    pages = [sparse_index.backend.search(q, top_k=7, offset=o) for o in range(0, 42, 7)]
    assert [h.arxiv_id for p in pages for h in p.hits] == [h.arxiv_id for h in whole.hits]
    assert {p.total_count for p in pages} == {whole.total_count}
    beyond = sparse_index.backend.search(q, top_k=10, offset=whole.total_count)
    assert beyond.hits == [] and beyond.total_count == whole.total_count


def test_modes_and_timings(sparse_index: Any) -> None:
    b = sparse_index.backend
    res = b.search("transformer", top_k=5, mode="weighted")
    assert {"bm25", "fuse", "total"} <= set(res.timings_ms)
    with pytest.raises(ValueError, match="dense"):
        b.search("transformer", mode="dense")
    with pytest.raises(ValueError, match="unknown mode"):
        b.search("transformer", mode="magic")
    assert b.search("the of and", top_k=5).hits == []  # only stopwords: nothing matches


def test_bad_index_dirs_have_clear_errors(tmp_path: Path, sparse_index: Any) -> None:
    with pytest.raises(BadIndexError, match="not found"):
        open_index(tmp_path / "missing")
    (tmp_path / "empty").mkdir()
    with pytest.raises(BadIndexError, match="no CURRENT"):
        open_index(tmp_path / "empty")
    import shutil

    snap = tmp_path / "old"
    shutil.copytree(sparse_index.path, snap)
    m = json.loads((snap / layout.MANIFEST).read_text())
    m["format_version"] = 999
    (snap / layout.MANIFEST).write_text(json.dumps(m))
    with pytest.raises(BadIndexError, match="format version 999"):
        open_index(snap)


def test_cli_build_and_info(shared: SharedData, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from openxiv.indexer.cli import index

    monkeypatch.setenv("OPENXIV_DATA_DIR", str(tmp_path))
    db = _make_db(tmp_path / "c.sqlite", _records(shared, 40, 0, 2))
    runner = CliRunner()
    out = runner.invoke(
        index, ["build", "--db", str(db), "--index", str(tmp_path / "ix"), "--embed", "none", "--no-progress"]
    )
    assert out.exit_code == 0, out.output
    assert "papers:   42" in out.output and "CURRENT" in out.output
    info = runner.invoke(index, ["info", "--index", str(tmp_path / "ix"), "--json"])
    assert json.loads(info.stdout)["counts"]["papers"] == 42
    human = runner.invoke(index, ["info", "--index", str(tmp_path / "ix")])
    assert "bm25s" in human.output and "embedding    none" in human.output
    again = runner.invoke(
        index, ["build", "--db", str(db), "--index", str(tmp_path / "ix"), "--embed", "none", "--if-changed"]
    )
    assert "up to date" in again.output
    bad = runner.invoke(
        index, ["build", "--db", str(tmp_path / "nope.sqlite"), "--index", str(tmp_path / "ix")]
    )
    assert bad.exit_code != 0 and "not found" in bad.output
    empty = _make_db(tmp_path / "empty.sqlite", iter(()))
    res = runner.invoke(
        index, ["build", "--db", str(empty), "--index", str(tmp_path / "ix2"), "--embed", "none"]
    )
    assert res.exit_code != 0 and "no papers" in res.output
    res = runner.invoke(index, ["info", "--index", str(tmp_path / "nothing")])
    assert res.exit_code != 0 and "not found" in res.output


# ------------------------------------------------------------------- dense, incremental, crash


def test_incremental_rebuild_reuses_embeddings_and_crash_keeps_old_snapshot(
    shared: SharedData, tmp_path: Path, encoder: Any
) -> None:
    db = _make_db(tmp_path / "c.sqlite", _records(shared, 80, 0, 3))
    settings = Settings(data_dir=tmp_path, embed="papers", embed_max_tokens=64)
    root = tmp_path / "index"
    first = build_index_report(db, root, settings, progress=False, encoder=encoder)
    emb = first.manifest.embedding
    assert (emb.encoded, emb.reused_from_cache) == (83, 0)
    assert first.manifest.counts.paper_vectors == 83

    with open_index(root, settings, encoder=encoder) as ix:
        doc = next(d for d in ix.store.iter_papers() if ix.store.passages(d.arxiv_id))
        res = ix.backend.search(doc.title, top_k=5, mode="dense")
        assert res.hits[0].arxiv_id == doc.arxiv_id
        # a paper found by the dense side alone still gets its best BM25 passage as evidence
        assert res.hits[0].passage_id in {p.passage_id for p in ix.store.passages(doc.arxiv_id)}
        assert {"encode", "dense", "bm25", "fuse"} <= set(ix.backend.search(doc.title).timings_ms)

    # add 25 papers: old vectors come from the cache, only the new ones are encoded
    with Store(db) as store:
        store.ingest(_records(shared, 25, 0, 0, skip_cs=80))
        new_doc = store.get_paper(
            next(r.arxiv_id for r in itertools.islice(read_path(shared.listing("cs")), 90, 91))
        )
    second = build_index_report(db, root, settings, progress=False, encoder=encoder)
    emb = second.manifest.embedding
    assert (emb.encoded, emb.reused_from_cache) == (25, 83)
    assert second.path != first.path and current_snapshot(root) == second.path
    with open_index(root, settings, encoder=encoder) as ix:
        assert ix.backend.search(new_doc.title, top_k=3).hits[0].arxiv_id == new_doc.arxiv_id

    # stale temp dirs from a killed build are cleaned; a failing build leaves CURRENT alone
    stale = root / layout.SNAPSHOTS / f"{layout.TMP_PREFIX}killed"
    stale.mkdir()
    with Store(db) as store:
        store.ingest(_records(shared, 5, 0, 0, skip_cs=105))
    with pytest.raises(OSError, match="simulated failure"):
        build_index(db, root, settings, progress=False, encoder=FailingEncoder(encoder))
    assert current_snapshot(root) == second.path
    assert [p.name for p in (root / layout.SNAPSHOTS).iterdir() if p.name.startswith(layout.TMP_PREFIX)] == []
    with open_index(root, settings, encoder=encoder) as ix:
        assert ix.manifest.snapshot == second.path.name
        assert ix.backend.search(new_doc.title, top_k=3).hits[0].arxiv_id == new_doc.arxiv_id
    assert [p.name for p in list_snapshots(root)] == [first.path.name, second.path.name]

    # the next good build switches and prunes to the last two
    third = build_index_report(db, root, settings, progress=False, encoder=encoder)
    assert (third.manifest.embedding.encoded, third.manifest.embedding.reused_from_cache) == (
        5,
        108,
    )
    assert [p.name for p in list_snapshots(root)] == [second.path.name, third.path.name]


def test_bad_default_fusion_is_a_config_error_at_open(sparse_index: Any) -> None:
    from openxiv.corpus.settings.sources import ConfigError

    with pytest.raises(ConfigError, match="OPENXIV_FUSION='dense'"):
        open_index(sparse_index.path, Settings(fusion="dense"))
    with open_index(sparse_index.path, Settings(fusion="bm25_papers")) as ix:
        assert set(ix.backend.search("galaxy").hits[0].signals) == {"bm25_papers_rank"}


def test_if_changed_rebuilds_when_the_stored_tables_rules_changed(shared: SharedData, tmp_path: Path) -> None:
    """A snapshot whose stored tldr or sentence table was made under other rules (an older openxiv:
    the rules' source digest differs) serves by computing each hit's tldr and evidence, correct but
    slower. ``--if-changed`` used to keep it forever, since corpus and settings were unchanged: it
    now rebuilds, so an upgrade followed by ``make serve`` gets the stored tables back."""
    from openxiv.indexer.manifest import read as read_manifest
    from openxiv.indexer.manifest import write as write_manifest

    db = _make_db(tmp_path / "c.sqlite", _records(shared, 40, 0, 2))
    settings = Settings.from_env({"OPENXIV_EMBED": "none", "OPENXIV_DATA_DIR": str(tmp_path)})
    root = tmp_path / "ix"
    first = build_index_report(db, root, settings, progress=False)
    again = build_index_report(db, root, settings, progress=False, force=False)
    assert again.reused and again.path == first.path
    for part in ("tldr", "sentences"):
        live = current_snapshot(root)
        assert live is not None
        manifest = read_manifest(live)
        table = getattr(manifest, part)
        assert table is not None
        setattr(manifest, part, table.model_copy(update={"rules": "0" * 16}))  # made by other rules
        write_manifest(live, manifest)
        rebuilt = build_index_report(db, root, settings, progress=False, force=False)
        assert not rebuilt.reused and rebuilt.path != live, part
        assert getattr(rebuilt.manifest, part).rules != "0" * 16
    # a snapshot built before citation counts (its references part has no resolver): rebuilt too
    live = current_snapshot(root)
    assert live is not None
    manifest = read_manifest(live)
    assert manifest.references is not None and manifest.references.index_bytes > 0
    old = {
        k: v for k, v in manifest.references.model_dump().items() if k not in ("index_bytes", "with_context")
    }
    manifest.references = type(manifest.references)(**old)
    write_manifest(live, manifest)
    rebuilt = build_index_report(db, root, settings, progress=False, force=False)
    assert not rebuilt.reused and rebuilt.path != live
