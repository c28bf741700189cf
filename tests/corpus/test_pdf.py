"""The PDF reader on the real arXiv PDFs of ../shared/data/pdfs (valid/ and broken/).

Every valid PDF is parsed once per test module (``parsed`` fixture); the expectations for the
hand-checked papers were read off the PDFs themselves.
"""

from __future__ import annotations

import subprocess
import sys
import time
from datetime import date
from pathlib import Path
from typing import Any

import pytest

from openxiv.corpus.ids import parse_arxiv_id
from openxiv.corpus.readers.pdf import parse_stamp, read_pdf
from openxiv.corpus.records import PaperRecord, ReadError

CONCLUSION_LIKE = ("conclusion", "discussion", "concluding remarks", "future work")

# file stem -> (exact title, start of the abstract, a string of the reference list)
CHECKED = {
    "1706.03762": (
        "Attention Is All You Need",
        "The dominant sequence transduction models are based on complex recurrent or convolutional",
        "Jamie Ryan Kiros",
    ),
    "2005.11401": (
        "Retrieval-Augmented Generation for Knowledge-Intensive NLP Tasks",
        "Large pre-trained language models have been shown to store factual knowledge in their parameters",
        "Saurabh Tiwary",
    ),
    "1512.03385": (
        "Deep Residual Learning for Image Recognition",
        "Deeper neural networks are more difficult to train. We present a residual learning framework",
        "Neural networks for pattern recognition",
    ),
    "2203.02155": (
        "Training language models to follow instructions with human feedback",
        "Making language models bigger does not inherently make them better at following a user’s intent.",
        "Imitating interactive intelligence",
    ),
    "2112.04426": (  # no "Abstract" heading: the abstract is a bold paragraph
        "Improving language models by retrieving from trillions of tokens",
        "We enhance auto-regressive language models by conditioning on document chunks retrieved",
        "Improving neural language models with a continuous cache",
    ),
    "2210.11610": (  # ICLR: small-caps headings no larger than the body text
        "LARGE LANGUAGE MODELS CAN SELF-IMPROVE",
        "Large Language Models (LLMs) have achieved excellent performances in various tasks.",
        "Do deep nets really need to be deep?",
    ),
}


@pytest.fixture(scope="module")
def pdf_dir(shared: Path) -> Path:
    d = shared / "data" / "pdfs"
    if not (d / "valid").is_dir():
        pytest.skip(f"no PDFs at {d}/valid (set OPENXIV_SHARED to the folder holding data/)")
    return d


@pytest.fixture(scope="module")
def parsed(pdf_dir: Path) -> dict[str, PaperRecord | ReadError]:
    return {p.stem: read_pdf(p) for p in sorted((pdf_dir / "valid").glob("*.pdf"))}


def _record(parsed: dict[str, PaperRecord | ReadError], stem: str) -> PaperRecord:
    key = stem if stem in parsed else stem.split("v")[0]
    rec = parsed[key]
    assert isinstance(rec, PaperRecord), rec
    return rec


def test_all_28_valid_pdfs_give_a_record_with_the_file_names_id_and_a_title(parsed) -> None:
    assert len(parsed) == 28
    for stem, rec in parsed.items():
        assert isinstance(rec, PaperRecord), f"{stem}: {rec}"
        expected = parse_arxiv_id(stem)
        assert rec.arxiv_id == expected.canonical, stem
        if expected.version is not None:
            assert rec.version == expected.version, stem
        assert rec.title and len(rec.title) > 10, stem
        assert rec.source == f"pdf:{stem}.pdf"
        assert rec.sections, f"{stem}: no sections recovered"
        assert rec.has_fulltext


def test_margin_stamp_gives_version_category_and_date(parsed) -> None:
    rec = _record(parsed, "2203.02155")
    assert (rec.version, rec.categories, rec.updated, rec.published) == (
        1,
        ["cs.CL"],
        date(2022, 3, 4),
        date(2022, 3, 4),
    )
    rec = _record(parsed, "1706.03762")
    assert (rec.version, rec.categories, rec.updated, rec.published) == (7, ["cs.CL"], date(2023, 8, 2), None)


def test_stamp_is_found_among_other_rotated_text(parsed) -> None:
    rec = _record(parsed, "1512.03385")  # page 1 also has rotated axis labels of a figure
    assert (rec.arxiv_id, rec.version, rec.categories, rec.updated) == (
        "1512.03385",
        1,
        ["cs.CV"],
        date(2015, 12, 10),
    )


