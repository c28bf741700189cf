"""Answers read from a file for `openxiv eval grounding`: one `Answer` per report, response or line.

Accepted files (detected from the content, docs/evaluator.md «Grounding»):

* a text or markdown report (anything that is not JSON): one answer, its id the file name;
* one JSON object: an agent search response (``answer``, ``sources``) or any JSONL line shape below;
* JSONL, one answer per line: an agent search response; an AutoResearchBench inference output
  (``inference_results[].final_candidates[]``); explicit ``claims``; or a report in ``answer``,
  ``article``, ``report``, ``text`` or ``prediction``;
* an agent search stream (NDJSON lines with ``event``): one answer from its ``sources`` and
  ``answer``/``answer_delta`` events.

Anything else raises `GroundingInputError` naming the file and line.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openxiv.corpus.ids import try_canonical_id
from openxiv.evaluator.grounding.claims import Claim, claims_from_text, split_omissions

__all__ = ["Answer", "GroundingInputError", "read_answers"]

TEXT_KEYS = ("answer", "article", "report", "text", "prediction")
EXTRACTIVE = "openxiv-extractive"
"""The model an openxiv agent search names when no LLM wrote the answer (its blocks repeat the sources)."""


class GroundingInputError(ValueError):
    """A submission that cannot be read; the message names the file (and line)."""


@dataclass
class Answer:
    item_id: str
    label: str
    claims: list[Claim]
    kind: str
    """``report``, ``agent_search``, ``arb``, ``claims``."""


def read_answers(path: Path) -> list[Answer]:
    try:
        raw = path.read_bytes().decode("utf-8")
    except UnicodeDecodeError:
        raise GroundingInputError(f"{path}: not UTF-8 text") from None
    except OSError as exc:
        raise GroundingInputError(f"{path}: cannot read ({exc.strerror})") from None
    if not raw.strip():
        raise GroundingInputError(f"{path}: empty file")
    if not raw.lstrip().startswith("{"):
        return [Answer(path.name, path.name, claims_from_text(raw), "report")]
    try:
        whole = json.loads(raw)
    except json.JSONDecodeError:
        whole = None
    if isinstance(whole, dict):
        return [_answer(whole, path.stem, f"{path.name}")]
    objs = _jsonl(path, raw)
    if objs and all("event" in o for _, o in objs):
        return [_from_stream([o for _, o in objs], path.stem)]
    return [_answer(o, str(n), f"{path.name} line {n}") for n, o in objs]


def _jsonl(path: Path, raw: str) -> list[tuple[int, dict[str, Any]]]:
    out = []
    for n, line in enumerate(raw.splitlines(), 1):
        if not line.strip():
            continue
        try:
            obj = json.loads(line)
        except json.JSONDecodeError as exc:
            raise GroundingInputError(
                f"{path.name} line {n}: invalid JSON ({exc.msg} at column {exc.colno})"
            ) from None
        if not isinstance(obj, dict):
            raise GroundingInputError(
                f"{path.name} line {n}: expected a JSON object, got {type(obj).__name__}"
            )
        out.append((n, obj))
    return out


def _obj(value: Any) -> dict[str, Any]:
    return value if isinstance(value, dict) else {}


def _item_id(obj: dict[str, Any], default: str) -> str:
    for key in ("id", "qid", "question_id", "run_id"):
        if obj.get(key) not in (None, ""):
            return str(obj[key])
    return default


def _label(obj: dict[str, Any]) -> str:
    for key in ("question", "query", "prompt", "topic"):
        if isinstance(obj.get(key), str):
            return str(obj[key])
    return ""


def _answer(obj: dict[str, Any], default_id: str, where: str) -> Answer:
    if isinstance(obj.get("inference_results"), list):
        return _from_arb(obj, default_id, where)
    if isinstance(obj.get("sources"), list):
        return _from_agent_search(obj, default_id, where)
    if isinstance(obj.get("claims"), list):
        return _from_claims(obj, default_id, where)
    for key in TEXT_KEYS:
        if isinstance(obj.get(key), str):
            return Answer(_item_id(obj, default_id), _label(obj), claims_from_text(obj[key]), "report")
    raise GroundingInputError(
        f"{where}: no answer to check (expected 'sources', 'inference_results', 'claims' or a text in "
        f"one of {', '.join(TEXT_KEYS)})"
    )


def _source_claims(sources: list[Any], where: str) -> list[Claim]:
    claims = []
    for k, src in enumerate(sources):
        if not isinstance(src, dict):
            raise GroundingInputError(f"{where}: sources[{k}] is not an object")
        cid = try_canonical_id(src.get("arxiv_id"))
        evidence = _obj(src.get("evidence"))
        text = str(evidence.get("text") or "")
        for part in split_omissions(text):
            section = evidence.get("section")
            claims.append(Claim(part, [cid] if cid else [], origin="source",
                                section_hint=str(section) if section else None, meta={"source": k}))  # fmt: skip
    return claims


def _from_agent_search(obj: dict[str, Any], default_id: str, where: str) -> Answer:
    claims = _source_claims(obj["sources"], where)
    stats = _obj(obj.get("stats"))
    if isinstance(obj.get("answer"), str) and stats.get("model") != EXTRACTIVE:
        claims += claims_from_text(obj["answer"])
    cited = [s.get("arxiv_id") for s in obj["sources"] if isinstance(s, dict)]
    answer = Answer(_item_id(obj, default_id), _label(obj), claims, "agent_search")
    for c in answer.claims:
        c.meta["sources"] = [i for i in map(try_canonical_id, cited) if i]
    return answer


def _from_stream(events: list[dict[str, Any]], default_id: str) -> Answer:
    sources: list[Any] = []
    text, model, run = "", None, None
    for ev in events:
        kind = ev.get("event")
        if kind == "start":
            model, run = ev.get("model"), ev.get("run_id")
        elif kind == "sources" and isinstance(ev.get("papers"), list):
            sources = ev["papers"]
        elif kind == "answer_delta":
            text += str(ev.get("text") or "")
        elif kind == "answer":
            text = str(ev.get("text") or ev.get("answer") or "")
    obj = {"id": run or default_id, "sources": sources, "answer": text, "stats": {"model": model}}
    return _from_agent_search(obj, default_id, "stream")


def _from_arb(obj: dict[str, Any], default_id: str, where: str) -> Answer:
    data = _obj(obj.get("input_data"))
    claims: list[Claim] = []
    seen: set[tuple[str, str]] = set()
    for res in obj["inference_results"]:
        cands = res.get("final_candidates") if isinstance(res, dict) else None
        for cand in cands if isinstance(cands, list) else []:
            if not isinstance(cand, dict):
                raise GroundingInputError(f"{where}: a final candidate is not an object")
            cid = try_canonical_id(cand.get("arxiv_id"))
            for part in split_omissions(str(cand.get("retrieval_evidence") or "")):
                if (cid or "", part) not in seen:
                    seen.add((cid or "", part))
                    claims.append(Claim(part, [cid] if cid else [], origin="candidate"))
    return Answer(_item_id(data, default_id), _label(data), claims, "arb")


def _from_claims(obj: dict[str, Any], default_id: str, where: str) -> Answer:
    claims = []
    for k, c in enumerate(obj["claims"]):
        if not isinstance(c, dict) or not isinstance(c.get("quote", c.get("text")), str):
            raise GroundingInputError(f"{where}: claims[{k}] needs a 'quote' string")
        raw = c.get("arxiv_id", c.get("cited", []))
        ids = raw if isinstance(raw, list) else [raw]
        canonical = [i for i in (try_canonical_id(x) for x in ids) if i]
        if len(canonical) != len(ids):
            raise GroundingInputError(
                f"{where}: claims[{k}] cites something that is not an arXiv id: {raw!r}"
            )
        quoted = "quote" in c
        expected = c.get("expected")
        claims.append(Claim(str(c.get("quote", c.get("text"))), canonical, quoted=quoted, origin="claim",
                            expected=str(expected) if expected else None))  # fmt: skip
    return Answer(_item_id(obj, default_id), _label(obj), claims, "claims")
