"""Processes for ``bench_reliability.py``: a live server, and the probes that kill -9 ``openxiv index
build`` / ``openxiv ingest`` or run two builds on one root. Each checks afterwards that ``CURRENT``
names a complete snapshot that serves and that the database is intact with nothing lost."""

from __future__ import annotations

import shutil
import signal
import sqlite3
import subprocess
import time
from pathlib import Path
from typing import Any

import httpx

from harness.server import OPENXIV, Server, env

BUILD_POINTS = ("copy", "read", "bm25_papers", "bm25_passages", "load_model", "embed_papers", "switch")
"""The stages ``openxiv index build --progress`` announces (``[index] <stage> ...``), in order."""


def serves(root: Path, log: Path) -> str:
    """ "yes" when ``openxiv serve`` starts on ``root`` and answers a search with hits, else why not."""
    try:
        server = Server(root, log, timeout=180)
    except RuntimeError as exc:
        return "no: " + str(exc).splitlines()[0][:160]
    try:
        r = httpx.post(server.url + "/search", json={"query": "neural networks", "top_k": 3}, timeout=60)
        return "yes" if r.status_code == 200 and r.json()["result"] else f"no: {r.status_code} {r.text[:120]}"
    finally:
        server.stop()


def missing_parts(snap: Path | None) -> list[str]:
    need = ["manifest.json", "corpus.sqlite", "papers", "bm25_papers", "dense_papers"]
    return [p for p in need if snap is None or not (snap / p).exists()]


def snapshot_state(root: Path) -> dict[str, Any]:
    """What ``CURRENT`` names and whether that snapshot holds every part its manifest promises."""
    current = root / "CURRENT"
    name = current.read_text().strip() if current.is_file() else None
    snap = root / "snapshots" / name if name else None
    missing = missing_parts(snap)
    tmp = [p.name for p in (root / "snapshots").glob(".tmp-*")] if (root / "snapshots").is_dir() else []
    return {"current": name, "complete": not missing, "missing": missing, "tmp_dirs": len(tmp)}


def integrity(db: Path) -> str:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        return str(con.execute("PRAGMA integrity_check").fetchone()[0])


def paper_ids(db: Path) -> set[str]:
    with sqlite3.connect(f"file:{db}?mode=ro", uri=True) as con:
        return {r[0] for r in con.execute("SELECT arxiv_id FROM papers")}


def build_cmd(db: Path, root: Path, cache: Path) -> list[str]:
    return [
        OPENXIV,
        "index",
        "build",
        "--db",
        str(db),
        "--index",
        str(root),
        "--embed",
        "papers",
        "--cache",
        str(cache),
    ]


def _wait_for(proc: subprocess.Popen[bytes], out: Path, marker: str, timeout: float) -> tuple[bool, float]:
    """Poll ``out`` (``proc``'s stdout) until it holds ``marker``: (seen, seconds waited)."""
    t = time.monotonic()
    while time.monotonic() - t < timeout:
        if marker in out.read_text(errors="replace"):
            return True, time.monotonic() - t
        if proc.poll() is not None:
            return False, time.monotonic() - t
        time.sleep(0.05)
    return False, time.monotonic() - t


def _start(cmd: list[str], out: Path) -> subprocess.Popen[bytes]:
    with out.open("wb") as fh, out.with_suffix(".err").open("wb") as err:  # the child keeps its copies
        return subprocess.Popen(cmd, env=env(), stdout=fh, stderr=err)


def _last_line(out: Path) -> str:
    """The error the command printed, else the last line of its report."""
    errors = [ln for ln in out.with_suffix(".err").read_text(errors="replace").splitlines() if "Error" in ln]
    lines = [
        ln
        for ln in out.read_text(errors="replace").splitlines()
        if ln.strip() and not ln.startswith("[index]")
    ]
    return (errors or lines or [""])[-1][:200]


