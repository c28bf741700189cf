"""arXiv identifiers: the vectors of reference/evaluation-metrics.md §6 and round-trip properties."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from openxiv.corpus import ids
from openxiv.corpus.ids import (
    ArxivId,
    InvalidArxivId,
    canonical_id,
    is_arxiv_id,
    parse_arxiv_id,
    try_canonical_id,
)

VALID = {
    "2301.00001": [
        "2301.00001",
        "2301.00001v3",
        "arXiv:2301.00001v2",
        "ARXIV:2301.00001",
        "arXiv--2301.00001",
        "https://arxiv.org/abs/2301.00001v2",
        "https://arxiv.org/pdf/2301.00001v1.pdf",
        "http://export.arxiv.org/abs/2301.00001",
        "10.48550/arXiv.2301.00001",
        "https://doi.org/10.48550/ARXIV.2301.00001",
    ],
    "hep-th/9901001": [
        "hep-th/9901001",
        "hep-th/9901001v2",
        "arXiv:hep-th/9901001",
        "https://arxiv.org/abs/hep-th/9901001",
    ],
    "math/0309136": ["math.GT/0309136", "arXiv:math.GT/0309136", "math/0309136v1"],
    "0704.0001": ["0704.0001"],
    "1412.7878": ["1412.7878"],
    "1501.00001": ["1501.00001"],
}
MALFORMED = [
    "2301.0001",  # 4 digits after 1501
    "1412.00001",  # 5 digits before 1501
    "2313.00001",  # month 13
    "2301.000012",
    "10.1145/3580305.3599256",  # a DOI outside arXiv
    "",
    "   ",
    "hello world",
    "0703.0001",  # new style starts at 0704
    "9107.0001",
    "hep-th/9107001",  # old style starts at 9108
    "hep-th/0704001",  # ... and ends at 0703
    "2301.00001v0",
    "2301.00001x",
    "see 2301.00001 for details",
    "2301.00001.pdf.zip",
    "abs/2301.00001",
]


@pytest.mark.parametrize(("expected", "spelling"), [(k, s) for k, v in VALID.items() for s in v])
def test_reference_vectors_parse_to_canonical(expected: str, spelling: str) -> None:
    assert canonical_id(spelling) == expected
    assert try_canonical_id(spelling) == expected
    assert is_arxiv_id(spelling)


def test_versions_are_kept_apart() -> None:
    assert parse_arxiv_id("https://arxiv.org/pdf/2301.00001v1.pdf") == ArxivId("2301.00001", 1)
    assert parse_arxiv_id("2301.00001").version is None
    assert parse_arxiv_id("hep-th/9901001v2") == ArxivId("hep-th/9901001", 2)
    assert str(parse_arxiv_id("arXiv:2301.00001v3")) == "2301.00001v3"


@pytest.mark.parametrize("text", MALFORMED)
def test_malformed_ids_are_rejected_with_a_reason(text: str) -> None:
    with pytest.raises(InvalidArxivId) as info:
        parse_arxiv_id(text)
    assert str(info.value)
    assert try_canonical_id(text) is None
    assert not is_arxiv_id(text)


@pytest.mark.parametrize("value", [None, 2301.00001, 42, b"2301.00001", ["2301.00001"]])
def test_non_strings_are_not_ids(value: object) -> None:
    assert try_canonical_id(value) is None
    with pytest.raises(InvalidArxivId):
        parse_arxiv_id(value)


# ---------------------------------------------------------------- generated ids
def _yymm(lo: int, hi: int) -> st.SearchStrategy[str]:
    """YYMM strings with lo <= YYMM <= hi (months counted from 2000-01, no filtering)."""
    first = (lo // 100) * 12 + lo % 100 - 1
    last = (hi // 100) * 12 + hi % 100 - 1
    return st.integers(first, last).map(lambda k: f"{k // 12:02d}{k % 12 + 1:02d}")


NEW_4 = st.builds(lambda ym, n: f"{ym}.{n:04d}", _yymm(704, 1412), st.integers(0, 9999))
NEW_5 = st.builds(lambda ym, n: f"{ym}.{n:05d}", _yymm(1501, 8912), st.integers(0, 99999))
ARCHIVES = [
    "hep-th",
    "hep-ph",
    "astro-ph",
    "cond-mat",
    "gr-qc",
    "math",
    "quant-ph",
    "nucl-th",
    "cs",
    "physics",
]
OLD_YYMM = st.one_of(
    st.builds(lambda y, m: f"{y:02d}{m:02d}", st.integers(92, 99), st.integers(1, 12)),
    st.builds(lambda m: f"91{m:02d}", st.integers(8, 12)),
    st.builds(lambda y, m: f"{y:02d}{m:02d}", st.integers(0, 6), st.integers(1, 12)),
    st.builds(lambda m: f"07{m:02d}", st.integers(1, 3)),
)
OLD = st.builds(
    lambda a, sc, ym, n: (f"{a}/{ym}{n:03d}", f"{a}{sc}/{ym}{n:03d}"),
    st.sampled_from(ARCHIVES),
    st.sampled_from(["", ".GT", ".CO", ".SR", ".AG"]),
    OLD_YYMM,
    st.integers(0, 999),
)
CANONICAL_AND_RAW = st.one_of(NEW_4.map(lambda s: (s, s)), NEW_5.map(lambda s: (s, s)), OLD)
DECORATIONS = [
    "{}",
    "arXiv:{}",
    "arxiv:{}",
    "ARXIV:{}",
    "arXiv {}",
    "arxiv--{}",
    "ARXIV_{}",
    "https://arxiv.org/abs/{}",
    "http://arxiv.org/abs/{}",
    "https://www.arxiv.org/abs/{}",
    "http://export.arxiv.org/abs/{}",
    "https://arxiv.org/pdf/{}",
    "https://arxiv.org/pdf/{}.pdf",
    "https://arxiv.org/abs/{}/",
    "https://arxiv.org/abs/{}?context=cs",
    "https://arxiv.org/abs/{}#S2",
    "10.48550/arXiv.{}",
    "10.48550/ARXIV.{}",
    "https://doi.org/10.48550/arXiv.{}",
    "  {}  ",
    "<{}>",
    "({})",
    '"{}"',
    "[arXiv:{}]",
]


@given(CANONICAL_AND_RAW, st.one_of(st.none(), st.integers(1, 60)), st.sampled_from(DECORATIONS))
def test_any_valid_id_in_any_decoration_parses_back(
    pair: tuple[str, str], version: int | None, decoration: str
) -> None:
    canonical, raw = pair
    text = decoration.format(raw if version is None else f"{raw}v{version}")
    assert parse_arxiv_id(text) == ArxivId(canonical, version)


@given(CANONICAL_AND_RAW, st.one_of(st.none(), st.integers(1, 60)))
def test_canonical_form_is_a_fixed_point(pair: tuple[str, str], version: int | None) -> None:
    canonical, raw = pair
    parsed = parse_arxiv_id(raw if version is None else f"{raw}v{version}")
    assert parsed.canonical == canonical
    assert canonical_id(parsed.canonical) == parsed.canonical
    assert parse_arxiv_id(parsed.with_version()) == parsed


@given(CANONICAL_AND_RAW, st.text(alphabet="abcxyz0123456789-_.", min_size=1, max_size=5))
def test_trailing_garbage_is_rejected_not_truncated(pair: tuple[str, str], junk: str) -> None:
    _, raw = pair
    assert try_canonical_id(raw + junk) is None


@given(CANONICAL_AND_RAW, st.sampled_from(["see ", "0", "id=", "arxiv.org/", "abs/", "-", ".", "v1"]))
def test_leading_garbage_is_rejected(pair: tuple[str, str], junk: str) -> None:
    _, raw = pair
    assert try_canonical_id(junk + raw) is None


@given(NEW_4)
def test_four_digit_numbers_after_1501_are_rejected(old: str) -> None:
    yymm, number = old.split(".")
    for late in ("1501", "2301", "2612"):
        with pytest.raises(InvalidArxivId):
            parse_arxiv_id(f"{late}.{number}")
    with pytest.raises(InvalidArxivId):
        parse_arxiv_id(f"{yymm}.{number}0")


@given(st.text(max_size=40))
def test_arbitrary_text_never_crashes(text: str) -> None:
    result = try_canonical_id(text)
    if result is not None:
        assert canonical_id(result) == result


# ---------------------------------------------------------------- the canonical-form shortcut
def _both(text: str) -> tuple[str, object]:
    """What `parse_arxiv_id` (with its shortcut) and the general rules alone give for ``text``."""
    out: list[object] = []
    for parse in (parse_arxiv_id, ids._parse_general):
        try:
            out.append(parse(text))
        except InvalidArxivId as exc:
            out.append(f"InvalidArxivId: {exc}")
    return text, out


def test_the_canonical_shortcut_agrees_with_the_rules_for_every_month_and_length() -> None:
    """Every ``YYMM.N...`` of 3 to 6 digits (valid or not): the same id, or the same error."""
    for yymm in (f"{n:04d}" for n in range(10_000)):
        for number in ("000", "0001", "00001", "99999", "000001"):
            text, (fast, general) = _both(f"{yymm}.{number}")
            assert fast == general, text
            assert (try_canonical_id(text) is not None) == isinstance(general, ArxivId), text


@given(st.text(alphabet="0123456789.v\u0661\u00b2 ", min_size=8, max_size=12))
def test_the_canonical_shortcut_agrees_with_the_rules_on_near_ids(text: str) -> None:
    """Digits of other scripts (``\u0661``), superscripts, versions and spaces near the shape."""
    _, (fast, general) = _both(text)
    assert fast == general
