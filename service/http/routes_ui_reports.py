"""Evaluation reports on the web page: ``/ui/reports`` lists the HTML reports of
``Settings.reports_root`` (``OPENXIV_REPORTS_DIR``), ``/ui/reports/{name}`` serves one.

Only what the listing shows can be served: a name must look like a plain file name
(`REPORT_NAME`) *and* be one of the ``*.html`` files directly inside the folder whose real path is
inside it (a symlink out of the folder is not listed), so ``..``, encoded slashes, absolute paths
and other files cannot be reached. A report is the evaluator's self-contained page; it is served in
a CSP sandbox (its own inline style and row filter script run, but it gets an opaque origin: no
cookie, no request to this server on the reader's behalf).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from fastapi import APIRouter, Request, Response
from fastapi.responses import HTMLResponse

from openxiv.service.http.helpers import settings_of
from openxiv.service.http.ui_render import render

__all__ = ["REPORT_NAME", "Report", "list_reports", "router"]

router = APIRouter(include_in_schema=False)

REPORT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,200}\.html?$")
REPORT_HEADERS = {
    "Content-Security-Policy": (
        "sandbox allow-scripts; default-src 'none'; img-src data:; style-src 'unsafe-inline'; "
        "script-src 'unsafe-inline'"
    ),
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
}


@dataclass(frozen=True)
class Report:
    name: str
    path: Path
    size: int
    modified: datetime


def list_reports(folder: Path) -> list[Report]:
    """The reports directly inside ``folder``, newest first (none when it does not exist)."""
    if not folder.is_dir():
        return []
    root = folder.resolve()
    out = []
    for path in folder.iterdir():
        if not REPORT_NAME.match(path.name) or not path.is_file() or path.resolve().parent != root:
            continue
        st = path.stat()
        out.append(Report(path.name, path, st.st_size, datetime.fromtimestamp(st.st_mtime, UTC)))
    return sorted(out, key=lambda r: (r.modified, r.name), reverse=True)


@router.get("/ui/reports", response_class=HTMLResponse)
def ui_reports(request: Request) -> HTMLResponse:
    folder = settings_of(request).reports_root
    return render(request, "reports.html", reports=list_reports(folder), exists=folder.is_dir())


@router.get("/ui/reports/{name}", response_model=None)
def ui_report(name: str, request: Request) -> Response:
    found = (
        {r.name: r for r in list_reports(settings_of(request).reports_root)}
        if REPORT_NAME.match(name)
        else {}
    )
    report = found.get(name)
    if report is None:
        return render(
            request,
            "error.html",
            status=404,
            error=f"no report named {name!r}; see the list",
            title="Reports",
        )
    return Response(report.path.read_bytes(), media_type="text/html; charset=utf-8", headers=REPORT_HEADERS)
