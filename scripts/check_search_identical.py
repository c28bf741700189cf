"""`POST /search` bodies before and after a speed change: byte for byte, on real dev queries.

A speed lever for search (issue 13) must not change a single byte of any response. This runs the
shared dev queries (topic + known-item, interleaved: `harness.data.load_queries`) in process through
`openxiv.service.search.deepxiv_search` + `search_json` (the exact body `POST /search` sends) on every
combination of mode (the default fusion and three others), filter (none / ``categories=["cs.CL"]``)
and one of three pages that rotate with the query (``top_k``/``offset`` 10/0, 5/10, 20/3: the first
page, one past the head that feedback keeps, and one straddling it), and writes one line per
request: ``sha256 <tab> mode <tab> filter <tab> page <tab> query``. Two runs are compared with
``--compare``.

With ``--url`` the same requests go to a running server as ``POST /search`` and the digests are of
the HTTP bodies as received, so a change to the HTTP layer (parser, middleware, response building)
is checked against the in-process bodies of the code before it.

Digests compare two runs on one machine with the same library versions (faiss-cpu, onnxruntime,
NumPy): another CPU's kernels may change a score's last float32 digits and so a body's bytes
(docs/indexing.md, «Dense scores across CPUs»). Never compare with digests made elsewhere.

    .venv/bin/python scripts/check_search_identical.py data/index --out before.tsv
    (change the code)
    .venv/bin/python scripts/check_search_identical.py data/index --out after.tsv --compare before.tsv
    .venv/bin/python scripts/check_search_identical.py data/index --url http://127.0.0.1:8000 \
        --out http.tsv --compare before.tsv

A change that fills a field every hit carries (issue 41: ``citation_count``, null before, the in-corpus
count after) changes every body by that field alone. ``--mask FIELD`` digests each body with every
``"FIELD": <value>`` written as ``"FIELD": null``, so a comparison with digests of the code before
shows that nothing else moved; the unmasked run shows how many bodies the field changed.

    .venv/bin/python scripts/check_search_identical.py data/index --out after-masked.tsv \
        --mask citation_count --compare before.tsv
"""

from __future__ import annotations

import argparse
import contextlib
import gzip
import hashlib
import re
import sys
import time
from collections.abc import Callable
from pathlib import Path

import httpx

sys.path.insert(0, str(Path(__file__).resolve().parent))
from harness.data import SharedData, load_queries
from harness.requests import FILTERS, MODES, PAGES

from openxiv.corpus.settings.model import get_settings, shared_dir
from openxiv.service.holder import IndexHolder
from openxiv.service.params import build_filters
from openxiv.service.search import deepxiv_search, search_json
from openxiv.service.spec import SearchSpec

Body = Callable[[str, int, int, str | None, tuple[str, ...]], bytes]
"""One request (query, top_k, offset, mode, categories) -> the response body."""


def in_process(index: Path) -> tuple[Body, Callable[[], None]]:
    """Bodies from `deepxiv_search` + `search_json` in this process (and the closer)."""
    settings = get_settings()
    holder = IndexHolder(index, settings)
    holder.load()

    def body(q: str, top_k: int, offset: int, mode: str | None, cats: tuple[str, ...]) -> bytes:
        spec = SearchSpec(
            queries=(q,),
            top_k=top_k,
            offset=offset,
            filters=build_filters(categories=list(cats) or None),
            mode=mode,
        )
        resp, _ = deepxiv_search(holder, spec, settings=settings)
        return search_json(resp).encode("utf-8")

    return body, holder.close


def over_http(url: str) -> tuple[Body, Callable[[], None]]:
    """Bodies of ``POST /search`` from the server at ``url``, as received."""
    client = httpx.Client(base_url=url, timeout=120)

    def body(q: str, top_k: int, offset: int, mode: str | None, cats: tuple[str, ...]) -> bytes:
        request: dict[str, object] = {"query": q, "top_k": top_k, "offset": offset, "return_contents": True}
        if mode is not None:
            request["mode"] = mode
        if cats:
            request["categories"] = list(cats)
        r = client.post("/search", json=request)
        r.raise_for_status()
        return r.content

    return body, client.close


def masked(body: Body, field: str) -> Body:
    """``body`` with every ``"field": <int or null>`` of it written as ``"field": null``."""
    pattern = re.compile(rb'"' + re.escape(field.encode()) + rb'":\s*(?:-?\d+|null)')
    replacement = b'"' + field.encode() + b'":null'

    def out(q: str, top_k: int, offset: int, mode: str | None, cats: tuple[str, ...]) -> bytes:
        return pattern.sub(replacement, body(q, top_k, offset, mode, cats))

    return out


def run(
    body: Body,
    shared: Path,
    n: int,
    out: Path,
    modes: tuple[str | None, ...] = MODES,
    bodies: Path | None = None,
) -> int:
    """Send every request, write its digest line to ``out`` (and, with ``bodies``, the body itself
    as one gzipped line each, in the same order: what `scripts/tool_explain_body_changes.py` reads)."""
    queries = load_queries(SharedData(shared), n)
    lines = 0
    t = time.process_time()
    with out.open("w", encoding="utf-8") as fh, contextlib.ExitStack() as stack:
        keep = stack.enter_context(gzip.open(bodies, "wb")) if bodies is not None else None
        for i, q in enumerate(queries):
            top_k, offset = PAGES[i % len(PAGES)]
            for mode in modes:
                for cats in FILTERS:
                    data = body(q, top_k, offset, mode, cats)
                    digest = hashlib.sha256(data).hexdigest()
                    page = f"{top_k}/{offset}"
                    fh.write(f"{digest}\t{mode}\t{','.join(cats)}\t{page}\t{q[:80]!r}\n")
                    if keep is not None:
                        keep.write(data.replace(b"\n", b" ") + b"\n")
                    lines += 1
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
    ap.add_argument("--url", help="send POST /search to this running server instead of searching in process")
    ap.add_argument("--bodies", type=Path, help="also keep every body here (gzipped, one per line)")
    ap.add_argument("--mask", metavar="FIELD", help="digest each body with this hit field written as null")
    ap.add_argument(
        "--modes",
        help="comma-separated modes instead of the default set (default = the configured one), e.g. "
        "default,bm25 for an index built without vectors",
    )
    args = ap.parse_args(argv)
    body, close = over_http(args.url) if args.url else in_process(args.index)
    if args.mask:
        body = masked(body, args.mask)
    try:
        modes = tuple(None if m == "default" else m for m in args.modes.split(",")) if args.modes else MODES
        run(body, args.shared or shared_dir(), args.queries, args.out, modes, args.bodies)
    finally:
        close()
    return compare(args.out, args.compare) if args.compare else 0


if __name__ == "__main__":
    sys.exit(main())
