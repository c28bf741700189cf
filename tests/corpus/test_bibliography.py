"""Bibliographies of plain texts and PDFs (issue 41): entries, printed arXiv ids, citing sentences,
read from the real files of ../shared."""

from __future__ import annotations

import gzip
import json
from functools import cache

import pytest

from openxiv.corpus.bibliography import (
    Entry,
    entries_from_blocks,
    find_arxiv_id,
    find_doi,
    references_of,
    with_contexts,
)
from openxiv.corpus.readers.pdf import read_pdf
from openxiv.corpus.readers.plaintext import parse_plaintext
from openxiv.corpus.records import PaperRecord
from openxiv.corpus.shared import SharedData


@cache
def _plaintext(arxiv_id: str) -> PaperRecord:
    path = SharedData.default().plaintext
    if not path.is_file():
        pytest.skip(f"shared plain texts not found ({path})")
    with gzip.open(path, "rt", encoding="utf-8") as fh:
        for line in fh:
            obj = json.loads(line)
            if obj["id"] == arxiv_id:
                return parse_plaintext(obj, "test")
    raise AssertionError(f"{arxiv_id} not in {path}")


def _pdf(name: str) -> PaperRecord:
    path = SharedData.default().pdfs / "valid" / f"{name}.pdf"
    if not path.is_file():
        pytest.skip(f"shared PDF not found ({path})")
    rec = read_pdf(path)
    assert isinstance(rec, PaperRecord)
    return rec


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Ba et al. Layer normalization. arXiv preprint arXiv:1607.06450, 2016.", "1607.06450"),
        ("CoRR, abs/1812.06162, 2018.", "1812.06162"),
        ("URL https://arxiv.org/abs/2002.08909v3.", "2002.08909"),
        ("Phys. Rev. D68, 046008 (2003), hep-th/0305018.", "hep-th/0305018"),
        ("J. Phys. A 15 (1999) [arXiv:cond-mat.stat-mech/9901001]", "cond-mat/9901001"),
        ("Phys. Rev. D 27, 2848 (1983).", None),  # volume and page, no id
        ("pp. 1387.1414", None),  # no month 14
        ("Nature 1706.0376 (2017)", None),  # four digits after the dot is before 2015 only
        ("Proc. 2019.12345", None),  # no month 20
    ],
)
def test_printed_arxiv_ids(text: str, expected: str | None) -> None:
    assert find_arxiv_id(text) == expected


def test_a_paper_is_never_its_own_reference() -> None:
    assert find_arxiv_id("see hep-th/0305018 and hep-th/0212209", own="hep-th/0305018") == "hep-th/0212209"


def test_doi() -> None:
    assert (
        find_doi("Phys. Rev. D 72 (2005) doi:10.1103/PhysRevD.72.094004 [arXiv:x].")
        == "10.1103/physrevd.72.094004"
    )
    assert find_doi("no doi here 10.5") is None


def test_physics_blocks_list_one_work_each() -> None:
    block = (
        "N. Irges, S. Lavignac, and P. Ramond, Phys. Rev. D58, 035003 (1998) (hep-ph/9802334); "
        "J.K. Elwood, N. Irges, and P. Ramond, Phys. Rev. Lett. 81, 5064 (1998) (hep-ph/9807228)."
    )
    entries = entries_from_blocks([block])
    assert [find_arxiv_id(e.text) for e in entries] == ["hep-ph/9802334", "hep-ph/9807228"]
    # one work printed in two journals stays one entry: its second part names no author
    one = "D. Bohm, Phys. Rev. 85, 166 (1952); 85, 180 (1952)."
    assert len(entries_from_blocks([one])) == 1


def test_contexts_by_number_and_author_year() -> None:
    entries = [
        Entry("1", "A. Vaswani et al. Attention is all you need. 2017."),
        Entry(None, "Smith, J. 2019. A study."),
    ]
    refs = with_contexts(
        references_of(entries, None),
        entries,
        ["Transformers [1, 3] changed NLP. Nothing here.", "As shown by Smith (2019), it works."],
    )
    assert refs[0].context == "Transformers [1, 3] changed NLP."
    assert refs[1].context == "As shown by Smith (2019), it works."


def test_plain_text_cite_keys_give_contexts() -> None:
    rec = _plaintext("hep-th/0511238")
    first = rec.references[0]
    assert first.arxiv_id == "hep-th/0510003" and (first.text or "").startswith("Page Don N. Page")
    assert first.context is not None and "[\\cite=Page]" in first.context
    # the bibliography is out of the sections (and so of the passages)
    assert not any("hep-th/0510003" in s.text for s in rec.sections)


def test_plain_text_author_year_list() -> None:
    rec = _plaintext("1111.6285")
    texts = [r.text or "" for r in rec.references]
    assert texts[0].startswith("Anderberg, M.R., 1973. Cluster Analysis")
    batagelj = next(r for r in rec.references if (r.text or "").startswith("Batagelj"))
    assert batagelj.context is not None and "Batagelj (1988)" in batagelj.context


def test_plain_text_without_reference_section_has_none() -> None:
    assert _plaintext("cond-mat/0001108").references == []


def test_pdf_numbered_bibliography() -> None:
    rec = _pdf("1706.03762")
    assert len(rec.references) == 40
    first = rec.references[0]
    assert first.arxiv_id == "1607.06450" and (first.text or "").startswith("Jimmy Lei Ba")
    assert first.context is not None and "[1]" in first.context
    resnet = rec.references[10]
    assert "Deep residual learning" in (resnet.text or "") and resnet.arxiv_id is None  # resolved at build
    assert sum(r.context is not None for r in rec.references) == 40


def test_pdf_author_year_bibliography_by_hanging_indent() -> None:
    rec = _pdf("2002.08909")
    texts = [r.text or "" for r in rec.references]
    assert texts[0].startswith("Asai, A., Hashimoto, K.") and "1911.10470" in texts[0]
    assert rec.references[0].arxiv_id == "1911.10470"
    assert all(t[:1].isupper() for t in texts)  # every entry starts with an author, none mid-entry
