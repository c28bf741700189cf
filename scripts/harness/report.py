"""BENCHMARKS.md: rewrite one `## <title>` section in place (other sections are left alone); the
load average to print beside a timing; where benchmarks keep what they build."""

from __future__ import annotations

import os
import re
from pathlib import Path

BENCH = Path(__file__).resolve().parents[2] / "BENCHMARKS.md"
BENCH_DIR = BENCH.parent / "data" / "bench"
"""Where benchmarks keep what they build (caches, model exports, indexes): data/bench of this checkout."""


def load_average() -> str:
    """The 1-, 5- and 15-minute load averages as ``"a / b / c"``, to print next to a wall-clock timing."""
    return " / ".join(f"{x:.2f}" for x in os.getloadavg())


def write_section(title: str, body: str, path: Path = BENCH, after: str | None = None) -> None:
    """Replace the section headed ``## title`` (up to the next ``## ``) or add it: just after the
    section ``## after`` when there is one (a script's own section beside another script's), else at
    the end."""
    text = path.read_text(encoding="utf-8") if path.exists() else "# openxiv benchmarks\n"
    block = f"## {title}\n\n{body.strip()}\n"
    pattern = re.compile(rf"^## {re.escape(title)}\n.*?(?=^## |\Z)", re.S | re.M)
    if pattern.search(text):
        text = pattern.sub(lambda _: block + "\n", text, count=1).rstrip() + "\n"
    elif after and (found := re.search(rf"^## {re.escape(after)}\n.*?(?=^## |\Z)", text, re.S | re.M)):
        text = (text[: found.end()].rstrip() + "\n\n" + block + "\n" + text[found.end() :]).rstrip() + "\n"
    else:
        text = text.rstrip() + "\n\n" + block
    path.write_text(text, encoding="utf-8")
    print(f"wrote section '## {title}' of {path}")
