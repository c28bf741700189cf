"""Print the requirements pyproject.toml declares, one per line, for a pip install of the dependencies
alone (the Dockerfile installs them before it copies the sources, so a code change reuses that layer).

    python scripts/tool_pyproject_deps.py pyproject.toml --core torch pdf   # core + two extras
    python scripts/tool_pyproject_deps.py pyproject.toml milvus            # one extra only

Extras that name the project itself (``openxiv[mcp]``) are expanded; the project is never listed.
Standard library only: it runs on the bare base image, before anything is installed.
"""

from __future__ import annotations

import argparse
import re
import sys
import tomllib
from pathlib import Path

_NAME = re.compile(r"^\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[([^\]]*)\])?")


def requirements(pyproject: Path, extras: list[str], core: bool) -> list[str]:
    """The requirement strings of the core dependencies (``core``) and of ``extras``, in order, once each."""
    project = tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]
    name = project["name"].lower()
    optional = project.get("optional-dependencies", {})
    out: list[str] = []
    seen_extras: set[str] = set()

    def add(reqs: list[str]) -> None:
        for req in reqs:
            m = _NAME.match(req)
            if m and m.group(1).lower() == name:  # the project itself: its extras, never the project
                for extra in (m.group(2) or "").split(","):
                    add_extra(extra.strip())
            elif req not in out:
                out.append(req)

    def add_extra(extra: str) -> None:
        if not extra or extra in seen_extras:
            return
        if extra not in optional:
            raise SystemExit(f"pyproject_deps: unknown extra {extra!r} (have: {', '.join(optional)})")
        seen_extras.add(extra)
        add(optional[extra])

    if core:
        add(project.get("dependencies", []))
    for extra in extras:
        for part in extra.split(","):
            add_extra(part.strip())
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("pyproject", type=Path)
    ap.add_argument("extras", nargs="*", help="extras to add (names, or comma-separated lists)")
    ap.add_argument("--core", action="store_true", help="include the core dependencies")
    args = ap.parse_intermixed_args(argv)
    sys.stdout.write("".join(f"{r}\n" for r in requirements(args.pyproject, args.extras, args.core)))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