@pytest.mark.parametrize("stem", sorted(CHECKED))
def test_checked_papers_title_abstract_sections_and_no_references(parsed, stem: str) -> None:
    title, abstract_start, reference = CHECKED[stem]
    rec = _record(parsed, stem)
    assert rec.title == title
    assert rec.abstract is not None and rec.abstract.startswith(abstract_start)
    names = [s.name.lower() for s in rec.sections]
    assert names[0] == "introduction" and rec.sections[0].number == "1"
    assert not any(n in {"references", "bibliography"} for n in names)
    for s in rec.sections:
        assert reference not in s.text, f"{stem}: reference list leaked into section {s.number} {s.name}"
        assert "  " not in s.text and not s.text.startswith(" ")
    assert reference.lower() not in (rec.abstract or "").lower()


def test_conclusion_like_section_comes_after_the_introduction(parsed) -> None:
    for stem in ("1706.03762", "2005.11401", "2203.02155", "2112.04426", "2210.11610"):
        names = [s.name.lower() for s in _record(parsed, stem).sections]
        late = [i for i, n in enumerate(names) if any(word in n for word in CONCLUSION_LIKE)]
        assert late and late[0] > names.index("introduction"), (stem, names)


def test_resnet_sections_in_reading_order_with_numbers(parsed) -> None:
    numbered = [s.number for s in _record(parsed, "1512.03385").sections if s.number]
    assert numbered[:3] == ["1", "2", "3"]
    assert "4.2" in numbered and numbered.index("4.1") < numbered.index("4.2")


def test_wrapped_headings_and_line_end_hyphens_are_joined(parsed) -> None:
    rec = _record(parsed, "1502.03167")
    names = {s.number: s.name for s in rec.sections}
    assert names["2"] == "Towards Reducing Internal Covariate Shift"
    assert names["3"] == "Normalization via Mini-Batch Statistics"
    rec = _record(parsed, "2007.01282")
    assert "aggregate and combine evidence" in (rec.abstract or "")


def test_page_furniture_and_stamp_stay_out_of_the_text(parsed) -> None:
    for stem in ("1706.03762", "2203.02155", "2401.01967v1"):
        rec = _record(parsed, stem)
        text = "\n".join(s.text for s in rec.sections)
        assert "arXiv:" + rec.arxiv_id not in text
        assert "Preprint. Under review" not in text


def test_checklists_are_not_sections(parsed) -> None:
    names = [s.name.lower() for s in _record(parsed, "2410.07839v2").sections]
    assert not any("checklist" in n for n in names)


def test_parse_stamp() -> None:
    assert parse_stamp("arXiv:2203.02155v1  [cs.CL]  4 Mar 2022") == (
        "2203.02155",
        1,
        "cs.CL",
        date(2022, 3, 4),
    )
    assert parse_stamp("arXiv:hep-th/9901001v2 [hep-th] 12 Jan 1999") == (
        "hep-th/9901001",
        2,
        "hep-th",
        date(1999, 1, 12),
    )
    assert parse_stamp("training error (%)") is None


def test_the_7_broken_pdfs_give_read_errors_quickly(pdf_dir: Path) -> None:
    broken = sorted((pdf_dir / "broken").glob("*.pdf"))
    assert len(broken) == 7
    read_pdf(broken[0])  # warm up PyMuPDF (import, fonts) outside the timing
    start = time.perf_counter()
    for path in broken:
        err = read_pdf(path)
        assert isinstance(err, ReadError), path.name
        assert err.source == path.name and err.location == "file"
        assert "PDF" in err.reason
    assert time.perf_counter() - start < 10


def test_files_that_are_not_pdfs_give_read_errors(tmp_path: Path) -> None:
    fake = tmp_path / "2301.00001.pdf"
    fake.write_text("this is a text file with a .pdf name\n")
    empty = tmp_path / "2301.00002.pdf"
    empty.write_bytes(b"")
    for path in (fake, empty, tmp_path / "missing.pdf"):
        err = read_pdf(path)
        assert isinstance(err, ReadError), path
        assert err.reason.startswith("cannot open PDF"), err


def test_no_id_anywhere_is_a_read_error(tmp_path: Path) -> None:
    pymupdf = pytest.importorskip("pymupdf")
    doc = pymupdf.open()
    page = doc.new_page()
    page.insert_text((72, 72), "A Paper Without Any Identifier", fontsize=18)
    page.insert_text((72, 120), "Some body text that says nothing about arXiv.", fontsize=10)
    path = tmp_path / "my-paper.pdf"
    doc.save(path)
    err = read_pdf(path)
    assert err == ReadError("my-paper.pdf", "file", "no arXiv id in the margin stamp or the file name")
    ok = tmp_path / "2301.00001v2.pdf"
    doc.save(ok)
    rec = read_pdf(ok)
    assert isinstance(rec, PaperRecord)
    assert (rec.arxiv_id, rec.version, rec.title) == ("2301.00001", 2, "A Paper Without Any Identifier")


