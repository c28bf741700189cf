"""Check the resolution of bibliography entries by hand: draw a sample, label it, measure precision
and recall (issue 41).

    python scripts/tool_citation_sample.py --db data/corpus.sqlite --draw      # print what to label
    python scripts/tool_citation_sample.py --db data/corpus.sqlite --report    # precision and recall

Both resolve every bibliography of ``--db`` as an index build does
(`openxiv.indexer.building.references.write_references` into a temporary directory). ``--draw``
prints, for a person to read, two kinds of entries:

- **resolutions**: every entry resolved to a corpus paper (by a printed arXiv id, a DOI or title and
  year), plus a seeded sample of entries resolved to an arXiv id outside the corpus, up to ``--n``
  (default 220), each with the entry's text and the resolved paper's title, first author and year;
- **candidates**: entries the resolver left without a corpus paper that a loose matcher (most of a
  corpus title's rarer words in the entry, and its first author's surname) pairs with one; a person
  decides whether the entry cites it (then resolving it was missed) or not.

Labels live in ``scripts/citation_labels.json``: ``[{citing, position, sha, truth, kind}]``: the entry
(its paper, its place, the first 8 hex digits of the sha256 of its text, so a changed parse shows),
and ``truth``, the arXiv id the entry cites as the person read it (``null``: none that the entry or
the corpus shows). ``--report`` resolves again and counts, over the labelled entries whose text
still matches: **precision** = resolutions equal to the truth / resolutions; **recall** = entries
whose truth is a corpus paper that resolved to it / entries whose truth is a corpus paper (every
in-corpus resolution and every candidate is labelled, so the second set is all the in-corpus
citations the loose matcher can see).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import random
import sqlite3
import sys
import tempfile
from collections import Counter, defaultdict
from pathlib import Path
from typing import Any

from openxiv.corpus.normalize import fold
from openxiv.indexer.building.references import write_references
from openxiv.indexer.tables.references import ReferenceTable

LABELS = Path(__file__).with_name("citation_labels.json")


def sha(text: str | None) -> str:
    return hashlib.sha256((text or "").encode()).hexdigest()[:8]


def _parsed(db: Path) -> set[str]:
    """The papers whose bibliography openxiv parsed (plain-text and PDF inputs), not unArXive's."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = con.execute(
        "SELECT p.arxiv_id, s.source FROM papers p JOIN paper_sources s ON s.paper_id = p.id"
    ).fetchall()
    con.close()
    unarxive = {aid for aid, src in rows if src.startswith("unarxive")}
    return {aid for aid, src in rows if src.startswith(("plaintext", "pdf"))} - unarxive


def resolve_all(db: Path) -> list[dict[str, Any]]:
    """Every entry of every bibliography openxiv parsed: citing, position, text, cited id, in corpus."""
    parsed = _parsed(db)
    out: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        write_references(db, Path(tmp))
        table = ReferenceTable(Path(tmp))
        ids = [bytes(x).decode() for x in table.ids]
        for r, aid in enumerate(ids):
            lo, hi = int(table.refs_ptr[r]), int(table.refs_ptr[r + 1])
            if hi == lo or aid not in parsed:
                continue
            for pos, (cited, text, _ctx) in enumerate(table.entries(aid) or []):
                row = table.row(cited) if cited else None
                inside = bool(row is not None and table.in_corpus[row])
                out.append(
                    {"citing": aid, "position": pos, "text": text, "cited": cited, "in_corpus": inside}
                )
    return out


def _papers(db: Path) -> dict[str, tuple[str, str, str]]:
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    rows = con.execute("SELECT arxiv_id, title, authors_json FROM papers").fetchall()
    con.close()
    out = {}
    for aid, title, authors in rows:
        names = json.loads(authors or "[]")
        out[aid] = (title or "", names[0] if names else "", aid)
    return out


