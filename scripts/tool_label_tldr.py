"""Label tldrs by hand: a seeded sample of papers, their tldr, and the count of boilerplate ones.

    python scripts/tool_label_tldr.py --db data/corpus.sqlite              # print the sample (id, kind, tldr)
    python scripts/tool_label_tldr.py --db data/corpus.sqlite --report     # count the labels in the file
    python scripts/tool_label_tldr.py --db corpus-before.sqlite --before   # the old tldr rule, old corpus

The sample is drawn with ``--seed`` from three strata so every kind of paper is in it: papers with a
plain-text full text (``--plaintext``, default 80), with a PDF (all of them, at most ``--pdf``, default
28) and the rest (listing, OAI, unarXive metadata) up to ``--n`` (default 200). ``--before`` prints
the tldr the old code served (the first sentence, plus the second when the first is short, of the
abstract or else the first non-empty section) for the same kind of sample of an old database.

Labels live in ``scripts/tldr_labels.json``: ``{"after": {id: "ok" | "boilerplate" | "none"}, "before":
...}`` (``none``: the paper is served without a tldr),
written by a person reading the printed sample. A tldr is boilerplate when it is not a sentence of the
paper's prose: a page header, report number, author list, affiliation, TeX residue, a caption or a
heading. ``--report`` prints, per set, how many of the sampled papers are labelled and how many of
those are boilerplate, and lists sampled papers that have no label yet.
"""

from __future__ import annotations

import argparse
import json
import random
import sqlite3
import sys
from pathlib import Path

from openxiv.corpus.store import Store
from openxiv.corpus.text import TLDR_MIN_CHARS, paper_tldr, split_sentences

LABELS = Path(__file__).with_name("tldr_labels.json")
KINDS = ("plaintext", "pdf", "other")


def sample(db: Path, seed: int, n: int, n_plain: int, n_pdf: int) -> list[tuple[str, str]]:
    """``(arxiv_id, kind)`` of the sample, in a stable order."""
    con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
    try:
        rows = con.execute(
            "SELECT p.arxiv_id, group_concat(s.source, ' ') FROM papers p "
            "JOIN paper_sources s ON s.paper_id = p.id GROUP BY p.id ORDER BY p.arxiv_id"
        ).fetchall()
    finally:
        con.close()
    by_kind: dict[str, list[str]] = {k: [] for k in KINDS}
    for aid, sources in rows:
        kind = "pdf" if "pdf:" in sources else "plaintext" if "plaintext:" in sources else "other"
        by_kind[kind].append(aid)
    rng = random.Random(seed)
    pdf = rng.sample(by_kind["pdf"], min(n_pdf, len(by_kind["pdf"])))
    plain = rng.sample(by_kind["plaintext"], min(n_plain, len(by_kind["plaintext"])))
    other = rng.sample(by_kind["other"], max(0, n - len(pdf) - len(plain)))
    return [(a, "plaintext") for a in plain] + [(a, "pdf") for a in pdf] + [(a, "other") for a in other]


def old_tldr(text: str | None) -> str | None:
    """The rule before issue 9: the first sentence, plus the second when the first is short."""
    sentences = split_sentences(text or "")
    if not sentences:
        return None
    out = sentences[0]
    if len(out) < TLDR_MIN_CHARS and len(sentences) > 1:
        out = f"{out} {sentences[1]}"
    return out


def tldrs(db: Path, picked: list[tuple[str, str]], before: bool) -> list[tuple[str, str, str | None]]:
    out = []
    with Store.open_readonly(db) as store:
        papers = store.get_papers([a for a, _ in picked])
        for aid, kind in picked:
            paper = papers[aid]
            lead = None if paper.abstract else store.lead_section(aid)
            if before:
                text = old_tldr(paper.abstract if paper.abstract else lead.text if lead else None)
            else:
                text = paper_tldr(paper, [lead] if lead is not None else None)
            out.append((aid, kind, text))
    return out


def report(picked: list[tuple[str, str]], labels: dict[str, str], name: str) -> int:
    ids = [a for a, _ in picked]
    labelled = [a for a in ids if a in labels]
    bad = [a for a in labelled if labels[a] == "boilerplate"]
    none = [a for a in labelled if labels[a] == "none"]
    print(
        f"{name}: {len(labelled)} of {len(ids)} sampled papers labelled, {len(bad)} boilerplate, "
        f"{len(none)} without a tldr"
    )
    for kind in KINDS:
        kind_ids = [a for a, k in picked if k == kind and a in labels]
        kind_bad = [a for a in kind_ids if labels[a] == "boilerplate"]
        print(f"  {kind:<10} {len(kind_ids):>4} labelled, {len(kind_bad):>3} boilerplate")
    missing = [a for a in ids if a not in labels]
    if missing:
        print(f"  not labelled yet: {' '.join(missing[:20])}{' ...' if len(missing) > 20 else ''}")
    return len(bad)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--db", type=Path, required=True, help="Corpus database to sample from.")
    ap.add_argument("--seed", type=int, default=9)
    ap.add_argument("--n", type=int, default=200, help="Sample size.")
    ap.add_argument("--plaintext", type=int, default=80, help="Papers with a plain-text full text.")
    ap.add_argument("--pdf", type=int, default=28, help="Papers with a PDF, at most.")
    ap.add_argument("--before", action="store_true", help="The old tldr rule; labels of the 'before' set.")
    ap.add_argument("--report", action="store_true", help="Count the labels instead of printing tldrs.")
    ap.add_argument("--labels", type=Path, default=LABELS, help="Labels file (JSON).")
    args = ap.parse_args(argv)
    picked = sample(args.db, args.seed, args.n, args.plaintext, args.pdf)
    name = "before" if args.before else "after"
    if args.report:
        stored = json.loads(args.labels.read_text(encoding="utf-8")) if args.labels.is_file() else {}
        report(picked, stored.get(name, {}), name)
        return 0
    for aid, kind, text in tldrs(args.db, picked, args.before):
        print(f"{aid}\t{kind}\t{text!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
