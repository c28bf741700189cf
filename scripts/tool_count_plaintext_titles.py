"""Plain texts of ``../shared`` without a title from the reader, and what the store then derives.

Usage: ``python scripts/tool_count_plaintext_titles.py [PLAINTEXT.jsonl.gz] [--show N]`` prints the
papers read and those without a title from the reader (stored with a derived title,
``title_source: derived``); ``--show N`` prints N randomly drawn (seed 21) derived titles.
"""

from __future__ import annotations

import argparse
import random
from pathlib import Path

from openxiv.corpus.merge import state_from_record
from openxiv.corpus.readers.plaintext import read_plaintext
from openxiv.corpus.records import PaperRecord

DEFAULT = Path(__file__).resolve().parent.parent.parent / "shared/data/fulltext/plaintext-9108-1612.jsonl.gz"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("path", nargs="?", type=Path, default=DEFAULT)
    ap.add_argument("--show", type=int, default=0)
    args = ap.parse_args()
    read = untitled = 0
    derived: list[tuple[str, str]] = []
    for rec in read_plaintext(args.path):
        if not isinstance(rec, PaperRecord):
            continue
        read += 1
        if not rec.title:
            untitled += 1
            derived.append((rec.arxiv_id, state_from_record(rec).title or ""))

    print(f"{args.path.name}: {read:,} papers, {untitled:,} without a title from the reader (derived)")
    rng = random.Random(21)
    for arxiv_id, title in rng.sample(derived, min(args.show, len(derived))):
        print(f"derived  {arxiv_id}: {title}")


if __name__ == "__main__":
    main()
