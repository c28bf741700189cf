"""Pluggable LLM judge of the evaluator's judged metrics (docs/evaluator.md, "Judge").

`make_judge` builds the back end the settings name (``OPENXIV_JUDGE_BACKEND``: ``none``, ``openai``,
``replay``); `load_prompt` reads a prompt file and versions it by a hash of its text; `run_yes_no`
asks a list of requests and parses each answer into True/False/None (not judged) with the
`JudgeStats` every judged number carries.
"""

from __future__ import annotations

from collections.abc import Callable
from importlib import resources
from pathlib import Path
from typing import Any

from openxiv.evaluator.judge.cache import JudgeCache
from openxiv.evaluator.judge.openai import OpenAIJudge
from openxiv.evaluator.judge.parse import MATCH_PARSERS, PARSERS, answer_text
from openxiv.evaluator.judge.protocol import Answer, Judge, JudgeRequest, JudgeStats, Prompt
from openxiv.evaluator.judge.replay import NoJudge, ReplayJudge

__all__ = [
    "MATCH_PARSERS",
    "Answer",
    "Judge",
    "JudgeCache",
    "JudgeRequest",
    "JudgeStats",
    "NoJudge",
    "OpenAIJudge",
    "Prompt",
    "ReplayJudge",
    "load_prompt",
    "make_judge",
    "messages",
    "package_prompt",
    "run_yes_no",
]


def load_prompt(path: Path, name: str) -> Prompt:
    """A prompt file read at run time (a benchmark's own, in ``../shared``); a clear error if absent."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise FileNotFoundError(f"prompt file {path}: {exc.strerror}") from None
    return Prompt(name, text, str(path))


def package_prompt(name: str) -> Prompt:
    """One of openxiv's own prompts (``openxiv/evaluator/judge/prompts/<name>.txt``)."""
    ref = resources.files("openxiv.evaluator.judge").joinpath("prompts", f"{name}.txt")
    return Prompt(
        name.replace("_", "-"), ref.read_text(encoding="utf-8"), f"evaluator/judge/prompts/{name}.txt"
    )


def messages(prompt: Prompt, **fields: str) -> tuple[tuple[str, str], ...]:
    """The chat messages of a template: ``[system]``/``[user]`` sections (none: one user message),
    ``{name}`` placeholders replaced literally (articles hold braces, so no ``str.format``)."""
    sections: list[tuple[str, list[str]]] = []
    for line in prompt.text.splitlines():
        tag = line.strip()
        if tag in ("[system]", "[user]", "[assistant]"):
            sections.append((tag[1:-1], []))
        else:
            if not sections:
                sections.append(("user", []))
            sections[-1][1].append(line)
    out = []
    for role, lines in sections:
        text = "\n".join(lines).strip("\n")
        for key, value in fields.items():
            text = text.replace("{" + key + "}", value)
        out.append((role, text))
    return tuple(out)


def make_judge(settings: Any, cache_path: Path | None = None, backend: str | None = None) -> Judge:
    """The back end of ``settings`` (an `openxiv.corpus.settings.model.Settings`); ``backend`` overrides it."""
    kind = backend or settings.judge_backend
    if kind == "none":
        return NoJudge()
    path = cache_path or settings.judge_cache or Path(settings.data_dir) / "judge-cache.jsonl"
    model = settings.judge_model
    if not model:
        raise ValueError(
            f"OPENXIV_JUDGE_MODEL is not set (needed by the {kind} judge: it is part of the cache key)"
        )
    if kind == "replay":
        return ReplayJudge(model, JudgeCache(path))
    if kind != "openai":
        raise ValueError(f"OPENXIV_JUDGE_BACKEND={kind!r}: expected none, openai or replay")
    if not settings.judge_base_url:
        raise ValueError("OPENXIV_JUDGE_BASE_URL is not set (needed by the openai judge)")
    return OpenAIJudge(
        settings.judge_base_url, model, JudgeCache(path), api_key=settings.judge_api_key,
        concurrency=settings.judge_concurrency, timeout=settings.judge_timeout,
        retries=settings.judge_retries, backoff=settings.judge_backoff,
    )  # fmt: skip


def run_yes_no(
    judge: Judge,
    requests: list[JudgeRequest],
    parser: str,
    prompt: Prompt,
    parsers: dict[str, Callable[[str], bool | None]] = PARSERS,
) -> tuple[list[bool | None], JudgeStats]:
    """Ask every request; ``None`` = not judged (no answer, or an answer the parser cannot read).

    ``parsers`` maps ``parser`` to the function reading an answer (yes/no by default; ARB's title
    judge passes `MATCH_PARSERS`)."""
    stats = JudgeStats(judge.backend, judge.model, prompt.version, reason=judge.unavailable)
    if judge.unavailable:
        stats.requests = stats.unjudged = len(requests)
        return [None] * len(requests), stats
    answers = judge.answer(requests)
    parse = parsers[parser]
    verdicts: list[bool | None] = []
    for a in answers:
        v = parse(answer_text(a.text, a.reasoning)) if a.text is not None else None
        if a.text is not None and v is None:
            a.text, a.error = None, "unparseable"
        verdicts.append(v)
    stats.add(answers)
    return verdicts, stats
