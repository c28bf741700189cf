"""The web page in headless Chromium (Debian ``chromium`` + ``chromium-driver``), on the live server.

Skipped when they are not installed. Run it with
``pytest tests/service/http/test_ui_browser.py`` (``-m browser`` picks only browser tests); screenshots
go to ``OPENXIV_TEST_SCREENSHOTS`` (default: the test's temporary folder).
``scripts/tool_ui_screenshots.py`` takes the same tour and writes the same screenshots.
"""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest
from live_index import BuiltIndex, LiveServer
from ui_browser import VIEWPORTS, WebDriver, find_browser, tour

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(find_browser() is None, reason="chromium and chromedriver are not installed"),
]
QUERY = "attention is all you need"
PNG = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def shots(tmp_path_factory: pytest.TempPathFactory) -> Path:
    keep = os.environ.get("OPENXIV_TEST_SCREENSHOTS")
    return Path(keep) if keep else tmp_path_factory.mktemp("ui-screenshots")


@pytest.mark.parametrize("viewport", list(VIEWPORTS))
def test_search_page_paper_and_section_in_a_browser(
    server: LiveServer, client: httpx.Client, shots: Path, viewport: str
) -> None:
    category = "cs" if viewport == "phone" else ""  # the phone run also fills a filter in the form
    t = tour(server.url, QUERY, shots, viewport, category=category)
    params = {"q": QUERY, "top_k": 10, **({"category": category} if category else {})}
    api = client.get("/v1/search", params=params).json()
    first = api["hits"][0]["arxiv_id"]
    paper = client.get(f"/v1/papers/{first}").json()
    assert t.hits == 10 and t.marks > 0
    assert t.paper_title == paper["title"]
    second = paper["sections"][1]
    assert t.section_title.startswith(f"{second['number']} {second['name']}".strip())
    names = [s.name for s in t.steps]
    assert names == ["home", "results", "results-page2", "paper", "section"]
    urls = {s.name: s.url for s in t.steps}
    assert "q=attention" in urls["results"] and "page=2" in urls["results-page2"]
    assert f"/ui/paper/{first}" in urls["paper"] and "section=" in urls["section"]
    if category:
        assert "categories=cs" in urls["results"]
    for s in t.steps:
        assert s.screenshot.read_bytes()[:8] == PNG and s.screenshot.stat().st_size > 5000, s.name
        assert s.width_px == VIEWPORTS[viewport][0], f"{viewport} {s.name}: viewport {s.width_px}px wide"
        assert s.overflow_px <= 0, f"{viewport} {s.name}: page {s.overflow_px}px wider than the screen"


def test_sign_in_with_the_token_form_in_a_browser(test_index: BuiltIndex, shots: Path) -> None:
    """The form's POST must pass the server's cross-site check from a real browser (Chrome sends
    ``Origin: null`` when the page's referrer policy is ``no-referrer``)."""
    found = find_browser()
    assert found is not None
    live = LiveServer(test_index.root, token="browser-token")
    d = WebDriver(*found, *VIEWPORTS["desktop"])
    try:
        d.get(live.url + "/ui?q=neural+networks")
        assert "/ui/login?next=" in d.url
        assert not d.find_all("form.inline")  # no "Sign out" before signing in
        d.type(d.find("input[name=token]"), "not-the-token")
        d.click(d.find("form.login button"))
        error = d.wait("p.error")
        assert error and d.text(error[0]) == "wrong token"
        d.type(d.find("input[name=token]"), "browser-token")
        d.click(d.find("form.login button"))
        hits = d.wait("li.hit", "q=neural")
        d.screenshot(shots / "ui-desktop-signed-in.png")
        assert len(hits) == 10 and d.url.endswith("/ui?q=neural+networks")
        assert d.find_all("form.inline")  # "Sign out"
    finally:
        d.quit()
        live.stop()
