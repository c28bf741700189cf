"""Passage chunking: section-aware overlapping word windows (pure functions)."""

from __future__ import annotations

import re

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openxiv.corpus.passages import chunk_sections, chunk_text, word_spans


def words_of(text: str) -> list[str]:
    return text.split()


def test_short_section_is_one_passage() -> None:
    text = "  A short section\nwith a few words.  "
    assert chunk_text(text, 10, 3) == [(2, len(text) - 2)]
    [chunk] = chunk_sections([text], 10, 3)
    assert chunk.text == "A short section\nwith a few words."
    assert (chunk.section_idx, chunk.ordinal) == (0, 0)


def test_windows_overlap_by_the_configured_words() -> None:
    text = " ".join(f"w{i}" for i in range(25))
    chunks = chunk_sections([text], 10, 4)
    got = [words_of(c.text) for c in chunks]
    assert got[0] == [f"w{i}" for i in range(10)]
    assert got[1][0] == "w6" and len(got[1]) == 10
    assert got[1][:4] == got[0][-4:]
    assert got[-1][-1] == "w24"


def test_tiny_tail_is_merged_into_the_previous_window() -> None:
    # windows w0-w11 and w10-w21; the 2 words left (< 12 // 4) join the last window
    text = " ".join(f"w{i}" for i in range(24))
    chunks = chunk_text(text, 12, 2)
    assert len(chunks) == 2
    assert text[chunks[-1][0] : chunks[-1][1]].split() == [f"w{i}" for i in range(10, 24)]


def test_windows_never_cross_sections_and_ordinals_run_over_the_paper() -> None:
    sections = ["one two three", "", "four five six seven eight nine ten eleven twelve", "thirteen"]
    chunks = chunk_sections(sections, 4, 1)
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
    assert {c.section_idx for c in chunks} == {0, 2, 3}
    for c in chunks:
        assert sections[c.section_idx][c.char_start : c.char_end] == c.text


def test_empty_and_whitespace_sections_give_no_passages() -> None:
    assert chunk_sections(["", "   \n\t "], 5, 1) == []


@pytest.mark.parametrize(("words", "overlap"), [(0, 0), (5, 5), (5, -1)])
def test_bad_sizes_are_rejected(words: int, overlap: int) -> None:
    with pytest.raises(ValueError):
        chunk_text("a b c", words, overlap)


def test_word_spans_match_the_regex_definition_of_a_word() -> None:
    text = "\u00a0Héllo\u2003wörld\n\n[formula] 𝔸bc\u3000end\t"
    starts, ends = word_spans(text)
    assert [text[a:b] for a, b in zip(starts, ends, strict=True)] == re.findall(r"\S+", text)


TEXT = st.lists(
    st.tuples(
        st.text(alphabet="abcé𝔸[]-.", min_size=1, max_size=8),
        st.sampled_from([" ", "\n", "  ", "\n\n", "\t"]),
    ),
    max_size=300,
).map(lambda parts: "".join(w + s for w, s in parts))


@given(st.lists(TEXT, max_size=4), st.integers(1, 40), st.data())
def test_passages_cover_every_word_in_order(sections: list[str], words: int, data: st.DataObject) -> None:
    overlap = data.draw(st.integers(0, words - 1))
    chunks = chunk_sections(sections, words, overlap)
    for idx, text in enumerate(sections):
        mine = [c for c in chunks if c.section_idx == idx]
        all_words = text.split()
        if not all_words:
            assert mine == []
            continue
        # offsets slice the section; windows start at multiples of the step; the union is every word
        covered: list[str] = []
        for c in mine:
            assert text[c.char_start : c.char_end] == c.text
            assert c.text == c.text.strip()
            n = len(c.text.split())
            assert 1 <= n <= words + max(1, words // 4)
            prefix = len(text[: c.char_start].split())
            covered[prefix:] = c.text.split()
        assert covered == all_words
        if len(all_words) <= words:
            assert len(mine) == 1
    assert [c.ordinal for c in chunks] == list(range(len(chunks)))
