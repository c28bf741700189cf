"""Facets of an abstract: which sentences give its background, its method and its results.

`sentence_facets` labels each sentence of an abstract ``background``, ``method`` or ``result`` by
rules, for any abstract (no model): cue phrases that announce a kind of sentence ("we propose",
"experiments show", "has attracted attention") scored beside the sentence's place in the abstract
(a background comes first, results come last). The same three facets as CSFCube (Mysore et al.
2021), whose "background" also takes the objective sentences. `scripts/bench_csfcube.py` measures
the rules against the sentence labels of CSFCube's query abstracts (corrected by hand) and of its
candidates (predicted by a trained tagger).

`facet_text` keeps the sentences of one facet (all of them when the abstract has none of that
kind), which `openxiv.service.similar` uses to rank papers like a seed in one respect.
"""

from __future__ import annotations

import re

from openxiv.corpus.text import split_sentences

__all__ = ["FACETS", "facet_sentences", "facet_text", "sentence_facets"]

FACETS = ("background", "method", "result")

_CUES: dict[str, tuple[tuple[str, float], ...]] = {
    "background": (
        (
            r"\b(recent(ly)?|increasing(ly)?|growing|popular|widely|attracted|attention|important|crucial)\b",
            1.0,
        ),
        (r"\b(has|have) (been|become|shown|attracted|received)\b", 1.0),
        (r"\b(however|although|while|despite|remains?|challeng\w*|difficult|problem|limitation|lack)\b", 0.8),
        (
            r"\b(existing|previous|prior|traditional(ly)?|conventional|current|typically|often|many|most)\b",
            0.6,
        ),
        (r"\b(this|the present) (paper|work|article|study)\b", 0.5),
        (
            r"\b(we|this paper) (address|stud(y|ies)|investigat\w*|explor\w*|consider|examin\w*|focus|tackle)\b",
            1.0,
        ),
        (r"\b(aim|goal|objective|motivat\w*|question)\b", 0.8),
        (r"\b(is|are) (a|an|one of|the) \b", 0.5),
    ),
    "method": (
        (
            r"\b(we|this paper|this work) (propose|present|introduce|develop|describe|design|use|employ|apply|extend|formulate|train|define|build|adopt|leverage)\w*",
            1.4,
        ),
        (
            r"\b(our|the proposed|a novel|a new|new) (method|model|approach|algorithm|framework|system|technique|architecture|objective|loss)\b",
            1.2,
        ),
        (
            r"\b(based on|using|by (using|combining|learning|modeling|training)|consists? of|composed of|relies on)\b",
            0.8,
        ),
        (
            r"\b(model|algorithm|network|encoder|decoder|architecture|module|layer|representation|objective|loss|feature|kernel|graph|parser|classifier|embedding)s?\b",
            0.5,
        ),
        (r"\b(then|first|second|specifically|in particular|to this end|to do so|in addition)\b", 0.5),
    ),
    "result": (
        (r"\b(results?|experiments?|experimental|evaluation|empirical(ly)?|benchmark)\w*\b", 1.2),
        (
            r"\b(show|shows|showed|demonstrate|demonstrates|indicate|indicates|reveal|reveals|suggest|suggests|find|finds|found|confirm)\b( that)?",
            1.0,
        ),
        (
            r"\b(outperform\w*|improv\w*|achiev\w*|surpass\w*|better|significant(ly)?|state[- ]of[- ]the[- ]art|competitive|gains?)\b",
            1.2,
        ),
        (r"\b(accuracy|f1|f-score|bleu|error rate|precision|recall|perplexity|points?)\b|%", 1.0),
        (r"\b(finally|overall|in conclusion|our analysis|we analy[sz]e|we observe)\b", 0.8),
    ),
}
_COMPILED = {f: tuple((re.compile(p, re.I), w) for p, w in cues) for f, cues in _CUES.items()}


def _position_prior(i: int, n: int) -> dict[str, float]:
    """The place in the abstract: the first sentences lean to background, the last to results."""
    r = i / (n - 1) if n > 1 else 0.0
    return {
        "background": 2.2 if i == 0 else max(0.0, 1.0 - 1.5 * r),
        "method": 1.0 - abs(r - 0.45),
        "result": max(0.0, 2.0 * r - 0.8) + (0.6 if i == n - 1 and n > 2 else 0.0),
    }


def sentence_facets(sentences: list[str]) -> list[str]:
    """The facet of each sentence of one abstract, in order."""
    n = len(sentences)
    out = []
    for i, s in enumerate(sentences):
        score = _position_prior(i, n)
        for facet, cues in _COMPILED.items():
            score[facet] += sum(w for rx, w in cues if rx.search(s))
        out.append(max(FACETS, key=lambda f: score[f]))
    return out


def facet_sentences(abstract: str, facet: str) -> list[str]:
    """The sentences of ``abstract`` of kind ``facet`` (one of `FACETS`), in order."""
    if facet not in FACETS:
        raise ValueError(f"facet must be one of {', '.join(FACETS)}, got {facet!r}")
    sentences = split_sentences(abstract)
    return [s for s, f in zip(sentences, sentence_facets(sentences), strict=True) if f == facet]


def facet_text(abstract: str, facet: str) -> str:
    """The ``facet`` sentences of ``abstract`` joined, or the whole abstract when none is of that kind."""
    return " ".join(facet_sentences(abstract, facet)) or " ".join(abstract.split())
