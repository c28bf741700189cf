"""Screenshots of the web page (/ui) in headless Chromium, at desktop and phone width.

Takes the browser test's tour (`tests/service/http/ui_browser.py`): open the page, submit a search (the
phone run also fills the category filter), go to page 2 and back, open the first paper and one of
its sections; one full-page PNG per step. Needs Debian's ``chromium`` and ``chromium-driver``.

    .venv/bin/python scripts/tool_ui_screenshots.py --index data/index --out data/ui-screenshots
    .venv/bin/python scripts/tool_ui_screenshots.py --url http://127.0.0.1:8000 --query "dark matter halos"

With ``--index`` it starts ``openxiv serve`` on a free loopback port (no token) and stops it after.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "tests"))  # live_index.py
sys.path.insert(
    0, str(Path(__file__).resolve().parent.parent / "tests" / "service" / "http")
)  # ui_browser.py
from live_index import LiveServer
from ui_browser import VIEWPORTS, find_browser, tour


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    where = ap.add_mutually_exclusive_group(required=True)
    where.add_argument("--index", type=Path, help="index root to serve for the screenshots")
    where.add_argument("--url", help="a running openxiv serve (without a token)")
    ap.add_argument("--out", type=Path, default=Path("data/ui-screenshots"))
    ap.add_argument("--query", default="attention is all you need")
    ap.add_argument("--category", default="cs", help="filled into the form in the phone run")
    args = ap.parse_args()
    if find_browser() is None:
        print("chromium and chromedriver are not installed: apt-get install chromium chromium-driver")
        return 2
    server = LiveServer(args.index.resolve()) if args.index else None
    url = server.url if server else args.url.rstrip("/")
    try:
        for viewport in VIEWPORTS:
            t = tour(
                url, args.query, args.out, viewport, category=args.category if viewport == "phone" else ""
            )
            print(f"{viewport}: {t.hits} hits, {t.marks} highlighted words, paper {t.paper_title!r}")
            for s in t.steps:
                wide = f", {s.overflow_px}px too wide" if s.overflow_px > 0 else ""
                print(f"  {s.screenshot}  ({s.width_px}px viewport{wide})  {s.url}")
    finally:
        if server:
            server.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
