"""The command line reads as one tool: one spelling per idea (the deprecated ones removed),
``--json [PATH]`` with one meaning, and one table of exit statuses (docs/cli.md)."""

from __future__ import annotations

import gzip
import inspect
import itertools
import json
import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

from openxiv.corpus.settings.model import shared_dir
from openxiv.corpus.settings.options import EXIT_FAILED, EXIT_OK, EXIT_USAGE, LOG_LEVELS, SettingOption
from openxiv.corpus.store import Store
from openxiv.indexer.manifest import Manifest
from openxiv.service.cli import cli
from openxiv.service.docgen import command_paths

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
LISTING = shared_dir() / "data" / "corpus" / "listing-cs-2503-2606.jsonl.gz"


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A real corpus of 40 listing papers and a BM25-only index of it, made with the CLI."""
    if not LISTING.is_file():
        pytest.skip(f"shared data not found ({LISTING}); set OPENXIV_SHARED")
    tmp = tmp_path_factory.mktemp("cli-shape")
    listing = tmp / "head.jsonl.gz"
    with gzip.open(LISTING, "rt", encoding="utf-8") as src, gzip.open(listing, "wt", encoding="utf-8") as dst:
        dst.writelines(itertools.islice(src, 40))
    db, root = tmp / "corpus.sqlite", tmp / "index"
    runner = CliRunner()
    res = runner.invoke(cli, ["ingest", "--db", str(db), str(listing), "--no-progress"])
    assert res.exit_code == EXIT_OK, res.output
    res = runner.invoke(
        cli, ["index", "build", "--db", str(db), "--index", str(root), "--embed", "none", "--no-progress"]
    )
    assert res.exit_code == EXIT_OK, res.output
    return db, root


def test_index_info_by_option_and_by_env(built: tuple[Path, Path]) -> None:
    _, root = built
    runner = CliRunner()
    new = runner.invoke(cli, ["index", "info", "--index", str(root), "--json"])
    assert new.exit_code == 0, new.output
    manifest = json.loads(new.stdout)
    assert Manifest.of(manifest).counts.papers == 40
    env = runner.invoke(cli, ["index", "info", "--json"], env={"OPENXIV_INDEX_DIR": str(root)})
    assert json.loads(env.stdout) == manifest


@pytest.mark.parametrize(
    ("args", "refused"),
    [
        (["index", "build", "--out", "ix"], "No such option '--out'"),
        (["index", "info", "ix"], "unexpected extra argument (ix)"),
        (["ingest", "--db", "c.sqlite", "in.jsonl", "--workers", "2"], "No such option '--workers'"),
    ],
)
def test_the_spellings_deprecated_for_a_release_are_gone(
    args: list[str], refused: str, tmp_path: Path
) -> None:
    """``index build --out`` (now ``--index``), ``index info DIR`` (``--index DIR``) and ingest's
    ``--workers`` (``--ingest-workers``; ``--workers`` is ``serve``'s processes) warned for a release
    and are removed (CHANGELOG.md): a usage error that names them, nothing built or read."""
    res = CliRunner().invoke(cli, args, env={"OPENXIV_DATA_DIR": str(tmp_path)})
    assert res.exit_code == EXIT_USAGE and refused in res.output, res.output


def test_ingest_workers_is_its_own_setting(tmp_path: Path) -> None:
    """``--workers`` is the server's processes (``serve``); ingest's parse processes are
    ``--ingest-workers`` (``OPENXIV_INGEST_WORKERS``)."""
    if not LISTING.is_file():
        pytest.skip(f"shared data not found ({LISTING}); set OPENXIV_SHARED")
    listing = tmp_path / "head.jsonl.gz"
    with gzip.open(LISTING, "rt", encoding="utf-8") as src, gzip.open(listing, "wt", encoding="utf-8") as dst:
        dst.writelines(itertools.islice(src, 5))
    runner = CliRunner()
    one = runner.invoke(
        cli, ["ingest", "--db", str(tmp_path / "a.sqlite"), str(listing), "--ingest-workers", "1"]
    )
    two = runner.invoke(
        cli, ["ingest", "--db", str(tmp_path / "b.sqlite"), str(listing), "--ingest-workers", "2"]
    )
    assert one.exit_code == EXIT_OK and two.exit_code == EXIT_OK, one.output + two.output
    with Store.open_readonly(tmp_path / "a.sqlite") as a, Store.open_readonly(tmp_path / "b.sqlite") as b:
        assert a.fingerprint() == b.fingerprint() and a.stats()["papers"] == 5
    bad = runner.invoke(cli, ["ingest", "--db", str(tmp_path / "d.sqlite"), str(listing)],
                        env={"OPENXIV_INGEST_WORKERS": "0"})  # fmt: skip
    assert bad.exit_code == EXIT_USAGE and "OPENXIV_INGEST_WORKERS" in bad.output


def test_every_setting_flag_reaches_the_command_as_its_settings() -> None:
    """A command with setting-backed flags takes them as one ``settings`` (`settings_from_flags`): no
    callback receives a setting flag as a parameter of its own."""
    for ctx, command in command_paths():
        flags = [p for p in command.params if isinstance(p, SettingOption)]
        if not flags or command.callback is None:
            continue
        taken = set(inspect.signature(command.callback).parameters)
        assert "settings" in taken, ctx.command_path
        assert not taken & {str(p.name) for p in flags}, ctx.command_path


def test_db_has_one_spelling_and_corpus_db_is_its_alias(built: tuple[Path, Path]) -> None:
    db, _ = built
    runner = CliRunner()
    outs = [runner.invoke(cli, ["stats", flag, str(db), "--json"]).stdout for flag in ("--db", "--corpus-db")]
    assert json.loads(outs[0]) == json.loads(outs[1]) and json.loads(outs[0])["papers"] == 40
    flag_wins = runner.invoke(
        cli, ["stats", "--db", str(db), "--json"], env={"OPENXIV_DB": "/nonexistent.sqlite"}
    )
    assert flag_wins.exit_code == 0 and json.loads(flag_wins.stdout)["papers"] == 40


@pytest.mark.parametrize(
    "argv",
    [["stats"], ["index", "info"], ["config"], ["search", "learning", "-k", "3"], ["paper", "FIRST"]],
    ids=lambda argv: argv[0],
)
def test_json_means_stdout_or_a_file_everywhere(
    argv: list[str], built: tuple[Path, Path], tmp_path: Path
) -> None:
    db, root = built
    if "FIRST" in argv:  # a paper of the small corpus
        with Store.open_readonly(db) as store:
            first = next(iter(store.iter_papers())).arxiv_id
        argv = [first if a == "FIRST" else a for a in argv]
    env = {"OPENXIV_DB": str(db), "OPENXIV_INDEX_DIR": str(root)}
    runner = CliRunner()
    to_stdout = runner.invoke(cli, [*argv, "--json"], env=env)
    assert to_stdout.exit_code == 0, to_stdout.output
    dash = runner.invoke(cli, [*argv, "--json", "-"], env=env)
    to_file = runner.invoke(cli, [*argv, "--json", str(tmp_path / "out.json")], env=env)
    assert to_file.exit_code == 0, to_file.output
    assert to_file.stdout == ""
    assert (
        json.loads(to_stdout.stdout)
        == json.loads(dash.stdout)
        == json.loads((tmp_path / "out.json").read_text())
    )


SHARED_OPTIONS: dict[str, Callable[[click.Option], bool]] = {
    "--index": lambda o: o.envvar == "OPENXIV_INDEX_DIR" and o.show_envvar,
    "--db": lambda o: "--corpus-db" in o.opts,
    "--json": lambda o: not o.is_flag and o.flag_value == "-" and o.metavar == "[PATH]",
    "--token": lambda o: o.envvar == "OPENXIV_API_TOKEN" and "--api-token" in o.opts,
    "--host": lambda o: o.envvar == "OPENXIV_HOST",
    "--log-level": lambda o: isinstance(o.type, click.Choice) and tuple(o.type.choices) == LOG_LEVELS,
}
"""What an option spelled like this must be in every command (the decorators of corpus/settings/options.py)."""


def _leaf_commands() -> list[tuple[str, click.Command]]:
    """Every command but ``config``, whose one override per setting reads no variable on purpose."""
    return [
        (ctx.command_path.removeprefix("openxiv").strip(), command)
        for ctx, command in command_paths()
        if not isinstance(command, click.Group) and ctx.command_path != "openxiv config"
    ]


@pytest.mark.parametrize(("path", "command"), _leaf_commands(), ids=lambda v: v if isinstance(v, str) else "")
def test_shared_options_are_the_same_option_in_every_command(path: str, command: click.Command) -> None:
    for param in command.params:
        for spelling, is_shared in SHARED_OPTIONS.items():
            if isinstance(param, click.Option) and spelling in param.opts:
                assert is_shared(param), f"openxiv {path} {spelling} is not the shared option"


def test_eval_json_without_a_path_prints_the_report(tmp_path: Path) -> None:
    q = tmp_path / "q.jsonl"
    q.write_text(json.dumps({"qid": "a", "query": "x", "relevant": ["2301.00001", "2301.00002"]}) + "\n")
    r = tmp_path / "r.jsonl"
    r.write_text(json.dumps({"qid": "a", "results": ["2301.00002", "9999"]}) + "\n")
    res = CliRunner().invoke(cli, ["eval", "ranked", "-g", str(q), "-s", str(r), "--k", "10", "--json"])
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["aggregates"]["recall@10"]["value"] == 0.5


def _leaves() -> list[str]:
    return [
        ctx.command_path.removeprefix("openxiv").strip()
        for ctx, command in command_paths()
        if not isinstance(command, click.Group)
    ]


@pytest.mark.parametrize("path", _leaves())
def test_an_unknown_option_is_a_usage_error_everywhere(path: str) -> None:
    res = CliRunner().invoke(cli, [*path.split(), "--no-such-option"])
    assert res.exit_code == EXIT_USAGE, res.output
    assert "No such option" in res.output


def test_a_bad_setting_is_a_usage_error_and_a_bad_file_a_failure(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENXIV_")}
    openxiv = str(BIN / "openxiv")
    bad_env = subprocess.run(
        [openxiv, "stats"],
        env={**env, "OPENXIV_BM25_K1": "high"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert bad_env.returncode == EXIT_USAGE and "OPENXIV_BM25_K1" in bad_env.stderr, bad_env.stderr
    bad_flag = subprocess.run(
        [openxiv, "serve", "--port", "http"], env=env, capture_output=True, text=True, timeout=120
    )
    assert bad_flag.returncode == EXIT_USAGE and "--port" in bad_flag.stderr
    not_a_db = tmp_path / "x.sqlite"
    not_a_db.write_text("not sqlite")
    broken = subprocess.run(
        [openxiv, "stats", "--db", str(not_a_db)], env=env, capture_output=True, text=True, timeout=120
    )
    assert broken.returncode == EXIT_FAILED and "not a usable corpus database" in broken.stderr


def test_make_index_does_not_rebuild_an_unchanged_corpus() -> None:
    recipe = (ROOT / "Makefile").read_text().split("\nindex:", 1)[1].split("\n\n", 1)[0]
    assert "--if-changed" in recipe and "--index" in recipe


def test_a_path_from_the_environment_expands_home_as_before(built: tuple[Path, Path], tmp_path: Path) -> None:
    """OPENXIV_DB=~/corpus.sqlite meant the home directory before the option read the variable itself."""
    db, _ = built
    home = tmp_path / "home"
    home.mkdir()
    (home / "corpus.sqlite").write_bytes(db.read_bytes())
    env = {"HOME": str(home), "OPENXIV_DB": "~/corpus.sqlite"}
    res = CliRunner().invoke(cli, ["stats", "--json"], env=env)
    assert res.exit_code == 0, res.output
    assert json.loads(res.stdout)["papers"] == 40
