"""The streaming build's stage times before and after a change, on one corpus in one run, and whether
the two snapshots are the same bytes (issue 24: the slow stages made fast with the same bytes).

    nice -n 10 .venv/bin/python scripts/build_speed.py --db <work>/corpus.sqlite \\
        --cache <work>/embcache.sqlite --before <checkout before>/.venv/bin/python --work <scratch>/speed

Builds ``--db`` with each interpreter (``scripts/scale_steps.py``'s child build: the code of the
checkout that interpreter runs; ``--after`` defaults to this one), alternating before and after
``--rounds`` times so both meet the same machine state, each under ``/usr/bin/time`` (peak RSS).
Prints each stage's seconds (the lower of the rounds), the after/before ratio, the stage time
projected linearly to 1M and 2.7M papers (at the corpus's passages per paper), and every file of
the two snapshots whose bytes differ (``manifest.json`` compared without its build times,
timestamps, paths and snapshot name). ``--render WORK...`` writes the saved results of such runs to
BENCHMARKS.md under «Streaming build: stage speed».
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _bench_md import write_section
from scale_steps import _BUILD, _encoder_dir

SIZES = (1_000_000, 2_700_000)
_CPU = """
import atexit, contextlib, json, time
import openxiv.indexer.building.stages as stages

cpu = {}
wall = stages.StageTimer.__call__

@contextlib.contextmanager
def timed(self, name):
    start = time.process_time()
    with wall(self, name):
        yield
    cpu[name] = round(time.process_time() - start, 3)

stages.StageTimer.__call__ = timed
atexit.register(lambda: print("CPU " + json.dumps(cpu), flush=True))
"""
"""Each stage's CPU seconds too (``time.process_time``, every thread of the build), by wrapping the
stage timer of whichever code runs: on a shared machine they move far less than wall times."""
VOLATILE = ("build", "created_at", "snapshot", "source_db")
"""Manifest keys that differ between two builds of the same corpus by the same code."""


def build(python: str, db: Path, root: Path, cache: Path, encoder: Path, work: Path) -> dict[str, Any]:
    """One build into ``root`` by ``python``'s code: wall seconds, stages, counts, peak RSS, load."""
    cmd = ["/usr/bin/time", "-f", "MAXRSS_KB %M", python, "-c", _CPU + _BUILD,
           str(db), str(root), str(cache), str(encoder), str(work)]  # fmt: skip
    load = os.getloadavg()
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise SystemExit(f"build by {python} failed ({p.returncode}):\n{p.stderr[-4000:]}")
    res: dict[str, Any] = json.loads(next(ln for ln in p.stdout.splitlines() if ln.startswith("RESULT "))[7:])
    kb = next(ln for ln in p.stderr.splitlines() if ln.startswith("MAXRSS_KB "))
    res["cpu"] = json.loads(next(ln for ln in p.stdout.splitlines() if ln.startswith("CPU "))[4:])
    res.update(peak_rss_mib=int(kb.split()[1]) / 1024, loadavg_start=load[0], loadavg_end=os.getloadavg()[0])
    return res


def snapshot_files(root: Path) -> dict[str, str]:
    """sha256 of every file of ``root``'s live snapshot (``manifest.json`` without `VOLATILE` keys)."""
    snap = root / "snapshots" / (root / "CURRENT").read_text().strip()
    out: dict[str, str] = {}
    for p in sorted(snap.rglob("*")):
        if not p.is_file():
            continue
        data = p.read_bytes()
        if p.name == "manifest.json" and p.parent == snap:
            m = {k: v for k, v in json.loads(data).items() if k not in VOLATILE}
            data = json.dumps(m, sort_keys=True).encode()
        out[str(p.relative_to(snap))] = hashlib.sha256(data).hexdigest()
    return out


def differing(a: dict[str, str], b: dict[str, str]) -> list[str]:
    return sorted(name for name in set(a) | set(b) if a.get(name) != b.get(name))


