"""Title normalisation and alignment (TaxoBench A.5 rule, Dr.Mi prefix mode)."""

from __future__ import annotations

import random

import pytest

from openxiv.evaluator.titles import (
    align_drmi,
    align_titles,
    drmi_key,
    title_key,
    title_similarity,
)

OPPU_GOLD = "Democratizing Large Language Models via Personalized Parameter-Efficient Fine-tuning"
OPPU_PRED = (
    "One PEFT Per User (OPPU): Democratizing Large Language Models via Personalized "
    "Parameter-Efficient Fine-tuning"
)
OXFORD_GOLD = "In Oxford Handbook on AI Governance: The Role of Workers in AI Ethics and Governance"
OXFORD_PRED = "The Role of Workers in AI Ethics and Governance"


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        (
            "BERT: Pre-training of Deep Bidirectional Transformers",
            "bert pre training of deep bidirectional transformers",
        ),
        ("  LLM-based   Agents\n", "llm based agents"),
        ("[PDF] Attention Is All You Need", "attention is all you need"),
        ("Attention Is All You Need - arXiv", "attention is all you need"),
        ("Attention Is All You Need | arXiv.org", "attention is all you need"),
        ("Attention Is All You ...", "attention is all you"),
        ("Attention Is All You…", "attention is all you"),
        ("[pdf] Attention Is All You Need - arXiv", "attention is all you need"),
        ("[HTML][PDF] Attention Is All You Need | arXiv e-print ...", "attention is all you need"),
        ("Benchmarks on arXiv", "benchmarks on arxiv"),  # no separator: part of the title
        ("A [PDF] in the middle", "a pdf in the middle"),
        ("Café Über", "cafe uber"),
        (None, ""),
        ("", ""),
        ("!!!", ""),
    ],
)
def test_title_key(raw: str | None, expected: str) -> None:
    assert title_key(raw) == expected


def test_title_similarity_basics() -> None:
    assert title_similarity("A B C", "a-b-c") == 1.0
    assert title_similarity("", "x") == 0.0
    # "gpt" vs "chatgpt": 2*3/(3+7) = 0.6 exactly
    assert title_similarity("gpt", "chatgpt") == pytest.approx(0.6)


def test_oppu_containment_aligns() -> None:
    # The prediction is the gold title with a prefix; normalised lengths 84 and 107, the gold
    # is a substring, so ratio = 2*84/(84+107) = 0.8796 >= 0.6 -> aligned.
    out = align_titles([OPPU_GOLD], [OPPU_PRED])
    assert [(i, j) for i, j, _ in out] == [(0, 0)]
    g, p = title_key(OPPU_GOLD), title_key(OPPU_PRED)
    assert (len(g), len(p)) == (84, 107)
    assert out[0][2] == pytest.approx(2 * 84 / (84 + 107))
    assert 0.6 <= out[0][2] < 1.0


def test_venue_noise_containment_aligns() -> None:
    out = align_titles([OXFORD_GOLD], [OXFORD_PRED])
    assert len(out) == 1 and out[0][2] >= 0.6


def test_acronym_only_does_not_match() -> None:
    gold = [
        "Enhancing Confidence Expression in Large Language Models Through Learning from Past Experience",
        "Conqord: Aligning LLMs' confidence with the quality of their responses",
    ]
    assert align_titles(gold[:1], ["CONQORD"]) == []
    # even when contained: "conqord" is shorter than the minimum length and its ratio is far below 0.6
    assert align_titles(gold[1:], ["CONQORD"]) == []
    assert align_titles(["ChatGPT is fun"], ["gpt"]) == []


def test_min_length_guards_short_containment() -> None:
    assert align_titles(["ChatGPT"], ["gpt"]) == []
    assert align_titles(["ChatGPT"], ["gpt"], min_length=1) == [(0, 0, pytest.approx(0.6))]
    # exact equality aligns whatever the length
    assert align_titles(["GPT"], ["gpt"]) == [(0, 0, 1.0)]


