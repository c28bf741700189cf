"""Match predicted papers to gold papers: arXiv ids first, titles as the fallback.

Procedure for one gold item and one prediction (a pass):

1. Gold entries: each gold id through `openxiv.corpus.ids` (versions, prefixes, URLs, DOIs, old style);
   when the gold lists as many titles as ids they are paired by position, so a title match on a gold
   title hits that gold id. Gold ids repeated after normalisation count once. A gold id the normaliser
   rejects stays a gold entry that only the identical string can match. Gold titles without ids resolve
   to ids through the corpus DB when one is given.
2. Predicted entries: an ``arxiv_id`` field, or a bare string that looks like an id, is normalised; if the
   normaliser rejects it, it is a *malformed* entry: it stays in |P| (a false positive) unless the gold
   holds the identical string. A title (no id) resolves to an id through the corpus DB when given
   (``Store.find_by_title``, first id), else stays a title entry. Entries repeated after normalisation
   (same canonical id, e.g. v1 and v2, or same normalised title) are removed and counted as duplicates.
3. Hits: equal canonical ids; then identical malformed strings; then the title fallback, one-to-one
   (`openxiv.evaluator.titles.align_titles`, TaxoBench A.5: equal normalised titles, or ratio >= 0.6 with
   containment; best match first), between title-only predictions and any unmatched gold entry with a
   title, and between unmatched id predictions that carry a title and gold entries without an id (two
   papers with different valid ids are never matched by title). In Dr.Mi mode the title step uses the
   first 20 characters of the normalised title instead (`titles.align_drmi`).
4. Judge (AutoResearchBench deep items only, when an `OpenPairs` is given): the pairs the title step
   could have matched but did not (an unmatched gold entry with a title and an unmatched title-only
   prediction, or an unmatched id prediction with a title and a gold entry without an id) are *open*.
   A pair the judge said is the same paper is a hit (``judge``), one-to-one, gold order then
   prediction order; a pair without a verdict is collected in ``OpenPairs.open``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import date
from typing import TYPE_CHECKING, Any

from openxiv.corpus.ids import parse_arxiv_id
from openxiv.evaluator.idcache import canonical_ids, try_canonical_id

if TYPE_CHECKING:
    from openxiv.evaluator.io import Candidate, GoldItem

__all__ = ["GoldEntry", "MatchResult", "Matcher", "OpenPairs", "PredEntry"]


def _titles_module() -> Any:
    # Imported lazily: the title code belongs to the TaxoBench part of the evaluator.
    from openxiv.evaluator import titles

    return titles


@dataclass
class GoldEntry:
    key: str | None  # "id:<canonical>" or "raw:<string>" when the gold has an id, else None
    title: str | None
    display: str

    @property
    def label(self) -> str:
        """``display``, followed by the gold title in parentheses when both are known."""
        return (
            self.display
            if self.title is None or self.display == self.title
            else f"{self.display} ({self.title})"
        )


@dataclass
class PredEntry:
    key: str  # "id:<canonical>", "raw:<string>" (malformed) or "title:<normalised title>"
    kind: str  # "id" | "malformed" | "title"
    raw: str
    title: str | None = None
    via: str = "id"  # "id", "title" (resolved through the corpus DB) or "malformed"

    @property
    def canonical(self) -> str | None:
        return self.key[3:] if self.kind == "id" else None


@dataclass
class OpenPairs:
    """Title pairs for a judge: the verdicts known so far and the (gold, predicted) titles still open."""

    decided: dict[tuple[str, str], bool | None] = field(default_factory=dict)
    open: set[tuple[str, str]] = field(default_factory=set)


@dataclass
class MatchResult:
    hits: int
    n_pred: int
    n_gold: int
    matched: list[str] = field(default_factory=list)  # "gold  <-  prediction (how)"
    missed: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    duplicates: list[str] = field(default_factory=list)
    malformed: list[str] = field(default_factory=list)
    title_matches: int = 0
    hallucinated: list[str] = field(default_factory=list)  # valid ids not in the corpus DB
    after_cutoff: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        return {
            "hits": self.hits,
            "n_pred": self.n_pred,
            "n_gold": self.n_gold,
            "n_duplicates": len(self.duplicates),
            "n_malformed": len(self.malformed),
            "n_title_matches": self.title_matches,
            "n_hallucinated": len(self.hallucinated),
            "n_after_cutoff": len(self.after_cutoff),
        }


class Matcher:
    """Id-first matcher with title fallback; optional corpus DB (``Store``) and cutoff date."""

    def __init__(
        self,
        store: Any | None = None,
        title_mode: str = "fuzzy",
        threshold: float = 0.6,
        cutoff: date | None = None,
    ) -> None:
        if title_mode not in ("fuzzy", "drmi", "off"):
            raise ValueError(f"title_mode must be fuzzy|drmi|off, got {title_mode!r}")
        self.store = store
        self.title_mode = title_mode
        self.threshold = threshold
        self.cutoff = cutoff
        self._title_cache: dict[str, str | None] = {}
        self._paper_cache: dict[str, Any] = {}

    # ------------------------------------------------------------------------------- normalisation
    def resolve_title(self, title: str) -> str | None:
        """Canonical id of the corpus paper with this (normalised) title, if a corpus DB is given."""
        if self.store is None:
            return None
        if title not in self._title_cache:
            norm = _titles_module().title_key(title)
            ids = self.store.find_by_title(norm) if norm else []
            self._title_cache[title] = ids[0] if ids else None
        return self._title_cache[title]

    def gold_entries(self, item: GoldItem) -> list[GoldEntry]:
        titles: list[str | None] = list(item.titles) if len(item.titles) == len(item.ids) else []
        out: list[GoldEntry] = []
        seen: set[str] = set()
        if item.ids:
            for k, (raw, c) in enumerate(zip(item.ids, canonical_ids(item.ids), strict=True)):
                key = f"id:{c}" if c else f"raw:{raw.strip().lower()}"
                if key in seen:
                    continue
                seen.add(key)
                out.append(GoldEntry(key, titles[k] if titles else None, c or raw.strip()))
            return out
        for t in item.titles:
            resolved = self.resolve_title(t)
            tkey = f"id:{resolved}" if resolved else None
            if tkey is not None and tkey in seen:
                continue
            if tkey:
                seen.add(tkey)
            out.append(GoldEntry(tkey, t, resolved or t))
        return out

    def pred_entries(self, candidates: Sequence[Candidate]) -> tuple[list[PredEntry], list[str]]:
        """Normalised, de-duplicated predicted entries (in order) and the dropped duplicates."""
        entries: list[PredEntry] = []
        dups: list[str] = []
        seen: set[str] = set()
        for cand in candidates:
            e = self._pred_entry(cand.arxiv_id, cand.title)
            if e is None:
                continue
            if e.key in seen:
                dups.append(e.raw)
                continue
            seen.add(e.key)
            entries.append(e)
        return entries, dups

    def _pred_entry(self, aid: str | None, title: str | None) -> PredEntry | None:
        if aid:
            c = try_canonical_id(aid)
            if c:
                return PredEntry(f"id:{c}", "id", aid, title)
            return PredEntry(f"raw:{aid.strip().lower()}", "malformed", aid, title, via="malformed")
        if not title:
            return None
        c = self.resolve_title(title)
        if c:
            return PredEntry(f"id:{c}", "id", title, title, via="title")
        norm = _titles_module().title_key(title)
        if not norm:
            return None
        return PredEntry(f"title:{norm}", "title", title, title, via="title")

    # ------------------------------------------------------------------------------------- matching
    def _align(self) -> Callable[[Sequence[str], Sequence[str]], list[tuple[int, int, float]]]:
        t = _titles_module()
        if self.title_mode == "drmi":
            return t.align_drmi
        return lambda g, p: t.align_titles(g, p, threshold=self.threshold)

    @staticmethod
    def gold_index(gold: Sequence[GoldEntry]) -> dict[str, int]:
        """Position of each gold key (what `match` looks predicted keys up in; build it once per item)."""
        return {g.key: i for i, g in enumerate(gold) if g.key is not None}

    def match(
        self,
        gold: Sequence[GoldEntry],
        pred: Sequence[PredEntry],
        duplicates: Sequence[str] = (),
        gold_index: dict[str, int] | None = None,
        judged: OpenPairs | None = None,
    ) -> MatchResult:
        gold_by_key = self.gold_index(gold) if gold_index is None else gold_index
        pairs: dict[int, tuple[int, str]] = {}  # gold index -> (pred index, how)
        used_pred: set[int] = set()
        for j, p in enumerate(pred):
            i = gold_by_key.get(p.key)
            if i is not None and i not in pairs:
                pairs[i] = (j, "id" if p.kind == "id" and p.via == "id" else p.via)
                used_pred.add(j)
        n_title = 0
        if (
            self.title_mode != "off"
            and len(pairs) < len(gold)
            and any(
                p.kind == "title" or p.title is not None for j, p in enumerate(pred) if j not in used_pred
            )
        ):
            rounds = (
                (lambda p: p.kind == "title", lambda g: g.title is not None),
                (
                    lambda p: p.kind == "id" and p.title is not None,
                    lambda g: g.key is None and g.title is not None,
                ),
            )
            align = self._align()
            for pred_ok, gold_ok in rounds:
                gi = [i for i, g in enumerate(gold) if i not in pairs and gold_ok(g)]
                pj = [j for j, p in enumerate(pred) if j not in used_pred and pred_ok(p)]
                if not gi or not pj:
                    continue
                gt = [gold[i].title or "" for i in gi]
                pt = [pred[j].title or "" for j in pj]
                for a, b, s in align(gt, pt):
                    pairs[gi[a]] = (pj[b], f"title {s:.2f}")
                    used_pred.add(pj[b])
                    n_title += 1
        if judged is not None and len(pairs) < len(gold):
            _judge_round(gold, pred, pairs, used_pred, judged)
        matched: list[str] = []
        missed: list[str] = []
        for i, g in enumerate(gold):
            hit = pairs.get(i)
            if hit is None:
                missed.append(g.label)
            else:
                matched.append(f"{g.display}  <-  {pred[hit[0]].raw} ({hit[1]})")
        res = MatchResult(
            hits=len(pairs),
            n_pred=len(pred),
            n_gold=len(gold),
            matched=matched,
            missed=missed,
            extra=[p.raw for j, p in enumerate(pred) if j not in used_pred]
            if used_pred
            else [p.raw for p in pred],
            duplicates=list(duplicates),
            malformed=[p.raw for p in pred if p.kind == "malformed"],
            title_matches=n_title,
        )
        self._corpus_checks(pred, res)
        return res

    # ------------------------------------------------------------------------------- corpus checks
    def _papers(self, ids: list[str]) -> dict[str, Any]:
        missing = [c for c in ids if c not in self._paper_cache]
        if missing and self.store is not None:
            found = self.store.get_papers(missing)
            for c in missing:
                self._paper_cache[c] = found.get(c)
        return {c: self._paper_cache.get(c) for c in ids}

    def _corpus_checks(self, pred: Sequence[PredEntry], res: MatchResult) -> None:
        if self.store is None and self.cutoff is None:
            return
        ids = [p.canonical for p in pred if p.canonical]
        if not ids:
            return
        papers = self._papers([c for c in ids if c]) if self.store is not None else {}
        for c in ids:
            assert c is not None
            paper = papers.get(c)
            if self.store is not None and paper is None:
                res.hallucinated.append(c)
            if self.cutoff is not None and _published_after(c, paper, self.cutoff):
                res.after_cutoff.append(c)

    def gold_not_in_corpus(self, gold: Sequence[GoldEntry]) -> list[str]:
        """Gold ids that the corpus DB does not hold (unreachable for any system); [] without a DB."""
        if self.store is None:
            return []
        ids = [g.key[3:] for g in gold if g.key and g.key.startswith("id:")]
        papers = self._papers(ids)
        return [c for c in ids if papers.get(c) is None]

    def category(self, gold: Sequence[GoldEntry]) -> str | None:
        """Most common primary category of the gold papers found in the corpus DB (ties: alphabetical)."""
        if self.store is None:
            return None
        ids = [g.key[3:] for g in gold if g.key and g.key.startswith("id:")]
        cats = Counter(p.categories[0] for p in self._papers(ids).values() if p is not None and p.categories)
        if not cats:
            return None
        return sorted(cats.items(), key=lambda kv: (-kv[1], kv[0]))[0][0]

    def title_of(self, canonical: str) -> str | None:
        if self.store is None:
            return None
        p = self._papers([canonical]).get(canonical)
        return p.title if p is not None else None


def _judge_round(gold: Sequence[GoldEntry], pred: Sequence[PredEntry], pairs: dict[int, tuple[int, str]],
                 used_pred: set[int], judged: OpenPairs) -> None:  # fmt: skip
    """Step 4 of the module docstring: judged pairs become hits, undecided ones are collected."""
    for i, g in enumerate(gold):
        if i in pairs or g.title is None:
            continue
        for j, p in enumerate(pred):
            if (
                j in used_pred
                or p.title is None
                or not (p.kind == "title" or (p.kind == "id" and g.key is None))
            ):
                continue
            pair = (g.title, p.title)
            verdict = judged.decided.get(pair)
            if verdict is None:
                judged.open.add(pair)
            elif verdict:
                pairs[i] = (j, "judge")
                used_pred.add(j)
                break


def _published_after(canonical: str, paper: Any, cutoff: date) -> bool:
    """Paper date after the cutoff; without a corpus record, the id's month starts after the cutoff."""
    d = getattr(paper, "date", None) if paper is not None else None
    if d is not None:
        return bool(d > cutoff)
    yymm = parse_arxiv_id(canonical).yymm
    yy, mm = int(yymm[:2]), int(yymm[2:])
    year = 1900 + yy if yy >= 91 else 2000 + yy
    return date(year, mm, 1) > cutoff
