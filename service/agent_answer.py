"""The agent search's answer text: the source list (no LLM) or the messages an LLM answers from.

`source_list` is the answer when no LLM is configured: a header line saying how many papers match,
then one block per source (title, arXiv id, date, the passage that matched and its section), as
markdown; blocks are added while they fit ``max_answer_tokens`` (openxiv's estimate: words × 1.3),
and the answer says how many sources it left out. Every block names its arXiv id, so a client that
shows only the sources an answer cites (``deepxiv ask``) shows them all.

`llm_messages` is the chat an OpenAI-compatible model answers: a short system rule (answer from the
numbered sources only, cite ``[arXiv:ID]``, say so when they do not answer) and the question with the
sources' titles, dates, evidence passages and tldrs.
"""

from __future__ import annotations

from openxiv.service.models import Hit
from openxiv.service.text import token_count

__all__ = ["EXTRACTIVE", "llm_messages", "source_list"]

EXTRACTIVE = "openxiv-extractive"
"""The ``model`` a ``start`` event names when no LLM writes the answer."""
EVIDENCE_CHARS = 700

SYSTEM = """You answer a research question from numbered arXiv sources found by a search engine.
Use only the sources. Cite every claim with the source's id as [arXiv:ID]. Be short: a few sentences,
or a short list when the question asks for several papers. If the sources do not answer the
question, say so and name the closest sources."""


def _evidence(hit: Hit) -> tuple[str, str]:
    """The passage that matched and its section (the tldr when the hit has no passage)."""
    if hit.contents and hit.contents[0].section_contents:
        c = hit.contents[0]
        return " ".join(c.section_contents[0].split()), c.section_title or "text"
    return " ".join((hit.tldr or "").split()), "TLDR"


def _cut(text: str, limit: int = EVIDENCE_CHARS) -> str:
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _block(rank: int, hit: Hit) -> str:
    text, section = _evidence(hit)
    head = f"{rank}. **{hit.title or '(untitled)'}** (arXiv:{hit.arxiv_id}, {hit.date or 'date unknown'})"
    return f"{head}\n   > {_cut(text)} ({section})\n" if text else f"{head}\n"


def _papers(n: int) -> str:
    return f"{n} paper" if n == 1 else f"{n} papers"


def source_list(query: str, hits: list[Hit], total: int, max_tokens: int) -> tuple[list[str], bool]:
    """The answer's pieces (a header, then one block per source) and whether sources were left out
    to stay within ``max_tokens``."""
    if not hits:
        return [f"No papers in this corpus match '{query}'. Try other words or a broader question.\n"], False
    header = (
        f"No LLM is configured on this server, so this answer lists the sources: {_papers(total)} match "
        f"'{query}'; the best {len(hits)}, each with the passage that matched:\n\n"
    )
    pieces, used = [header], token_count(header)
    for rank, hit in enumerate(hits, start=1):
        block = _block(rank, hit) + "\n"
        cost = token_count(block)
        if used + cost > max_tokens:
            left = len(hits) - rank + 1
            pieces.append(f"({left} more sources left out to stay within max_answer_tokens={max_tokens}.)\n")
            return pieces, True
        pieces.append(block)
        used += cost
    return pieces, False


def llm_messages(query: str, hits: list[Hit], language: str | None) -> list[dict[str, str]]:
    """The chat an OpenAI-compatible model answers the question from."""
    lines = [f"Question: {query}", "", "Sources:"]
    for rank, hit in enumerate(hits, start=1):
        text, section = _evidence(hit)
        lines.append(f"[{rank}] arXiv:{hit.arxiv_id} | {hit.title or '(untitled)'} | {hit.date or 'undated'}")
        if text:
            lines.append(f"    {section}: {_cut(text)}")
        if hit.tldr and hit.tldr != text:
            lines.append(f"    TLDR: {_cut(hit.tldr, 400)}")
    if not hits:
        lines.append("(the search found no paper)")
    system = SYSTEM + (f"\nAnswer in {language}." if language else "")
    return [{"role": "system", "content": system}, {"role": "user", "content": "\n".join(lines)}]
