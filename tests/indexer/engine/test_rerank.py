"""The fine-rerank stage's pure parts: the part of a passage the reranker reads, and the head's order
key mixing the reranker's score with the first stage's.

`passage_window` runs on real paragraphs of the shared plain-text full texts: a known-item query (a
sentence from the later half of a paper) usually sits past the first hundred words of its passage,
which a 128-token pair cut from the passage's start never shows the model (issue 37: the shipped
reranker lost every known item; its passages were read from their start).
"""

from __future__ import annotations

import gzip
import itertools
import json
import re

import numpy as np
import pytest
from live_index import PLAINTEXT

from openxiv.indexer.engine.rerank import SHOWN_WORDS, WINDOW_WORDS, mixed, passage_window, standardised

SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
TERM = re.compile(r"[A-Za-z0-9][A-Za-z0-9-]{2,}")


def _late_sentences(n: int) -> list[tuple[str, str]]:
    """(paragraph, one of its sentences starting past word 100) from the shared full texts."""
    if not PLAINTEXT.is_file():
        pytest.skip(f"shared full texts not found ({PLAINTEXT})")
    out: list[tuple[str, str]] = []
    with gzip.open(PLAINTEXT, "rt", encoding="utf-8") as fh:
        for line in itertools.islice(fh, 400):
            for para in json.loads(line)["text"].split("\n\n"):
                words = para.split()
                sents = SENTENCE.split(" ".join(words))
                if len(words) < 160 or len(sents) < 4:
                    continue
                pos = 0
                for s in sents:
                    if pos > 100 and len(s.split()) >= 12:
                        out.append((para, s))
                        break
                    pos += len(s.split())
                if len(out) == n:
                    return out
    return out


def _coverage(sentence: str, text: str, words: int = 50) -> float:
    """Share of the sentence's terms among the first ``words`` words of ``text`` (what a 128-token
    pair lets the model read beside a query of about 45 tokens)."""
    terms = {w.lower() for w in TERM.findall(sentence)}
    read = {w.lower() for w in TERM.findall(" ".join(text.split()[:words]))}
    return len(terms & read) / len(terms)


def test_the_window_shows_a_sentence_found_late_in_its_passage() -> None:
    cases = _late_sentences(40)
    assert len(cases) == 40
    shown = [passage_window(sent, para) for para, sent in cases]
    assert all(len(s.split()) <= SHOWN_WORDS for s in shown)
    window = [_coverage(sent, s) for (_, sent), s in zip(cases, shown, strict=True)]
    start = [_coverage(sent, para) for para, sent in cases]
    assert min(window) >= 0.55 and np.mean(window) >= 0.9, window
    # cut from the start (what the reranker read before), most of each sentence is out of sight
    assert np.mean(start) < 0.4 and max(start) < 0.55, start


def test_a_short_passage_or_no_match_reads_from_the_start() -> None:
    para, _ = _late_sentences(1)[0]
    assert passage_window("zzzz qqqq", para) == " ".join(para.split()[:SHOWN_WORDS])
    short = " ".join(para.split()[:WINDOW_WORDS])
    assert passage_window("anything at all", short) == short


def test_the_mix_is_the_reranker_alone_at_weight_zero_and_the_first_stage_at_a_large_one() -> None:
    ce = np.array([0.1, 2.0, -1.0, 0.5])
    first = np.array([9.0, 3.0, 2.9, 2.8])  # a standout first place, then near ties
    assert list(mixed(ce, first, 0.0)) == list(ce)
    assert list(np.argsort(-mixed(ce, first, 0.0), kind="stable")) == [1, 3, 0, 2]
    assert list(np.argsort(-mixed(ce, first, 100.0), kind="stable")) == [0, 1, 2, 3]
    # at weight 1 the standout keeps first place, the near ties follow the reranker
    assert list(np.argsort(-mixed(ce, first, 1.0), kind="stable")) == [0, 1, 3, 2]
    assert not standardised(np.array([3.0, 3.0])).any()
