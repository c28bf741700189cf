"""The web page in a real browser: Debian's ``chromium`` driven through its ``chromedriver``.

`WebDriver` is a small client of the W3C WebDriver protocol (plain HTTP + JSON, spoken by
``chromedriver``; https://www.w3.org/TR/webdriver2/), so no browser automation package and no
browser download is needed: only the two Debian packages (``apt-get install chromium
chromium-driver``). `tour` is what the browser test and ``scripts/tool_ui_screenshots.py`` both do: open
the page, type a query and submit the form, go to the next page of results and back, open the
first paper, open one of its sections, at desktop and phone width, saving a screenshot of each step
and checking the page does not overflow sideways.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import socket
import subprocess
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ELEMENT = "element-6066-11e4-a52e-4f735466cecf"
"""The key under which WebDriver returns an element reference."""
VIEWPORTS = {"desktop": (1280, 900), "phone": (390, 844)}


def find_browser() -> tuple[str, str] | None:
    """``(chromium, chromedriver)`` paths, or ``None`` when either is not installed."""
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    driver = shutil.which("chromedriver")
    return (chromium, driver) if chromium and driver else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class WebDriverError(RuntimeError):
    pass


class WebDriver:
    """One headless Chromium session behind a private ``chromedriver`` process."""

    def __init__(
        self,
        chromium: str,
        driver: str,
        width: int,
        height: int,
        *,
        mobile: bool = False,
        log: Path | None = None,
        record: bool = False,
    ) -> None:
        self.port = _free_port()
        out = log.open("ab") if log else subprocess.DEVNULL
        self.proc = subprocess.Popen([driver, f"--port={self.port}"], stdout=out, stderr=subprocess.STDOUT)
        self.http = httpx.Client(base_url=f"http://127.0.0.1:{self.port}", timeout=60)
        self._wait_driver()
        args = ["--headless=new", f"--window-size={width},{height}", "--disable-gpu", "--hide-scrollbars"]
        if os.geteuid() == 0:  # Chromium refuses to run as root with its sandbox on
            args += ["--no-sandbox", "--disable-dev-shm-usage"]
        chrome: dict[str, Any] = {"binary": chromium, "args": args}
        if mobile:  # a real phone viewport: headless windows are never narrower than 500 px
            chrome["mobileEmulation"] = {"deviceMetrics": {"width": width, "height": height, "pixelRatio": 2}}
        caps: dict[str, Any] = {"browserName": "chrome", "goog:chromeOptions": chrome}
        if record:  # every network request (DevTools events) and the console, for `requests`/`console`
            caps["goog:loggingPrefs"] = {"performance": "ALL", "browser": "ALL"}
        value = self._call("POST", "/session", {"capabilities": {"alwaysMatch": caps}})
        self.session = f"/session/{value['sessionId']}"

    def _wait_driver(self, timeout: float = 20) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if self.http.get("/status").json()["value"]["ready"]:
                    return
            except (httpx.HTTPError, ValueError, KeyError):
                pass
            time.sleep(0.1)
        self.quit()
        raise WebDriverError("chromedriver did not start")

    def _call(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        r = self.http.request(method, path, json=body if method == "POST" else None)
        value = r.json().get("value")
        if r.status_code >= 400:
            raise WebDriverError(f"{method} {path}: {value}")
        return value

    def cmd(self, method: str, path: str, body: dict[str, Any] | None = None) -> Any:
        return self._call(method, self.session + path, body if body is not None else {})

    # --- what the tour needs -----------------------------------------------------------
    def get(self, url: str) -> None:
        self.cmd("POST", "/url", {"url": url})

    @property
    def url(self) -> str:
        return str(self.cmd("GET", "/url"))

    def back(self) -> None:
        self.cmd("POST", "/back")

    def find(self, css: str) -> str:
        return str(self.cmd("POST", "/element", {"using": "css selector", "value": css})[ELEMENT])

    def find_all(self, css: str) -> list[str]:
        return [e[ELEMENT] for e in self.cmd("POST", "/elements", {"using": "css selector", "value": css})]

    def wait(self, css: str, url_part: str = "", timeout: float = 20) -> list[str]:
        """The elements matching ``css`` once the page at an address holding ``url_part`` shows them
        (a click that navigates may return before the next page is there)."""
        deadline = time.monotonic() + timeout
        while True:
            found = self.find_all(css) if url_part in self.url else []
            ready = self.js("return document.readyState") == "complete"
            if (found and ready) or time.monotonic() > deadline:
                return found
            time.sleep(0.1)

    def text(self, element: str) -> str:
        return str(self.cmd("GET", f"/element/{element}/text"))

    def type(self, element: str, text: str) -> None:
        self.cmd("POST", f"/element/{element}/clear")
        self.cmd("POST", f"/element/{element}/value", {"text": text})

    def click(self, element: str) -> None:
        self.cmd("POST", f"/element/{element}/click")

    def js(self, script: str) -> Any:
        return self.cmd("POST", "/execute/sync", {"script": script, "args": []})

    def screenshot(self, path: Path) -> None:
        """The whole page (Chrome's DevTools ``Page.captureScreenshot`` beyond the viewport)."""
        shot = self.cmd(
            "POST",
            "/goog/cdp/execute",
            {"cmd": "Page.captureScreenshot", "params": {"format": "png", "captureBeyondViewport": True}},
        )
        path.write_bytes(base64.b64decode(shot["data"]))

    def requests(self) -> list[str]:
        """The addresses the browser asked for since the last call (``record=True``): every
        ``Network.requestWillBeSent``, blocked ones included."""
        urls = []
        for entry in self.cmd("POST", "/se/log", {"type": "performance"}):
            message = json.loads(entry["message"])["message"]
            if message["method"] == "Network.requestWillBeSent":
                urls.append(str(message["params"]["request"]["url"]))
        return urls

    def console(self) -> list[str]:
        """Console messages since the last call (``record=True``), e.g. a refused load."""
        return [str(e["message"]) for e in self.cmd("POST", "/se/log", {"type": "browser"})]

    def quit(self) -> None:
        try:
            if hasattr(self, "session"):
                self.http.delete(self.session)
        finally:
            self.http.close()
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()


@dataclass
class Step:
    name: str
    url: str
    screenshot: Path
    overflow_px: int
    """How far the page is wider than the viewport (0: no sideways scrolling)."""
    width_px: int
    """The viewport's width in CSS pixels."""


@dataclass
class Tour:
    viewport: str
    steps: list[Step] = field(default_factory=list)
    hits: int = 0
    marks: int = 0
    paper_title: str = ""
    section_title: str = ""


def _step(d: WebDriver, tour: Tour, name: str, out: Path) -> None:
    time.sleep(0.2)  # let layout settle (fonts) before the picture
    shot = out / f"ui-{tour.viewport}-{len(tour.steps) + 1}-{name}.png"
    d.screenshot(shot)
    overflow = int(d.js("return document.documentElement.scrollWidth - window.innerWidth"))
    tour.steps.append(Step(name, d.url, shot, overflow, int(d.js("return window.innerWidth"))))


def tour(base_url: str, query: str, out: Path, viewport: str, category: str = "") -> Tour:
    """Search, page, open a paper and a section in one browser at one viewport; screenshots to ``out``."""
    found = find_browser()
    if found is None:
        raise WebDriverError("chromium and chromedriver are not installed")
    out.mkdir(parents=True, exist_ok=True)
    width, height = VIEWPORTS[viewport]
    d = WebDriver(*found, width, height, mobile=viewport == "phone", log=out / "chromedriver.log")
    t = Tour(viewport)
    try:
        d.get(base_url + "/ui")
        _step(d, t, "home", out)
        d.type(d.find("input[name=q]"), query)
        if category:
            d.click(d.find("details.filters summary"))
            d.type(d.find("input[name=categories]"), category)
        d.click(d.find("form.search button[type=submit]"))
        t.hits = len(d.wait("li.hit", "q="))
        t.marks = len(d.find_all("li.hit mark"))
        _step(d, t, "results", out)
        d.click(d.find("a[rel=next]"))
        d.wait("li.hit", "page=2")
        _step(d, t, "results-page2", out)
        d.back()
        d.click(d.wait("li.hit h2 a")[0])
        t.paper_title = d.text(d.wait("article.paper h1", "/ui/paper/")[0])
        _step(d, t, "paper", out)
        links = d.find_all(".sections li a")
        d.click(links[min(1, len(links) - 1)])
        t.section_title = d.text(d.wait("#text h2", "section=")[0])
        _step(d, t, "section", out)
    finally:
        d.quit()
    return t