def test_a_pdf_without_text_is_a_read_error(tmp_path: Path) -> None:
    pymupdf = pytest.importorskip("pymupdf")
    doc = pymupdf.open()
    doc.new_page()
    path = tmp_path / "2301.00003.pdf"
    doc.save(path)
    assert read_pdf(path) == ReadError(
        "2301.00003.pdf", "file", "PDF has no extractable text (scanned images only?)"
    )


def test_encrypted_pdf_is_a_read_error(tmp_path: Path) -> None:
    pymupdf = pytest.importorskip("pymupdf")
    doc = pymupdf.open()
    doc.new_page().insert_text((72, 72), "secret", fontsize=12)
    path = tmp_path / "2301.00004.pdf"
    doc.save(path, encryption=pymupdf.PDF_ENCRYPT_AES_256, user_pw="pw", owner_pw="owner")
    err = read_pdf(path)
    assert isinstance(err, ReadError) and "encrypted" in err.reason


def _write_paper(path: Path) -> None:
    """A two-page paper with a run-in abstract, a running header, references and an appendix."""
    pymupdf = pytest.importorskip("pymupdf")
    bold, reg = pymupdf.Font("hebo"), pymupdf.Font("helv")
    doc = pymupdf.open()
    body = "Body text of the section goes on for a while so that it is the most common font size here."
    pages: list[list[tuple[str | None, Any, float]]] = [
        [
            ("A Synthetic Paper About Layout Recovery", bold, 18),
            (None, None, 0),
            ("Abstract.", bold, 10),
            ("1 Introduction", bold, 12),
            (body, reg, 10),
            ("We repair hyphen-", reg, 10),
            ("ation at line ends and keep the text of this paragraph together.", reg, 10),
            ("2 Conclusion", bold, 12),
            (body, reg, 10),
        ],
        [
            (body, reg, 10),
            ("References", bold, 12),
            ("[1] A. Author. A cited paper that must stay out of the sections. 2020.", reg, 10),
            ("A Extra Proofs", bold, 12),
            ("The appendix after the references is kept as a section. " + body, reg, 10),
        ],
    ]
    for lines in pages:
        page = doc.new_page()
        tw = pymupdf.TextWriter(page.rect)
        tw.append((72, 30), "Running header of the synthetic paper", font=reg, fontsize=9)
        y = 80.0
        for text, font, size in lines:
            if text is None:
                y += 10
                continue
            tw.append((72, y), text, font=font, fontsize=size)
            if text == "Abstract.":
                tw.append(
                    tw.last_point, " A run-in abstract that is long enough to read.", font=reg, fontsize=10
                )
            y += size * 1.6
        tw.write_text(page)
    doc.save(path)


def test_layout_rules_on_a_generated_paper(tmp_path: Path) -> None:
    path = tmp_path / "2301.00005v3.pdf"
    _write_paper(path)
    rec = read_pdf(path)
    assert isinstance(rec, PaperRecord), rec
    assert (rec.arxiv_id, rec.version, rec.categories) == ("2301.00005", 3, [])
    assert rec.title == "A Synthetic Paper About Layout Recovery"
    assert rec.abstract == "A run-in abstract that is long enough to read."
    assert [(s.number, s.name) for s in rec.sections] == [
        ("1", "Introduction"),
        ("2", "Conclusion"),
        ("A", "Extra Proofs"),
    ]
    text = "\n".join(s.text for s in rec.sections)
    assert "We repair hyphenation at line ends" in text
    assert "cited paper" not in text and "Running header" not in text
    assert rec.sections[1].text.count("Body text") == 2  # the conclusion continues on page 2


def test_read_pdf_imports_pymupdf_without_its_layout_models(pdf_dir: Path) -> None:
    """PyMuPDF 2 imports ``pymupdf.layout`` (ONNX models) with itself when it can; `read_pdf` never
    uses it, so it stays out, and a later explicit ``import pymupdf.layout`` still works."""
    code = (
        "import sys\n"
        "from openxiv.corpus.readers.pdf import read_pdf\n"
        f"rec = read_pdf({str(pdf_dir / 'valid' / '1706.03762.pdf')!r})\n"
        "print(rec.title, 'pymupdf.layout' in sys.modules)\n"
        "import pymupdf.layout\n"
        "print(pymupdf.layout.__name__)\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.splitlines() == ["Attention Is All You Need False", "pymupdf.layout"]