def _loose(
    entries: list[dict[str, Any]], papers: dict[str, tuple[str, str, str]]
) -> list[tuple[dict[str, Any], str]]:
    """Entries without a corpus paper paired with one by most of its title's rarer words + surname."""
    df: Counter[str] = Counter()
    words: dict[str, set[str]] = {}
    for aid, (title, _, _) in papers.items():
        toks = set(fold(title).split())
        if len(toks) >= 3:
            words[aid] = toks
            df.update(toks)
    postings: dict[str, list[str]] = defaultdict(list)
    for aid, toks in words.items():
        for t in toks:
            if df[t] <= 3000:
                postings[t].append(aid)
    out = []
    for e in entries:
        if e["in_corpus"] or not e["text"]:
            continue
        toks = set(fold(e["text"]).split())
        hits: Counter[str] = Counter()
        for t in toks:
            hits.update(postings.get(t, ()))
        for aid, n in hits.most_common(5):
            rare = sum(1 for t in words[aid] if df[t] <= 3000)
            surname = (fold(papers[aid][1]).split() or [""])[-1]
            if aid != e["citing"] and rare and n >= max(2, 0.6 * rare) and surname and surname in toks:
                out.append((e, aid))
    return out


def _show(e: dict[str, Any], aid: str | None, papers: dict[str, tuple[str, str, str]], kind: str) -> None:
    title, first, _ = papers.get(aid or "", ("", "", ""))
    print(f"## {kind} {e['citing']} #{e['position']} sha={sha(e['text'])} -> {aid}")
    print(f"   entry: {(e['text'] or '')[:300]}")
    if aid in papers:
        print(f"   paper: {title[:150]} | {first} | {aid}")


def draw(db: Path, n: int, seed: int) -> None:
    entries = resolve_all(db)
    papers = _papers(db)
    inside = [e for e in entries if e["in_corpus"]]
    outside = [e for e in entries if e["cited"] and not e["in_corpus"]]
    random.Random(seed).shuffle(outside)
    for e in inside + outside[: max(0, n - len(inside))]:
        _show(e, e["cited"], papers, "resolution")
    for e, aid in _loose(entries, papers):
        _show(e, aid, papers, "candidate")


def report(db: Path) -> dict[str, Any]:
    labels = json.loads(LABELS.read_text(encoding="utf-8"))
    entries = {(e["citing"], e["position"]): e for e in resolve_all(db)}
    corpus = set(_papers(db))
    resolved = correct = should = found = stale = 0
    wrong: list[str] = []
    for lab in labels:
        e = entries.get((lab["citing"], lab["position"]))
        if e is None or sha(e["text"]) != lab["sha"]:
            stale += 1
            continue
        truth = lab["truth"]
        if e["cited"] is not None:
            resolved += 1
            correct += e["cited"] == truth
            if e["cited"] != truth:
                wrong.append(f"{lab['citing']} #{lab['position']}: {e['cited']} (truth {truth})")
        if truth is not None and truth in corpus:
            should += 1
            found += e["cited"] == truth
    out = {
        "labelled": len(labels),
        "stale": stale,
        "resolutions": resolved,
        "correct": correct,
        "precision": round(correct / resolved, 4) if resolved else None,
        "should_resolve_in_corpus": should,
        "resolved_in_corpus": found,
        "recall": round(found / should, 4) if should else None,
        "wrong": wrong,
    }
    print(json.dumps(out, indent=1))
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--db", type=Path, default=Path("data/corpus.sqlite"))
    ap.add_argument("--draw", action="store_true")
    ap.add_argument("--report", action="store_true")
    ap.add_argument("--n", type=int, default=220)
    ap.add_argument("--seed", type=int, default=41)
    args = ap.parse_args(argv)
    if not args.db.is_file():
        print(f"no corpus database at {args.db}", file=sys.stderr)
        return 2
    if args.draw:
        draw(args.db, args.n, args.seed)
    else:
        report(args.db)
    return 0


if __name__ == "__main__":
    sys.exit(main())
