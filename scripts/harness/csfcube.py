"""CSFCube (faceted query by example) for `bench_csfcube.py`: the collection read from ``../shared``
and the collection's own metrics, written here from their definitions.

The papers' titles and abstracts come from ``readable_annotations/{query}-{facet}-adju.txt`` (the
upstream ``abstracts-csfcube-preds.jsonl`` is not in the shared copy): blocks separated by a line of
``=``, each with ``paper_id: <s2 id>; YEAR: <year>``, ``TITLE: ...`` and ``ABSTRACT:`` followed by one
sentence a line, each prefixed with its (predicted; for query papers corrected) facet label, e.g.
``method_label: ...``.

Metrics as ``eval_scripts/ranking_eval.py`` computes them (CC BY-NC 4.0; read, not copied): relevance
grades 0-3, binary relevance at grade >= 2; average precision over the binary list; "R-precision"
as that script defines it: the precision at the rank of the *last* relevant candidate; NDCG at 20 %
of the pool (``int(0.2 * len(pool))``) on the grades with the DCG whose first two ranks both weigh 1
(``r1 + sum(r_i / log2(i))`` for i >= 2). A split's number is the mean over its queries; the test
number is the mean of the two folds' test halves, the dev number fold 1's dev half.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

FACETS = ("background", "method", "result")
LABEL = re.compile(r"^(background|method|result|objective|other)_label:\s*(.*)$")


@dataclass(frozen=True)
class Paper:
    s2_id: str
    title: str
    year: str
    sentences: tuple[tuple[str, str], ...]
    """(facet label, sentence) in abstract order; labels as the file gives them."""

    @property
    def abstract(self) -> str:
        return " ".join(s for _, s in self.sentences)


def _paper(block: str) -> Paper | None:
    head = re.search(r"paper_id:\s*(\d+);\s*YEAR:\s*(\S*)", block)
    title = re.search(r"^TITLE:\s*(.*)$", block, re.M)
    if head is None or title is None:
        return None
    start = block.find("ABSTRACT:")
    sentences: list[tuple[str, str]] = []
    for raw in block[start + len("ABSTRACT:") :].splitlines() if start >= 0 else ():
        m = LABEL.match(raw.strip())
        if m:
            sentences.append((m[1], m[2].strip()))
        elif raw.strip() and sentences:  # a sentence broken over lines
            sentences[-1] = (sentences[-1][0], sentences[-1][1] + " " + raw.strip())
    return Paper(head[1], title[1].strip(), head[2], tuple(sentences))


@dataclass(frozen=True)
class Collection:
    papers: dict[str, Paper]
    pools: dict[str, dict[str, int]]
    """``"{query}_{facet}"`` -> candidate -> adjudicated grade (0-3)."""
    splits: dict[str, dict[str, list[str]]]
    """facet or ``all`` -> ``fold1_dev`` / ``fold1_test`` / ... -> query keys."""

    @property
    def query_papers(self) -> dict[str, Paper]:
        """The query papers, whose sentence labels the collection's authors corrected by hand."""
        return {k.split("_")[0]: self.papers[k.split("_")[0]] for k in self.pools}


def load(root: Path) -> Collection:
    papers: dict[str, Paper] = {}
    for path in sorted((root / "readable_annotations").glob("*-adju.txt")):
        blocks = re.split(r"^=+\s*$", path.read_text(encoding="utf-8"), flags=re.M)
        for block in blocks:
            p = _paper(block)
            # the first block is the query paper with corrected labels: it wins over a candidate copy
            if p is not None and (p.s2_id not in papers or path.name.startswith(p.s2_id + "-")):
                papers[p.s2_id] = p
    pools: dict[str, dict[str, int]] = {}
    for facet in FACETS:
        gold = json.loads((root / f"test-pid2anns-csfcube-{facet}.json").read_text(encoding="utf-8"))
        for qid, ann in gold.items():
            pools[f"{qid}_{facet}"] = dict(zip(ann["cands"], ann["relevance_adju"], strict=True))
    splits = json.loads((root / "evaluation_splits.json").read_text(encoding="utf-8"))
    return Collection(papers, pools, splits)


# --- metrics ------------------------------------------------------------------------------------


def average_precision(binary: list[int]) -> float:
    hits, total = 0, 0.0
    for i, r in enumerate(binary, 1):
        if r:
            hits += 1
            total += hits / i
    return total / hits if hits else 0.0


def last_relevant_precision(binary: list[int]) -> float:
    """The script's ``r_precision``: precision at the rank of the last relevant candidate."""
    last = max((i for i, r in enumerate(binary, 1) if r), default=0)
    return sum(binary[:last]) / last if last else 0.0


def _dcg(grades: list[int], k: int) -> float:
    g = grades[:k]
    return (g[0] + sum(x / math.log2(i) for i, x in enumerate(g[1:], 2))) if g else 0.0


def ndcg_at(grades: list[int], k: int) -> float:
    best = _dcg(sorted(grades, reverse=True), k)
    return _dcg(grades, k) / best if best else 0.0


def query_metrics(grades: list[int]) -> dict[str, float]:
    """The three reported metrics of one ranked pool given as grades in rank order."""
    binary = [1 if g >= 2 else 0 for g in grades]
    return {
        "map": average_precision(binary),
        "ndcg%20": ndcg_at(grades, int(0.20 * len(grades))),
        "rprec": last_relevant_precision(binary),
    }


def candidates(coll: Collection, key: str) -> list[str]:
    """The pool of query ``key`` without the query paper itself (one pool, 8781666's, lists it; the
    published SPECTER rankings leave it out, and the official script scores the list it is given)."""
    return [c for c in coll.pools[key] if c != key.split("_")[0]]


def ranked_grades(coll: Collection, key: str, ranked: Iterable[str]) -> list[int]:
    """The grades of query ``key``'s candidates in the order ``ranked`` gives (each once, all of them)."""
    pool = coll.pools[key]
    order = list(dict.fromkeys(c for c in ranked if c in pool and c != key.split("_")[0]))
    if len(order) != len(candidates(coll, key)):
        raise ValueError(f"{key}: a ranking covers {len(order)} of {len(candidates(coll, key))} candidates")
    return [pool[c] for c in order]


def aggregate(per_query: dict[str, dict[str, float]], queries: list[str]) -> dict[str, float]:
    names = per_query[queries[0]]
    return {m: sum(per_query[q][m] for q in queries) / len(queries) for m in names}


def split_numbers(
    coll: Collection, per_query: dict[str, dict[str, float]], facet: str, split: str
) -> dict[str, float]:
    """The official aggregation: ``dev`` = fold 1's dev half; ``test`` = the mean of the two folds'
    test halves (each itself a mean over its queries)."""
    folds = ["fold1_dev"] if split == "dev" else ["fold1_test", "fold2_test"]
    each = [aggregate(per_query, coll.splits[facet][f]) for f in folds]
    return {m: sum(e[m] for e in each) / len(each) for m in each[0]}


def evaluate(
    coll: Collection, rankings: dict[str, list[str]], split: str = "test"
) -> dict[str, dict[str, float]]:
    """facet (and ``all``) -> metric -> value, from each query key's ranked candidate ids."""
    per_query = {q: query_metrics(ranked_grades(coll, q, r)) for q, r in rankings.items()}
    return {f: split_numbers(coll, per_query, f, split) for f in (*FACETS, "all")}
