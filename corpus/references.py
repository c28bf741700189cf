"""Papers' bibliographies in the corpus database (``paper_references``): written by an ingest, read by
an index build.

Only unArXive inputs carry bibliographies (`openxiv.corpus.readers.unarxive.references`): each entry
is the arXiv id it resolves to (canonical, version-free) and its printed text; an entry that
resolves to no arXiv id keeps only its text. A paper's list is replaced as a whole, by the merge
rules of `openxiv.corpus.merge`: a record's non-empty list replaces the stored one unless the record
is older (`is_older`) and the paper has one already. A tie replaces (the last one read wins), so a
file read again under newer reader rules updates its lists, and re-ingesting the same inputs in the
same order writes nothing: the lists are equal, and an equal list is not written. A record without references (every listing, OAI,
plain-text and PDF record) never touches the list, and nothing of a paper's indexed content
(``content_hash``) depends on it.

The corpus fingerprint (`openxiv.corpus.store.Store.fingerprint`) covers the lists (`digest`) when
the database holds any, so an index build with ``--if-changed`` rebuilds after a re-ingest that
added them; a database without references keeps the fingerprint it had.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import cast

from sqlalchemy import Connection, Table, inspect

from openxiv.corpus.merge import PaperState, is_older
from openxiv.corpus.records import PaperRecord, Reference
from openxiv.corpus.schema import ReferenceRow

__all__ = ["REFERENCE_RULES", "ReferenceOffers", "digest", "has_table", "iter_references"]

REFS: Table = cast(Table, ReferenceRow.__table__)
REFERENCE_RULES = 1
"""Version of what the unArXive reader makes of ``bib_entries``: part of the ingest key of unArXive
files only (`openxiv.corpus.inputs.read_key`), so ``--skip-unchanged`` reads them again once."""

_IN = 900


@dataclass
class ReferenceOffers:
    """The reference lists the records of one ingest batch offer, and which of them to write."""

    offers: list[tuple[str, tuple[Reference, ...], bool]] = field(default_factory=list)
    """``(arxiv_id, references, older than the paper before it)`` per record that has references."""

    def offer(self, cur: PaperState | None, rec: PaperRecord) -> None:
        """Note ``rec``'s references, with whether it is older than ``cur`` (the paper before it)."""
        if rec.references:
            self.offers.append((rec.arxiv_id, tuple(rec.references), is_older(cur, rec)))

    def write(self, conn: Connection, paper_ids: dict[str, int]) -> list[str]:
        """Write the lists that change what is stored (``paper_ids``: the row id of every paper of the
        batch); the arXiv ids of the papers whose list changed."""
        if not self.offers:
            return []
        wanted = {aid: paper_ids[aid] for aid, _, _ in self.offers}
        stored = _stored(conn, list(wanted.values()))
        chosen: dict[str, tuple[Reference, ...]] = {}
        for aid, refs, older in self.offers:
            have = chosen.get(aid, stored.get(wanted[aid], ()))
            if not older or not have:
                chosen[aid] = refs
        changed = {aid: refs for aid, refs in chosen.items() if refs != stored.get(wanted[aid], ())}
        pids = [wanted[aid] for aid in changed]
        for start in range(0, len(pids), _IN):
            part = tuple(pids[start : start + _IN])
            conn.exec_driver_sql(
                f"DELETE FROM {REFS.name} WHERE paper_id IN ({', '.join('?' * len(part))})", part
            )
        rows = [
            (wanted[aid], i, r.arxiv_id, r.text, r.context)
            for aid, refs in changed.items()
            for i, r in enumerate(refs)
        ]
        if rows:
            sql = f"INSERT INTO {REFS.name} (paper_id, position, cited_id, text, context) VALUES (?, ?, ?, ?, ?)"
            conn.exec_driver_sql(sql, rows)
        return list(changed)


def _stored(conn: Connection, pids: Sequence[int]) -> dict[int, tuple[Reference, ...]]:
    out: dict[int, list[Reference]] = {}
    for start in range(0, len(pids), _IN):
        part = tuple(pids[start : start + _IN])
        sql = (
            f"SELECT paper_id, cited_id, text, context FROM {REFS.name} "
            f"WHERE paper_id IN ({', '.join('?' * len(part))}) ORDER BY paper_id, position"
        )
        for pid, cited, text, context in conn.exec_driver_sql(sql, part):
            out.setdefault(pid, []).append(Reference(cited, text, context))
    return {pid: tuple(refs) for pid, refs in out.items()}


def has_table(conn: Connection) -> bool:
    """The database has ``paper_references`` (one made before it, opened read-only, has not)."""
    return REFS.name in inspect(conn).get_table_names()


def iter_references(conn: Connection, by_arxiv_id: bool = False) -> Iterator[tuple[str, list[Reference]]]:
    """Every paper that has a bibliography, by arXiv id, with its references in order (nothing for a
    database made before references were stored): in row order, or in arXiv id order with
    ``by_arxiv_id`` (what an index build walks)."""
    if not has_table(conn):
        return
    columns = {c["name"] for c in inspect(conn).get_columns(REFS.name)}
    context = "r.context" if "context" in columns else "NULL"  # a read-only database made before it
    sql = (
        f"SELECT p.arxiv_id, r.cited_id, r.text, {context} FROM {REFS.name} r "
        f"JOIN papers p ON p.id = r.paper_id ORDER BY {'p.arxiv_id' if by_arxiv_id else 'r.paper_id'}, r.position"
    )
    current: str | None = None
    refs: list[Reference] = []
    for aid, cited, text, ctx in conn.execution_options(yield_per=10_000).exec_driver_sql(sql):
        if aid != current:
            if current is not None:
                yield current, refs
            current, refs = aid, []
        refs.append(Reference(cited, text, ctx))
    if current is not None:
        yield current, refs


def digest(conn: Connection) -> str | None:
    """SHA-256 over every paper's references, or ``None`` when the database holds none."""
    h = hashlib.sha256()
    n = 0
    for aid, refs in iter_references(conn):
        n += 1
        h.update(aid.encode())
        for r in refs:
            h.update(f"\x1f{r.arxiv_id or ''}\x1e{r.text or ''}".encode("utf-8", "surrogatepass"))
            if r.context is not None:  # lists without contexts keep the digest they had
                h.update(f"\x1d{r.context}".encode("utf-8", "surrogatepass"))
        h.update(b"\n")
    return h.hexdigest() if n else None
