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
timestamps, paths and snapshot name). ``--write`` puts the table in BENCHMARKS.md under
«Streaming build: stage speed».
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
VOLATILE = ("build", "created_at", "snapshot", "source_db")
"""Manifest keys that differ between two builds of the same corpus by the same code."""


def build(python: str, db: Path, root: Path, cache: Path, encoder: Path, work: Path) -> dict[str, Any]:
    """One build into ``root`` by ``python``'s code: wall seconds, stages, counts, peak RSS, load."""
    cmd = ["/usr/bin/time", "-f", "MAXRSS_KB %M", python, "-c", _BUILD,
           str(db), str(root), str(cache), str(encoder), str(work)]  # fmt: skip
    load = os.getloadavg()
    p = subprocess.run(cmd, capture_output=True, text=True, check=False)
    if p.returncode != 0:
        raise SystemExit(f"build by {python} failed ({p.returncode}):\n{p.stderr[-4000:]}")
    res: dict[str, Any] = json.loads(next(ln for ln in p.stdout.splitlines() if ln.startswith("RESULT "))[7:])
    kb = next(ln for ln in p.stderr.splitlines() if ln.startswith("MAXRSS_KB "))
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
    before, after = runs["before"], runs["after"]
    counts = after[0]["counts"]
    papers, passages = counts["papers"], counts["passages"]
    stages = list(dict.fromkeys([*before[0]["stages"], *after[0]["stages"]]))

    def best(rs: list[dict[str, Any]], stage: str) -> float | None:
        vals = [r["stages"][stage] for r in rs if stage in r["stages"]]
        return min(vals) if vals else None

    head = " | ".join(f"after at {n / 1e6:g}M" for n in SIZES)
    lines = [f"| stage | before s | after s | after / before | {head} |",
             "|---|---:|---:|---:|" + "---:|" * len(SIZES)]  # fmt: skip
    rows = [(s, best(before, s), best(after, s)) for s in stages]
    rows.append(("total (wall)", min(r["seconds"] for r in before), min(r["seconds"] for r in after)))
    for stage, b, a in rows:
        ratio = f"{a / b:.2f}" if a is not None and b else "-"
        proj = " | ".join(_hours(a * n / papers) if a is not None else "-" for n in SIZES)
        lines.append(f"| {stage} | {_s(b)} | {_s(a)} | {ratio} | {proj} |")
    rss = " / ".join(f"{max(r['peak_rss_mib'] for r in runs[t]):,.0f}" for t in ("before", "after"))
    loads = ", ".join(f"{r['loadavg_start']:.1f}" for t in ("before", "after") for r in runs[t])
    lines += ["", f"{papers:,} papers, {passages:,} passages; peak RSS before / after: {rss} MiB; "
              f"load average (1 min) at each build's start: {loads}."]  # fmt: skip
    return lines


def _s(x: float | None) -> str:
    return "-" if x is None else f"{x:,.1f}"


def _hours(seconds: float) -> str:
    return f"{seconds / 3600:.1f} h" if seconds >= 3600 else f"{seconds / 60:.0f} min"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", type=Path, required=True)
    ap.add_argument("--cache", type=Path, required=True, help="the embedding cache holding the paper vectors")
    ap.add_argument("--before", required=True, help="the interpreter of the checkout before the change")
    ap.add_argument("--after", default=sys.executable)
    ap.add_argument("--work", type=Path, required=True)
    ap.add_argument(
        "--source-index", type=Path, default=Path("data/index/CURRENT"), help="its encoder is used"
    )
    ap.add_argument("--rounds", type=int, default=1)
    ap.add_argument("--write", action="store_true", help="write the table to BENCHMARKS.md")
    args = ap.parse_args()
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
    diff = differing(files["before"], files["after"])
    lines = table(runs)
    lines.append(f"Snapshot files compared: {len(files['after'])}; differing: {', '.join(diff) or 'none'}.")
    print("\n".join(lines))
    if args.write:
        write_section("Streaming build: stage speed", "\n".join(lines), after="Scale (streaming build)")


if __name__ == "__main__":
    main()
