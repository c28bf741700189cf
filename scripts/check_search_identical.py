"""`POST /search` bodies before and after a speed change: byte for byte, on real dev queries.

A speed lever for search (issue 13) must not change a single byte of any response. This runs the
shared dev queries (topic + known-item, interleaved: `bench_service.load_queries`) in process through
`routes_search.deepxiv_search` + `search_json` (the exact body `POST /search` sends) on every
combination of mode (the default fusion and three others), filter (none / ``categories=["cs.CL"]``)
and one of three pages that rotate with the query (``top_k``/``offset`` 10/0, 5/10, 20/3: the first
page, one past the head that feedback keeps, and one straddling it), and writes one line per
request: ``sha256 <tab> mode <tab> filter <tab> page <tab> query``. Two runs are compared with
``--compare``.

    .venv/bin/python scripts/check_search_identical.py /work/data/final/index --out before.tsv
    (change the code)
    .venv/bin/python scripts/check_search_identical.py /work/data/final/index --out after.tsv --compare before.tsv
"""

from __future__ import annotations

import argparse
import hashlib
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_service import load_queries

from openxiv.corpus.config import get_settings, shared_dir
from openxiv.evaluator.shared import SharedData
from openxiv.service.holder import IndexHolder
from openxiv.service.params import build_filters
from openxiv.service.routes_search import deepxiv_search, search_json

MODES = (None, "rrf", "zscore", "bm25")
"""The default (``weighted`` fusion with feedback), the two other fusions (feedback too) and BM25 alone."""
PAGES = ((10, 0), (5, 10), (20, 3))
FILTERS = ((), ("cs.CL",))


def run(index: Path, shared: Path, n: int, out: Path) -> int:
    settings = get_settings()
    holder = IndexHolder(index, settings)
    holder.load()
    queries = load_queries(SharedData(shared), n)
    lines = 0
    t = time.process_time()
    try:
        with out.open("w", encoding="utf-8") as fh:
            for i, q in enumerate(queries):
                top_k, offset = PAGES[i % len(PAGES)]
                for mode in MODES:
                    for cats in FILTERS:
                        filters = build_filters(categories=list(cats) or None)
                        resp, _ = deepxiv_search(
                            holder,
                            [q],
                            top_k=top_k,
                            offset=offset,
                            filters=filters,
                            mode=mode,
                            contents=True,
                            batch=False,
                            settings=settings,
                        )
                        digest = hashlib.sha256(search_json(resp).encode("utf-8")).hexdigest()
                        page = f"{top_k}/{offset}"
                        fh.write(f"{digest}\t{mode}\t{','.join(cats)}\t{page}\t{q[:80]!r}\n")
                        lines += 1
    finally:
        holder.close()
    cpu = time.process_time() - t
    print(f"{lines} responses from {len(queries)} queries in {cpu:.1f} CPU s -> {out}")
    return lines


def compare(after: Path, before: Path) -> int:
    a = after.read_text(encoding="utf-8").splitlines()
    b = before.read_text(encoding="utf-8").splitlines()
    if len(a) != len(b):
        print(f"DIFFERENT: {len(a)} responses vs {len(b)}")
        return 1
    diff = [(x, y) for x, y in zip(a, b, strict=True) if x != y]
    for x, _ in diff[:10]:
        print("differs:", x.split("\t", 1)[1])
    print(f"{len(a) - len(diff)} of {len(a)} responses byte-identical")
    return 1 if diff else 0


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("index", type=Path, help="index root (or snapshot)")
    ap.add_argument("--out", type=Path, required=True, help="where to write the digests")
    ap.add_argument("--compare", type=Path, help="an earlier --out to compare with")
    ap.add_argument("--queries", type=int, default=300)
    ap.add_argument("--shared", type=Path, default=None, help="shared data (default: OPENXIV_SHARED)")
    args = ap.parse_args(argv)
    run(args.index, args.shared or shared_dir(), args.queries, args.out)
    return compare(args.out, args.compare) if args.compare else 0


if __name__ == "__main__":
    sys.exit(main())
