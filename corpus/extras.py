"""Optional dependencies: what a missing one says.

The core install serves and evaluates; heavier parts are extras (pyproject.toml): ``torch`` (build
with a sentence-transformers encoder, export the ONNX encoder, TaxoBench's MiniLM label similarity),
``pdf`` (the PDF reader), ``bench`` (the benchmark scripts). Code that needs one imports it where it
is used and turns the ImportError into `MissingExtra`, whose message says what to install.
"""

from __future__ import annotations

import sys
from typing import Any

__all__ = ["MissingExtra", "import_pymupdf", "missing_extra"]


class MissingExtra(ImportError):
    """An optional dependency is not installed; the message names the extra that brings it."""


def missing_extra(extra: str, purpose: str, exc: ImportError) -> MissingExtra:
    """The error to raise from ``exc`` when ``purpose`` needs the extra ``extra``."""
    missing = exc.name or str(exc)
    return MissingExtra(
        f"{purpose} needs the optional dependency {missing!r}, which is not installed: "
        f"pip install 'openxiv[{extra}]'",
        name=exc.name,
    )


def import_pymupdf() -> Any:
    """``import pymupdf`` without the layout analysis PyMuPDF 2 imports with it when it can
    (``pymupdf.layout``: ONNX models that cost CPU and memory in every process, docs/pdf.md, and
    that `read_pdf` never uses). The module is blocked only during that first import, so code that
    asks for ``pymupdf.layout`` itself later still gets it."""
    if "pymupdf" in sys.modules:
        return sys.modules["pymupdf"]
    blocked = "pymupdf.layout" not in sys.modules
    if blocked:
        sys.modules["pymupdf.layout"] = None  # type: ignore[assignment]  # import raises ImportError
    try:
        import pymupdf
    finally:
        if blocked and sys.modules.get("pymupdf.layout", 0) is None:
            del sys.modules["pymupdf.layout"]
    return pymupdf
