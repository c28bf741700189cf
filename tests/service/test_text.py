"""Sentence splitting, extractive tldr, section lookup and request parameters (pure functions)."""

from __future__ import annotations

from datetime import date

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openxiv.corpus.text import (
    TLDR_MIN_CHARS,
    real_sentences,
    split_sentences,
    tldr,
    tldr_of,
    without_residue,
)
from openxiv.service.errors import BadRequest
from openxiv.service.params import build_filters, check_mode, check_queries, parse_period, split_list
from openxiv.service.text import clean_section_name, match_section, token_count


def test_splitter_keeps_abbreviations_decimals_and_initials_together() -> None:
    text = (
        "We train models, e.g. transformers, with 3.5 times fewer steps than Smith et al. (2020) did. "
        "Results in Fig. 2 and Eq. 4 confirm it, cf. Sec. 3 of J. Doe's note! Does it scale? Yes."
    )
    assert split_sentences(text) == [
        "We train models, e.g. transformers, with 3.5 times fewer steps than Smith et al. (2020) did.",
        "Results in Fig. 2 and Eq. 4 confirm it, cf. Sec. 3 of J. Doe's note!",
        "Does it scale?",
        "Yes.",
    ]


def test_splitter_handles_i_e_quotes_and_whitespace() -> None:
    text = 'It is small, i.e. fast.\n\n  "Next" is quoted. (A bracketed one.) done'
    assert split_sentences(text) == [
        "It is small, i.e. fast.",
        '"Next" is quoted.',
        "(A bracketed one.) done",
    ]
    assert split_sentences("") == [] and split_sentences("   ") == []


@given(st.text(max_size=400))
def test_splitter_loses_no_words(text: str) -> None:
    assert " ".join(split_sentences(text)).split() == text.split()


def test_tldr_is_first_sentence_plus_second_when_short() -> None:
    long_first = "A" + " word" * 40 + ". Second sentence here."
    assert tldr(long_first) == "A" + " word" * 40 + "."
    short = "We study graphs. It works on trees and lists. Third."
    assert len("We study graphs.") < TLDR_MIN_CHARS
    assert tldr(short) == "We study graphs. It works on trees and lists."
    assert tldr(None) is None and tldr("") is None


def test_token_count_is_words_times_1_3() -> None:
    assert token_count("one two three four five six seven eight nine ten") == 13
    assert token_count(None) == 0


def test_section_names_match_like_the_sdk_and_more() -> None:
    names = ["Introduction", "Related Work", "3.1 Method Details", "Experiments", "Conclusion"]
    assert clean_section_name("3.1 Method Details") == "method details"
    assert clean_section_name("IV. Results") == "results"
    assert clean_section_name("A Simple Baseline") == "a simple baseline"
    assert match_section("introduction", names) == 0
    assert match_section("  RELATED   work ", names) == 1
    assert match_section("Method Details", names) == 2
    assert match_section("2. Method details", names) == 2
    assert match_section("experiment", names) == 3
    assert match_section("4", names) == 4
    assert match_section("Appendix", names) is None
    assert match_section("3 Experiments", ["Intro", "Experiments"], [None, "3"]) == 1
    # headings are compared by corpus.normalize.heading_key: trailing punctuation does not count
    assert match_section("Conclusion.", names) == 4
    assert clean_section_name("5. Conclusions:") == "conclusions"


def test_list_params_accept_repeats_and_commas() -> None:
    assert split_list(["cs.CL,cs.CV", " cs.CL ", "astro-ph"], "categories") == ("cs.CL", "cs.CV", "astro-ph")
    assert split_list("a, b,,", "authors") == ("a", "b")
    assert split_list(None, "x") == ()


@pytest.mark.parametrize(
    ("text", "period"),
    [
        ("2024", (date(2024, 1, 1), date(2024, 12, 31))),
        ("2024-02", (date(2024, 2, 1), date(2024, 2, 29))),
        ("2025-03-21", (date(2025, 3, 21), date(2025, 3, 21))),
        ("2025-06-23T17:38:54Z", (date(2025, 6, 23), date(2025, 6, 23))),
    ],
)
def test_periods(text: str, period: tuple[date, date]) -> None:
    assert parse_period(text) == period


@pytest.mark.parametrize("bad", ["2024-13", "2024-02-30", "24", "yesterday", "2024/01/01", ""])
def test_bad_periods_name_the_parameter(bad: str) -> None:
    with pytest.raises(BadRequest, match="date_str"):
        parse_period(bad)


