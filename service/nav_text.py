"""Facets, title matches and author views for a reader: the MCP tools' text and ``openxiv facets``,
``openxiv match`` and ``openxiv author``'s output (the JSON is the use cases' models)."""

from __future__ import annotations

from openxiv.service.navigation import AuthorPapersResponse, Count, FacetsResponse, TitleMatchResponse

__all__ = ["author_text", "facets_text", "match_text"]


def _counts(counts: list[Count], limit: int) -> str:
    shown = ", ".join(f"{c.value} {c.count}" for c in counts[:limit])
    return shown + (f", ... ({len(counts) - limit} more)" if len(counts) > limit else "")


def facets_text(r: FacetsResponse, limit: int = 12) -> str:
    what = f"match {r.query!r}" if r.query else "pass the filters"
    lines = [f"{r.total_count} papers {what} ({r.note})"]
    lines.append("years: " + (_counts(r.years, limit) or "none"))
    lines.append(
        "months: "
        + (_counts(r.months[-limit:], limit) or "none")
        + (" (latest)" if len(r.months) > limit else "")
    )
    if r.undated:
        lines.append(f"undated: {r.undated}")
    lines.append("categories: " + (_counts(r.categories, limit) or "none"))
    lines.append("top authors: " + (", ".join(f"{a.name} {a.count}" for a in r.authors) or "none"))
    return "\n".join(lines) + "\n"


def match_text(r: TitleMatchResponse, limit: int = 5) -> str:
    if r.match is not None:
        head = f"Match (confidence {r.match.confidence:.2f}): {r.match.title} (arXiv {r.match.arxiv_id}, {r.match.date or 'no date'})"
    else:
        head = f"No paper of this corpus has this title (best confidence {r.confidence:.2f})"
    lines = [head]
    others = [c for c in r.candidates if r.match is None or c.arxiv_id != r.match.arxiv_id][:limit]
    lines += [f"- {c.confidence:.2f} {c.title} (arXiv {c.arxiv_id})" for c in others]
    return "\n".join(lines) + "\n"


def author_text(r: AuthorPapersResponse) -> str:
    shown = f"{r.offset + 1}-{r.offset + len(r.result)}" if r.result else "none"
    lines = [
        f"{r.total_count} papers by {r.name!r} (spelled: {'; '.join(r.spellings)}) (showing {shown}, newest first)"
    ]
    lines += [f"{p.date or '----------'}  {p.arxiv_id}  {p.title or ''}" for p in r.result]
    return "\n".join(lines) + "\n"
