"""A planted answer set with known verdicts, built from real stored papers: the grounding check's test.

`plant` takes sentences of papers in a corpus and one paper that is not in it, and writes answers in
the explicit-claims shape (``claims: [{quote, arxiv_id, expected}]``), one claim per kind:

| kind | claim | expected |
|---|---|---|
| true quote | a sentence of paper A, credited to A | ``exact`` |
| true quote, respelled | the same words upper-cased, punctuation dropped, spacing changed | ``normalised`` |
| altered quote | one word in the middle replaced | ``fuzzy`` |
| rewritten quote | the sentence's words in reverse order | ``not_found`` |
| wrong paper, true one cited too | a sentence of E credited to F; the answer also cites E | ``misattributed`` |
| wrong paper | a sentence of G credited to H; G not cited | ``not_found`` |
| paper outside the corpus | a sentence of Z credited to Z | ``not_in_corpus`` |
| outside, credited to a corpus paper | a sentence of Z credited to A | ``not_found`` |
| no citation | a sentence of A credited to nothing | ``uncited`` |

`openxiv eval grounding` on the written file reports ``expected_agreement`` (1.0 when every verdict
is the planted one).
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from typing import Any

from openxiv.corpus.records import Section

__all__ = ["plant", "quotable_sentences"]

SENTENCE = re.compile(r"(?<=[.!?])\s+(?=[A-Z])")
REPLACEMENT = "remarkably"


def quotable_sentences(
    sections: Sequence[Section], n: int = 2, min_words: int = 14, max_words: int = 40
) -> list[str]:
    """The first ``n`` plain sentences of a paper's later sections (no formula placeholders, no
    citation brackets), ``min_words``–``max_words`` words long."""
    out: list[str] = []
    for sec in sections[len(sections) // 3 :]:
        for s in SENTENCE.split(sec.text):
            s = " ".join(s.split())
            if min_words <= len(s.split()) <= max_words and not re.search(r"[\[\]{}\\=]|formula", s):
                out.append(s)
                if len(out) == n:
                    return out
    return out


def _respell(s: str) -> str:
    return "  ".join(re.sub(r"[^\w\s]", " ", s).upper().split())


def _alter(s: str) -> str:
    words = s.split()
    k = len(words) // 2
    words[k] = REPLACEMENT if words[k].lower() != REPLACEMENT else "notably"
    return " ".join(words)


def plant(
    papers: Iterable[tuple[str, list[Section]]], outside: tuple[str, list[Section]]
) -> list[dict[str, Any]]:
    """Three planted answers from stored papers (their ids and sections; eight with two quotable
    sentences each are needed) and one paper not in the corpus."""
    pool = [(pid, q) for pid, secs in papers if len(q := quotable_sentences(secs)) == 2]
    if len(pool) < 8:
        raise ValueError(f"need 8 papers with two quotable sentences each, found {len(pool)}")
    (a, qa), (b, qb), (c, qc), (d, qd), (e, qe), (f, qf), (g, qg), (h, _) = pool[:8]
    z, zs = outside[0], quotable_sentences(outside[1])
    if len(zs) < 2:
        raise ValueError(f"the outside paper {z} has no two quotable sentences")

    def claim(quote: str, cited: str | list[str], expected: str, kind: str) -> dict[str, Any]:
        return {"quote": quote, "arxiv_id": cited, "expected": expected, "kind": kind}

    return [
        {"id": "planted-true", "question": "true quotes, as written and respelled", "claims": [
            claim(qa[0], a, "exact", "true quote"),
            claim(_respell(qb[0]), b, "normalised", "true quote, respelled"),
            claim(qa[1], [], "uncited", "no citation"),
        ]},
        {"id": "planted-altered", "question": "altered and rewritten quotes", "claims": [
            claim(_alter(qc[0]), c, "fuzzy", "altered quote"),
            claim(" ".join(reversed(qd[0].split())), d, "not_found", "rewritten quote"),
            claim(qc[1], c, "exact", "true quote"),
        ]},
        {"id": "planted-wrong-paper", "question": "true quotes credited to the wrong paper", "claims": [
            claim(qe[1], e, "exact", "true quote"),
            claim(qe[0], f, "misattributed", "wrong paper, true one cited too"),
            claim(qg[0], h, "not_found", "wrong paper"),
            claim(qf[0], f, "exact", "true quote"),
        ]},
        {"id": "planted-outside", "question": "quotes from a paper outside the corpus", "claims": [
            claim(zs[0], z, "not_in_corpus", "paper outside the corpus"),
            claim(zs[1], a, "not_found", "outside, credited to a corpus paper"),
            claim(qg[1], g, "exact", "true quote"),
        ]},
    ]  # fmt: skip
