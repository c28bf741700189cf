"""The hybrid modes' latency on one snapshot, one query at a time, with whichever openxiv this
interpreter imports: run under two checkouts' code, in turn, to compare them as ratios measured
in one sitting (a shared machine's speed drifts by a third between sittings).

Each mode (and filtered rrf) runs the 103 dev topic queries once untimed, then once timed; one
JSON line is printed: the code's path, the load average, and ``[p50, p95]`` ms per row.

    git worktree add ../before <rev>          # the code to compare against, importable as openxiv:
    mkdir -p ../before-pkg/openxiv && touch ../before-pkg/openxiv/__init__.py
    for p in corpus indexer service evaluator; do ln -s "$PWD/../before/$p" ../before-pkg/openxiv/$p; done
    for i in 1 2 3; do
        PYTHONPATH=../before-pkg .venv/bin/python scripts/time_modes.py <index>   # before
        .venv/bin/python scripts/time_modes.py <index>                            # this checkout
    done
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_scale import pcts, time_queries, topic_queries


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("index", type=Path, help="an index root (or a snapshot directory)")
    args = ap.parse_args()
    import openxiv.indexer.engine.hybrid as hybrid
    from openxiv.corpus.settings.model import Settings
    from openxiv.indexer.backend import SearchFilters
    from openxiv.indexer.snapshot import open_index

    rows = (("rrf", "rrf", None), ("weighted", "weighted", None), ("bm25", "bm25", None),
            ("rrf + category cs.CL", "rrf", SearchFilters(categories=("cs.CL",))),
            ("rrf + author Wang", "rrf", SearchFilters(authors=("Wang",))))  # fmt: skip
    queries = topic_queries()
    out: dict[str, object] = {"code": hybrid.__file__, "loadavg_start": os.getloadavg()}
    with open_index(args.index, Settings.from_env()) as ix:
        for name, mode, filters in rows:
            time_queries(ix.backend, queries, mode, filters)  # untimed: pages a steady server holds
            p = pcts(time_queries(ix.backend, queries, mode, filters))
            out[name] = [round(p["p50"], 1), round(p["p95"], 1)]
    out["loadavg_end"] = os.getloadavg()
    print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
