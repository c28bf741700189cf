"""The unmodified AutoResearchBench agent (the benchmark's own ``inference.py``, github
CherYou/AutoResearchBench) as the live tests run it: in its own venv, a subprocess per question, with a
scripted chat server on loopback as both its planner and its paper summariser.

Give its checkout as ``OPENXIV_TEST_ARB_DIR`` and the venv's python as ``OPENXIV_TEST_ARB_PYTHON``
(``make arb-venv`` makes one); `arb_checkout` skips the test without them. The only thing pointed at
openxiv is ``PAPER_SEARCH_API_URL``.
"""

from __future__ import annotations

import json
import os
import subprocess
from collections.abc import Callable
from pathlib import Path

import pytest

SUMMARISER = "You are an expert in the field of AI academia."
"""The first message of the agent's per-paper summary call (how the scripted server tells it apart)."""


def planner(words: int | None = None) -> Callable[[list[dict[str, str]]], str]:
    """The scripted LLM: search once with the question (its first ``words`` words when given), then keep
    paper 1 and stop; the summariser answers one fixed sentence."""

    def reply(messages: list[dict[str, str]]) -> str:
        if messages[0]["content"] == SUMMARISER:
            return "A paper about the query."
        if any(m["role"] == "assistant" for m in messages):
            return "<candidates>[1]</candidates>\n<answer>Done</answer>"
        question = messages[1]["content"].removeprefix("User Query: ")
        query = question if words is None else " ".join(question.split()[:words])
        call = {"name": "PaperSearchTool", "arguments": {"query": query}}
        return f"<tool_call>{json.dumps(call)}</tool_call>"

    return reply


def arb_checkout() -> tuple[Path, Path]:
    """The agent's checkout and its venv's python, or a skip naming what is missing."""
    checkout, python = os.environ.get("OPENXIV_TEST_ARB_DIR"), os.environ.get("OPENXIV_TEST_ARB_PYTHON")
    if not checkout or not (Path(checkout) / "inference.py").is_file():
        pytest.skip("OPENXIV_TEST_ARB_DIR does not name an AutoResearchBench checkout (with inference.py)")
    if not python or not Path(python).is_file():
        pytest.skip("OPENXIV_TEST_ARB_PYTHON does not name the agent venv's python (make arb-venv)")
    return Path(checkout), Path(python)


def run_inference(
    arb: tuple[Path, Path], search_url: str, chat_url: str, questions: Path, n: int, out: Path
) -> str:
    """The agent on question ``n`` (1-based line of ``questions``) with ``PAPER_SEARCH_API_URL`` =
    ``search_url``; the text of its output file."""
    checkout, python = arb
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENXIV_", "PYTHON"))}
    env.update(
        PAPER_SEARCH_API_URL=search_url,
        PAPER_SEARCH_OPENAI_API_KEY="unused",
        PAPER_SEARCH_OPENAI_API_BASE=chat_url,
        PAPER_SEARCH_SUMMARY_MODEL_NAME="gpt-4o",
    )
    cmd = [str(python), "inference.py", "--input-file", str(questions), "--output-file", str(out)]
    cmd += ["--model", "gpt-4o", "--api-key", "unused", "--api-base", chat_url, "--max-turns", "3"]
    cmd += ["--eval-start", str(n - 1), "--eval-end", str(n), "--max-workers", "1"]
    done = subprocess.run(cmd, cwd=checkout, env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stderr[-2000:]
    return out.read_text(encoding="utf-8")
