"""The ranking-mode vocabulary: the names a search's ``mode`` and the ``fusion`` setting accept.

It sits with the settings so `Settings` can check ``fusion`` without importing the engine; the engine
(`openxiv.indexer.engine.ranking`) runs these modes and the service turns `UnknownMode` into a 400.
"""

from __future__ import annotations

__all__ = [
    "FAMILIES",
    "FUSION_METHODS",
    "MODES",
    "MODE_ALIASES",
    "SIDES",
    "ModeUnavailable",
    "UnknownMode",
    "mode_help",
    "parse_mode",
]


FUSION_METHODS = ("rrf", "weighted", "zscore")
"""Ways to fuse the two families into one list (`openxiv.indexer.engine.fusion`)."""
SIDES = ("bm25_papers", "bm25_passages", "dense_papers", "dense_passages")
"""Candidate lists one snapshot can hold; a mode naming one side runs it alone (diagnostics)."""
FAMILIES = {"bm25": ("bm25_papers", "bm25_passages"), "dense": ("dense_papers", "dense_passages")}
"""Sides sharing a score scale (merged by max); a mode naming a family runs that family alone."""
MODES = (*FUSION_METHODS, *FAMILIES, *SIDES)
"""Every canonical ranking mode the engine runs."""
MODE_ALIASES: dict[str, str | None] = {"hybrid": None, "vector": "dense"}
"""Other accepted spellings: ``hybrid`` is the configured default (``None``), ``vector`` is ``dense``."""


class UnknownMode(ValueError):
    """A ranking mode outside the vocabulary (`MODES` and `MODE_ALIASES`)."""


class ModeUnavailable(UnknownMode):
    """A known mode that needs a side this snapshot lacks (``dense`` on an ``--embed none`` build)."""


def parse_mode(text: str | None) -> str | None:
    """The canonical mode for ``text`` (case and surrounding space ignored); ``None`` (blank or
    ``hybrid``) means the configured default. Anything else raises `UnknownMode`."""
    if text is None or not text.strip():
        return None
    key = text.strip().lower()
    if key in MODE_ALIASES:
        return MODE_ALIASES[key]
    if key in MODES:
        return key
    raise UnknownMode(f"unknown mode {text!r}: expected one of {', '.join(sorted((*MODES, *MODE_ALIASES)))}")


def mode_help(default: str = "the configured default, OPENXIV_FUSION") -> str:
    """One line naming every mode, for API and CLI descriptions (generated, so it cannot drift)."""
    return (
        f"Ranking: hybrid ({default}); fusion {', '.join(FUSION_METHODS)}; one family "
        f"{', '.join(FAMILIES)} (vector = dense); one side {', '.join(SIDES)}."
    )