def test_no_containment_no_match_even_if_similar() -> None:
    # high ratio but neither contains the other -> not aligned (paper A.5)
    a = "Large Language Models for Code Generation"
    b = "Large Language Models for Code Completion"
    assert title_similarity(a, b) > 0.6
    assert align_titles([a], [b]) == []


def test_one_to_one_and_duplicates() -> None:
    gold = ["Attention Is All You Need", "Deep Residual Learning for Image Recognition"]
    pred = [
        "attention is all you need",
        "Attention is all you need!",
        "deep residual learning for image recognition",
    ]
    out = align_titles(gold, pred)
    assert out == [(0, 0, 1.0), (1, 2, 1.0)]
    # a single prediction cannot serve two gold titles
    out2 = align_titles(
        ["Attention Is All You Need", "attention is all you need"], ["Attention Is All You Need"]
    )
    assert out2 == [(0, 0, 1.0)]


def test_best_first_beats_gold_order_greedy() -> None:
    # gold[0] = "neural machine translation" (26 chars) is contained in both predictions:
    #   vs pred[0] (33 chars): ratio 2*26/59 = 0.881;  vs pred[1] (55 chars): 2*26/81 = 0.642.
    # gold[1] equals pred[0] (score 1) and has no other partner.
    # Gold-order greedy gives gold[0] its best, pred[0], and leaves gold[1] unmatched (1 pair);
    # global best-first takes (1,0) at 1.0 first, then (0,1) at 0.642 (2 pairs).
    gold = ["Neural Machine Translation", "Neural Machine Translation Survey"]
    pred = ["Neural Machine Translation Survey", "Neural Machine Translation by Jointly Learning to Align"]
    out = align_titles(gold, pred)
    assert [(i, j) for i, j, _ in out] == [(0, 1), (1, 0)]
    assert out[0][2] == pytest.approx(52 / 81)


def test_alignment_deterministic_under_shuffle() -> None:
    gold = [f"A study of topic number {k} in large language models" for k in range(30)]
    pred = [*gold[::2], *[t + " revisited" for t in gold[1::2]], "CONQORD", gold[0]]
    base = {(gold[i], pred[j]) for i, j, _ in align_titles(gold, pred)}
    rng = random.Random(0)
    for _ in range(5):
        g2, p2 = gold[:], pred[:]
        rng.shuffle(g2)
        rng.shuffle(p2)
        got = {(g2[i], p2[j]) for i, j, _ in align_titles(g2, p2)}
        # same matched title pairs (titles are distinct up to the duplicated gold[0] prediction)
        assert {g for g, _ in got} == {g for g, _ in base}
    assert align_titles(gold, pred) == align_titles(gold, pred)
    assert len(base) == 30


def test_drmi_key_and_alignment() -> None:
    assert drmi_key("Large Language Models: A Survey") == "large language models"[:20]
    assert len(drmi_key("Large Language Models: A Survey")) == 20
    assert drmi_key("Short") == "short"
    gold = ["Large language models are few-shot learners", "Large language models encode clinical knowledge"]
    pred = ["LARGE LANGUAGE MODELS: something else entirely"]
    # both gold titles collide on the 20-char key; the one prediction is used once (first gold in order)
    assert align_drmi(gold, pred) == [(0, 0, 1.0)]
    assert align_drmi(gold, pred + pred) == [(0, 0, 1.0), (1, 1, 1.0)]
    assert align_drmi(["!!!"], ["???"]) == []


def test_native_and_ascii_spellings_of_a_title_align() -> None:
    """Titles go through the corpus fold (anyascii), so an answer typed in ASCII matches the gold title."""
    gold = ["From Smør-re-brød to Subwords: Training LLMs on Danish, One Morpheme at a Time"]
    pred = ["[PDF] From Smor-re-brod to Subwords: Training LLMs on Danish, One Morpheme at a Time - arXiv"]
    assert (
        title_key(pred[0])
        == title_key(gold[0])
        == ("from smor re brod to subwords training llms on danish one morpheme at a time")
    )
    assert align_titles(gold, pred) == [(0, 0, 1.0)]
    assert align_drmi(gold, pred) == [(0, 0, 1.0)]
