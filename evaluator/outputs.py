"""Where an ``openxiv eval`` subcommand puts its report: ``--json -`` on stdout, else the files it
was asked for (JSON, Markdown, HTML). Shared by ``eval grounding`` and ``eval ledger``."""

from __future__ import annotations

from pathlib import Path

import click

from openxiv.corpus.settings.options import emit_json
from openxiv.evaluator.report import EvalReport, render_markdown, write_json

__all__ = ["write_outputs"]


def write_outputs(
    report: EvalReport, json_out: str | None, md_out: Path | None, html_out: Path | None, section: str = ""
) -> None:
    """``report`` as JSON on stdout when ``json_out`` is ``-``, and into each file named; ``section``
    is the HTML's own part (the evidence, the timeline). A file that cannot be written is a click
    error (exit 1) with the system's reason."""
    if json_out == "-":
        emit_json(report.to_dict(), "-")
    try:
        if json_out not in (None, "-"):
            write_json(report, json_out)
        if md_out is not None:
            md_out.write_text(render_markdown(report), encoding="utf-8")
        if html_out is not None:
            from openxiv.evaluator.html_report import write_html

            write_html(report, html_out, section)
    except OSError as exc:
        raise click.ClickException(f"cannot write a report: {exc}") from None
