"""Facet sentences by rules (`openxiv.corpus.facets`, issue 39) against CSFCube's query abstracts,
whose sentence labels the collection's authors corrected by hand (../shared/gold/csfcube; CC BY-NC
4.0, read in place). The rules were tuned on the candidates' predicted labels only, so the query
sentences are held out."""

from __future__ import annotations

import re

import pytest

from openxiv.corpus.facets import FACETS, facet_sentences, facet_text, sentence_facets
from openxiv.corpus.shared import SharedData

AS = {"objective": "background", "other": "background"}  # CSFCube's background facet takes both


def query_abstracts() -> list[list[tuple[str, str]]]:
    root = SharedData.default().gold("csfcube") / "readable_annotations"
    if not root.is_dir():
        pytest.skip(f"no CSFCube at {root} (set OPENXIV_SHARED)")
    seen, out = set(), []
    for path in sorted(root.glob("*-adju.txt")):
        first = re.split(r"^=+\s*$", path.read_text(encoding="utf-8"), flags=re.M)[1]
        pid = re.search(r"paper_id:\s*(\d+)", first)
        if pid is None or pid[1] in seen:
            continue
        seen.add(pid[1])
        lines = first[first.index("ABSTRACT:") + len("ABSTRACT:") :].splitlines()
        labelled = [re.match(r"^\s*(\w+)_label:\s*(.*)$", x) for x in lines]
        out.append([(AS.get(m[1], m[1]), m[2].strip()) for m in labelled if m])
    return out


def test_rules_label_most_hand_labelled_sentences() -> None:
    abstracts = query_abstracts()
    gold = [g for a in abstracts for g, _ in a]
    pred = [p for a in abstracts for p in sentence_facets([s for _, s in a])]
    assert len(abstracts) == 34 and len(gold) == 200
    accuracy = sum(g == p for g, p in zip(gold, pred, strict=True)) / len(gold)
    assert accuracy >= 0.70, accuracy  # 0.72 measured; always guessing "method" gets 0.35
    for facet in FACETS:  # every facet is found, and mostly right where it is found
        hits = [g for g, p in zip(gold, pred, strict=True) if p == facet]
        assert hits and sum(g == facet for g in hits) / len(hits) >= 0.55, facet


def test_facet_text_keeps_its_sentences_in_order_or_the_whole_abstract() -> None:
    abstract = " ".join(s for _, s in query_abstracts()[0])
    for facet in FACETS:
        kept = facet_sentences(abstract, facet)
        assert all(s in abstract for s in kept)
        assert facet_text(abstract, facet) == (" ".join(kept) or abstract)
    one = "We propose a parser."
    assert facet_text(one, "result") == one  # no result sentence: the whole abstract
    with pytest.raises(ValueError, match="facet"):
        facet_sentences(abstract, "conclusion")
