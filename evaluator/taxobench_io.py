"""Reading TaxoBench inputs: the gold surveys (``id``, ``gt`` tree) and the predictions (``id``,
``hierarchy_tree`` or ``tree``, optional ``retrieved_papers``), checked line by line; the scoring is in
`openxiv.evaluator.taxobench`. See ``docs/taxobench.md``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from openxiv.evaluator.io import EvalInputError, iter_jsonl
from openxiv.evaluator.trees import TaxoNode, TreeError, parse_tree

__all__ = ["GoldSurvey", "PredSurvey", "TaxoBenchInputError", "load_gold", "load_predictions"]


class TaxoBenchInputError(EvalInputError):
    """A gold or prediction file that cannot be read; the message names the file and line."""


@dataclass
class GoldSurvey:
    id: Any
    tree: TaxoNode
    label: str = ""
    line: int = 0


@dataclass
class PredSurvey:
    id: Any
    tree: TaxoNode | None
    retrieved: list[str] | None = None
    line: int = 0
    error: str | None = None  # why the prediction is unusable (scored like a missing one)


def _where(path: Path, line: int) -> str:
    return f"{path.name} line {line}"


def _key(value: Any) -> str:
    return str(value).strip()


def load_gold(path: str | Path) -> dict[str, GoldSurvey]:
    """Gold surveys by ``str(id)``; any malformed line raises :class:`TaxoBenchInputError`."""
    path = Path(path)
    out: dict[str, GoldSurvey] = {}
    for n, obj in iter_jsonl(path):
        if obj.get("id") is None:
            raise TaxoBenchInputError(f'{_where(path, n)}: gold line has no "id"')
        if "gt" not in obj:
            raise TaxoBenchInputError(f'{_where(path, n)}: gold survey {obj["id"]!r} has no "gt" tree')
        key = _key(obj["id"])
        if key in out:
            raise TaxoBenchInputError(
                f"{_where(path, n)}: duplicate gold id {obj['id']!r} (first on line {out[key].line})"
            )
        try:
            tree = parse_tree(obj["gt"], line=n, path="$.gt")
        except TreeError as exc:
            raise TaxoBenchInputError(f"{path.name} {exc}") from None
        label = obj.get("survey_topic") or obj.get("survey") or tree.name
        out[key] = GoldSurvey(id=obj["id"], tree=tree, label=str(label), line=n)
    if not out:
        raise TaxoBenchInputError(f"{path.name}: no gold surveys")
    return out


def _parse_prediction(obj: dict[str, Any], n: int) -> tuple[TaxoNode | None, list[str] | None, str | None]:
    field_name = "hierarchy_tree" if obj.get("hierarchy_tree") is not None else "tree"
    raw = obj.get(field_name)
    if raw is None:
        return None, None, 'no "hierarchy_tree" (or "tree")'
    if isinstance(raw, str):  # a tree serialised as a JSON string
        try:
            raw = json.loads(raw)
        except json.JSONDecodeError as exc:
            return None, None, f"line {n}: $.{field_name} is a string that is not JSON ({exc.msg})"
    try:
        tree = parse_tree(raw, line=n, path=f"$.{field_name}")
    except TreeError as exc:
        return None, None, str(exc)
    retrieved = obj.get("retrieved_papers")
    if retrieved is not None:
        if not isinstance(retrieved, list):
            return None, None, f"line {n}: $.retrieved_papers must be a list"
        titles: list[str] = []
        for k, item in enumerate(retrieved):
            if isinstance(item, dict) and isinstance(item.get("title"), str):
                item = item["title"]
            if not isinstance(item, str):
                return None, None, f"line {n}: $.retrieved_papers[{k}] must be a title string"
            if item.strip():
                titles.append(item)
        # Empty list = absent, as in the public scorer: the tree's papers are then the retrieved list.
        retrieved = titles or None
    return tree, retrieved, None


def load_predictions(path: str | Path) -> dict[str, PredSurvey]:
    """Predictions by ``str(id)``. Bad JSON, a missing ``id`` or a duplicate id raise
    :class:`TaxoBenchInputError`; an unusable tree is kept as a :class:`PredSurvey` with ``error`` set
    (that survey is scored as missing and the error is reported with it)."""
    path = Path(path)
    out: dict[str, PredSurvey] = {}
    for n, obj in iter_jsonl(path):
        if obj.get("id") is None:
            raise TaxoBenchInputError(f'{_where(path, n)}: prediction line has no "id"')
        key = _key(obj["id"])
        if key in out:
            raise TaxoBenchInputError(
                f"{_where(path, n)}: duplicate prediction id {obj['id']!r} (first on line {out[key].line})"
            )
        tree, retrieved, error = _parse_prediction(obj, n)
        out[key] = PredSurvey(id=obj["id"], tree=tree, retrieved=retrieved, line=n, error=error)
    return out
