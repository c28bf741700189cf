"""Parsers of judge answers: strict (default) and ``upstream`` (the benchmark's own, quirks included).

Both read the answer's content, or, when a reasoning model left the content empty, the last 5
lines of its reasoning text (as FINDER's judge does).

* `yes_no_strict`: the **last** of the words yes/no/true/false (or 是/否) in the text decides;
  an answer with none of them is unparseable (``None``: not judged, counted in coverage).
* `yes_no_upstream`: FINDER's checklist rule: ``met = ('yes' in a or 'true' in a) and not ('no' in a
  or 'false' in a)`` on the lowercased text, substrings included, so "Yes, nothing is missing" has a
  "no" (in "nothing") and is **not met**. It never fails to parse.
* `is_match_strict`: AutoResearchBench's title judge answers JSON ``{"is_match": true|false}``; the
  last JSON object in the text (code fences allowed) whose ``is_match`` is a boolean decides; an
  answer without one is unparseable.
* `is_match_upstream`: the deep scorer's own rule: the whole answer parsed as JSON, ``is_match``
  read from it (absent: no match); when the text is not JSON, any ``true`` in the lowercased text
  is a match ("not true" included). It never fails to parse.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable

__all__ = [
    "MATCH_PARSERS",
    "PARSERS",
    "answer_text",
    "is_match_strict",
    "is_match_upstream",
    "yes_no_strict",
    "yes_no_upstream",
]

_WORD = re.compile(r"[a-z]+|是|否")
_YES = {"yes": True, "true": True, "是": True, "no": False, "false": False, "否": False}


def answer_text(text: str | None, reasoning: str | None) -> str:
    if text and text.strip():
        return text
    lines = [ln for ln in (reasoning or "").splitlines() if ln.strip()]
    return "\n".join(lines[-5:])


def yes_no_strict(text: str) -> bool | None:
    for word in reversed(_WORD.findall(text.lower())):
        if word in _YES:
            return _YES[word]
    return None


def yes_no_upstream(text: str) -> bool | None:
    a = text.lower()
    pos = "yes" in a or "true" in a
    neg = "no" in a or "false" in a
    return pos and not neg


PARSERS: dict[str, Callable[[str], bool | None]] = {"strict": yes_no_strict, "upstream": yes_no_upstream}


_OBJECT = re.compile(r"\{[^{}]*\}")


def is_match_strict(text: str) -> bool | None:
    for raw in reversed(_OBJECT.findall(text)):
        try:
            obj = json.loads(raw)
        except ValueError:
            continue
        if isinstance(obj, dict) and isinstance(obj.get("is_match"), bool):
            return bool(obj["is_match"])
    return None


def is_match_upstream(text: str) -> bool | None:
    try:
        obj = json.loads(text)
    except ValueError:
        return "true" in text.lower()
    return bool(obj.get("is_match", False)) if isinstance(obj, dict) else "true" in text.lower()


MATCH_PARSERS: dict[str, Callable[[str], bool | None]] = {
    "strict": is_match_strict,
    "upstream": is_match_upstream,
}
