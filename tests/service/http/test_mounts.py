"""A full disk and a read-only index, on real mounts (issue 21, item 12): a build that cannot write says
so in one line and exits 1 (it printed a 38-56-line traceback), and `openxiv serve` on a read-only copy
of an index whose snapshots have no ``lease.lock`` becomes ready (``/readyz`` stayed 503).

The mounts are small tmpfs file systems; where this process may not mount (not root, no
CAP_SYS_ADMIN) the tests are skipped.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from live_index import BIN, SHARED, BuiltIndex, free_port


@contextmanager
def tmpfs(where: Path, size: str) -> Iterator[Path]:
    where.mkdir(parents=True, exist_ok=True)
    mounted = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True
    )
    if mounted.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {mounted.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def _read_only(where: Path) -> None:
    subprocess.run(["mount", "-o", "remount,ro", str(where)], check=True)


def _env(index: BuiltIndex) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENXIV_")}
    return env | {
        "HF_HUB_OFFLINE": "1",
        "OPENXIV_SHARED": str(SHARED.root),
        "OPENXIV_DATA_DIR": str(index.root.parent),
    }


def _build(index: BuiltIndex, root: Path) -> subprocess.CompletedProcess[str]:
    cmd = [str(BIN / "openxiv"), "index", "build", "--db", str(index.db), "--index", str(root)]
    cmd += ["--cache", str(index.cache), "--embed", "papers", "--no-progress"]
    return subprocess.run(cmd, env=_env(index), capture_output=True, text=True, timeout=600)


@pytest.mark.parametrize("kind", ["full", "read-only"])
def test_a_build_that_cannot_write_says_so_in_one_line(
    test_index: BuiltIndex, tmp_path: Path, kind: str
) -> None:
    with tmpfs(tmp_path / "mnt", "8m" if kind == "full" else "1m") as mnt:
        if kind == "read-only":
            _read_only(mnt)
        out = _build(test_index, mnt / "index")
    lines = out.stderr.strip().splitlines()
    assert out.returncode == 1, out.stderr
    assert "Traceback" not in out.stderr
    assert len(lines) == 1 and lines[0].startswith("Error: "), out.stderr
    reasons = ("No space left on device", "disk is full") if kind == "full" else ("Read-only file system",)
    assert any(reason in lines[0] for reason in reasons), lines[0]


def test_serve_on_a_read_only_copy_without_leases_becomes_ready(
    test_index: BuiltIndex, tmp_path: Path
) -> None:
    with tmpfs(tmp_path / "mnt", "400m") as mnt:
        root = mnt / "index"
        shutil.copytree(test_index.root, root, symlinks=True)
        leases = list(root.rglob("lease.lock"))
        assert leases
        for lease in leases:
            lease.unlink()
        _read_only(mnt)
        port = free_port()
        log = tmp_path / "serve.log"
        with log.open("w") as fh:
            proc = subprocess.Popen(
                [str(BIN / "openxiv"), "serve", "--index", str(root), "--port", str(port), "--no-access-log"],
                env=_env(test_index),
                stdout=fh,
                stderr=subprocess.STDOUT,
            )
            try:
                status, deadline = None, time.monotonic() + 150
                while time.monotonic() < deadline and proc.poll() is None:
                    try:
                        status = httpx.get(f"http://127.0.0.1:{port}/readyz", timeout=2).status_code
                    except httpx.HTTPError:
                        status = None
                    if status == 200:
                        break
                    time.sleep(0.5)
                assert status == 200, log.read_text()[-3000:]
                hits = httpx.post(
                    f"http://127.0.0.1:{port}/search", json={"query": "transformer", "top_k": 2}
                )
                assert hits.status_code == 200 and hits.json()["result"]
            finally:
                proc.terminate()
                proc.wait(timeout=60)
