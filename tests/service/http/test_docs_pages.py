"""``/docs`` and ``/redoc`` load everything from this server (issue 21, item 7), also with a token set,
and an error raised before a ``/ui`` route (a query that is not UTF-8) is a page, not JSON."""

from __future__ import annotations

import re
from collections.abc import Iterator

import pytest
from fastapi.testclient import TestClient
from live_index import BuiltIndex

from openxiv.service.http.app import create_app
from openxiv.service.http.docs_pages import ASSET_PREFIX, ASSETS

URL = re.compile(r"""(?:src|href|url)\s*[=(:]\s*["']?((?:https?:)?//[^"')\s]+)""")


@pytest.fixture(scope="module")
def api(test_index: BuiltIndex) -> Iterator[TestClient]:
    settings = test_index.settings.replace(api_token="docs-token")
    with TestClient(create_app(settings, test_index.root)) as c:
        yield c


@pytest.mark.parametrize("page", ["/docs", "/redoc"])
def test_doc_pages_load_nothing_from_other_hosts(api: TestClient, page: str) -> None:
    r = api.get(page)
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert URL.findall(r.text) == [], "a CDN or font host is still referenced"
    assert "fonts.googleapis" not in r.text and "cdn.jsdelivr" not in r.text
    assets = re.findall(rf"{re.escape(ASSET_PREFIX)}[\w.-]+", r.text)
    assert assets
    for path in assets:  # no token needed, like the page itself
        got = api.get(path)
        assert got.status_code == 200, path
        assert got.headers["content-type"] == ASSETS[path.removeprefix(ASSET_PREFIX)]
    assert api.get("/openapi.json").status_code == 200


def test_swagger_and_redoc_assets_are_the_real_bundles(api: TestClient) -> None:
    swagger = api.get(ASSET_PREFIX + "swagger-ui-bundle.js")
    redoc = api.get(ASSET_PREFIX + "redoc.standalone.js")
    assert len(swagger.content) > 500_000 and b"SwaggerUIBundle" in swagger.content
    assert len(redoc.content) > 500_000 and b"Redoc" in redoc.content
    assert api.get(ASSET_PREFIX + "nope.js").status_code in (401, 404)
    assert api.get(ASSET_PREFIX + "..%2Fdocs_pages.py").status_code in (401, 404)


def test_a_non_utf8_query_on_a_ui_path_is_a_page(api: TestClient) -> None:
    page = api.get("/ui?q=%ff%fe", headers={"Authorization": "Bearer docs-token"})
    assert page.status_code == 400 and page.headers["content-type"].startswith("text/html")
    assert "q: not valid UTF-8" in page.text and 'class="error"' in page.text
    json_api = api.get("/arxiv/?type=retrieve&query=%ff", headers={"Authorization": "Bearer docs-token"})
    assert json_api.status_code == 400 and json_api.json()["detail"].startswith("query: not valid UTF-8")
