"""Serve the packaged MiniLM (``/v1/embeddings``) and a cross-encoder folder (``/v1/rerank``) with
Infinity on 127.0.0.1 until interrupted, and print the settings that point openxiv at them.

    .venv/bin/python scripts/tool_infinity.py [--port 7997] [--rerank data/minilm-ce]

Infinity comes from its own venv (`make infinity-venv`, or ``OPENXIV_TEST_INFINITY_VENV``); models are
read from local folders only.
"""

from __future__ import annotations

import argparse
import contextlib
import time
from pathlib import Path

from harness import infinity


def main() -> None:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--port", type=int, default=7997)
    ap.add_argument(
        "--rerank", type=Path, default=infinity.ROOT / "data" / "minilm-ce", help="cross-encoder folder"
    )
    args = ap.parse_args()
    missing = infinity.infinity_missing()
    if missing:
        raise SystemExit(missing)
    with infinity.serve(infinity.cross_encoder_dir(args.rerank), args.port) as base:
        print(
            f"OPENXIV_MODEL='{base}#{infinity.EMBED_NAME}'\nrerank: '{base}#{infinity.RERANK_NAME}'",
            flush=True,
        )
        with contextlib.suppress(KeyboardInterrupt):
            while True:
                time.sleep(3600)


if __name__ == "__main__":
    main()
