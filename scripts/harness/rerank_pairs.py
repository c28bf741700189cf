"""The label-free training groups of the fine-rerank cross-encoder (``scripts/train_reranker.py``).

A group is ``(kind, query, [positive, negative, ...])``; no paper a ``../shared/gold`` file names is
a query or a document. Documents are written as the serving stage shows them to the model
(`openxiv.service.fine_rerank.hit_texts`): a paper's abstract, or its title + a passage.

- ``title``: a paper's title -> its abstract. Negatives: the first stage's kind of mistake, papers
  BM25 (`Bm25`, over title + abstract) ranks high for the title, drawn from ranks
  ``hard_lo``..``hard_hi`` (the very top is often as relevant as the positive: left out), plus random
  abstracts;
- ``heading``: a specific section heading -> its section's opening; negatives: the paper's other
  sections and sections of other papers;
- ``sentence``: a sentence of a full text, as written or as a bag of its rarer words (the two kinds
  of full-text known-item query) -> title + the passage holding it; negatives: passages BM25 ranks
  high for the query in other papers (`Bm25` over a sample of passages); a passage is cut as the
  serving stage cuts it for the query (`openxiv.indexer.engine.rerank.passage_window`);
- ``citing``: a bibliography entry -> the cited paper's abstract, where the corpus holds it.
"""

from __future__ import annotations

import random
import re
import sqlite3
from pathlib import Path
from typing import Any

import numpy as np

from openxiv.indexer.engine.rerank import passage_window

WORD = re.compile(r"[A-Za-z][A-Za-z0-9-]{2,}")
SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
DOC_WORDS = 160
_GENERIC = """introduction conclusion conclusions concluding remarks results result discussion discussions
    summary acknowledgements acknowledgments acknowledgement acknowledgment related work works appendix
    appendices method methods methodology model models background experiments experiment experimental
    setup figure figures captions caption table tables body preliminaries observations examples example
    analysis data numerical simulations simulation outlook overview notation proof proofs main theorem
    theorems lemma future and the of a an in on for with our to section part final further some approach
    setting framework definitions"""
GENERIC_HEADING = frozenset(_GENERIC.split())
SHARES = {"title": 0.6, "heading": 0.2, "sentence": 0.2}


def cut(text: str, words: int = DOC_WORDS) -> str:
    return " ".join(text.split()[:words])


def with_title(title: str, text: str) -> str:
    """As `openxiv.indexer.encoders.embed.paper_text` joins a title and a text."""
    return f"{title} {text}" if title and title[-1] in ".?!" else f"{title}. {text}" if title else text


class Bm25:
    """BM25 (k1 1.2, b 0.75) over ``texts`` as one sparse matrix: a batch of queries is one sparse
    product (FTS5's ``ORDER BY rank`` over an OR of common words took seconds per query here)."""

    def __init__(self, texts: list[str]) -> None:
        from sklearn.feature_extraction.text import CountVectorizer

        self.vec = CountVectorizer(
            token_pattern=r"(?u)\b[A-Za-z][A-Za-z0-9-]{2,}\b", stop_words="english", dtype=np.float32
        )
        tf = self.vec.fit_transform(texts).tocsr()
        n, df = tf.shape[0], np.bincount(tf.indices, minlength=tf.shape[1])
        self.idf = np.log(1 + (n - df + 0.5) / (df + 0.5)).astype(np.float32)
        length = np.asarray(tf.sum(axis=1)).ravel()
        norm = 1.2 * (0.25 + 0.75 * length / max(1.0, float(length.mean())))
        rows = np.repeat(np.arange(n), np.diff(tf.indptr))
        tf.data = tf.data * 2.2 / (tf.data + norm[rows])
        self.docs = tf.T.tocsr()  # terms x docs

    def top(self, queries: list[str], k: int) -> list[list[int]]:
        """Each query's best ``k`` documents (row numbers), best first."""
        out: list[list[int]] = []
        for start in range(0, len(queries), 256):
            q = self.vec.transform(queries[start : start + 256])
            q.data[:] = 1.0
            scores = (q.multiply(self.idf[None, :]).tocsr() @ self.docs).toarray()
            for row in scores:
                best = np.argpartition(-row, min(k, len(row) - 1))[:k]
                best = best[np.argsort(-row[best], kind="stable")]
                out.append([int(b) for b in best if row[b] > 0])
        return out


def specific_heading(name: str) -> bool:
    words = [w.lower() for w in WORD.findall(name)]
    return len(words) >= 2 and sum(w not in GENERIC_HEADING for w in words) >= 2


