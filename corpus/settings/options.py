"""The command line's shared vocabulary: one spelling per idea, declared once for every command.

Each ``openxiv`` command builds its options from the decorators here, so the corpus database is
``--db`` everywhere, the index root ``--index``, ``--json [PATH]`` means the same thing in every
command, and an option backed by a setting takes its type, range, help and environment variable from
the `Settings` field (`setting_option`). Such options default to ``None``: an unset flag leaves the
value to the settings (environment, ``.env``, secrets, built-in default); `settings_from_flags` turns a
command's setting options into its one ``settings`` argument, so each flag is written once.

The exit statuses of every command are the table at the end (`EXIT_OK` ...), documented in
docs/cli.md and README.

A new command (``openxiv search``, ``openxiv paper``, ``openxiv mcp``, a ``--backend`` flag) reuses
them::

    @click.command()
    @settings_from_flags                       # the setting options below -> `settings`
    @index_option()                            # --index, OPENXIV_INDEX_DIR
    @setting_option("fusion")                  # a Settings field: --fusion, OPENXIV_FUSION
    @json_option()
    def search(settings: Settings, json_out: str | None) -> None:
        ...
        emit_json(result, json_out)
"""

from __future__ import annotations

import functools
import json
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar, cast

import annotated_types
import click

from openxiv.corpus.settings.model import Settings
from openxiv.corpus.settings.sources import env_name

__all__ = [
    "EXIT_FAILED",
    "EXIT_INTERRUPTED",
    "EXIT_OK",
    "EXIT_SKIPPED",
    "EXIT_USAGE",
    "LOG_LEVELS",
    "IntList",
    "SettingOption",
    "db_option",
    "emit_json",
    "index_option",
    "input_option",
    "json_option",
    "log_level_option",
    "output_option",
    "progress_option",
    "setting_help",
    "setting_option",
    "settings_from_flags",
    "show_progress",
    "url_option",
]

F = TypeVar("F", bound=Callable[..., Any])
Decorator = Callable[[F], F]

# --- exit statuses, the same for every command (docs/cli.md, "Exit status") -------------------------
EXIT_OK = 0
"""Done: every input was read and every result written."""
EXIT_FAILED = 1
"""Failed on data or at run time: unreadable or bad input content, a database or index that cannot be
used, a service that does not answer, an output that cannot be written."""
EXIT_USAGE = 2
"""A usage error, and only that: an unknown option, a bad option value or a missing input path
(click's own code), or a setting with an unusable value (``ConfigError``: a bad flag or variable)."""
EXIT_SKIPPED = 3
"""Finished, but some input was skipped (listed, and in the report); scripts that accept skipped input
(``make corpus``, ``openxiv demo``) treat it as success."""
EXIT_INTERRUPTED = 128
"""Plus the signal number: 130 after Ctrl-C, 143 after SIGTERM (the shell's convention)."""


# --- options backed by a setting -----------------------------------------------------------------


def setting_help(name: str) -> str:
    """The first paragraph of a setting's docstring, on one line and without Markdown backticks (the
    rest of the docstring explains the choice to readers of the code and README)."""
    text = Settings.model_fields[name].description or ""
    return " ".join(text.strip().split("\n\n")[0].split()).replace("`", "")


def _default_text(name: str) -> str:
    field = Settings.model_fields[name]
    extra = field.json_schema_extra
    if isinstance(extra, dict) and extra.get("default_text"):
        return str(extra["default_text"]).replace("`", "")
    return "unset" if field.default is None else str(field.default)


def _click_type(name: str) -> Any:
    """The click type of a setting: its annotation, with the field's bounds as a range."""
    field = Settings.model_fields[name]
    annotation = field.annotation
    base = next((t for t in getattr(annotation, "__args__", (annotation,)) if t is not type(None)), str)
    if base is Path:
        return click.Path(path_type=Path)
    if base in (int, float):
        bounds: dict[str, Any] = {}
        for meta in field.metadata:
            if isinstance(meta, annotated_types.Ge):
                bounds["min"] = meta.ge
            elif isinstance(meta, annotated_types.Le):
                bounds["max"] = meta.le
        if bounds:
            return (click.IntRange if base is int else click.FloatRange)(**bounds)
        return base
    if base is bool:
        return bool
    return str


