"""The search rounds of the agent search (issue 41, item 5): how many ``effort`` buys and what each does.

DeepXiv's agent search gathers over one to five rounds by ``effort``; openxiv runs `ROUNDS` of them
(``default`` 1, ``high`` 3, ``xhigh`` 5), without an LLM (with one, a reformulation searches the
queries it proposes instead: `openxiv.service.agent_llm`):

1. **search**: the question as asked (the one round of ``default``, whose answer is unchanged);
2. **reformulate**: the question plus title words of the best papers so far that the question
   lacks (`reformulation`: at most `EXTRA_WORDS` words of 4+ letters outside `STOP` from the
   `SEED_PAPERS` best titles, those two titles or more share first, then in the titles' order; a
   round with nothing to add searches nothing and says ``query: null``);
3. **hop**: one hop over the citation graph: the corpus papers the best papers cite and that cite
   them (`openxiv.service.references`, in-corpus only), in the order found;

and, at ``xhigh``, a second reformulation and a second hop from the papers the first rounds ranked
best. Every round's list is deduplicated against what came before; the sources are the rounds'
lists fused by reciprocal rank (``1 / (RRF_K + rank)`` summed over the rounds a paper is in, ties in
first-seen order), cut to ``top_k``: a paper several rounds find rises. The stream reports each round
(``round`` events: its number, kind, query or seeds, papers found and new).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field

from openxiv.corpus.text import paper_tldr
from openxiv.indexer.backend import PaperHit
from openxiv.indexer.snapshot import OpenIndex
from openxiv.service.citations import citation_counts
from openxiv.service.errors import ApiError
from openxiv.service.models import Hit
from openxiv.service.references import cited_by, references
from openxiv.service.titles import titled
from openxiv.service.views import ResolvedHit, to_deepxiv_hit

__all__ = [
    "EXTRA_WORDS",
    "ROUNDS",
    "RRF_K",
    "SEED_PAPERS",
    "Round",
    "fuse",
    "hop_hits",
    "plan",
    "reformulation",
]

ROUNDS = {"default": 1, "high": 3, "xhigh": 5}
"""Search rounds per ``effort``."""
SEED_PAPERS = 3
"""Best papers so far that a reformulation reads the titles of, and a hop starts from."""
EXTRA_WORDS = 3
RRF_K = 60
HOP_MAX = 50
"""Most papers one hop adds."""
STOP = frozenset(
    [
        "with",
        "from",
        "that",
        "this",
        "their",
        "these",
        "those",
        "into",
        "over",
        "under",
        "using",
        "based",
        "towards",
        "toward",
        "via",
        "about",
        "between",
        "through",
        "without",
        "within",
        "study",
        "analysis",
        "approach",
        "method",
        "methods",
        "model",
        "models",
        "paper",
        "new",
        "learning",
        "large",
        "language",
    ]
)
_WORD = re.compile(r"[A-Za-z][A-Za-z-]{3,}")


@dataclass
class Round:
    """One round as it ran: its number and kind, what it searched (``query``) or started from
    (``seeds``), and the papers it found, best first."""

    number: int
    kind: str
    query: str | None = None
    seeds: list[str] = field(default_factory=list)
    hits: list[Hit] = field(default_factory=list)
    new: int = 0
    total: int = 0
    """Papers the round's search matched (0 for a hop)."""
    queries: list[str] | None = None
    """The queries the answer LLM proposed for a reformulation round (searched each, fused);
    ``None`` when the round's query is the title reformulation."""

    def event(self) -> dict[str, object]:
        out: dict[str, object] = {"event": "round", "round": self.number, "kind": self.kind}
        out.update({"seeds": self.seeds} if self.kind == "hop" else {"query": self.query})
        if self.queries is not None:
            out.update({"queries": self.queries, "by": "llm"})
        out.update({"found": len(self.hits), "new": self.new})
        return out


def plan(effort: str) -> list[str]:
    """The kinds of the rounds ``effort`` runs, in order."""
    kinds = ["search", "reformulate", "hop", "reformulate", "hop"]
    return kinds[: ROUNDS.get(effort, 1)]


def reformulation(query: str, best: list[Hit]) -> str | None:
    """The question plus the title words its best papers share (see the module doc); ``None`` when
    there is nothing to add."""
    asked = {w.lower() for w in _WORD.findall(query)}
    words = [
        w for h in best[:SEED_PAPERS] for w in dict.fromkeys(x.lower() for x in _WORD.findall(h.title or ""))
    ]
    fresh = [w for w in dict.fromkeys(words) if w not in asked and w not in STOP]
    counts = Counter(words)
    # shared by two titles or more first, then the rest in the order of the best titles
    extra = sorted(fresh, key=lambda w: counts[w] < 2)[:EXTRA_WORDS]
    return f"{query} {' '.join(extra)}" if extra else None


def hop_hits(index: OpenIndex, seeds: Iterable[str]) -> list[Hit]:
    """The corpus papers ``seeds`` cite and that cite them, as hits (score 0: found by the graph,
    not ranked), in the order found."""
    found: list[str] = []
    for aid in seeds:
        try:
            linked = [r.arxiv_id for r in references(index, aid).references if r.in_corpus and r.arxiv_id]
            linked += [c.arxiv_id for c in cited_by(index, aid).cited_by]
        except ApiError:  # no references table, or a paper it does not know: nothing to follow
            continue
        found.extend(a for a in linked if a not in found)
    papers = index.store.get_papers(found[:HOP_MAX]) if found else {}
    counts = citation_counts(index, found[:HOP_MAX])
    out = []
    for aid in found[:HOP_MAX]:
        paper = papers.get(aid)
        if paper is None:
            continue
        paper = titled(index.store, paper)
        resolved = ResolvedHit(
            hit=PaperHit(aid, 0.0), paper=paper, evidence=None, tldr=paper_tldr(paper, None),
            citations=counts[aid],
        )  # fmt: skip
        out.append(to_deepxiv_hit(resolved, contents=False))
    return out


def fuse(rounds: list[Round], top_k: int) -> list[Hit]:
    """The rounds' lists fused by reciprocal rank, cut to ``top_k`` (one round: its list as it is)."""
    if len(rounds) == 1:
        return rounds[0].hits[:top_k]
    score: dict[str, float] = {}
    first: dict[str, Hit] = {}
    for r in rounds:
        for rank, h in enumerate(r.hits, start=1):
            score[h.arxiv_id] = score.get(h.arxiv_id, 0.0) + 1.0 / (RRF_K + rank)
            first.setdefault(h.arxiv_id, h)
    order = list(first)  # first-seen order breaks ties
    order.sort(key=lambda a: -score[a])
    return [first[a] for a in order[:top_k]]
