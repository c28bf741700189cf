"""``pattern.sub`` over a long text, run only on the lines where a match can be.

The PDF reader scans a whole document's text (two megabytes for a long paper) with patterns that
match rarely: e-mail addresses and URLs (`author_block.lowercase_words`), words split at a line-end
hyphen (`pdf_text.vocabulary`). Python's regex engine tries every alternative of such a pattern at
every character. When every match holds a *mark* that a cheap pattern finds (an ``@``, a ``-`` before
a line break), and no match crosses a line break other than from its mark's line to a line the caller
names, then substituting on those lines alone gives the same text, for a fraction of the scan.
"""

from __future__ import annotations

import re
from collections.abc import Callable

__all__ = ["sub_marked_lines"]


def sub_marked_lines(
    pattern: re.Pattern[str],
    repl: str,
    text: str,
    marks: re.Pattern[str],
    reach: Callable[[re.Match[str]], int],
) -> str:
    """``pattern.sub(repl, text)``, computed only on the lines around ``marks``.

    The caller guarantees that every match of ``pattern`` starts on the line of some mark (a match
    of ``marks``) and ends on or before the line holding the position ``reach(mark)``, and that
    ``pattern`` gives the same matches on a line whether the text before it starts at a line break or
    at the start of the string (no look-behind past a line break). Each run of lines from a mark to
    its reach, merged where runs meet, is substituted on its own; the lines between are copied.
    """
    out: list[str] = []
    done = 0  # text[:done] is in out
    start = end = -1  # the run of lines [start, end) still to substitute
    for m in marks.finditer(text):
        p = m.start()
        if p >= end:
            if start >= 0:
                out.append(pattern.sub(repl, text[start:end]))
                done = end
            start = text.rfind("\n", 0, p) + 1
            out.append(text[done:start])
        line_end = text.find("\n", reach(m))
        end = max(end, len(text) if line_end < 0 else line_end)
    if start >= 0:
        out.append(pattern.sub(repl, text[start:end]))
        done = end
    out.append(text[done:])
    return "".join(out)
