"""Reader for unarXive JSON lines (one paper per line).

Keys used: ``paper_id``, ``metadata`` (the OAI snapshot schema, read as in `readers.oai`),
``abstract`` (``{"section", "text", ...}`` or a string), ``body_text`` (paragraphs with
``section`` and ``sec_number``). Consecutive paragraphs with the same ``(sec_number, section)``
form one section; ``{{formula:…}}``, ``{{cite:…}}``, ``{{figure:…}}`` and ``{{table:…}}`` markers
become ``[formula]``, ``[cite]``, ``[figure]``, ``[table]``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from openxiv.corpus.readers._jsonl import iter_json_lines, parse_id, str_or_none
from openxiv.corpus.readers.oai import parse_oai
from openxiv.corpus.records import PaperRecord, ReadError, SectionRecord
from openxiv.corpus.titles import normalize_whitespace

__all__ = ["FORMAT", "UNTITLED", "clean_markers", "parse_unarxive", "read_unarxive"]

FORMAT = "unarxive"
UNTITLED = "Body"
"""Name given to text that stands under no heading."""

_MARKER = re.compile(r"\{\{(formula|cite|figure|table|ref)(?::[^}]*)?\}\}")


def clean_markers(text: str) -> str:
    """``{{formula:uuid}}`` -> ``[formula]`` (same for cite, figure, table)."""
    return _MARKER.sub(lambda m: f"[{m.group(1)}]", text)


def _abstract(obj: dict[str, Any], meta: PaperRecord) -> str | None:
    raw = obj.get("abstract")
    if isinstance(raw, dict):
        raw = raw.get("text")
    text = normalize_whitespace(clean_markers(raw)) if isinstance(raw, str) else None
    return text or meta.abstract


def _sections(body: object) -> list[SectionRecord]:
    if not isinstance(body, list):
        return []
    sections: list[SectionRecord] = []
    key: tuple[str, str] | None = None
    paragraphs: list[str] = []

    def close() -> None:
        if key is not None and paragraphs:
            number, name = key
            sections.append(
                SectionRecord(name=name or UNTITLED, text="\n\n".join(paragraphs), number=number or None)
            )

    for para in body:
        if not isinstance(para, dict):
            continue
        text = para.get("text")
        if not isinstance(text, str) or not text.strip():
            continue
        name = normalize_whitespace(clean_markers(str(para.get("section") or ""))) or ""
        number = str(para.get("sec_number") or "").strip()
        if (number, name) != key:
            close()
            key, paragraphs = (number, name), []
        paragraphs.append(" ".join(clean_markers(text).split()))
    close()
    return sections


def parse_unarxive(obj: dict[str, Any], source: str) -> PaperRecord:
    meta_obj = obj.get("metadata")
    if not isinstance(meta_obj, dict):
        meta_obj = {}
    meta_obj = dict(meta_obj)
    if not meta_obj.get("id"):
        meta_obj["id"] = obj.get("paper_id")
    parse_id(meta_obj.get("id"))  # a bad id is reported before anything else
    title_missing = not str_or_none(meta_obj.get("title"))
    sections = _sections(obj.get("body_text"))
    if title_missing:
        if not sections:
            raise ValueError("missing title and text")
        meta_obj["title"] = "untitled"
    rec = parse_oai(meta_obj, source)
    if title_missing:
        rec.title = None
    rec.abstract = _abstract(obj, rec)
    rec.sections = sections
    return rec


def read_unarxive(path: str | Path) -> Iterator[PaperRecord | ReadError]:
    path = Path(path)
    for item in iter_json_lines(path):
        if isinstance(item, ReadError):
            yield item
            continue
        lineno, obj = item
        try:
            yield parse_unarxive(obj, f"{FORMAT}:{path.name}:{lineno}")
        except ValueError as exc:
            yield ReadError(path.name, f"line {lineno}", str(exc))