def table(runs: dict[str, list[dict[str, Any]]]) -> list[str]:
    """Per stage: CPU seconds before and after (the lower of the rounds) and their ratio, the wall
    seconds, and the after CPU time scaled to `SIZES`."""
    before, after = runs["before"], runs["after"]
    counts = after[0]["counts"]
    papers, passages = counts["papers"], counts["passages"]
    stages = list(dict.fromkeys([*before[0]["stages"], *after[0]["stages"]]))

    def best(rs: list[dict[str, Any]], key: str, stage: str) -> float | None:
        vals = [r[key][stage] for r in rs if stage in r.get(key, {})]
        return min(vals) if vals else None

    head = " | ".join(f"after at {n / 1e6:g}M (CPU)" for n in SIZES)
    lines = [f"| stage | CPU s before | CPU s after | after / before | wall s before / after | {head} |",
             "|---|---:|---:|---:|---:|" + "---:|" * len(SIZES)]  # fmt: skip
    for stage in [*stages, None]:
        if stage is None:  # the whole build: the stages' sums
            b = sum(sum(r["cpu"].values()) for r in before[:1] if "cpu" in r)
            a = sum(sum(r["cpu"].values()) for r in after[:1] if "cpu" in r)
            wall = f"{min(r['seconds'] for r in before):,.0f} / {min(r['seconds'] for r in after):,.0f}"
            stage = "all stages"
        else:
            b, a = best(before, "cpu", stage), best(after, "cpu", stage)
            wall = f"{_s(best(before, 'stages', stage))} / {_s(best(after, 'stages', stage))}"
        ratio = f"{a / b:.2f}" if a is not None and b else "-"
        proj = " | ".join(_hours(a * n / papers) if a is not None else "-" for n in SIZES)
        lines.append(f"| {stage} | {_s(b)} | {_s(a)} | {ratio} | {wall} | {proj} |")
    rss = " / ".join(f"{max(r['peak_rss_mib'] for r in runs[t]):,.0f}" for t in ("before", "after"))
    loads = ", ".join(f"{r['loadavg_start']:.1f}" for t in ("before", "after") for r in runs[t])
    lines += ["", f"{papers:,} papers, {passages:,} passages; peak RSS before / after: {rss} MiB; "
              f"load average (1 min) at each build's start: {loads}."]  # fmt: skip
    return lines


def _s(x: float | None) -> str:
    return "-" if x is None else f"{x:,.1f}"


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


INTRO = """Issue 24, the streaming build's slow stages: each corpus built by the code before the change
and by this checkout, one after the other on the same machine state (`scripts/build_speed.py`;
synthetic vectors from the embedding cache, as in «Scale (streaming build)»; this 2-core machine
was shared with other engineers' jobs, at the load averages given, so the wall times are inflated
and the CPU seconds and their ratios are what carries over). The 1M / 2.7M columns scale the
after CPU seconds linearly by papers (at the corpus's passages per paper): the wall time of a build
that has one whole core; at a quarter of a core, four times that.

    nice -n 10 .venv/bin/python scripts/build_speed.py --db <work>/corpus.sqlite \\
        --cache <work>/embcache.sqlite --before <checkout before>/.venv/bin/python --work <scratch>/speed
    .venv/bin/python scripts/build_speed.py --render <scratch>/speed ...   # this section
"""


def report(work: Path) -> list[str]:
    """The table and the byte comparison of one `main` run's saved results."""
    saved = json.loads((work / "build_speed.json").read_text())
    files, diff = saved["files"], differing(saved["files"]["before"], saved["files"]["after"])
    lines = table(saved["runs"])
    lines.append(f"Snapshot files compared: {len(files['after'])}; differing: {', '.join(diff) or 'none'}.")
    return lines


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", type=Path)
    ap.add_argument("--cache", type=Path, help="the embedding cache holding the paper vectors")
    ap.add_argument("--before", help="the interpreter of the checkout before the change")
    ap.add_argument("--after", default=sys.executable)
    ap.add_argument("--work", type=Path)
    ap.add_argument(
        "--source-index", type=Path, default=Path("data/index/CURRENT"), help="its encoder is used"
    )
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument(
        "--render", type=Path, nargs="+", help="write the saved runs of these works to BENCHMARKS.md"
    )
    args = ap.parse_args()
    if args.render:
        body = [INTRO.strip()] + [ln for work in args.render for ln in ["", *report(work)]]
        write_section("Streaming build: stage speed", "\n".join(body), after="Scale (streaming build)")
        return
    if not (args.db and args.cache and args.before and args.work):
        ap.error("--db, --cache, --before and --work are required to build")
    args.work.mkdir(parents=True, exist_ok=True)
    encoder = _encoder_dir(args.source_index)
    runs: dict[str, list[dict[str, Any]]] = {"before": [], "after": []}
    files: dict[str, dict[str, str]] = {}
    for i in range(args.rounds):
        for tag, python in (("before", args.before), ("after", args.after)):
            root = args.work / f"index-{tag}"
            runs[tag].append(build(python, args.db, root, args.cache, encoder, args.work))
            files[tag] = snapshot_files(root)
            print(tag, i, json.dumps(runs[tag][-1]), flush=True)
    (args.work / "build_speed.json").write_text(json.dumps({"runs": runs, "files": files}, indent=1))
    print("\n".join(report(args.work)))


if __name__ == "__main__":
    main()
