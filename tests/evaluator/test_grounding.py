"""`openxiv eval grounding` on real stored papers: the planted set's verdicts, the three match levels
with their sections and offsets, how quotes are read out of reports, and bad input (exit 2)."""

from __future__ import annotations

import itertools
import json
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner

from openxiv.corpus.records import Section
from openxiv.corpus.shared import SharedData
from openxiv.evaluator.cli import eval_group
from openxiv.evaluator.grounding.check import Library, check_claims
from openxiv.evaluator.grounding.claims import claims_from_text
from openxiv.evaluator.grounding.planted import plant
from openxiv.evaluator.grounding.text import PaperText

N_PAPERS = 40
OUTSIDE = 45
"""The plaintext record used as the paper outside the corpus (only the first `N_PAPERS` are stored)."""


@pytest.fixture(scope="module")
def fulltext_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real corpus of the first 40 plain-text full texts of ../shared."""
    source = SharedData.default().plaintext
    if not source.is_file():
        pytest.skip(f"plain-text full texts not found: {source} (set OPENXIV_SHARED)")
    from openxiv.corpus.readers import read_path
    from openxiv.corpus.store import Store

    path = tmp_path_factory.mktemp("grounding") / "corpus.sqlite"
    with Store(path) as store:
        store.ingest(itertools.islice(read_path(source), N_PAPERS))
    return path


@pytest.fixture(scope="module")
def planted(fulltext_db: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from openxiv.corpus.readers import read_path
    from openxiv.corpus.store import Store

    rec = next(itertools.islice(read_path(SharedData.default().plaintext), OUTSIDE, OUTSIDE + 1))
    assert not isinstance(rec, Exception)
    outside = (rec.arxiv_id, [Section(i, s.name, s.text) for i, s in enumerate(rec.sections)])
    with Store.open_readonly(fulltext_db) as store:
        ids = sorted(p.arxiv_id for p in store.iter_papers())
        assert rec.arxiv_id not in ids
        rows = plant(((i, store.sections(i)) for i in ids), outside)
    path = tmp_path_factory.mktemp("planted") / "planted.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    return path


def run(*args: str, code: int = 0) -> Any:
    res = CliRunner().invoke(eval_group, ["grounding", *args], catch_exceptions=False)
    assert res.exit_code == code, res.output
    return res


def test_the_planted_set_gets_the_expected_verdicts(fulltext_db: Path, planted: Path, tmp_path: Path) -> None:
    out, html = tmp_path / "g.json", tmp_path / "g.html"
    run("-s", str(planted), "--db", str(fulltext_db), "--json", str(out), "--html", str(html), "-q")
    report = json.loads(out.read_text())
    claims = [c for row in report["per_item"] for c in row["claims"]]
    assert [(c["expected"], c["verdict"]) for c in claims] == [(c["expected"], c["expected"]) for c in claims]
    kinds = {c["verdict"] for c in claims}
    assert kinds == {"exact", "normalised", "fuzzy", "misattributed", "not_found", "not_in_corpus", "uncited"}
    assert report["aggregates"]["expected_agreement"]["value"] == 1.0
    counts = report["counts"]
    # 11 quotes credited to corpus papers; faithful: 5 exact + 1 normalised
    assert counts["quotes_checked"] == 11 and counts["overall_faithfulness"] == pytest.approx(6 / 11)
    # the altered quote is close (one word of ~20 replaced) and counts faithful only in the lenient rate
    altered = next(c for c in claims if c["expected"] == "fuzzy")
    assert 0.8 <= altered["similarity"] < 1.0 and altered["faithful"] is True
    assert counts["overall_faithfulness_fuzzy"] == pytest.approx(7 / 11)
    page = html.read_text()
    assert "<h2>Evidence</h2>" in page and page.count("<mark>") >= 7 and "misattributed" in page


def test_every_found_span_is_where_the_report_says(fulltext_db: Path, planted: Path, tmp_path: Path) -> None:
    from openxiv.corpus.store import Store

    out = tmp_path / "g.json"
    run("-s", str(planted), "--db", str(fulltext_db), "--json", str(out), "-q")
    claims = [c for row in json.loads(out.read_text())["per_item"] for c in row["claims"]]
    with Store.open_readonly(fulltext_db) as store:
        for c in claims:
            if c.get("section") is None:
                continue
            paper = store.get_paper(c["paper"])
            assert paper is not None
            texts = {"title": paper.title, "abstract": paper.abstract}
            texts.update({s.name: s.text for s in store.sections(c["paper"])})
            assert texts[c["section"]][c["start"] : c["end"]] == c["span"], c
            if c["level"] == "exact":
                assert c["span"] == c["text"]


def test_levels_on_one_long_paper(fulltext_db: Path) -> None:
    from openxiv.corpus.store import Store

    with Store.open_readonly(fulltext_db) as store:
        lib = Library(store)
        longest = max((p.arxiv_id for p in store.iter_papers()), key=lambda i: len(lib.text(i).words))  # type: ignore[union-attr]
        text = lib.text(longest)
    assert isinstance(text, PaperText) and len(text.words) > 3000
    field = max(text.fields, key=lambda f: len(f.text))
    quote = " ".join(field.text[len(field.text) // 2 :].split()[1:30])
    true = text.find(quote)
    assert true.level in ("exact", "normalised") and true.start is not None
    shouted = quote.upper().replace(",", " ,")
    m = text.find(shouted)
    assert m.level == "normalised" and m.field == field.name
    words = quote.split()
    words[10], words[20] = "zebra", "quokka"
    m = text.find(" ".join(words), 0.8)
    assert m.level == "fuzzy" and 0.8 <= m.similarity < 1 and m.field == field.name
    assert m.start is not None and abs(m.start - true.start) < 40
    # words found nowhere in the paper: no candidate window, similarity 0
    assert text.find("zebra quokka narwhal axolotl pangolin okapi", 0.8).similarity == 0.0


def test_quotes_and_citations_are_read_out_of_a_report() -> None:
    text = (
        'Smith et al. write that "attention is all you need for translation" [arXiv:1706.03762v5] '
        "and that “this is a second quoted span here” (https://arxiv.org/abs/2301.00001). "
        'A "scare quote" is not evidence.\n\n'
        "1. **A paper** (arXiv:2401.01234, 2024-01-03)\n"
        "   > The model is trained for ten epochs … on four GPUs with mixed precision. (Experiments)\n\n"
        "Two papers agree on this claim about training [arXiv:2401.01234; arXiv:2402.05678].\n\n"
        '"An uncited quote with enough words in it."'
    )
    claims = claims_from_text(text)
    quoted = [(c.text, c.cited) for c in claims if c.quoted]
    assert quoted == [
        ("attention is all you need for translation", ["1706.03762"]),
        ("this is a second quoted span here", ["2301.00001"]),
        ("The model is trained for ten epochs", ["2401.01234"]),
        ("on four GPUs with mixed precision.", ["2401.01234"]),
        ("An uncited quote with enough words in it.", []),
    ]
    cited = [(c.text, c.cited) for c in claims if not c.quoted]
    assert cited == [("Two papers agree on this claim about training.", ["2401.01234", "2402.05678"])]


def test_agent_search_and_arb_shapes_are_read(fulltext_db: Path, tmp_path: Path) -> None:
    from openxiv.corpus.store import Store

    with Store.open_readonly(fulltext_db) as store:
        ids = sorted(p.arxiv_id for p in store.iter_papers())[:2]
        secs = [store.sections(i)[-1] for i in ids]
    sources = [
        {"arxiv_id": i, "title": "t", "evidence": {"section": s.name, "text": s.text[:300] + "…"}}
        for i, s in zip(ids, secs, strict=True)
    ]
    response = {
        "status": "success",
        "answer": "1. **t**",
        "sources": sources,
        "stats": {"model": "openxiv-extractive"},
    }
    (tmp_path / "resp.json").write_text(json.dumps(response))
    arb = {"input_data": {"question": "q"}, "inference_results": [{"final_candidates": [
        {"arxiv_id": ids[0], "retrieval_evidence": secs[1].text[:200]}]}]}  # fmt: skip
    (tmp_path / "arb.jsonl").write_text(json.dumps(arb) + "\n")
    out = tmp_path / "g.json"
    run("-s", str(tmp_path / "resp.json"), "-s", str(tmp_path / "arb.jsonl"), "--db", str(fulltext_db),
        "--json", str(out), "-q")  # fmt: skip
    rows = json.loads(out.read_text())["per_item"]
    assert [c["verdict"] for c in rows[0]["claims"]] == ["exact", "exact"]
    assert rows[0]["claims"][0]["section"] == secs[0].name
    # the candidate's evidence is the other paper's: found there, so misattributed
    assert [c["verdict"] for c in rows[1]["claims"]] == ["not_found"]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b'{"claims": []}\n{"claims": [\n', "line 2: invalid JSON"),
        (b"\xff\xfe not text", "not UTF-8"),
        (b'{"claims": []}\n{"id": 2, "score": 3}\n', "line 2: no answer to check"),
        (b'{"claims": [{"quote": "some words of a quote", "arxiv_id": "not-an-id"}]}\n', "not an arXiv id"),
        (b"", "empty file"),
    ],
)
def test_bad_submissions_are_usage_errors(
    fulltext_db: Path, tmp_path: Path, content: bytes, message: str
) -> None:
    bad = tmp_path / "bad.jsonl"
    bad.write_bytes(content)
    res = run("-s", str(bad), "--db", str(fulltext_db), code=2)
    assert "--submission" in res.output and message in res.output and "Traceback" not in res.output


def test_a_db_that_is_not_a_corpus_is_a_usage_error(tmp_path: Path) -> None:
    fake = tmp_path / "fake.sqlite"
    fake.write_text("not a database")
    report = tmp_path / "r.md"
    report.write_text('"four words of quote" [arXiv:2301.00001]')
    res = run("-s", str(report), "--db", str(fake), code=2)
    assert "--db" in res.output and "not an openxiv corpus database" in res.output


def test_checking_without_the_cli(fulltext_db: Path) -> None:
    """A quote credited to two papers is faithful when either holds it; one outside the corpus is
    named."""
    from openxiv.corpus.store import Store

    with Store.open_readonly(fulltext_db) as store:
        lib = Library(store)
        a, b = sorted(p.arxiv_id for p in store.iter_papers())[:2]
        quote = " ".join(store.sections(b)[0].text.split()[:25])
        claims = claims_from_text(f'"{quote}" [arXiv:{a}; arXiv:{b}; arXiv:2601.99999]')
        (checked,) = check_claims(lib, claims)
    assert checked.verdict in ("exact", "normalised") and checked.paper == b
    assert checked.not_in_corpus == ("2601.99999",)


def test_other_reports_html_is_unchanged_by_the_evidence_slot() -> None:
    """The evidence section and its styles appear only in reports that have one: every other report's
    page is byte for byte what it was (no blank line where the slot is, no extra style)."""
    from openxiv.evaluator.html_report import render_html
    from openxiv.evaluator.ranked import score_ranked

    report = score_ranked({"q1": {"2301.00001": 1}}, {"q1": [("2301.00001", 1.0)]}, (1, 10), n_boot=10)
    page = render_html(report)
    assert "</section>\n<section>\n<h2>Counts</h2>" in page
    assert "Evidence" not in page and "mark {" not in page and "$evidence" not in page
    with_evidence = render_html(report, "<section><h2>Evidence</h2></section>\n")
    assert "</section>\n<section><h2>Evidence</h2></section>\n<section>\n<h2>Counts</h2>" in with_evidence


def test_search_corpus_finds_the_paper_nobody_cited(fulltext_db: Path, planted: Path, tmp_path: Path) -> None:
    """With --search-corpus, a true quote credited to a paper that does not hold it (and whose own
    paper the answer never cites) is found in the corpus: misattributed, to the paper it came from;
    the quotes from the paper outside the corpus stay not_found / not_in_corpus."""
    out = tmp_path / "g.json"
    run("-s", str(planted), "--db", str(fulltext_db), "--search-corpus", "--json", str(out), "-q")
    claims = [c for row in json.loads(out.read_text())["per_item"] for c in row["claims"]]
    rows = [json.loads(line) for line in planted.read_text().splitlines()]
    wrong = next(c for c in rows[2]["claims"] if c["kind"] == "wrong paper")
    source = next(c for c in rows[3]["claims"] if c["kind"] == "true quote")[
        "arxiv_id"
    ]  # G's second sentence
    got = next(c for c in claims if c["text"] == wrong["quote"])
    assert got["verdict"] == "misattributed" and got["paper"] == source and got["level"] == "exact"
    changed = [(c["expected"], c["verdict"]) for c in claims if c["expected"] != c["verdict"]]
    assert changed == [("not_found", "misattributed")]
    uncited = next(c for c in claims if c["verdict"] == "uncited")
    assert uncited["paper"] is not None and uncited["level"] == "exact"  # where the uncited quote is
