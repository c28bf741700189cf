"""``openxiv eval grounding``: are an answer's quotes in the papers it cites? (no LLM)

A submission that cannot be read (not UTF-8, bad JSON, a line with no answer in it) and a
``--db`` that is not a corpus database are usage errors: one line naming the option and the file
(and line), exit status 2.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import click

from openxiv.corpus.settings.options import json_option
from openxiv.evaluator.stats import DEFAULT_RESAMPLES

__all__ = ["register_grounding"]

_FILE = click.Path(exists=True, dir_okay=False, path_type=Path)
_OUTPUT = click.Path(dir_okay=False, path_type=Path)


def _open_store(db: Path) -> Any:
    from openxiv.corpus.store import Store

    try:
        store = Store.open_readonly(db)
        store.get_paper("0704.0001")  # a foreign SQLite file fails here, not halfway through the check
    except Exception as exc:  # a broken or foreign file: say so, no traceback
        raise click.BadParameter(
            f"{db}: not an openxiv corpus database ({exc})", param_hint="'--db'"
        ) from None
    return store


def _field_text(lib: Any) -> Any:
    def texts(arxiv_id: str, name: str) -> str | None:
        text = lib.text(arxiv_id)
        if text is None:
            return None
        return next((f.text for f in text.fields if f.name == name), None)

    return texts


def register_grounding(group: click.Group) -> None:
    @group.command("grounding")
    @click.option("--submission", "-s", "submissions", multiple=True, required=True, type=_FILE,
                  help="Answers to check (repeatable): a text/markdown report, an agent search response "
                  "(JSON or its NDJSON stream), JSONL of responses, reports, claims or AutoResearchBench "
                  "inference output.")  # fmt: skip
    @click.option("--db", "--corpus-db", "db", required=True, type=_FILE,
                  help="openxiv corpus database: the stored texts the quotes are looked for in.")  # fmt: skip
    @click.option("--fuzzy-min", default=0.8, show_default=True, type=click.FloatRange(0, 1),
                  help="Lowest similarity reported as a fuzzy match; below it a quote is not_found.")  # fmt: skip
    @click.option("--accept", default=0.9, show_default=True, type=click.FloatRange(0, 1),
                  help="Fuzzy matches at least this similar count as faithful in faithfulness_fuzzy "
                  "(never in faithfulness).")  # fmt: skip
    @click.option("--search-corpus", is_flag=True,
                  help="A quote found in no paper the answer cites is looked for in every stored text "
                  "(a scan of the corpus per such quote: seconds each on the whole corpus); found, it is "
                  "misattributed to that paper.")  # fmt: skip
    @json_option(help="Write the full JSON report (every claim with its verdict, section and offsets).")
    @click.option(
        "--html", "html_out", type=_OUTPUT, default=None, help="Write a self-contained HTML report."
    )
    @click.option("--md", "md_out", type=_OUTPUT, default=None, help="Write a Markdown report here.")
    @click.option("--seed", default=0, show_default=True, type=int, help="Seed of the bootstrap.")
    @click.option("--resamples", default=DEFAULT_RESAMPLES, show_default=True, type=click.IntRange(10),
                  help="Bootstrap resamples for the confidence intervals.")  # fmt: skip
    @click.option("--quiet", "-q", is_flag=True, help="Do not print the terminal table.")
    def grounding(submissions: tuple[Path, ...], db: Path, fuzzy_min: float, accept: float, search_corpus: bool,
                  json_out: str | None, html_out: Path | None, md_out: Path | None, seed: int,
                  resamples: int, quiet: bool) -> None:  # fmt: skip
        """Grounding check, no LLM: is each quoted span in the paper it is credited to?

        Quotes ("…", “…”, > blockquotes, agent search evidence, AutoResearchBench candidates' evidence)
        and their citations ([arXiv:ID], arXiv links) are looked for in the cited paper's stored text:
        exact, then normalised, then fuzzy with a similarity; the report gives each claim's verdict,
        section and offsets, and the citation-faithfulness rate per answer and overall."""
        from openxiv.evaluator.grounding.check import Library, check_claims
        from openxiv.evaluator.grounding.inputs import GroundingInputError, read_answers
        from openxiv.evaluator.grounding.report import evidence_html, grounding_report
        from openxiv.evaluator.report import render_terminal

        answers = []
        for path in submissions:
            try:
                answers += read_answers(path)
            except GroundingInputError as exc:
                raise click.BadParameter(str(exc), param_hint="'--submission'") from None
        store = _open_store(db)
        try:
            lib = Library(store, search_corpus=search_corpus)
            checked = [(a, check_claims(lib, a.claims, fuzzy_min, accept)) for a in answers]
            inputs = {"submission": ",".join(str(p) for p in submissions), "corpus_db": str(db)}
            report = grounding_report(checked, inputs, fuzzy_min, accept, seed, resamples)
            evidence = evidence_html(checked, _field_text(lib)) if html_out else ""
        finally:
            store.close()
        _emit(report, evidence, json_out, html_out, md_out, quiet, render_terminal)


def _emit(report: Any, evidence: str, json_out: str | None, html_out: Path | None, md_out: Path | None,
          quiet: bool, terminal: Any) -> None:  # fmt: skip
    from openxiv.evaluator.outputs import write_outputs

    if not quiet and json_out != "-":
        c = report.counts
        rate = c["overall_faithfulness"]
        click.echo(terminal(report))
        click.echo(
            f"\noverall: {c['quotes_checked']} quotes checked in {c['answers']} answers, faithfulness "
            f"{'–' if rate is None else f'{rate:.4f}'}; verdicts "
            + ", ".join(f"{k[8:]} {v}" for k, v in c.items() if k.startswith("verdict_") and v)
        )
    write_outputs(report, json_out, md_out, html_out, evidence)