def _is_path(name: str) -> bool:
    return "Path" in str(Settings.model_fields[name].annotation)


def _expand_home(ctx: click.Context, param: click.Parameter, value: Path | None) -> Path | None:
    """``~`` in a path means the home directory, as the settings read it from the environment (a shell
    expands it in a flag, but not in a variable's value)."""
    return value.expanduser() if isinstance(value, Path) else value


class SettingOption(click.Option):
    """A click option backed by the `Settings` field ``setting`` (made by `setting_option`);
    `settings_from_flags` turns a command's such options into its ``settings``."""

    def __init__(self, *args: Any, setting: str, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.setting = setting


def setting_option(name: str, *decls: str, help: str | None = None, **kwargs: Any) -> Decorator[Any]:
    """An option for the setting ``name``: ``--<name>`` (or ``decls``), its environment variable shown in
    the help, type and range from the field, help from its docstring (``help`` is added in front).

    The default is ``None`` whatever the field's default: an unset flag leaves the value to the
    settings (`settings_from_flags` applies it on ``Settings.from_env()``, the one place the value is
    decided). ``kwargs`` override the derived click arguments (e.g. a narrower ``type``).
    """
    if name not in Settings.model_fields:
        raise KeyError(f"{name!r} is not a setting")
    decls = decls or ("--" + name.replace("_", "-"),)
    text = setting_help(name)
    if help:
        text = f"{help} {text}"
    options: dict[str, Any] = {
        "cls": SettingOption,
        "setting": name,
        "callback": _expand_home if _is_path(name) else None,
        "type": _click_type(name),
        "default": None,
        "envvar": env_name(name),
        "show_envvar": True,
        "help": f"{text} Default: {_default_text(name)}.",
    }
    options.update(kwargs)
    return click.option(*decls, name, **options)


def settings_from_flags(f: F) -> F:
    """Turn a command's setting-backed options into one ``settings: Settings`` argument.

    Written between ``@click.command`` and the option decorators: every `setting_option` of the command
    (`db_option` and `index_option` included) leaves the callback's keyword arguments and is applied
    on ``Settings.from_env()`` (an unset flag, ``None``, leaves the value to the environment, ``.env``,
    the secrets or the default); the callback gets the result as ``settings``. So a flag is written
    once, in its decorator::

        @click.command()
        @settings_from_flags
        @index_option()
        @setting_option("fusion")
        def search(settings: Settings) -> None: ...
    """
    params: list[click.Parameter] = getattr(f, "__click_params__", [])
    flags = [p for p in params if isinstance(p, SettingOption) and p.name]
    if not flags:
        raise TypeError(f"{f.__name__}: no setting option under @settings_from_flags")

    @functools.wraps(f)
    def command(*args: Any, **kwargs: Any) -> Any:
        values = {p.setting: kwargs.pop(str(p.name)) for p in flags}
        return f(*args, settings=Settings.from_env().replace(**values), **kwargs)

    return cast(F, command)


def db_option(*, exists: bool = False, use_env: bool = True, help: str | None = None) -> Decorator[Any]:
    """``--db`` (also ``--corpus-db``): the corpus database, ``OPENXIV_DB``.

    ``use_env=False`` for commands where the database is optional and used only when named (``eval``):
    an exported ``OPENXIV_DB`` must not change their result unasked."""
    kwargs: dict[str, Any] = {"type": click.Path(dir_okay=False, exists=exists, path_type=Path)}
    if not use_env:
        text = help or "Corpus database."
        return click.option("--db", "--corpus-db", "db", default=None, help=text, **kwargs)
    return setting_option("db", "--db", "--corpus-db", help=help, **kwargs)


def index_option(*, help: str | None = None) -> Decorator[Any]:
    """``--index``: the index root (holds ``CURRENT`` and the snapshots) or one snapshot directory,
    ``OPENXIV_INDEX_DIR``. Files are accepted, so the command can say what it expected."""
    return setting_option("index_dir", "--index", help=help, type=click.Path(path_type=Path))


def json_option(*, help: str = "Print JSON instead of text.") -> Decorator[Any]:
    """``--json [PATH]``: the machine-readable output, to stdout (``--json`` or ``--json -``) or to PATH.

    The value is ``None`` (no JSON), ``"-"`` (stdout) or a path; `emit_json` writes it."""
    return click.option(
        "--json",
        "json_out",
        is_flag=False,
        flag_value="-",
        default=None,
        metavar="[PATH]",
        type=click.Path(dir_okay=False, allow_dash=True),
        help=f"{help} Without PATH (or with -) to stdout, else to the file PATH.",
    )


def emit_json(data: Any, dest: str | None) -> None:
    """Write ``data`` as indented JSON to ``dest`` (see `json_option`); ``None`` writes nothing."""
    if dest is None:
        return
    text = json.dumps(data, indent=2, ensure_ascii=False)
    if dest == "-":
        click.echo(text)
        return
    try:
        Path(dest).parent.mkdir(parents=True, exist_ok=True)
        Path(dest).write_text(text + "\n", encoding="utf-8")
    except OSError as exc:
        raise click.ClickException(f"cannot write {dest}: {exc.strerror}") from None
    click.echo(f"wrote {dest}", err=True)


LOG_LEVELS = ("critical", "error", "warning", "info", "debug")


def log_level_option(
    default: str = "info", help: str = "Lowest level of the log lines written."
) -> Decorator[Any]:
    """``--log-level``: the lowest level logged (uvicorn's and openxiv's loggers)."""
    return click.option(
        "--log-level",
        type=click.Choice(LOG_LEVELS),
        default=default,
        show_default=True,
        help=help,
    )


def progress_option() -> Decorator[Any]:
    """``--progress/--no-progress``: progress bars on stderr; ``None`` (neither given) = when on a terminal."""
    return click.option(
        "--progress/--no-progress",
        default=None,
        help="Progress bars on stderr (default: when on a terminal).",
    )


def show_progress(progress: bool | None) -> bool:
    """What `progress_option`'s value means for this process."""
    return sys.stderr.isatty() if progress is None else progress


def input_option(help: str, *decls: str, required: bool = True) -> Decorator[Any]:
    """``--input FILE``: an existing file the command reads."""
    return click.option(
        *(decls or ("--input", "input_path")),
        type=click.Path(exists=True, dir_okay=False, path_type=Path),
        required=required,
        default=None,
        help=help,
    )


def output_option(help: str, *decls: str, required: bool = True) -> Decorator[Any]:
    """``--out FILE``: a file the command writes (its folder is created)."""
    return click.option(
        *(decls or ("--out",)),
        type=click.Path(dir_okay=False, path_type=Path),
        required=required,
        default=None,
        help=help,
    )


def url_option(default: str = "http://127.0.0.1:8000/search") -> Decorator[Any]:
    """``--url``: the openxiv search endpoint a client command calls."""
    return click.option("--url", default=default, show_default=True, help="openxiv POST /search URL.")


# --- click types -----------------------------------------------------------------------------------


class IntList(click.ParamType):
    """Comma-separated integers >= ``min`` (``1,5,10``): a sorted tuple without repeats."""

    name = "INT,..."

    def __init__(self, min: int = 1) -> None:
        self.min = min

    def convert(self, value: Any, param: click.Parameter | None, ctx: click.Context | None) -> Any:
        if isinstance(value, tuple):
            return value
        try:
            numbers = {int(part) for part in str(value).split(",") if part.strip()}
        except ValueError:
            self.fail(f"expected comma-separated integers, got {value!r}", param, ctx)
        if not numbers or min(numbers) < self.min:
            self.fail(f"expected at least one integer, all >= {self.min}, got {value!r}", param, ctx)
        return tuple(sorted(numbers))
