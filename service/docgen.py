"""Generated documentation: README's configuration table and docs/cli.md.

Both are written from the declarations (the `Settings` fields' help, the click commands' ``--help``)
by cog markers in the Markdown files; ``make docs`` regenerates them and tests/test_docs.py fails when
the committed text is stale, so the docs cannot drift from the code.
"""

from __future__ import annotations

from collections.abc import Iterator

import click

from openxiv.corpus.settings.model import Settings
from openxiv.corpus.settings.sources import env_name

__all__ = ["CLI_WIDTH", "cli_reference", "command_paths", "settings_table"]

CLI_WIDTH = 90
"""Terminal width the CLI reference is rendered at (fixed, so the text does not depend on who runs it)."""


def _help(name: str) -> str:
    """The first paragraph of a setting's help, on one line (the rest explains the choice to readers)."""
    text = Settings.model_fields[name].description or ""
    first = text.strip().split("\n\n")[0]
    return " ".join(first.split()).replace("|", "\\|")


def _default(name: str) -> str:
    field = Settings.model_fields[name]
    extra = field.json_schema_extra
    if isinstance(extra, dict) and extra.get("default_text"):
        return str(extra["default_text"])
    value = field.default
    if value is None:
        return "unset"
    return f"`{value}`"


def settings_table() -> str:
    """The Markdown table of every setting: variable, default, meaning."""
    lines = ["| variable | default | meaning |", "|---|---|---|"]
    for name in Settings.model_fields:
        lines.append(f"| `{env_name(name)}` | {_default(name)} | {_help(name)} |")
    return "\n".join(lines) + "\n"


def command_paths(
    command: click.Command | None = None, ctx: click.Context | None = None
) -> Iterator[tuple[click.Context, click.Command]]:
    """Every command and subcommand of ``openxiv``, depth first, with a context named for its path."""
    if command is None:
        from openxiv.service.cli import cli

        command = cli
    if ctx is None:
        ctx = click.Context(
            command,
            info_name="openxiv",
            terminal_width=CLI_WIDTH,
            max_content_width=CLI_WIDTH,
            **command.context_settings,
        )
    # click caches a command's help option from the first context that asks for it; a test that ran
    # the command on its own (without the entry point's ``-h``) must not change the reference.
    if getattr(command, "_help_option", None) is not None:
        command._help_option = None
    yield ctx, command
    if isinstance(command, click.Group):
        for name in command.list_commands(ctx):
            sub = command.get_command(ctx, name)
            if sub is not None:
                yield from command_paths(sub, click.Context(sub, info_name=name, parent=ctx))


def cli_reference() -> str:
    """docs/cli.md's body: each command's ``--help`` at `CLI_WIDTH` columns."""
    parts: list[str] = []
    for ctx, command in command_paths():
        path = ctx.command_path
        parts.append(f"## {path}\n\n```\n{command.get_help(ctx).rstrip()}\n```\n")
    return "\n".join(parts)
