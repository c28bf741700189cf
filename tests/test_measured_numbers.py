"""Measured numbers live in BENCHMARKS.md and docs/, never in a docstring or a comment of product code.

A timing, a throughput, a memory size or a quality score written next to the code goes stale the
day the code, the corpus or the machine changes, and nothing re-checks it; BENCHMARKS.md is
rewritten by the script that measured it. Code says why and points there: "(BENCHMARKS.md, «Index
build»)". Values the code sets (a cache size, a limit, a default) are not measurements; the few
that look like one are listed in `ALLOWED` with the reason.
"""

from __future__ import annotations

import ast
import io
import re
import tokenize
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PRODUCT = ("corpus", "indexer", "service", "evaluator")

MEASUREMENT = re.compile(
    # a duration, a size or a rate: "52 ms", "~8 min", "1.2 GB", "420 texts/s"
    r"(?<![\w.])~?\d+(?:[.,]\d+)*(?:\s?(?:ms|µs|min|MiB|MB|GiB|GB|[a-z]+/s)|\s(?:s|minutes|seconds))(?![\w/])"
    # a speed ratio: "~5x faster", "0.56x the speed", "3x more"
    r"|(?<![\w.])~?\d+(?:\.\d+)?\s?[x×]\s?(?:faster|slower|more|less|the speed)"
    # a quality score: "Recall@100 0.295", "R@100 0.230", "S@10 = 0.99"
    r"|\b(?:R|S|P|Recall|Success|Precision|MRR|nDCG)@\d+\s*[:=]?\s*[01]?\.\d{2,}"
    # a number said to be measured: "measured 52 ...", "Measured ...: 1.0 -> 0.230"
    r"|\b[Mm]easured\b[^.]*?\d+\.\d+"
    # scores side by side: "0.230/1.000/0.993"
    r"|\b[01]\.\d{3}/[01]\.\d{3}\b",
)

ALLOWED: dict[tuple[str, str], str] = {
    ("corpus/store.py", "~64 MiB"): "the WAL checkpoint interval openxiv sets (a PRAGMA value)",
    ("corpus/store.py", "64 MiB"): "the page cache size openxiv sets (a PRAGMA value)",
    ("indexer/engine/meta.py", "6.5 MB"): "arithmetic on the mask size (bools per paper), not a measurement",
}
"""``(file, matched text) -> why it is a setting or arithmetic, not a measured number``."""


def _comment_and_docstring_lines(path: Path) -> list[tuple[int, str]]:
    """Every comment and every string statement (docstrings, attribute docstrings), line by line."""
    src = path.read_text(encoding="utf-8")
    out = [
        (tok.start[0], tok.string)
        for tok in tokenize.generate_tokens(io.StringIO(src).readline)
        if tok.type == tokenize.COMMENT
    ]
    for node in ast.walk(ast.parse(src)):
        if (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Constant)
            and isinstance(node.value.value, str)
        ):
            out.extend((node.lineno + i, line) for i, line in enumerate(node.value.value.splitlines()))
    return out


def _findings() -> list[str]:
    found = []
    for part in PRODUCT:
        for path in sorted((ROOT / part).rglob("*.py")):
            rel = path.relative_to(ROOT).as_posix()
            for lineno, text in _comment_and_docstring_lines(path):
                for m in MEASUREMENT.finditer(text):
                    if (rel, m.group(0)) not in ALLOWED:
                        found.append(f"{rel}:{lineno}: {m.group(0)!r} in {text.strip()[:100]!r}")
    return found


def test_no_measured_numbers_in_product_docstrings_or_comments() -> None:
    found = _findings()
    assert not found, "measured numbers belong in BENCHMARKS.md or docs/ (leave a pointer):\n" + "\n".join(
        found
    )


@pytest.mark.parametrize(
    "text",
    [
        "measured 52 ms CPU per query",
        "embeds 420 texts/s on two cores",
        "json's C encoder is ~5x faster",
        "topic dev queries (Recall@100 0.295 / 0.288)",
        "Measured on the whole corpus: 1.0 -> 0.230/1.000",
        "peak RSS 1.2 GB",
        "0.8 -> 0.265/0.997/0.977",
    ],
)
def test_the_pattern_catches_measurements(text: str) -> None:
    assert MEASUREMENT.search(text)


@pytest.mark.parametrize(
    "text",
    [
        "at most 400 pages",
        "recall@k = |top_k ∩ Rel| / |Rel|",
        "see BENCHMARKS.md, «Index build»",
        "404s into None",
    ],
)
def test_the_pattern_leaves_other_numbers_alone(text: str) -> None:
    assert not MEASUREMENT.search(text)
