"""The fast paths of `openxiv.corpus.normalize` that a listing ingest takes (issue 13): the same
answers as the plain definitions, on every character and on real names."""

from __future__ import annotations

import gzip
import itertools
import json
from pathlib import Path

from hypothesis import given
from hypothesis import strategies as st

from openxiv.corpus.normalize import fold, is_single_spaced, normalize_names


def test_single_spaced_is_what_splitting_and_joining_leaves() -> None:
    """`is_single_spaced` (a byte translation for ASCII text, `str.isprintable` otherwise) never says
    yes to a text that collapsing whitespace would change: every character of both kinds, alone and
    between words."""
    for code in [*range(0x3001), 0x202F, 0x205F, 0xFEFF, 0x1F600]:
        c = chr(code)
        for short in (c, f"a{c}b", f"a {c} b", f"{c}a", f"a{c}", f"ab {c}{c} cd"):
            for text in (short, short.replace("a", "a" * 200)):  # short texts and long ones
                collapsed = " ".join(text.split()) == text
                if is_single_spaced(text):
                    assert collapsed, repr(text)
                if text.isascii():  # the byte path answers as isprintable would
                    assert is_single_spaced(text) == (text.isprintable() and collapsed), repr(text)


@given(st.lists(st.text(alphabet=" abZ9.-'\t\\,", max_size=12), max_size=6))
def test_a_list_of_names_folds_as_each_name_alone(names: list[str]) -> None:
    """`normalize_names` folds an ASCII list in one pass over the joined text: the same as `fold`
    of each name (empty names, names that fold to nothing, runs of spaces and punctuation)."""
    assert normalize_names(names) == [fold(name) for name in names]


def test_the_names_of_a_real_listing_fold_as_each_name_alone(listing_files: list[Path]) -> None:
    with gzip.open(listing_files[0], "rt", encoding="utf-8") as fh:
        lists = [json.loads(line)["authors"] for line in itertools.islice(fh, 3000)]
    assert sum(len(names) for names in lists) > 10_000
    for names in lists:
        assert normalize_names(names) == [fold(name) for name in names]
