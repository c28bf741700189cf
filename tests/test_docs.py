"""The docs cannot drift: README's configuration table and docs/cli.md are generated and checked.

Like sqlite-utils' test_docs.py: the Markdown files carry cog markers, ``make docs`` regenerates
them, and these tests fail when a setting, a command or an option is undocumented or the committed
text is stale.
"""

from __future__ import annotations

import re
from pathlib import Path

import click
import pytest
from cogapp import Cog

from openxiv.corpus.settings.model import Settings
from openxiv.corpus.settings.sources import env_name
from openxiv.service.docgen import command_paths

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
CLI_MD = ROOT / "docs" / "cli.md"
GENERATED = (README, CLI_MD)
NOT_SETTINGS = {"OPENXIV_SHARED_DIR", "OPENXIV_BASE_IMAGE", "OPENXIV_BUILD_NETWORK", "OPENXIV_EXTRAS"}
"""Read by docker compose or the Dockerfile, never by openxiv: the host folder mounted at /shared, and
the image build's base image, network and extras."""


def test_generated_docs_are_up_to_date(capsys: pytest.CaptureFixture[str]) -> None:
    status = Cog().main(["cog", "--check", *map(str, GENERATED)])
    out = capsys.readouterr()
    assert status == 0, f"stale generated docs: run `make docs`\n{out.out}{out.err}"


@pytest.fixture(scope="module")
def readme() -> str:
    return README.read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def cli_md() -> str:
    return CLI_MD.read_text(encoding="utf-8")


@pytest.mark.parametrize("name", list(Settings.model_fields))
def test_every_setting_is_in_the_readme_table(name: str, readme: str) -> None:
    assert f"| `{env_name(name)}` |" in readme


def test_docs_name_no_variable_that_is_not_a_setting() -> None:
    """A renamed or removed setting must not survive in the docs (test-only names excepted)."""
    known = {env_name(n) for n in Settings.model_fields}
    for path in [README, *sorted((ROOT / "docs").glob("*.md"))]:
        named = set(re.findall(r"OPENXIV_[A-Z0-9_]*[A-Z0-9]", path.read_text(encoding="utf-8")))
        stray = {v for v in named - known - NOT_SETTINGS if not v.startswith("OPENXIV_TEST_")}
        assert not stray, f"{path.name} names {sorted(stray)}, which are not settings"


def _commands() -> list[tuple[str, list[str]]]:
    out = []
    for ctx, command in command_paths():
        flags = [opt for p in command.params if isinstance(p, click.Option) for opt in p.opts]
        out.append((ctx.command_path, flags))
    return out


@pytest.mark.parametrize(("path", "flags"), _commands(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_command_and_option_is_in_the_cli_reference(path: str, flags: list[str], cli_md: str) -> None:
    heading = f"\n## {path}\n"
    assert heading in cli_md, f"{path} is not in docs/cli.md: run `make docs`"
    section = cli_md.split(heading, 1)[1].split("\n## ", 1)[0]
    missing = [f for f in flags if not re.search(rf"(?<![\w-]){re.escape(f)}(?![\w-])", section)]
    assert not missing, f"{path}: {missing} not in docs/cli.md"


def _options() -> list[tuple[str, click.Option]]:
    return [
        (f"{ctx.command_path} {p.opts[0]}", p)
        for ctx, command in command_paths()
        for p in command.params
        if isinstance(p, click.Option)
    ]


@pytest.mark.parametrize(("name", "option"), _options(), ids=lambda v: v if isinstance(v, str) else "")
def test_every_option_has_help(name: str, option: click.Option) -> None:
    assert option.help and option.help.strip(), f"{name} has no help"


@pytest.mark.parametrize(("name", "option"), _options(), ids=lambda v: v if isinstance(v, str) else "")
def test_setting_options_name_their_variable(name: str, option: click.Option) -> None:
    """An option read from an OPENXIV_* variable reads a setting's, says so in its help, and has no
    default of its own (the settings decide)."""
    if option.envvar is None:
        return
    assert option.envvar in {env_name(n) for n in Settings.model_fields}, name
    assert option.show_envvar, name
    assert option.default is None, name


MACHINE_PATH = re.compile(r"(?<![\w.~-])/(?:work|home|root|srv|opt)/[\w.-]")
"""An absolute path of a development machine (``/work/...``, ``/home/...``): the docs, BENCHMARKS.md
and the code name repository-relative paths (``data/index``, ``../shared``) or placeholders instead."""


def _texts() -> list[Path]:
    docs = [README, ROOT / "BENCHMARKS.md", *sorted((ROOT / "docs").glob("*.md"))]
    code = [
        p
        for part in ("corpus", "indexer", "service", "evaluator", "scripts")
        for p in (ROOT / part).rglob("*.py")
    ]
    return docs + sorted(code)


def test_docs_and_code_name_no_absolute_path_of_a_machine() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{n}: {line.strip()[:100]}"
        for path in _texts()
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if MACHINE_PATH.search(line)
    ]
    assert found == [], "\n".join(found)


def test_the_readme_search_answer_has_the_served_fields_and_values(readme: str) -> None:
    """README's ``POST /search`` example names every field of a hit, and author ``orgs`` as served:
    ``[]``, never ``null`` (it said ``null`` after the service had changed, issue 21)."""
    from openxiv.service.models import Hit

    example = readme.split('{"status": "success", "total_count"', 1)[1].split("```", 1)[0]
    assert set(Hit.model_fields) <= set(re.findall(r'"(\w+)":', example))
    assert '"orgs": []' in example and '"orgs": null' not in readme and "`orgs` (`[]`" in readme
