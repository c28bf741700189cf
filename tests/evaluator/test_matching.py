"""Id-first matching with title fallback, duplicates, malformed ids, Dr.Mi mode, corpus checks."""

from __future__ import annotations

import itertools
from datetime import date
from pathlib import Path

import pytest

from openxiv.evaluator.idcache import looks_like_id
from openxiv.evaluator.io import Candidate, GoldItem
from openxiv.evaluator.matching import Matcher


def gold(ids: list[str], titles: list[str] | None = None) -> GoldItem:
    return GoldItem("1", "q", titles or [], ids, "wide", 1)


def run(m: Matcher, g: GoldItem, preds: list[Candidate]):
    entries, dups = m.pred_entries(preds)
    return m.match(m.gold_entries(g), entries, dups)


def ids(*xs: str) -> list[Candidate]:
    return [Candidate(x, None) for x in xs]


def test_id_spellings_match_and_duplicates_are_removed() -> None:
    g = gold(["2301.00001", "hep-th/9901001", "math/0309136"])
    preds = ids(
        "https://arxiv.org/pdf/2301.00001v1.pdf", "arXiv:2301.00001v2", "10.48550/arXiv.2301.00001",
        "arXiv:hep-th/9901001v2", "math.GT/0309136",
    )  # fmt: skip
    r = run(Matcher(), g, preds)
    assert (r.hits, r.n_pred, r.n_gold) == (3, 3, 3)
    assert len(r.duplicates) == 2 and r.extra == [] and r.missed == []


def test_malformed_ids_count_in_predictions() -> None:
    g = gold(["2301.00001"])
    r = run(Matcher(), g, ids("2301.00001", "2301.0001", "10.1145/3580305.3599256", "2301.000012"))
    assert (r.hits, r.n_pred) == (1, 4)
    assert sorted(r.malformed) == sorted(["2301.0001", "10.1145/3580305.3599256", "2301.000012"])
    # gold ids repeated after normalisation count once
    assert run(Matcher(), gold(["2301.00001", "2301.00001v3"]), []).n_gold == 1


def test_title_fallback_is_one_to_one_and_never_overrides_ids() -> None:
    g = gold(
        ["2301.00001", "2301.00002"],
        ["Attention Is All You Need", "Deep Residual Learning for Image Recognition"],
    )
    preds = [
        Candidate(None, "[PDF] Attention is all you need - arXiv"),
        Candidate(None, "Attention Is All You Need"),
    ]
    r = run(Matcher(), g, preds)
    assert (r.hits, r.n_pred, r.title_matches) == (1, 1, 1)  # the second is a duplicate title
    assert len(r.duplicates) == 1
    # a valid but different id is never rescued by its title
    r = run(Matcher(), g, [Candidate("2405.99999", "Attention Is All You Need")])
    assert r.hits == 0
    # title matching off: ids only
    assert run(Matcher(title_mode="off"), g, preds[:1]).hits == 0


def test_titles_only_gold_and_drmi_prefix_mode() -> None:
    g = gold([], ["Large Language Models are Zero-Shot Reasoners", "Large Language Models Can Self-Improve"])
    preds = [
        Candidate(None, "Large language models: a survey"),
        Candidate(None, "Large Language Models are zero shot"),
    ]
    fuzzy = run(Matcher(), g, preds)
    drmi = run(Matcher(title_mode="drmi"), g, preds)
    assert fuzzy.hits == 1  # containment + ratio >= 0.6 for the second prediction only
    # Dr.Mi: both predictions share the 20-char prefix "large language models" with both gold titles,
    # one-to-one pairing gives 2 hits
    assert drmi.hits == 2


def test_looks_like_id() -> None:
    assert looks_like_id("2301.00001") and looks_like_id("2301.0001") and looks_like_id("arXiv:foo")
    assert not looks_like_id("Attention Is All You Need") and not looks_like_id("Word2Vec")


def test_corpus_db_resolves_titles_and_flags_hallucinations(corpus_db: Path) -> None:
    from openxiv.corpus.store import Store

    store = Store.open_readonly(corpus_db)
    try:
        papers = [d for d in itertools.islice(store.iter_papers(), 3)]
        a, b, c = papers
        pa = store.get_paper(a.arxiv_id)
        assert pa is not None and pa.date is not None
        m = Matcher(store, cutoff=pa.date)
        g = gold([a.arxiv_id, b.arxiv_id])
        preds = [Candidate(None, b.title), Candidate("2599.99999", None), Candidate(c.arxiv_id, None)]
        r = run(m, g, preds)
        assert r.hits == 1 and r.n_pred == 3
        assert r.matched[0].startswith(b.arxiv_id) and "(title)" in r.matched[0]
        assert r.malformed == ["2599.99999"]  # month 99: not an id at all
        r = run(m, g, ids("2605.99999", c.arxiv_id))
        assert r.hallucinated == ["2605.99999"]
        assert "2605.99999" in r.after_cutoff  # not in the corpus: its id month is after the cutoff
        # gold given as titles only resolves to ids through the corpus
        tg = GoldItem("t", "q", [a.title], [], "wide", 1)
        assert run(m, tg, ids(a.arxiv_id)).hits == 1
        assert m.category(m.gold_entries(g)) is not None
    finally:
        store.close()


def test_cutoff_without_corpus_uses_the_id_month() -> None:
    m = Matcher(cutoff=date(2023, 1, 31))
    r = run(m, gold(["2301.00001"]), ids("2301.00001", "2302.00001", "hep-th/9901001"))
    assert r.after_cutoff == ["2302.00001"]


@pytest.mark.parametrize("mode", ["fuzzy", "drmi", "off"])
def test_empty_prediction(mode: str) -> None:
    r = run(Matcher(title_mode=mode), gold(["2301.00001"]), [])
    assert (r.hits, r.n_pred, r.n_gold) == (0, 0, 1)
