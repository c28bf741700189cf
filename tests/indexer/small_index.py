"""Small real corpora for the snapshot and filter tests: listing papers and plain-text full texts from ../shared."""

from __future__ import annotations

import importlib.util
import itertools
import shutil
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from openxiv.corpus.readers import read_path
from openxiv.corpus.shared import SharedData
from openxiv.corpus.store import Store
from openxiv.indexer import manifest as manifest_file


def records(shared: SharedData, cs: int, astro: int, full: int, skip_cs: int = 0) -> Iterator[Any]:
    return itertools.chain(
        itertools.islice(read_path(shared.listing("cs")), skip_cs, skip_cs + cs),
        itertools.islice(read_path(shared.listing("astro")), astro),
        itertools.islice(read_path(shared.plaintext), full),
    )


def make_db(path: Path, items: Iterator[Any]) -> Path:
    with Store(path) as store:
        store.ingest(items)
    return path


def copy_without_part(snapshot: Path, dest: Path, part: str, key: str) -> Path:
    """``snapshot`` copied to ``dest`` as a build made before the optional ``part`` existed: no
    folder, no manifest entry ``key``, no size."""
    shutil.copytree(snapshot, dest)
    shutil.rmtree(dest / part)
    manifest = manifest_file.read(dest)
    setattr(manifest, key, None)
    manifest.model_fields_set.discard(key)  # absent from the JSON, as an older build wrote it
    del manifest.sizes_bytes[part]
    manifest_file.write(dest, manifest)
    return dest


def load_script(name: str) -> Any:
    """``scripts/<name>.py`` imported as a module (with ``scripts/`` on the path for its own imports)."""
    script = Path(__file__).resolve().parents[2] / "scripts" / f"{name}.py"
    sys.path.insert(0, str(script.parent))
    try:
        spec = importlib.util.spec_from_file_location(f"{name}_under_test", script)
        assert spec is not None and spec.loader is not None
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    finally:
        sys.path.remove(str(script.parent))
    return module
