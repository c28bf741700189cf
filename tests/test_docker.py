"""The Docker files agree with each other and with the Makefile (issue 22). Running them is
scripts/check_compose_smoke.sh's job (`make compose-smoke`: it needs a Docker engine and root)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

ROOT = Path(__file__).resolve().parent.parent


def _compose() -> dict[str, Any]:
    yaml = pytest.importorskip("yaml")
    data: dict[str, Any] = yaml.safe_load((ROOT / "docker-compose.yml").read_text())
    return data


def _torch_index_defaults() -> dict[str, str]:
    dockerfile = (ROOT / "Dockerfile").read_text()
    makefile = (ROOT / "Makefile").read_text()
    compose = (ROOT / "docker-compose.yml").read_text()
    return {
        "Dockerfile": re.findall(r"^ARG TORCH_INDEX_URL=(\S+)$", dockerfile, re.M)[0],
        "Makefile": re.findall(r"^TORCH_INDEX_URL \?= (\S+)$", makefile, re.M)[0],
        **{
            f"compose {i}": url
            for i, url in enumerate(re.findall(r"\$\{TORCH_INDEX_URL:-([^}]+)\}", compose))
        },
    }


def test_one_torch_index_default() -> None:
    defaults = _torch_index_defaults()
    assert len(defaults) >= 3 and len(set(defaults.values())) == 1, defaults


def test_each_image_is_built_by_one_service() -> None:
    services = _compose()["services"]
    builders: dict[str, list[str]] = {}
    for name, svc in services.items():
        if "build" in svc:
            builders.setdefault(svc["image"], []).append(name)
    assert builders == {"openxiv:local": ["indexer"], "openxiv:milvus": ["indexer-milvus"]}
    for name, svc in services.items():
        if svc.get("image", "").startswith("openxiv:") and "build" not in svc:
            assert svc.get("pull_policy") == "never", name  # nothing to pull: the builder makes it


def test_milvus_services_share_an_image_that_indexes_and_serves() -> None:
    services = _compose()["services"]
    indexer, search = services["indexer-milvus"], services["search-milvus"]
    assert indexer["image"] == search["image"]
    assert "milvus" in indexer["build"]["args"]["OPENXIV_EXTRAS"]
    assert "--out" not in indexer["command"]  # the deprecated spelling of --index


def test_dockerfile_user_is_numeric_and_deps_come_before_sources() -> None:
    lines = [ln.strip() for ln in (ROOT / "Dockerfile").read_text().splitlines()]
    users = [ln.split()[1] for ln in lines if ln.startswith("USER ")]
    assert users and all(re.fullmatch(r"\d+(:\d+)?", u) for u in users), users
    deps = next(i for i, ln in enumerate(lines) if "tool_pyproject_deps.py deps/pyproject.toml --core" in ln)
    sources = next(i for i, ln in enumerate(lines) if ln.startswith("COPY . "))
    assert deps < sources


def test_dockerignore_keeps_data_and_environments_out() -> None:
    ignored = {ln.strip() for ln in (ROOT / ".dockerignore").read_text().splitlines()}
    assert {".git", ".venv", "data", "*.sqlite", "tests", ".env"} <= ignored


def test_pyproject_deps_lists_core_and_extras_without_the_project() -> None:
    out = subprocess.run(
        [
            sys.executable,
            str(ROOT / "scripts/tool_pyproject_deps.py"),
            str(ROOT / "pyproject.toml"),
            "--core",
            "torch",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert out[0].startswith("sqlalchemy") and any(r.startswith("torch>=") for r in out)
    dev = subprocess.run(
        [sys.executable, str(ROOT / "scripts/tool_pyproject_deps.py"), str(ROOT / "pyproject.toml"), "dev"],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.splitlines()
    assert not any(r.startswith("openxiv") for r in dev)
    assert any(r.startswith("mcp") for r in dev) and any(r.startswith("ray[data]") for r in dev)
