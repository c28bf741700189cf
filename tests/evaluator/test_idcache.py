"""The evaluator's cached, batched id normalisation gives exactly `openxiv.corpus.ids`' answers."""

from __future__ import annotations

import itertools

from hypothesis import given, settings
from hypothesis import strategies as st

from openxiv.corpus.ids import try_canonical_id as corpus_canonical
from openxiv.evaluator import idcache
from openxiv.evaluator.idcache import canonical_ids, try_canonical_id

PREFIXES = ["", "arXiv:", "ARXIV:", "https://arxiv.org/abs/", "http://www.arxiv.org/abs/", "10.48550/arXiv.",
            "arxiv--", "https://arxiv.org/pdf/", "abs/", " "]  # fmt: skip
SUFFIXES = ["", "v1", "v2", "v0", "v00", "v01", "v12", ".pdf", "v1.pdf", "x", " "]


def _fresh() -> None:
    idcache._cache.clear()
    idcache._shape_ok.clear()


def test_every_month_number_length_and_version_agrees_with_the_corpus_parser() -> None:
    _fresh()
    texts = [
        f"{p}{yy:02d}{mm:02d}.{'7' * digits}{s}"
        for yy in range(100)
        for mm in (0, 1, 3, 4, 12, 13)
        for digits in (3, 4, 5, 6)
        for p, s in itertools.product(PREFIXES[:4], SUFFIXES[:7])
    ]
    # Twice over, in another order: the second pass is answered by the shapes the first one learnt.
    for batch in (texts, texts[::-1]):
        assert canonical_ids(batch) == [corpus_canonical(t) for t in batch]
    assert any(canonical_ids(texts)) and not all(canonical_ids(texts))


def test_other_spellings_titles_and_odd_strings_go_to_the_parser() -> None:
    _fresh()
    texts = ["hep-th/9901001v2", "math.GT/0309136", "Attention Is All You Need", "", "2301.00001\n",
             "a\nb", "2301.00001\r", "10.1145/3580305.3599256", "2301.00001", "2301.00001", "\n", "ünï 2301"]  # fmt: skip
    assert canonical_ids(texts) == [corpus_canonical(t) for t in texts]
    assert [try_canonical_id(t) for t in texts] == [corpus_canonical(t) for t in texts]
    assert try_canonical_id(None) is None and try_canonical_id(2301.00001) is None


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.text(max_size=30),
            st.builds(
                lambda p, yymm, n, s: f"{p}{yymm:04d}.{n}{s}",
                st.sampled_from(PREFIXES),
                st.integers(0, 9999),
                st.text(alphabet="0123456789", min_size=3, max_size=6),
                st.sampled_from(SUFFIXES),
            ),
        ),
        max_size=20,
    )
)
def test_batches_of_arbitrary_strings_agree_with_the_corpus_parser(texts: list[str]) -> None:
    assert canonical_ids(texts) == [corpus_canonical(t) for t in texts]
