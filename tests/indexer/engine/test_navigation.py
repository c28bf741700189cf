"""The engine's navigation helpers (issue 41): facet counts over CSR postings, dates by year and month,
and the author view's rule that initials alone do not make a full name match."""

from __future__ import annotations

from datetime import date

import numpy as np

from openxiv.indexer.engine.meta import NO_DATE, day_number
from openxiv.indexer.engine.navigation import counts_by_key, date_counts, same_person, top_keys


def test_counts_by_key_counts_the_masked_rows_of_each_key() -> None:
    # key 0 posts rows 0, 2; key 1 posts nothing; key 2 posts rows 1, 2, 3
    ptr = np.array([0, 2, 2, 5])
    rows = np.array([0, 2, 1, 2, 3])
    mask = np.array([True, False, True, True])
    assert counts_by_key(mask, ptr, rows).tolist() == [2, 0, 2]
    assert counts_by_key(np.zeros(4, bool), ptr, rows).tolist() == [0, 0, 0]


def test_date_counts_by_year_and_month_with_the_undated_apart() -> None:
    days = np.array(
        [day_number(date(2025, 3, 1)), day_number(date(2025, 3, 31)), day_number(date(2024, 12, 5)), NO_DATE],
        dtype=np.int32,
    )
    years, months, undated = date_counts(days)
    assert years == [(2024, 1), (2025, 2)] and months == [("2024-12", 1), ("2025-03", 2)] and undated == 1


def test_same_person_needs_a_whole_word_not_only_initials() -> None:
    assert same_person("Ashish Vaswani", "ashish vaswani")
    assert same_person("Ashish Vaswani", "a vaswani")  # the paper wrote an initial
    assert not same_person("Ashish Vaswani", "a v titova")  # only the query's initials
    assert same_person("Vasw", "ashish vaswani")  # a 4-letter start, as the filter allows
    assert same_person("A. V.", "a v titova")  # initials asked: the filter's rule alone


def test_top_keys_most_first_ties_by_key_zero_left_out() -> None:
    counts = np.array([3, 5, 0, 5, 1, 3, 3])
    assert top_keys(counts, 4).tolist() == [1, 3, 0, 5]  # the 3s tie at the cut: the lowest keys
    assert top_keys(counts, 10).tolist() == [1, 3, 0, 5, 6, 4]  # no key without a count
    assert top_keys(counts, 0).tolist() == []
