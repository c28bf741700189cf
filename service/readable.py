"""Plain-text renderings of the service's response models, for a language model (MCP tool results)
and for a person at a terminal (``openxiv search``/``openxiv paper``).

The layout follows DeepXiv's own MCP tools (title line, ``arXiv ID:``, ``Published:``, sections
with token counts, ``=== section (Paper: id) ===``), so prompts written against those read these
the same way; values the corpus does not hold (citations, keywords) are left out rather than shown
as zero.
"""

from __future__ import annotations

from openxiv.service.models import (
    Author,
    BriefResponse,
    HeadResponse,
    Hit,
    PreviewResponse,
    RawResponse,
    SearchResponse,
    SectionResponse,
)
from openxiv.service.text import section_label
from openxiv.service.tool_models import FindResponse

__all__ = [
    "brief_text",
    "find_text",
    "head_text",
    "hit_lines",
    "preview_text",
    "raw_text",
    "search_text",
    "section_text",
]

MAX_AUTHORS = 5
DERIVED_MARK = "[derived title]"
"""After a title no source of the paper gave (``title_source: derived``: its first real sentence)."""
ABSTRACT_CHARS = 400


def _authors(authors: list[Author], limit: int = MAX_AUTHORS) -> str:
    names = [a.name for a in authors]
    if len(names) > limit:
        return ", ".join(names[:limit]) + f" (+{len(names) - limit} more)"
    return ", ".join(names) or "unknown"


def _papers(n: int) -> str:
    return f"{n} paper" if n == 1 else f"{n} papers"


def _cut(text: str | None, limit: int) -> str:
    text = " ".join((text or "").split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _title(title: str | None, source: str) -> str:
    """A served title, marked when it was derived (no source of the paper gave one)."""
    return f"{title} {DERIVED_MARK}" if source == "derived" else title or "(untitled)"


def hit_lines(rank: int, hit: Hit) -> list[str]:
    """One search hit: title, id/date/categories, authors, tldr and the evidence passage."""
    lines = [
        f"{rank}. {_title(hit.title, hit.title_source)}",
        f"   arXiv ID: {hit.arxiv_id} | Published: {hit.date or 'unknown'} | "
        f"Categories: {', '.join(hit.categories) or 'none'} | Score: {hit.score:.4f}",
        f"   Authors: {_authors(hit.authors)}",
    ]
    if hit.tldr:
        lines.append(f"   TLDR: {_cut(hit.tldr, ABSTRACT_CHARS)}")
    for c in hit.contents or []:
        passage = _cut(" ".join(c.section_contents), ABSTRACT_CHARS)
        if passage and passage != _cut(hit.tldr, ABSTRACT_CHARS):
            lines.append(f"   Evidence ({c.section_title or 'text'}): {passage}")
    return lines


def search_text(response: SearchResponse, query: str, offset: int = 0) -> str:
    """The page of hits, numbered from ``offset + 1``, under a line saying how many papers match."""
    hits = response.result
    total = response.total_count
    if not hits:
        if total and offset:
            return f"No papers on this page: '{query}' matches {_papers(total)} and offset {offset} is past the end.\n"
        return f"No papers found for '{query}'. Try other keywords or fewer filters.\n"
    first, last = offset + 1, offset + len(hits)
    out = [f"Found {_papers(total)} for '{query}' (showing {first}-{last}):", ""]
    for i, hit in enumerate(hits, start=first):
        out.extend(hit_lines(i, hit))
        out.append("")
    for w in response.warnings or []:
        out.append(f"Note: {w}")
    return "\n".join(out).rstrip() + "\n"


def head_text(head: HeadResponse) -> str:
    """Title, authors, categories, date, size, abstract and the section list with token counts."""
    out = [
        f"Paper: {head.arxiv_id}",
        f"Title: {_title(head.title, head.title_source)}",
        f"Authors ({len(head.authors)}): {_authors(head.authors, 20)}",
        f"Categories: {', '.join(head.categories) or 'none'}"
        + (f" | Subject classes: {', '.join(head.subject_classes)}" if head.subject_classes else ""),
        f"Published: {head.publish_at or 'unknown'}",
        f"Total tokens: {head.token_count}",
        f"URL: {head.url}",
        "",
        "Abstract:",
        (head.abstract or "(no abstract in this corpus)").strip(),
        "",
    ]
    if all(s.idx < 0 for s in head.sections):  # at most the abstract, listed as a section
        listed = "; its abstract reads as section Abstract" if head.sections else ""
        out.append(f"Sections: none (this corpus holds no full text for this paper){listed}.")
    else:
        out.append(f"Sections ({len(head.sections)}; read one with its number, name or idx:N):")
        for s in head.sections:
            label = section_label(s.number, s.name)
            out.append(f"  [{s.idx}] {label} ({s.token_count} tokens)")
            if s.tldr:
                out.append(f"      {_cut(s.tldr, 200)}")
    return "\n".join(out) + "\n"


def brief_text(brief: BriefResponse) -> str:
    out = [
        f"Paper: {brief.arxiv_id}",
        f"Title: {_title(brief.title, brief.title_source)}",
        f"Authors: {_authors(brief.authors)}",
        f"Published: {brief.publish_at or 'unknown'}",
        f"PDF: {brief.src_url}",
    ]
    if brief.tldr:
        out += ["", f"TLDR: {brief.tldr}"]
    return "\n".join(out) + "\n"


def section_text(section: SectionResponse) -> str:
    """The section under a header naming it as the paper prints it (``3.2 Name``, ``section 3.2``);
    a section the paper does not number shows its 0-based position (``idx 13``)."""
    where = f"section {section.number}" if section.number else f"idx {section.idx}"
    head = section_label(section.number, section.name)
    return f"=== {head} (Paper: {section.arxiv_id}, {where}) ===\n\n{section.content.strip()}\n"


def raw_text(raw: RawResponse) -> str:
    return raw.raw


def preview_text(preview: PreviewResponse) -> str:
    text = preview.content
    if preview.is_truncated:
        text += f"\n\n[Preview truncated. Total paper size: {preview.total_characters} characters]"
    return text


def find_text(found: FindResponse) -> str:
    """The best passages of one paper for a query, each under its section, query words marked."""
    where = "full-text passages" if found.source == "fulltext" else "abstract sentences (no full text here)"
    head = f"'{found.query}' in {found.arxiv_id} ({found.title or 'untitled'}): searched {found.searched} {where}"
    if not found.result:
        return f"{head}; none holds a query word.\n"
    out = [f"{head}; {found.total_count} hold a query word, best {len(found.result)}:", ""]
    for hit in found.result:
        out.append(f"{hit.rank}. [{hit.section or 'text'}] (score {hit.score:.2f})")
        out.append(" ".join(hit.text.split()))
        out.append("")
    return "\n".join(out).rstrip() + "\n"
