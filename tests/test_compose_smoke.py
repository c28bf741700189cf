"""`docker compose up` end to end (scripts/check_compose_smoke.sh): a heavy test, `make test-heavy`.

It builds the image (minutes of CPU on a cold cache), so it is not part of the default suite or
.ci/run; `make compose-smoke` runs the same script directly (docs/service.md, «Docker»)."""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _engine_reachable() -> bool:
    if shutil.which("docker") is None:
        return False
    return subprocess.run(["docker", "info"], capture_output=True, check=False).returncode == 0


@pytest.mark.heavy
def test_compose_smoke() -> None:
    if not _engine_reachable() and os.geteuid() != 0:
        pytest.skip("no Docker engine running, and starting one needs root")
    done = subprocess.run(
        [str(ROOT / "scripts" / "check_compose_smoke.sh")],
        capture_output=True,
        text=True,
        timeout=3600,
        check=False,
    )
    assert done.returncode == 0, done.stdout[-4000:] + done.stderr[-4000:]
    for check in ("first up: POST /search", "answers type=head", "second up: POST /search", "passed"):
        assert check in done.stdout, check
