"""Names of the files and folders inside an index root and a snapshot (one place, no logic).

INDEX_DIR/
  CURRENT                      name of the live snapshot (switched atomically with os.replace)
  build.lock                   flock held by the running build (pid, host, start time inside)
  snapshots/<UTC time>-<fp>/   one complete, immutable snapshot
    manifest.json              what is in it and how it was built (FORMAT_VERSION)
    lease.lock                 shared flock held by every process reading the snapshot
    corpus.sqlite              consistent copy of the corpus database
    papers/                    per-paper metadata arrays (ids, dates, category/author postings)
    bm25_papers/               bm25s matrix over title + abstract, and the same matrix by rows
                               (doc_terms_*.npy: feedback's, `openxiv.indexer.engine.doc_terms`)
    bm25_passages/             bm25s matrix over full-text passages + passage -> paper rows
    dense_papers/              FAISS index over paper vectors (when embedded)
    dense_passages/            FAISS index over passage vectors (when embedded)
    tldr/                      every paper's tldr by row, made at build (`openxiv.indexer.building.tldrs`)
    sentences/                 every abstract's sentences and analysed terms by row, made at build
                               (`openxiv.indexer.building.sentences`: the evidence of hits without a passage)
    references/                every paper's references and cited-by, made at build
                               (`openxiv.indexer.building.references`)
    encoder/                   the encoder that made the vectors (when embedded): encoder.json, and
                               for onnx-int8 the ONNX model + tokenizer.json that serving loads
  snapshots/.tmp-*/            a build in progress, or a snapshot being pruned (never read; leftovers
                               of dead builds are removed by the next build, under build.lock)
"""

from __future__ import annotations

FORMAT_VERSION = 1
CURRENT = "CURRENT"
SNAPSHOTS = "snapshots"
TMP_PREFIX = ".tmp-"
MANIFEST = "manifest.json"
BUILD_LOCK = "build.lock"
LEASE = "lease.lock"
PRUNE_PREFIX = TMP_PREFIX + "pruned-"
CORPUS = "corpus.sqlite"
META = "papers"
BM25_PAPERS = "bm25_papers"
BM25_PASSAGES = "bm25_passages"
DENSE_PAPERS = "dense_papers"
DENSE_PASSAGES = "dense_passages"
ENCODER = "encoder"
TLDR = "tldr"
SENTENCES = "sentences"
REFERENCES = "references"
