"""Why `POST /search` bodies changed between two runs of `check_search_identical.py --bodies`.

A change meant to move rankings (issue 37: the paper side reads a full text's first passage where a
paper has no abstract, and the category prior gives a paper without categories the candidates' mean)
must explain every body it changes. For each request whose digest differs, this reads both bodies
and sorts the difference into the first class that fits:

- ``lead``: a paper the lead is about (no abstract, a full text) entered the page, left it, moved or
  changed its score;
- ``uncategorised``: a paper without arXiv categories did (the prior's change); ``lead,
  uncategorised``: papers of both kinds did (most papers without abstract have no categories);
- ``other papers``: other papers entered, left or moved (a fused ranking whose inputs moved);
- ``scores only``: the same papers in the same order, other scores (the paper side's collection
  statistics, document frequencies and mean length, now count the leads' words);
- ``other fields``: the same papers, order and scores; another field (``total_count``, evidence).

with the full-text share of the pages before and after, by mode.

    .venv/bin/python scripts/check_search_identical.py data/index --out before.tsv --bodies before.gz
    (change the code or the index)
    .venv/bin/python scripts/check_search_identical.py data/index --out after.tsv --bodies after.gz
    .venv/bin/python scripts/tool_explain_body_changes.py before.tsv before.gz after.tsv after.gz \\
        --db data/corpus.sqlite
"""

from __future__ import annotations

import argparse
import gzip
import json
import sqlite3
import sys
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

CLASSES = ("lead, uncategorised", "lead", "uncategorised", "other papers", "scores only", "other fields")


def paper_kinds(db: Path) -> tuple[set[str], set[str], set[str]]:
    """(papers without abstract that have a full text, papers without categories, full texts)."""
    con = sqlite3.connect(f"file:{db.resolve()}?mode=ro", uri=True)
    try:
        lead = {
            r[0]
            for r in con.execute(
                "SELECT arxiv_id FROM papers WHERE has_fulltext AND (abstract IS NULL OR abstract = '')"
            )
        }
        bare = {
            r[0]
            for r in con.execute("SELECT arxiv_id FROM papers WHERE categories_json IN ('[]', '', 'null')")
        }
        full = {r[0] for r in con.execute("SELECT arxiv_id FROM papers WHERE has_fulltext")}
    finally:
        con.close()
    return lead, bare, full


def hits(body: dict[str, Any]) -> list[tuple[str, float]]:
    return [(h["arxiv_id"], h.get("score")) for h in body.get("result") or []]


def classify(before: dict[str, Any], after: dict[str, Any], lead: set[str], bare: set[str]) -> str:
    """The first of `CLASSES` that fits: a paper of ``lead`` or ``bare`` that entered, left, moved or
    changed its score; else other papers that moved; else other scores; else another field."""
    a, b = hits(before), hits(after)
    place_a = {x: (i, s) for i, (x, s) in enumerate(a)}
    place_b = {x: (i, s) for i, (x, s) in enumerate(b)}
    changed = {x for x in place_a.keys() | place_b.keys() if place_a.get(x) != place_b.get(x)}
    if changed & lead and changed & bare:
        return "lead, uncategorised"
    if changed & lead:
        return "lead"
    if changed & bare:
        return "uncategorised"
    if [x for x, _ in a] != [x for x, _ in b]:
        return "other papers"
    return "scores only" if a != b else "other fields"


def explain(paths: list[Path], db: Path) -> str:
    before_tsv, before_gz, after_tsv, after_gz = paths
    lead, bare, full = paper_kinds(db)
    labels = [line.split("\t") for line in before_tsv.read_text(encoding="utf-8").splitlines()]
    after_lines = after_tsv.read_text(encoding="utf-8").splitlines()
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    share: dict[str, list[list[float]]] = defaultdict(lambda: [[], []])
    with (
        gzip.open(before_gz, "rt", encoding="utf-8") as fa,
        gzip.open(after_gz, "rt", encoding="utf-8") as fb,
    ):
        for label, after_line, la, lb in zip(labels, after_lines, fa, fb, strict=True):
            mode = label[1]
            ba, bb = json.loads(la), json.loads(lb)
            for side, body in enumerate((ba, bb)):
                ids = [x for x, _ in hits(body)]
                if ids:
                    share[mode][side].append(sum(x in full for x in ids) / len(ids))
            if label[0] == after_line.split("\t", 1)[0]:
                counts[mode]["identical"] += 1
            else:
                counts[mode][classify(ba, bb, lead, bare)] += 1
    head = ["mode", "identical", *CLASSES, "full-text share before", "after"]
    out = ["| " + " | ".join(head) + " |", "|" + "---|" + "---:|" * (len(head) - 1)]
    total: Counter[str] = Counter()
    for mode in sorted(counts):
        c = counts[mode]
        total.update(c)
        sb, sa = (sum(v) / len(v) if v else 0.0 for v in share[mode])
        out.append(
            f"| {mode} | {c['identical']} | "
            + " | ".join(str(c[k]) for k in CLASSES)
            + f" | {sb:.3f} | {sa:.3f} |"
        )
    out.append(f"| all | {total['identical']} | " + " | ".join(str(total[k]) for k in CLASSES) + " | | |")
    return "\n".join(out)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "files", type=Path, nargs=4, metavar="FILE", help="BEFORE.tsv BEFORE.gz AFTER.tsv AFTER.gz"
    )
    ap.add_argument("--db", type=Path, required=True, help="the corpus database both runs searched")
    args = ap.parse_args(argv)
    print(explain(args.files, args.db))
    return 0


if __name__ == "__main__":
    sys.exit(main())
