"""The in-corpus citation count a paper is served with (a search hit's ``citation_count``, a brief's
``citations``, S2's ``citationCount``, ``sort=citations``), held to a tagged question's date ceiling.

Without a ceiling it is the snapshot's stored count (`openxiv.indexer.snapshot.OpenIndex.citation_count`,
``None`` for a snapshot built before counts). Under one (``--cutoffs``) only the citing papers dated on
or before it count, read from the snapshot's references table: a later paper's citation is not
evidence an agent of that date could have had. A count shows no paper, so nothing is counted as a leak.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from openxiv.indexer import layout
from openxiv.indexer.snapshot import OpenIndex
from openxiv.indexer.tables.references import ReferenceTable
from openxiv.service.experiments.context import after_cutoff
from openxiv.service.experiments.context import current as current_call

__all__ = ["citation_counts"]


def citation_counts(index: OpenIndex, ids: Sequence[str]) -> dict[str, int | None]:
    """The in-corpus citation count of each of ``ids`` (``None``: the snapshot keeps no counts or
    holds no such paper), counting only citing papers on or before the call's ceiling when it has one."""
    counts = {aid: index.citation_count(aid) for aid in ids}
    state = current_call()
    if state is None or state.ceiling is None or not any(counts.values()):
        return counts
    table = ReferenceTable.load(Path(index.path) / layout.REFERENCES)
    if table is None:
        return counts
    citing = {aid: table.cited_by(aid) for aid, n in counts.items() if n}
    later = after_cutoff(index.store.get_papers(sorted({c for ids in citing.values() for c in ids})))
    for aid, ids in citing.items():
        counts[aid] = sum(1 for c in ids if c not in later)
    return counts
