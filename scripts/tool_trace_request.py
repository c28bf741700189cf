"""Which product files one ``POST /search`` crosses, in order, and whether it ever climbs a layer.

Serves an index in-process (FastAPI's TestClient over `create_app`), answers one warm-up request
(a different query, so first-use imports and caches are paid before), then profiles one request
with ``sys.setprofile``/``threading.setprofile`` (the handler runs on a worker thread) and prints:

- the distinct product files executed (under ``corpus/``, ``indexer/``, ``service/``,
  ``evaluator/``), in the order first entered, each with its functions in the order first called;
- every *upward crossing*: a call into a higher layer from the nearest product frame below it
  (corpus < indexer < service; evaluator sits beside indexer), e.g. service -> indexer -> service;
- every *upward import* of the files crossed: an ``import openxiv.<part>`` (at the top or inside a
  function) of a higher layer, the static side of the same rule.

    OPENXIV_DATA_DIR=data .venv/bin/python scripts/tool_trace_request.py data/index
    .venv/bin/python scripts/tool_trace_request.py data/index --body '{"query": ["a", "b"], "top_k": 5}'

Exits 1 when an upward crossing or import is seen. Works on any checkout of the project (it finds the app
where this tree keeps it).
"""

from __future__ import annotations

import argparse
import ast
import importlib
import json
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from types import FrameType
from typing import Any

PARTS = {"corpus": 0, "indexer": 1, "evaluator": 1, "service": 2}
"""Each product part and its layer: a call may go down or sideways, never up."""

DEFAULT_BODY = {"query": "retrieval augmented generation for question answering", "top_k": 10}
WARM_BODY = {"query": "graph neural networks for molecules", "top_k": 10}


def _attribute(modules: tuple[str, ...], name: str) -> Any:
    """``name`` from the first of ``modules`` this checkout has (files move between versions)."""
    for module in modules:
        try:
            return getattr(importlib.import_module(module), name)
        except ModuleNotFoundError:
            continue
    raise SystemExit(f"none of {', '.join(modules)} found")


def _create_app() -> Callable[..., Any]:
    """`create_app` wherever this checkout keeps it (``service/http/app.py``, before ``service/app.py``)."""
    create: Callable[..., Any] = _attribute(("openxiv.service.http.app", "openxiv.service.app"), "create_app")
    return create


class Tracer:
    """Collects product calls on every thread while `active`."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.active = False
        self.parts: dict[str, str | None] = {}  # co_filename -> repo-relative path, None if not product
        self.files: dict[str, list[str]] = {}  # file -> functions, both in first-call order
        self.crossings: list[tuple[str, str]] = []
        self._lock = threading.Lock()

    def product(self, filename: str) -> str | None:
        rel = self.parts.get(filename, "")
        if rel == "":
            rel = None
            try:
                path = Path(filename).resolve().relative_to(self.root)
            except ValueError:
                path = None
            if path is not None and path.parts and path.parts[0] in PARTS and path.suffix == ".py":
                rel = path.as_posix()
            self.parts[filename] = rel
        return rel

    def __call__(self, frame: FrameType, event: str, _arg: Any) -> None:
        if not self.active or event != "call":
            return
        rel = self.product(frame.f_code.co_filename)
        if rel is None:
            return
        func = frame.f_code.co_qualname
        caller = frame.f_back
        while caller is not None and self.product(caller.f_code.co_filename) is None:
            caller = caller.f_back
        with self._lock:
            functions = self.files.setdefault(rel, [])
            if func not in functions:
                functions.append(func)
            if caller is not None:
                up = self.product(caller.f_code.co_filename)
                assert up is not None
                if PARTS[rel.split("/")[0]] > PARTS[up.split("/")[0]]:
                    self.crossings.append((f"{up}:{caller.f_code.co_qualname}", f"{rel}:{func}"))


def upward_imports(root: Path, rel: str) -> list[str]:
    """The imports in ``rel`` of a part above its own (``openxiv.<part>...`` names)."""
    own = PARTS[rel.split("/")[0]]
    found: list[str] = []
    for node in ast.walk(ast.parse((root / rel).read_text(), rel)):
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        for name in names:
            parts = name.split(".")
            if len(parts) > 1 and parts[0] == "openxiv" and PARTS.get(parts[1], -1) > own:
                found.append(name)
    return found


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("index", type=Path, help="index root (the folder with CURRENT)")
    ap.add_argument("--body", default=json.dumps(DEFAULT_BODY), help="the JSON body of the traced request")
    ap.add_argument("--path", default="/search", help="the endpoint (POST)")
    ap.add_argument("--json", dest="json_out", type=Path, help="also write the result as JSON here")
    args = ap.parse_args()

    from fastapi.testclient import TestClient

    import openxiv.corpus

    root = Path(openxiv.corpus.__file__).resolve().parent.parent
    create_app = _create_app()
    Settings = _attribute(("openxiv.corpus.settings.model", "openxiv.corpus.config"), "Settings")
    tracer = Tracer(root)
    threading.setprofile(tracer)
    sys.setprofile(tracer)
    with TestClient(create_app(Settings.from_env(), args.index)) as client:
        warm = client.post(args.path, json=WARM_BODY)
        warm.raise_for_status()
        tracer.active = True
        answer = client.post(args.path, content=args.body, headers={"content-type": "application/json"})
        tracer.active = False
    sys.setprofile(None)
    threading.setprofile(None)
    answer.raise_for_status()

    print(f"POST {args.path} {args.body}")
    print(f"{len(tracer.files)} product files, {sum(map(len, tracer.files.values()))} functions")
    for rel, functions in tracer.files.items():
        print(f"  {rel}: {', '.join(functions)}")
    crossings = list(dict.fromkeys(tracer.crossings))
    print(f"{len(crossings)} upward crossings")
    for caller, callee in crossings:
        print(f"  {caller} -> {callee}")
    imports = {rel: up for rel in tracer.files if (up := upward_imports(root, rel))}
    print(f"{sum(map(len, imports.values()))} upward imports")
    for rel, names in imports.items():
        print(f"  {rel}: {', '.join(names)}")
    if args.json_out is not None:
        out = {
            "body": json.loads(args.body),
            "files": tracer.files,
            "crossings": crossings,
            "imports": imports,
        }
        args.json_out.write_text(json.dumps(out, indent=1) + "\n")
    return 1 if crossings or imports else 0


if __name__ == "__main__":
    sys.exit(main())