def test_date_search_types() -> None:
    f = build_filters(date_search_type="exact", date_str="2025-03")
    assert (f.date_from, f.date_to) == (date(2025, 3, 1), date(2025, 3, 31))
    f = build_filters(date_search_type="between", date_str=["2024", "2025-02"])
    assert (f.date_from, f.date_to) == (date(2024, 1, 1), date(2025, 2, 28))
    f = build_filters(date_search_type="between", date_str="2024-05,2024-06")
    assert (f.date_from, f.date_to) == (date(2024, 5, 1), date(2024, 6, 30))
    f = build_filters(date_search_type="after", date_str="2025")
    assert (f.date_from, f.date_to) == (date(2025, 1, 1), None)
    f = build_filters(date_search_type="before", date_str="2025")
    assert (f.date_from, f.date_to) == (None, date(2024, 12, 31))
    f = build_filters(date_from="2024-05", date_to="2024")
    assert (f.date_from, f.date_to) == (date(2024, 5, 1), date(2024, 12, 31))
    assert build_filters().empty


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"date_search_type": "during", "date_str": "2024"}, "date_search_type"),
        ({"date_search_type": "between", "date_str": "2024"}, "needs 2"),
        ({"date_search_type": "between", "date_str": ["2025", "2024"]}, "empty range"),
        ({"date_str": "2024"}, "needs date_search_type"),
        ({"date_from": "2025", "date_to": "2024"}, "empty"),
        ({"categories": ["cs.CL; DROP TABLE papers"]}, "categories"),
        ({"authors": ["x" * 500]}, "authors"),
        ({"categories": [f"cs.A{chr(65 + i % 26)}{i}" for i in range(60)]}, "categories"),
    ],
)
def test_bad_filters(kwargs: dict[str, object], message: str) -> None:
    with pytest.raises(BadRequest, match=message):
        build_filters(**kwargs)  # type: ignore[arg-type]


def test_queries_and_modes() -> None:
    assert check_queries("  hello ", 10) == ["hello"]
    assert check_queries(["a", "b"], 10) == ["a", "b"]
    for bad, message in (
        ("", "empty"),
        ("   ", "empty"),
        ([], "empty"),
        (["ok", " "], r"query\[1\]"),
        ("x" * 11, "limit"),
    ):
        with pytest.raises(BadRequest, match=message):
            check_queries(bad, 10)
    with pytest.raises(BadRequest, match="at most"):
        check_queries(["q"] * 51, 10)
    assert check_mode(None) is None and check_mode("hybrid") is None and check_mode("BM25") == "bm25"
    with pytest.raises(BadRequest, match="mode"):
        check_mode("magic")


def test_lazy_tldr_equals_the_eager_one_on_real_abstracts_and_sections() -> None:
    """`tldr` stops after the first two real sentences (a search hit's tldr was most of its
    hydration time); on real abstracts and full-text sections it says exactly what it said before."""
    import gzip
    import json

    from openxiv.corpus.settings.model import shared_dir

    root = shared_dir() / "data"
    listing = root / "corpus" / "listing-cs-2503-2606.jsonl.gz"
    fulltext = root / "fulltext" / "plaintext-9108-1612.jsonl.gz"
    if not listing.exists() or not fulltext.exists():
        pytest.skip(f"shared listing or full texts not found under {root} (set OPENXIV_SHARED)")
    with gzip.open(listing, "rt", encoding="utf-8") as fh:
        texts = [json.loads(line)["abstract"] for _, line in zip(range(1500), fh, strict=False)]
    with gzip.open(fulltext, "rt", encoding="utf-8") as fh:  # full texts open with page furniture
        texts += [json.loads(line)["text"][:20000] for _, line in zip(range(300), fh, strict=False)]
    texts += ["Keywords: graphs. Department of Physics, MIT. We study graphs. It works."]
    assert sum(tldr(t) is None for t in texts) < len(texts)
    for t in texts:
        tldr.cache_clear()
        assert tldr(t) == tldr_of(list(real_sentences(t))), t[:200]  # every sentence tested first


def test_printed_section_numbers_come_before_positions() -> None:
    """``section=3`` is the section printed "3", ``3.2`` the one printed "3.2" (issue 21: the index
    answered first and "3.2" was a 404); a bare number is never part of a name."""
    names = ["Body", "Introduction", "Results on 3D scenes", "Method", "Setup", "Conclusion"]
    numbers = [None, "1", "2", "3", "3.1", "4"]
    assert match_section("3", names, numbers) == 3
    assert match_section("3.1", names, numbers) == 4
    assert match_section("3.1.", names, numbers) == 4
    assert match_section("5", names, numbers) == 5  # nothing printed "5": the 0-based index
    assert match_section("5", names, numbers, by_index=False) is None
    assert match_section("iv", ["A", "B"], ["III", "IV."]) == 1


def test_tex_residue_is_shown_as_an_ellipsis() -> None:
    assert (
        without_residue("described in [\\cite=Multidecay], [\\cite=Section1]. Then") == "described in …. Then"
    )
    assert without_residue("radii of [formula], where ([\\ref=eq1])") == "radii of …, where (…)"
    assert without_residue("no [brackets] here") == "no [brackets] here"
    text = "We solve the equations [\\cite=a] of QED in a strong field. It works [\\cite=b]."
    assert tldr(text) == "We solve the equations … of QED in a strong field. It works …."


def test_a_between_date_range_may_have_equal_ends() -> None:
    assert split_list(["2025-04", "2025-04"], "date_str", unique=False) == ("2025-04", "2025-04")
    filters = build_filters(date_search_type="between", date_str=["2025-04", "2025-04"])
    assert (filters.date_from, filters.date_to) == (date(2025, 4, 1), date(2025, 4, 30))
    assert build_filters(date_search_type="exact", date_str="2025-04,2025-04").date_to == date(2025, 4, 30)
