"""A call's run and question: from the path prefix ``/runs/<run>/q/<question>/...`` (or
``/runs/<run>/...``), which rides in a client's base URL, or from the ``X-Openxiv-Run`` and
``X-Openxiv-Question`` headers. A bad tag is a `BadTag` (the middleware answers 400 naming it)."""

from __future__ import annotations

from dataclasses import dataclass
from urllib.parse import unquote

from openxiv.corpus.ledger.records import check_tag

__all__ = ["QUESTION_HEADER", "RUN_HEADER", "BadTag", "Tagged", "split_tags"]

RUN_HEADER = "x-openxiv-run"
QUESTION_HEADER = "x-openxiv-question"


class BadTag(ValueError):
    """A tag that is not one: the message names the part (``run`` / ``question`` / the prefix)."""


@dataclass(frozen=True)
class Tagged:
    """The tags of one call and the path it asks for without the prefix."""

    run: str | None
    question: str | None
    path: str
    prefix: str = ""


def _tag(value: str, what: str) -> str:
    try:
        return check_tag(unquote(value), what)
    except ValueError as exc:
        raise BadTag(str(exc)) from exc


def split_tags(path: str, headers: dict[str, str]) -> Tagged:
    """The tags of a request to ``path`` with (lower-case) ``headers``; a prefix wins over headers
    only where they agree (a run named twice, differently, is a `BadTag`)."""
    run = question = None
    prefix = ""
    if path == "/runs" or path.startswith("/runs/"):
        parts = path.split("/")  # "", "runs", run, ["q", question], rest...
        if len(parts) < 3 or not parts[2]:
            raise BadTag("path /runs/<run>/...: the run tag is missing")
        run = _tag(parts[2], "run")
        used = 3
        if len(parts) > 3 and parts[3] == "q":
            if len(parts) < 5 or not parts[4]:
                raise BadTag(f"path /runs/{run}/q/<question>/...: the question tag is missing")
            question = _tag(parts[4], "question")
            used = 5
        prefix = "/".join(parts[:used])
        path = "/" + "/".join(parts[used:])
    for header, what, have in ((RUN_HEADER, "run", run), (QUESTION_HEADER, "question", question)):
        given = headers.get(header)
        if given is None:
            continue
        value = _tag(given.strip(), what)
        if have is not None and have != value:
            raise BadTag(f"{what} tag: the path says {have!r}, the {header} header {value!r}")
        if what == "run":
            run = value
        else:
            question = value
    if question is not None and run is None:
        raise BadTag("question tag without a run tag: tag the run too (/runs/<run>/q/<question>/...)")
    return Tagged(run=run, question=question, path=path, prefix=prefix)
