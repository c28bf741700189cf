"""Optional dependencies: what a missing one says.

The core install serves and evaluates; heavier parts are extras (pyproject.toml): ``torch`` (build
with a sentence-transformers encoder, export the ONNX encoder, TaxoBench's MiniLM label similarity),
``pdf`` (the PDF reader), ``bench`` (the benchmark scripts). Code that needs one imports it where it
is used and turns the ImportError into `MissingExtra`, whose message says what to install.
"""

from __future__ import annotations

__all__ = ["MissingExtra", "missing_extra"]


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
