"""``/docs``, ``/redoc`` and ``/ui`` in headless Chromium ask no other host for anything (issue 36,
item 3): every request the browser makes (DevTools' ``Network.requestWillBeSent``, refused ones
included) goes to the server on 127.0.0.1, the pages render, and the browser reports no refused load.
Skipped when Debian's ``chromium`` and ``chromium-driver`` are not installed.
"""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest
from live_index import LiveServer
from ui_browser import VIEWPORTS, WebDriver, find_browser

pytestmark = [
    pytest.mark.browser,
    pytest.mark.skipif(find_browser() is None, reason="chromium and chromedriver are not installed"),
]


@pytest.fixture(scope="module")
def browser() -> Iterator[WebDriver]:
    found = find_browser()
    assert found is not None
    d = WebDriver(*found, *VIEWPORTS["desktop"], record=True)
    try:
        yield d
    finally:
        d.quit()


def _elsewhere(urls: list[str]) -> list[str]:
    return [
        u for u in urls if urlsplit(u).scheme not in ("data", "blob") and urlsplit(u).hostname != "127.0.0.1"
    ]


@pytest.mark.parametrize(("page", "rendered"), [("/docs", ".opblock"), ("/redoc", ".api-content h1")])
def test_doc_pages_ask_only_this_server(
    server: LiveServer, browser: WebDriver, page: str, rendered: str
) -> None:
    browser.requests(), browser.console()  # forget what came before
    browser.get(server.url + page)
    assert browser.wait(rendered, page), f"{page} did not render"
    urls = browser.requests()
    assert any(u.endswith("/openapi.json") for u in urls), urls
    assert _elsewhere(urls) == [], f"{page} asked another host"
    images = browser.js("return Array.from(document.images).map(i => i.src)")
    assert _elsewhere(images) == [], images
    refused = [m for m in browser.console() if "Content Security Policy" in m or "ERR_" in m]
    assert refused == [], refused
    csp = httpx.get(server.url + page).headers["content-security-policy"]
    assert "default-src 'none'" in csp and "script-src 'self'" in csp


def test_ui_pages_ask_only_this_server(server: LiveServer, client: httpx.Client, browser: WebDriver) -> None:
    first = client.get("/v1/search", params={"q": "attention is all you need"}).json()["hits"][0]["arxiv_id"]
    browser.requests()
    for path in (
        "/ui",
        "/ui?q=attention+is+all+you+need",
        f"/ui/paper/{first}",
        f"/ui/paper/{first}?section=1",
    ):
        browser.get(server.url + path)
        assert browser.wait("main", "/ui"), path
    urls = browser.requests()
    assert len(urls) >= 4 and _elsewhere(urls) == [], urls
