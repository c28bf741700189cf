"""Per-question date ceilings (``--cutoffs FILE``): what a tagged question may see.

The file is either one JSON object ``{"<question id>": "YYYY-MM-DD", ...}`` or JSON lines, each an
item with an id (``qid`` or ``id``; else its 1-based line number, as ``openxiv eval`` numbers a gold
file's items) and a date (``cutoff``, ``date``, ``as_of``, ``date_to`` or ``published``): a gold file
whose items carry their own dates is a cutoffs file as it is. A date may be ``YYYY``, ``YYYY-MM``
(the ceiling is then the period's last day) or ``YYYY-MM-DD``. An item without a date has no
ceiling; a bad date or a repeated id is a `BadCutoffs` naming the line.
"""

from __future__ import annotations

import calendar
import json
from datetime import date
from pathlib import Path
from typing import Any

__all__ = ["DATE_KEYS", "BadCutoffs", "ceiling_of", "read_cutoffs"]

DATE_KEYS = ("cutoff", "date", "as_of", "date_to", "published")
ID_KEYS = ("qid", "id")


class BadCutoffs(ValueError):
    """A cutoffs file that cannot be read; the message names the file and the line."""


def ceiling_of(value: object, where: str) -> date:
    """The last day ``value`` (``YYYY``, ``YYYY-MM``, ``YYYY-MM-DD``) covers."""
    text = str(value).strip()
    try:
        parts = [int(p) for p in text.split("-")]
        if len(parts) == 1:
            return date(parts[0], 12, 31)
        if len(parts) == 2:
            return date(parts[0], parts[1], calendar.monthrange(parts[0], parts[1])[1])
        if len(parts) == 3:
            return date(parts[0], parts[1], parts[2])
    except ValueError:
        pass
    raise BadCutoffs(f"cutoffs: {where}: {text!r} is not a date (YYYY, YYYY-MM or YYYY-MM-DD)")


def _item_date(item: dict[str, Any]) -> object | None:
    for key in DATE_KEYS:
        if item.get(key) not in (None, ""):
            return item[key]
    return None


def read_cutoffs(path: Path) -> dict[str, date]:
    """Question id → ceiling, from a cutoffs or gold file."""
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise BadCutoffs(f"cutoffs: cannot read {path}: {exc.strerror or exc}") from exc
    try:
        whole = json.loads(text)
    except ValueError:
        whole = None
    if isinstance(whole, dict):
        return {str(k): ceiling_of(v, f"{path}: {k}") for k, v in whole.items()}
    out: dict[str, date] = {}
    for n, line in enumerate(text.splitlines(), 1):
        if not line.strip():
            continue
        where = f"{path}:{n}"
        try:
            item = json.loads(line)
        except ValueError as exc:
            raise BadCutoffs(f"cutoffs: {where}: not JSON ({exc})") from exc
        if not isinstance(item, dict):
            raise BadCutoffs(f"cutoffs: {where}: expected a JSON object per line")
        qid = next((item[k] for k in ID_KEYS if item.get(k) not in (None, "")), n)
        value = _item_date(item)
        if value is None:
            continue
        if str(qid) in out:
            raise BadCutoffs(f"cutoffs: {where}: question {qid!r} is listed twice")
        out[str(qid)] = ceiling_of(value, where)
    if not out:
        raise BadCutoffs(f"cutoffs: {path} names no question with a date ({', '.join(DATE_KEYS)})")
    return out
