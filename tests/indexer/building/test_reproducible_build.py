"""A snapshot's term tables are the same bytes whatever the process's string hash seed.

bm25s numbers a vocabulary in the order of a Python set, and the stored sentences numbered their
terms in the order of each sentence's frozenset: both follow ``PYTHONHASHSEED``, which differs per
process. Two builds of one corpus then gave different term ids, so ties between terms (the
feedback's expansion terms) broke differently and a rebuilt snapshot could answer a query with
scores a few thousandths apart. Each part is built here in two processes with different seeds, on
real listing abstracts, and compared byte for byte. The paper metadata arrays (``papers/``) numbered
each paper's folded author names in the order of a set too, so a rebuilt snapshot's author tables
differed from the last one's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from live_index import listing_texts

from openxiv.corpus.shared import SharedData

_BUILD = """
import json, sys
from pathlib import Path
from openxiv.indexer.building.sentences import write_sentences
from openxiv.indexer.engine.sparse import SparseIndex

texts = json.loads(Path(sys.argv[1]).read_text())
out = Path(sys.argv[2])
SparseIndex.build(texts).save(out / "bm25")
write_sentences(out / "sentences", texts, "english")
"""

_META = """
import itertools, sys
from pathlib import Path
from openxiv.corpus.readers import read_path
from openxiv.indexer.engine.meta import PaperMeta

docs = list(itertools.islice(read_path(Path(sys.argv[1])), 300))
PaperMeta.from_docs(docs).save(Path(sys.argv[2]) / "papers")
"""


def _files(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def test_bm25_and_sentence_tables_do_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    texts = listing_texts(300)
    src = tmp_path / "texts.json"
    src.write_text(json.dumps(texts))
    built = []
    for seed in ("1", "2"):
        out = tmp_path / f"seed{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run([sys.executable, "-c", _BUILD, str(src), str(out)], env=env, check=True, timeout=300)
        built.append(_files(out))
    a, b = built
    assert set(a) == set(b) and any(name.startswith("bm25/") for name in a)
    assert [name for name in a if a[name] != b[name]] == []


def test_paper_metadata_arrays_do_not_depend_on_the_hash_seed(tmp_path: Path) -> None:
    data = SharedData.default()
    listings = data.listings if data.available else []
    if not listings:
        pytest.skip(f"no listing files under {data.root}")
    built = []
    for seed in ("1", "2"):
        out = tmp_path / f"seed{seed}"
        env = {**os.environ, "PYTHONHASHSEED": seed}
        subprocess.run(
            [sys.executable, "-c", _META, str(listings[0]), str(out)], env=env, check=True, timeout=300
        )
        built.append(_files(out))
    a, b = built
    assert "papers/authors.json" in a and set(a) == set(b)
    assert [name for name in a if a[name] != b[name]] == []
