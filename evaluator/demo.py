"""``openxiv demo``: the whole product in one go, the way a new user would first try it.

1. ingest everything in ``../shared/data`` (listings, full texts, unarXive, PDFs; broken PDFs reported);
2. build an index snapshot (embeddings come from the cache after the first run);
3. start ``openxiv serve`` on a free loopback port and wait until it is ready;
4. turn the dev topic queries into AutoResearchBench wide questions, calibrate the baseline agent's
   thresholds on one dev set (``topic_queries_dev``) and run it on the other
   (``topic_queries_more_dev``) against the live ``POST /search``;
5. score its answers with ``openxiv eval autoresearchbench`` and write the HTML report;
6. stop the server and print where everything is.

Each step runs the same ``openxiv`` subcommand a user would type, in a subprocess, so the demo
exercises the real command line end to end.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import TYPE_CHECKING

import click
import httpx

from openxiv.corpus.settings.model import Settings
from openxiv.corpus.settings.options import setting_option, settings_from_flags

if TYPE_CHECKING:
    from openxiv.corpus.shared import SharedData

__all__ = ["demo"]

CALIBRATION_QUERIES = "topic_queries_dev.jsonl"
DEMO_QUERIES = "topic_queries_more_dev.jsonl"


def _openxiv(*args: str) -> list[str]:
    return [sys.executable, "-m", "openxiv.service.cli", *args]


INGEST_SKIPPED = 3
"""``openxiv ingest``: finished, but some input was skipped (the shared data's broken PDFs)."""


def _step(title: str, cmd: list[str], env: dict[str, str]) -> None:
    click.secho(f"\n==> {title}", bold=True)
    click.echo("$ openxiv " + " ".join(cmd[3:]))
    result = subprocess.run(cmd, env=env, check=False)
    if result.returncode == INGEST_SKIPPED and cmd[3:4] == ["ingest"]:
        click.echo("(some input was skipped, as listed above; the demo goes on with the rest)")
    elif result.returncode != 0:
        raise click.ClickException(f"step failed ({title}); exit status {result.returncode}")


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _wait_ready(base: str, proc: subprocess.Popen[bytes], timeout: float = 300.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise click.ClickException(f"the server exited early with status {proc.returncode}")
        try:
            if httpx.get(base + "/readyz", timeout=2.0).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise click.ClickException(f"the server at {base} was not ready after {timeout:.0f} s")


@click.command("demo")
@settings_from_flags
@setting_option(
    "data_dir",
    "--data",
    "--data-dir",
    type=click.Path(file_okay=False, path_type=Path),
)
@setting_option("shared", type=click.Path(file_okay=False, path_type=Path))
@click.option("--skip-build", is_flag=True, help="Reuse the existing corpus and index in --data.")
def demo(settings: Settings, skip_build: bool) -> None:
    """Ingest ../shared, index it, serve it, run the baseline agent and write its evaluation report."""
    from openxiv.corpus.shared import SharedData

    data_dir = settings.data_dir
    layout = SharedData(settings.shared.resolve()) if settings.shared else SharedData.default()
    if not layout.available:
        raise click.ClickException(layout.missing_message())
    data_dir = data_dir.resolve()
    out = data_dir / "demo"
    out.mkdir(parents=True, exist_ok=True)
    db, index = data_dir / "corpus.sqlite", data_dir / "index"
    env = dict(os.environ, HF_HUB_OFFLINE="1", OPENXIV_DATA_DIR=str(data_dir))

    if not skip_build:
        inputs = layout.ingest_inputs
        _step(
            "ingest the shared corpus",
            _openxiv(
                "ingest", "--db", str(db), *map(str, inputs), "--report", str(out / "ingest_report.jsonl")
            ),
            env,
        )
        _step("build the index", _openxiv("index", "build", "--db", str(db), "--index", str(index)), env)

    gold, answers = _run_agent(index, db, out, layout, env)
    report = out / "report.html"
    _step(
        "score the answers",
        _openxiv(
            "eval",
            "autoresearchbench",
            "--gold",
            str(gold),
            "--submission",
            str(answers),
            "--db",
            str(db),
            "--html",
            str(report),
            "--json",
            str(out / "report.json"),
            "--md",
            str(out / "report.md"),
        ),
        env,
    )
    _judged_step(settings.judge_backend, layout.gold("finder"), out, env)
    click.secho(f"\nDone. Open the evaluation report: {report}", bold=True, fg="green")


def _judged_step(backend: str, finder: Path, out: Path, env: dict[str, str]) -> None:
    """Score the shared FINDER reports with the configured judge, or say that none is configured."""
    if backend == "none":
        click.echo(
            "\n(no judge configured, OPENXIV_JUDGE_BACKEND=none: the judged metrics (FINDER checklist, DEFT,"
            " Dr.Mi planning and reasoning) are skipped; docs/evaluator.md, 'Judged metrics')"
        )
        return
    reports = finder / "reports" / "claude-3-7-sonnet-latest.jsonl"
    if not reports.is_file():
        click.echo(f"\n(no FINDER reports at {reports}: the judged step is skipped)")
        return
    _step(
        f"score the shared FINDER reports with the {backend} judge",
        _openxiv("eval", "finder", "--gold", str(finder / "checklist.jsonl"), "--submission", str(reports),
                 "--html", str(out / "finder.html"), "--json", str(out / "finder.json")),
        env,
    )  # fmt: skip


def _run_agent(
    index: Path, db: Path, out: Path, layout: SharedData, env: dict[str, str]
) -> tuple[Path, Path]:
    """Serve ``index`` on a free loopback port, make the wide questions, calibrate the baseline agent
    and run it against the server (stopped after); the gold and the answers files."""
    port = _free_port()
    base = f"http://127.0.0.1:{port}"
    click.secho(f"\n==> serve the index on {base}", bold=True)
    log = (out / "server.log").open("wb")
    server = subprocess.Popen(
        _openxiv("serve", "--index", str(index), "--port", str(port)),
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    try:
        _wait_ready(base, server)
        calib, gold = out / "calibration_gold.jsonl", out / "wide_gold.jsonl"
        policy, answers = out / "baseline_policy.json", out / "baseline_inference.jsonl"
        for name, target in ((CALIBRATION_QUERIES, calib), (DEMO_QUERIES, gold)):
            queries = str(layout.gold(name))
            _step(
                f"make AutoResearchBench wide questions from {name}",
                _openxiv("agent", "wide-set", "--queries", queries, "--db", str(db), "--out", str(target)),
                env,
            )
        _step(
            f"calibrate the baseline agent's thresholds on {CALIBRATION_QUERIES}",
            _openxiv(
                "agent", "calibrate", "--url", base + "/search", "--input", str(calib), "--out", str(policy)
            ),
            env,
        )
        _step(
            f"run the baseline agent on {DEMO_QUERIES} against POST /search",
            _openxiv("agent", "baseline", "--url", base + "/search", "--input", str(gold),
                     "--policy", str(policy), "--out", str(answers)),
            env,
        )  # fmt: skip
    finally:
        server.terminate()
        try:
            server.wait(timeout=30)
        except subprocess.TimeoutExpired:
            server.kill()
        log.close()
    return gold, answers
