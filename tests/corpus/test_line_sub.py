"""Substituting on marked lines only gives the same text as the whole-text substitution it replaces.

`sub_marked_lines` is a speed-up of two scans the PDF reader makes over a whole document (e-mail
addresses and URLs dropped from the author check's vocabulary; words split at a line-end hyphen
dropped from the hyphen rule's vocabulary). The whole-text `re.sub` is the definition; these tests
compare against it on generated texts built from the characters the patterns care about, and on the
real full texts and PDFs of ../shared.
"""

from __future__ import annotations

import gzip
import json
from collections import Counter

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from openxiv.corpus.extras import import_pymupdf
from openxiv.corpus.readers import author_block, pdf_layout, pdf_text
from openxiv.corpus.readers.pdf import TEXT_FLAGS
from openxiv.corpus.shared import SharedData

# pieces that make, break or chain matches: braces across lines, tokens with @ and ://, dotted
# lower-case names, hyphens before line breaks, capitals between lower-case runs
_PIECES = st.sampled_from(
    ["a", "b", "Z", "İ", ".", "@", "{", "}", ":", "/", "://", "-", "\n", "-\n", " ", ",", "x.y", "ab-\ncd"]
)
_TEXTS = st.lists(_PIECES, max_size=40).map("".join)


def _split_words(text: str) -> str:
    return pdf_text.sub_marked_lines(
        pdf_text._SPLIT_WORD, " ", text, pdf_text._LINE_END_HYPHEN, lambda m: m.end()
    )


@settings(max_examples=3000, deadline=None)
@given(_TEXTS)
def test_strip_addresses_equals_the_whole_text_substitution(text: str) -> None:
    assert author_block.strip_addresses(text) == author_block._ADDRESSES.sub(" ", text)


@settings(max_examples=3000, deadline=None)
@given(_TEXTS)
def test_split_word_removal_equals_the_whole_text_substitution(text: str) -> None:
    assert _split_words(text) == pdf_text._SPLIT_WORD.sub(" ", text)


def test_braces_spanning_lines_and_addresses_are_all_stripped() -> None:
    text = "Alice Smith\n{alice.smith,\nbob}@uni.edu and x\nsee https://a.b/c\nplain line\nu@v w"
    assert author_block.strip_addresses(text) == author_block._ADDRESSES.sub(" ", text)
    assert author_block.lowercase_words(text) == {"and", "see", "plain", "line"}


def test_same_text_on_the_shared_plain_text_papers() -> None:
    data = SharedData.default()
    files = sorted(data.fulltext.glob("plaintext-*.jsonl.gz")) if data.available else []
    if not files:
        pytest.skip(f"no plain-text full texts under {data.root}")
    checked = 0
    with gzip.open(files[0], "rt", encoding="utf-8") as fh:
        for line in fh:
            texts = [v for v in json.loads(line).values() if isinstance(v, str) and len(v) > 2000]
            for text in texts:
                assert author_block.strip_addresses(text) == author_block._ADDRESSES.sub(" ", text)
                assert _split_words(text) == pdf_text._SPLIT_WORD.sub(" ", text)
                checked += 1
            if checked >= 300:
                break
    assert checked >= 300


def _reference_size(spans: list[dict]) -> float:
    """The most common size rounded to 0.1 pt, by characters; ties go to the size seen first."""
    sizes: Counter[float] = Counter()
    for s in spans:
        sizes[round(s["size"], 1)] += len(s["text"])
    return max(sizes, key=sizes.__getitem__)


def test_line_size_rounds_each_distinct_size_once_with_the_same_result() -> None:
    data = SharedData.default()
    pdfs = sorted((data.pdfs / "valid").glob("*.pdf")) if data.available else []
    if not pdfs:
        pytest.skip(f"no PDFs under {data.root}")
    pymupdf = import_pymupdf()
    lines = 0
    mixed = 0  # lines whose spans have several exact sizes that round alike
    for path in pdfs[:6]:
        with pymupdf.open(str(path)) as doc:
            for page in doc:
                for block in page.get_text("dict", flags=TEXT_FLAGS)["blocks"]:
                    for ln in block.get("lines", ()):
                        spans = ln["spans"]
                        style = pdf_layout._line_style(spans, page.number) if len(spans) > 1 else None
                        if style is None:
                            continue
                        inked = [s for s in spans if s["text"].strip()]
                        big = max(s["size"] for s in inked)
                        kept = [s for s in inked if not (s["flags"] & 1 and s["size"] < 0.85 * big)]
                        assert style[1] == _reference_size(kept)
                        lines += 1
                        exact = {s["size"] for s in kept}
                        mixed += len(exact) > len({round(x, 1) for x in exact})
    assert lines > 1000 and mixed > 0, (lines, mixed)