def kill_builds(db: Path, base_index: Path, work: Path, embed_delay: float = 2.0) -> list[dict[str, Any]]:
    """kill -9 a build (cold embedding cache) at each announced stage; then check root and cache."""
    root, cache = work / "index", work / "cold-embcache.sqlite"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    shutil.copytree(base_index, root)
    rows = []
    for point in (*BUILD_POINTS, None):  # None: a last build that runs to the end
        before = snapshot_state(root)["current"]
        out = work / f"build-{point}.out"
        proc = _start([*build_cmd(db, root, cache), "--progress"], out)
        row: dict[str, Any] = {"point": point or "(no kill: full build)"}
        if point is None:
            row["exit"] = proc.wait(timeout=900)
        else:
            seen, waited = _wait_for(proc, out, f"[index] {point} ...", timeout=600)
            time.sleep(embed_delay if point.startswith("embed") else 0.0)
            row["reached"] = seen
            row["killed_after_s"] = round(waited, 1)
            proc.send_signal(signal.SIGKILL)
            row["exit"] = proc.wait(timeout=60)
        state = snapshot_state(root)
        row.update(state, current_changed=state["current"] != before)
        row["serves"] = serves(root, work / f"serve-{point}.log")
        row["cache_integrity"] = integrity(cache) if cache.exists() else "(no cache yet)"
        rows.append(row)
        print(f"  kill at {row['point']}: {row}", flush=True)
    return rows


def _copy_db(src: Path, dest: Path) -> None:
    dest.unlink(missing_ok=True)
    with sqlite3.connect(f"file:{src}?mode=ro", uri=True) as a, sqlite3.connect(dest) as b:
        a.backup(b)


def kill_ingest(db: Path, source: Path, work: Path, delays: tuple[float, ...]) -> dict[str, Any]:
    """kill -9 ``openxiv ingest SOURCE`` after each delay; re-run it; compare with an uninterrupted run."""
    work.mkdir(parents=True, exist_ok=True)
    killed, clean = work / "killed.sqlite", work / "clean.sqlite"
    _copy_db(db, killed)
    _copy_db(db, clean)
    cmd = [OPENXIV, "ingest", "--no-progress", str(source), "--db"]
    t = time.monotonic()
    clean_rc = subprocess.run([*cmd, str(clean)], env=env(), capture_output=True, check=False).returncode
    clean_s = time.monotonic() - t
    before = len(paper_ids(killed))
    kills = []
    for delay in delays:
        proc = subprocess.Popen(
            [*cmd, str(killed)], env=env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
        )
        time.sleep(delay)
        still_running = proc.poll() is None
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=60)
        kills.append(
            {
                "after_s": delay,
                "was_running": still_running,
                "integrity": integrity(killed),
                "papers": len(paper_ids(killed)),
            }
        )
    with sqlite3.connect(f"file:{killed}?mode=ro", uri=True) as con:
        unfinished = con.execute("SELECT count(*) FROM ingest_runs WHERE finished_at IS NULL").fetchone()[0]
    rerun = subprocess.run([*cmd, str(killed)], env=env(), capture_output=True, check=False)
    got, want = paper_ids(killed), paper_ids(clean)
    return {
        "source": source.name,
        "papers_before": before,
        "clean_run": {"exit": clean_rc, "seconds": round(clean_s, 1), "papers": len(want)},
        "kills": kills,
        "runs_left_unfinished": unfinished,
        "rerun_exit": rerun.returncode,
        "papers_after_rerun": len(got),
        "integrity_after_rerun": integrity(killed),
        "lost": len(want - got),
        "extra": len(got - want),
    }


def concurrent_builds(
    db: Path, base_index: Path, work: Path, start_second: str = "embed_papers"
) -> dict[str, Any]:
    """Build A (cold cache) and, when A announces ``start_second`` (or after 10 s), build B on one root."""
    root, cache = work / "index", work / "cold-embcache.sqlite"
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    shutil.copytree(base_index, root)
    before = snapshot_state(root)["current"]
    cmd = [*build_cmd(db, root, cache), "--progress"]
    t = time.monotonic()
    outs = {"a": work / "a.out", "b": work / "b.out"}
    a = _start(cmd, outs["a"])
    _wait_for(a, outs["a"], f"[index] {start_second} ...", timeout=10)
    b_after = time.monotonic() - t
    b = _start(cmd, outs["b"])
    outcome: dict[str, Any] = {"b_started_after_s": round(b_after, 1)}
    for name, proc in (("a", a), ("b", b)):
        try:
            proc.wait(timeout=900)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
        outcome[f"{name}_exit"] = proc.returncode
        outcome[f"{name}_says"] = _last_line(outs[name])
        outcome[f"{name}_done_s"] = round(time.monotonic() - t, 1)
    state = snapshot_state(root)
    outcome.update(state, current_changed=state["current"] != before)
    outcome["snapshots"] = sorted(p.name for p in (root / "snapshots").iterdir())
    outcome["incomplete_snapshots"] = {
        p.name: missing_parts(p) for p in (root / "snapshots").iterdir() if missing_parts(p)
    }
    outcome["serves"] = serves(root, work / "serve.log")
    return outcome