class Builder:
    def __init__(self, db: Path, excluded: set[str], negs: int, seed: int, hard: tuple[int, int]) -> None:
        self.rng = random.Random(seed)
        self.negs, self.hard = negs, hard
        self.con = sqlite3.connect(f"file:{db}?mode=ro", uri=True)
        self.papers = {
            pid: (aid, " ".join((t or "").split()), " ".join((a or "").split()))
            for pid, aid, t, a in self.con.execute("SELECT id, arxiv_id, title, abstract FROM papers")
        }
        self.excluded = excluded
        self.usable = [
            p for p, (aid, t, a) in self.papers.items() if aid not in excluded and t and len(a.split()) >= 30
        ]
        self.bm25 = Bm25([f"{self.papers[p][1]} {self.papers[p][2]}" for p in self.usable])

    def ok(self, pid: int) -> bool:
        return pid in self.papers and self.papers[pid][0] not in self.excluded

    def hard_and_random(self, ranked: list[int], pool: list[int], texts: Any) -> list[str] | None:
        lo, hi = self.hard
        hard = ranked[lo:hi]
        n_rand = max(1, self.negs // 4)
        if len(hard) < self.negs - n_rand:
            return None
        picked = self.rng.sample(hard, self.negs - n_rand) + self.rng.sample(pool, n_rand)
        return [texts(h) for h in picked]

    def ranked(self, queries: list[str], own: list[int]) -> list[list[int]]:
        """Papers (ids) BM25 ranks for each query, its own paper left out."""
        tops = self.bm25.top(queries, self.hard[1] + 1)
        return [[self.usable[r] for r in t if self.usable[r] != p] for t, p in zip(tops, own, strict=True)]

    def title_groups(self, n: int) -> list[tuple[str, str, list[str]]]:
        out: list[tuple[str, str, list[str]]] = []
        order = self.rng.sample(self.usable, min(len(self.usable), int(n * 1.2) + 10))
        for p, ranked in zip(order, self.ranked([self.papers[p][1] for p in order], order), strict=True):
            if len(out) >= n:
                break
            negs = self.hard_and_random(ranked, self.usable, lambda h: cut(self.papers[h][2]))
            if negs is not None:
                out.append(("title", self.papers[p][1], [cut(self.papers[p][2]), *negs]))
        return out

    def citing_groups(self) -> list[tuple[str, str, list[str]]]:
        out: list[tuple[str, str, list[str]]] = []
        rows = self.con.execute(
            "SELECT p.id, r.text FROM paper_references r JOIN papers p ON p.arxiv_id = r.cited_id"
        ).fetchall()
        rows = [
            (pid, ref) for pid, ref in rows if self.ok(pid) and ref and len(self.papers[pid][2].split()) >= 30
        ]
        for (pid, ref), ranked in zip(
            rows, self.ranked([r for _, r in rows], [p for p, _ in rows]), strict=True
        ):
            negs = self.hard_and_random(ranked, self.usable, lambda h: cut(self.papers[h][2]))
            if negs is not None:
                out.append(("citing", cut(ref, 60), [cut(self.papers[pid][2]), *negs]))
        return out

    def heading_groups(self, n: int) -> list[tuple[str, str, list[str]]]:
        secs: dict[int, list[tuple[str, str]]] = {}
        q = "SELECT paper_id, name, text FROM sections ORDER BY paper_id, idx"
        for pid, name, text in self.con.execute(q):
            if self.ok(pid) and len(text.split()) >= 40:
                secs.setdefault(pid, []).append((" ".join(name.split()), cut(text)))
        pool = [(p, i) for p, s in secs.items() for i, (h, _) in enumerate(s) if specific_heading(h)]
        every = [(p, i) for p, s in secs.items() for i in range(len(s))]
        self.rng.shuffle(pool)
        out: list[tuple[str, str, list[str]]] = []
        for p, i in pool:
            if len(out) >= n:
                break
            others = [t for j, (h, t) in enumerate(secs[p]) if j != i and h != secs[p][i][0]]
            n_own = min(len(others), self.negs // 2)
            far = [secs[q][j][1] for q, j in self.rng.sample(every, self.negs - n_own) if q != p]
            negatives = self.rng.sample(others, n_own) + far
            if len(negatives) == self.negs:
                out.append(("heading", secs[p][i][0], [secs[p][i][1], *negatives]))
        return out

    def sentence_groups(self, n: int, sample: int = 30000) -> list[tuple[str, str, list[str]]]:
        rows = [
            (pid, text)
            for pid, text in self.con.execute("SELECT paper_id, text FROM passages")
            if self.ok(pid) and len(text.split()) >= 40
        ]
        self.rng.shuffle(rows)
        rows = rows[:sample]
        index = Bm25([t for _, t in rows])

        def doc(i: int, query: str) -> str:  # as the serving stage shows a passage for ``query``
            return with_title(self.papers[rows[i][0]][1], passage_window(query, rows[i][1]))

        asked: list[tuple[int, str]] = []
        for i, (_, text) in enumerate(rows[: n * 2]):
            sents = [s for s in SENTENCE.split(" ".join(text.split())) if 12 <= len(s.split()) <= 45]
            if not sents:
                continue
            sent = self.rng.choice(sents)
            if self.rng.random() < 0.5:  # a bag of its rarer (longer) words, shuffled
                words = sorted({w.lower() for w in WORD.findall(sent)}, key=len, reverse=True)[:8]
                self.rng.shuffle(words)
                sent = " ".join(words)
            asked.append((i, sent))
        out: list[tuple[str, str, list[str]]] = []
        for (i, sent), top in zip(asked, index.top([q for _, q in asked], 40), strict=True):
            if len(out) >= n:
                break
            ranked = [h for h in top if rows[h][0] != rows[i][0]]
            negs = self.hard_and_random(ranked[:30], list(range(len(rows))), lambda h, q=sent: doc(h, q))
            if negs is not None:
                out.append(("sentence", sent, [doc(i, sent), *negs]))
        return out


def build_groups(
    db: Path, excluded: set[str], n_groups: int, negs: int, seed: int, hard: tuple[int, int]
) -> dict[str, Any]:
    """About ``n_groups`` groups: every citing entry, the rest by `SHARES`, shuffled."""
    b = Builder(db, excluded, negs, seed, hard)
    citing = b.citing_groups()
    rest = max(0, n_groups - len(citing))
    groups = citing + b.heading_groups(int(rest * SHARES["heading"]))
    groups += b.sentence_groups(int(rest * SHARES["sentence"]))
    groups += b.title_groups(n_groups - len(groups))
    b.rng.shuffle(groups)
    counts: dict[str, int] = {}
    for kind, _, _ in groups:
        counts[kind] = counts.get(kind, 0) + 1
    return {"groups": groups, "counts": counts, "excluded": len(excluded), "hard_ranks": list(hard)}
