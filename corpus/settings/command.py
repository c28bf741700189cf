"""``openxiv config``: the effective settings and where each value came from.

Every setting is also a flag of this command (``--port 9000``), so an operator can check what a
command line would do before running it; the flags of the other commands are named the same way.
"""

from __future__ import annotations

from typing import Any

import click

from openxiv.corpus.settings.model import Settings
from openxiv.corpus.settings.options import emit_json, json_option, setting_help
from openxiv.corpus.settings.sources import ConfigError, env_name, load

__all__ = ["config"]


ALIASES = {"index_dir": ("--index",), "api_token": ("--token",)}
"""The spellings the other commands use for these settings (``openxiv serve --index --token``)."""


def _flag(name: str) -> str:
    return "--" + name.replace("_", "-")


def _setting_options(command: Any) -> Any:
    """One text option per setting; its value is validated like the environment's.

    Not `setting_option`: these flags must not read the environment themselves, or every variable
    would be reported as coming from a flag."""
    for name in reversed(list(Settings.model_fields)):
        command = click.option(
            _flag(name),
            *ALIASES.get(name, ()),
            name,
            metavar="VALUE",
            default=None,
            help=f"Override {env_name(name)}: {setting_help(name)}",
        )(command)
    return command


@click.command("config")
@json_option(help="Print one JSON object: setting -> value, source, variable.")
@_setting_options
def config(json_out: str | None, **flags: str | None) -> None:
    """Print the effective settings and where each value came from.

    Sources, lowest priority first: default, secrets (files in OPENXIV_SECRETS_DIR), .env (in the
    working directory), env (OPENXIV_* variables), flag. Tokens are shown as ***.
    """
    try:
        loaded = load(Settings, flags=flags)
    except ConfigError as exc:
        raise click.UsageError(str(exc)) from exc
    values = loaded.settings.as_dict()
    if json_out is not None:
        doc = {
            name: {"value": values[name], "source": loaded.origin[name], "env": env_name(name)}
            for name in Settings.model_fields
        }
        emit_json(doc, json_out)
        return
    rows = [(env_name(n), _shown(n, values[n]), loaded.origin[n]) for n in Settings.model_fields]
    widths = [max(len(r[i]) for r in rows) for i in range(2)]
    for var, value, source in rows:
        click.echo(f"{var:<{widths[0]}}  {value:<{widths[1]}}  {source}")


def _shown(name: str, value: Any) -> str:
    if value is None:
        extra = Settings.model_fields[name].json_schema_extra
        default = extra.get("default_text") if isinstance(extra, dict) else None
        return f"unset ({str(default).replace('`', '')})" if default else "unset"
    return str(value)
