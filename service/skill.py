"""``openxiv skill``: print docs/SKILL.md, the guide an LLM agent can be given to use openxiv well.

The file ships inside the package (``service/SKILL.md`` is a link to ``docs/SKILL.md``, copied into
the wheel), so an installed openxiv prints the guide that matches its own API.
"""

from __future__ import annotations

from importlib import resources

import click

__all__ = ["skill", "skill_text"]


def skill_text() -> str:
    return resources.files("openxiv.service").joinpath("SKILL.md").read_text(encoding="utf-8")


@click.command("skill")
def skill() -> None:
    """Print SKILL.md: which openxiv call (HTTP or MCP) to use for what, with filters, paging and
    budgets, for an LLM agent's context (e.g. openxiv skill > .claude/skills/openxiv/SKILL.md)."""
    click.echo(skill_text(), nl=False)
