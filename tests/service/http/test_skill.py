"""docs/SKILL.md, the guide an agent is given, works: every example in it answers as it says, on the
live server and through ``openxiv mcp`` (scripts/check_skill.py), and ``openxiv skill`` prints it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from click.testing import CliRunner
from live_index import BuiltIndex, LiveServer

ROOT = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(ROOT / "scripts"))
from check_skill import SKILL, examples  # noqa: E402


def test_every_example_in_skill_md_runs(server: LiveServer, test_index: BuiltIndex) -> None:
    found = examples(SKILL.read_text(encoding="utf-8"))
    kinds = [ex.kind for ex in found]
    assert kinds.count("http") >= 8 and kinds.count("mcp") >= 3
    assert any(ex.status == 404 for ex in found)  # an error example, checked as an error
    r = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts" / "check_skill.py"),
            "--url",
            server.url,
            "--index",
            str(test_index.root),
        ],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.splitlines()[-1] == f"{len(found)} passed, 0 failed", r.stdout


def test_openxiv_skill_prints_the_file() -> None:
    from openxiv.service.skill import skill

    out = CliRunner().invoke(skill, []).output
    assert out == SKILL.read_text(encoding="utf-8")
    assert out.startswith("---\nname: openxiv\n")
