"""The ``openxiv`` command: one entry point, each part contributes its own subcommands.

Subcommands are imported only when used, so ``openxiv --help`` and ``openxiv stats`` stay fast and
never load torch or FAISS.
"""

from __future__ import annotations

import importlib
import os
import sys
from typing import Any

import click

# command name -> "module:attribute" of a click command or group
COMMANDS: dict[str, str] = {
    "ingest": "openxiv.corpus.cli:ingest",
    "stats": "openxiv.corpus.cli:stats",
    "index": "openxiv.indexer.cli:index",
    "serve": "openxiv.service.http.serve:serve",
    "eval": "openxiv.evaluator.cli:eval_group",
    "agent": "openxiv.evaluator.agent:agent",
    "runs": "openxiv.evaluator.ledger.cli:runs",
    "demo": "openxiv.evaluator.demo:demo",
    "config": "openxiv.corpus.settings.command:config",
    "search": "openxiv.service.terminal.cli:search",
    "paper": "openxiv.service.terminal.cli:paper",
    "similar": "openxiv.service.terminal.similar_cli:similar",
    "facets": "openxiv.service.terminal.nav_cli:facets",
    "match": "openxiv.service.terminal.nav_cli:match",
    "author": "openxiv.service.terminal.nav_cli:author",
    "bibtex": "openxiv.service.terminal.nav_cli:bibtex",
    "mcp": "openxiv.service.mcp.cli:mcp",
    "skill": "openxiv.service.skill:skill",
}

HELP: dict[str, str] = {
    "ingest": "Read arXiv listings, metadata snapshots, PDFs and full texts into the corpus database.",
    "stats": "Counts of papers, full texts, sections, passages and skipped inputs.",
    "index": "Build and inspect index snapshots (BM25 + dense vectors).",
    "serve": "Serve search and paper reading over HTTP (DeepXiv-compatible).",
    "eval": "Score agent answers against gold sets.",
    "agent": "Retrieval-only baseline agent for AutoResearchBench-format questions.",
    "runs": "List and export the runs of a run ledger (JSON lines, per-question HTML timelines).",
    "demo": "Whole loop on ../shared: ingest, index, serve, baseline agent, evaluation report.",
    "config": "Print the effective settings and where each value came from.",
    "search": "Search an index snapshot from the terminal, without a server.",
    "paper": "Read a paper (metadata and sections, one section, or the full text) from the terminal.",
    "similar": "Papers similar to one or more seed papers (by their stored vectors), from the terminal.",
    "facets": "Counts by year, month, category and top authors of the papers a query matches.",
    "match": "The paper of a pasted title, with a confidence.",
    "author": "The papers of an author, under every spelling of the name.",
    "bibtex": "BibTeX entries of papers.",
    "mcp": "Serve the index to agents over MCP (stdio, streamable HTTP or SSE).",
    "skill": "Print the guide (SKILL.md) an LLM agent can be given to use openxiv's API and MCP tools.",
}


class LazyGroup(click.Group):
    def list_commands(self, ctx: click.Context) -> list[str]:
        return sorted(COMMANDS)

    def get_command(self, ctx: click.Context, cmd_name: str) -> click.Command | None:
        target = COMMANDS.get(cmd_name)
        if target is None:
            return None
        module_name, attr = target.split(":")
        module = importlib.import_module(module_name)
        command: click.Command = getattr(module, attr)
        return command

    def format_commands(self, ctx: click.Context, formatter: click.HelpFormatter) -> None:
        rows = [(name, HELP.get(name, "")) for name in self.list_commands(ctx)]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


@click.group(cls=LazyGroup, context_settings={"help_option_names": ["-h", "--help"]})
@click.version_option(package_name="openxiv")
def cli() -> None:
    """openxiv: self-hosted literature search over a local arXiv corpus.

    Settings come from OPENXIV_* environment variables (see README, "Configuration") and flags;
    `openxiv config` prints them and where each value came from.
    """


def _reader_gone(exc: SystemExit) -> bool:
    """Click's answer to a write into a closed pipe (EPIPE) is exit 1 with stdout wrapped so that its
    last flush stays quiet; ``openxiv ... | head -1`` then means the reader had enough."""
    return exc.code == 1 and type(sys.stdout).__name__.endswith("PacifyFlushWrapper")  # click's private class


def _flushed() -> bool:
    """Flush stdout; ``False`` when its reader has gone (stdout then points at /dev/null, so the
    interpreter's own last flush stays quiet too)."""
    try:
        sys.stdout.flush()
        return True
    except (BrokenPipeError, ValueError):
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return False


def main(argv: list[str] | None = None) -> Any:
    """The ``openxiv`` command. A reader that closes the pipe early (``openxiv search ... | head -1``)
    ends it quietly with 0, as ``grep`` and ``git`` do."""
    try:
        return cli.main(args=argv, prog_name="openxiv", standalone_mode=True)
    except SystemExit as done:
        if _reader_gone(done) or (not _flushed() and done.code in (0, None)):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
            sys.exit(0)
        raise
    except Exception as exc:
        # imported here: the settings model loads pydantic, which `openxiv --help` does not need
        from openxiv.corpus.settings.options import EXIT_USAGE
        from openxiv.corpus.settings.sources import ConfigError

        if not isinstance(exc, ConfigError):
            raise
        click.echo(f"Error: {exc}", err=True)  # a bad flag or variable: a usage error
        sys.exit(EXIT_USAGE)


if __name__ == "__main__":
    main()
