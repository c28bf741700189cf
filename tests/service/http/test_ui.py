"""The web page (/ui) on the real test index: results, highlighting, escaping, paging, paper and
section pages, friendly 4xx pages, the reports folder (no path traversal) and the token form.

The page must agree with the API: its hits are compared with ``/v1/search`` on the same snapshot.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from html import unescape
from pathlib import Path
from typing import Any

import pytest
from click.testing import CliRunner
from fastapi.testclient import TestClient
from live_index import SHARED, BuiltIndex

from openxiv.service.guards.access import UI_COOKIE
from openxiv.service.http.app import create_app
from openxiv.service.http.ui_render import excerpt, highlight

TOKEN = "s3cret-ui-token"
HIT_ID = re.compile(r'<li class="hit">.*?<code>([^<]+)</code>', re.S)
MARK = re.compile(r"<mark>([^<]*)</mark>")


def hit_ids(page: str) -> list[str]:
    return HIT_ID.findall(page)


def error_text(page: str) -> str:
    m = re.search(r'<p class="error" role="alert">(.*?)</p>', page, re.S)
    assert m, "no error box on the page"
    return unescape(re.sub(r"<[^>]+>", "", m.group(1)))


@pytest.fixture(scope="module")
def reports_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("ui-reports") / "reports"
    folder.mkdir()
    return folder


@pytest.fixture(scope="module")
def ui(test_index: BuiltIndex, reports_dir: Path) -> Iterator[TestClient]:
    settings = test_index.settings.replace(reports_dir=reports_dir)
    with TestClient(create_app(settings, test_index.root)) as c:
        yield c


@pytest.fixture(scope="module")
def ui_token(test_index: BuiltIndex, reports_dir: Path) -> Iterator[TestClient]:
    settings = test_index.settings.replace(reports_dir=reports_dir, api_token=TOKEN)
    with TestClient(create_app(settings, test_index.root)) as c:
        yield c


def v1_ids(client: TestClient, **params: Any) -> tuple[list[str], int]:
    body = client.get("/v1/search", params=params).json()
    return [h["arxiv_id"] for h in body["hits"]], body["total_count"]


# ------------------------------------------------------------------------------- search
def test_root_redirects_people_to_the_page_and_post_root_still_searches(ui: TestClient) -> None:
    r = ui.get("/", follow_redirects=False)
    assert r.status_code == 307 and r.headers["location"] == "ui"
    assert ui.get("/").url.path == "/ui"
    posted = ui.post("/", json={"query": "neural networks", "top_k": 3})
    assert posted.status_code == 200 and len(posted.json()["result"]) == 3


def test_trailing_slash_reaches_the_page(ui: TestClient) -> None:
    r = ui.get("/ui/", params={"q": "neural"}, follow_redirects=False)
    assert r.status_code == 307 and r.headers["location"] == "/ui?q=neural"


def test_empty_page_is_a_search_form_with_local_assets_only(ui: TestClient) -> None:
    r = ui.get("/ui")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/html")
    assert '<form class="search"' in r.text and 'name="q"' in r.text
    assert "<script" not in r.text
    assert not re.search(r'(?:src|href)="(?:https?:)?//', r.text.split("<main>")[0])  # no CDN
    assert "script-src" not in r.headers["content-security-policy"]
    assert (
        r.headers["referrer-policy"] == "same-origin"
    )  # no-referrer made Chrome post the sign-in form with Origin: null
    css = ui.get("/ui/static/ui.css")
    assert css.status_code == 200 and css.headers["content-type"].startswith("text/css")
    assert "@media (max-width" in css.text


def test_results_match_the_api_with_the_known_paper_first(ui: TestClient, known_item: dict[str, Any]) -> None:
    query, paper = known_item["query"], known_item["relevant"][0]
    r = ui.get("/ui", params={"q": query})
    assert r.status_code == 200
    ids, total = v1_ids(ui, q=query, top_k=10)
    assert hit_ids(r.text) == ids and paper in ids
    assert f"of {total:,} for" in r.text
    first = r.text.split('<li class="hit">')[1]
    assert f"https://arxiv.org/abs/{ids[0]}" in first and f"/ui/paper/{ids[0]}?q=" in first
    assert re.search(r'<span class="date">\d{4}-\d\d-\d\d</span>', first)
    assert '<span class="cat">' in first and '<blockquote class="evidence">' in first


def test_query_terms_are_highlighted_by_stem(ui: TestClient) -> None:
    r = ui.get("/ui", params={"q": "neural networks"})
    marked = {m.lower() for m in MARK.findall(r.text)}
    assert marked, "no highlighted words"
    assert marked <= {"neural", "network", "networks", "networked", "networking"}
    assert "network" in marked or "networks" in marked


def test_highlight_escapes_text_and_marks_only_words() -> None:
    text = 'Graph <b>networks</b> & "neural" networking <script>alert(1)</script>'
    out = str(highlight(text, "neural network"))
    assert "<b>" not in out and "<script>" not in out
    assert "&lt;b&gt;<mark>networks</mark>&lt;/b&gt;" in out
    assert "&amp;" in out and "&#34;<mark>neural</mark>&#34;" in out
    assert MARK.findall(out) == ["networks", "neural", "networking"]
    assert str(highlight("<i>x</i>", "the of")) == "&lt;i&gt;x&lt;/i&gt;"  # stop words only: nothing marked


def test_excerpt_cuts_long_evidence_around_the_first_match() -> None:
    text = " ".join(["filler"] * 200) + " the decisive transformer result " + " ".join(["tail"] * 200)
    out = str(excerpt(text, "transformer", limit=200))
    assert out.startswith("… ") and out.endswith(" …")
    assert "<mark>transformer</mark>" in out and len(unescape(re.sub("<[^>]+>", "", out))) <= 204
    short = str(excerpt("a  short\n text", "short"))
    assert short == "a <mark>short</mark> text"


def test_hostile_query_is_escaped_everywhere(ui: TestClient) -> None:
    q = '"><script>alert(1)</script> neural <img src=x onerror=alert(2)>'
    r = ui.get("/ui", params={"q": q, "authors": "<b>x</b>"})
    assert r.status_code == 200
    assert "<script>alert" not in r.text and "<img src=x" not in r.text and "<b>x</b>" not in r.text
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in r.text
    assert 'value="&#34;&gt;&lt;script&gt;' in r.text  # the form keeps the query, escaped


def test_paging_follows_the_api_and_links_both_ways(ui: TestClient) -> None:
    q = "neural networks"
    page2 = ui.get("/ui", params={"q": q, "page": 2})
    ids, total = v1_ids(ui, q=q, top_k=10, offset=10)
    assert hit_ids(page2.text) == ids and len(ids) == 10
    assert f"Results 11–20 of {total:,}" in page2.text
    assert 'rel="prev" href="/ui?q=neural+networks"' in page2.text
    assert 'rel="next" href="/ui?q=neural+networks&amp;page=3"' in page2.text
    first = ui.get("/ui", params={"q": q})
    assert 'rel="prev"' not in first.text and not set(hit_ids(first.text)) & set(ids)
    last_page = -(-total // 10)
    end = ui.get("/ui", params={"q": q, "page": last_page})
    assert 'rel="next"' not in end.text and hit_ids(end.text)
    past = ui.get("/ui", params={"q": q, "page": last_page + 1})
    assert past.status_code == 200 and "No more results" in past.text and not hit_ids(past.text)


def test_filters_apply_and_survive_paging(ui: TestClient) -> None:
    params = {"q": "galaxies", "categories": "astro-ph", "date_from": "2025-05", "mode": "bm25"}
    r = ui.get("/ui", params=params)
    ids, _ = v1_ids(ui, q="galaxies", category="astro-ph", date_from="2025-05", mode="bm25")
    assert r.status_code == 200 and hit_ids(r.text) == ids and ids
    for block in r.text.split('<li class="hit">')[1:]:
        assert re.search(r'<span class="cat">astro-ph[.A-Z]*</span>', block)
        assert re.search(r'<span class="date">(\d{4}-\d\d)', block).group(1) >= "2025-05"  # type: ignore[union-attr]
    assert '<details class="filters" open>' in r.text and '<option value="bm25" selected>' in r.text
    if 'rel="next"' in r.text:
        nxt = unescape(re.search(r'rel="next" href="([^"]+)"', r.text).group(1))  # type: ignore[union-attr]
        assert "categories=astro-ph" in nxt and "date_from=2025-05" in nxt and "mode=bm25" in nxt


@pytest.mark.parametrize(
    ("params", "named"),
    [
        ({"page": "abc"}, "page"),
        ({"page": "0"}, "page"),
        ({"page": "99999"}, "page"),
        ({"date_from": "2025-13"}, "date_from"),
        ({"date_from": "2025", "date_to": "2024"}, "date range is empty"),
        ({"categories": "cs CL!"}, "categories"),
        ({"mode": "magic"}, "mode"),
        ({"q": "x" * 5000}, "query"),
        ({"authors": ",".join(f"a{i}" for i in range(60))}, "authors"),
    ],
)
def test_bad_input_is_a_friendly_4xx_page_keeping_the_form(
    ui: TestClient, params: dict[str, str], named: str
) -> None:
    r = ui.get("/ui", params={"q": "neural networks", **params})
    assert r.status_code == 400 and r.headers["content-type"].startswith("text/html")
    assert named in error_text(r.text)
    assert 'name="q" value="' in r.text and not hit_ids(r.text)


def test_odd_values_never_500(ui: TestClient) -> None:
    odd = ["", " ", "%", "\x00", "🦆", "-1", "1e9", "[]", "{}", "' OR 1=1 --", "../../etc/passwd", "\u202e"]
    for name in ("q", "categories", "authors", "date_from", "date_to", "mode", "page"):
        for value in odd:
            r = ui.get("/ui", params={"q": "attention", name: value})
            assert r.status_code < 500, (name, value, r.text[-400:])
            assert r.headers["content-type"].startswith("text/html")


# ------------------------------------------------------------------------------- paper and section
def test_paper_page_has_metadata_tldr_abstract_sections_and_links(ui: TestClient) -> None:
    paper = ui.get("/v1/papers/1706.03762").json()
    r = ui.get("/ui/paper/arXiv:1706.03762v7", params={"q": "attention"})
    assert r.status_code == 200
    assert "<h1>Attention Is All You Need</h1>" in r.text
    assert (
        'href="https://arxiv.org/abs/1706.03762"' in r.text
        and 'href="https://arxiv.org/pdf/1706.03762"' in r.text
    )
    assert f"<p>{paper['tldr']}</p>" in unescape(r.text)
    assert "<mark>attention</mark>" in r.text.split('class="abstract"')[1]
    listed = re.findall(r'<li class="depth-\d"><a href="[^"]*section=([^"&]+)[^"]*">', r.text)
    assert len(listed) == len(paper["sections"]) > 5
    assert 'id="text"' not in r.text  # no section asked for


def test_section_page_shows_the_sections_text(ui: TestClient) -> None:
    section = ui.get("/v1/papers/1706.03762/sections/introduction").json()
    r = ui.get("/ui/paper/1706.03762", params={"section": "introduction", "q": "recurrent"})
    assert r.status_code == 200
    text = r.text.split('id="text"')[1].split("</section>")[0]
    assert "1 Introduction" in text
    plain = unescape(re.sub(r"<[^>]+>", "", text))
    assert " ".join(section["text"].split()[:12]) in " ".join(plain.split())
    assert "<mark>Recurrent</mark>" in text or "<mark>recurrent</mark>" in text
    # every section link of the paper page opens its own section
    page = ui.get("/ui/paper/1706.03762").text
    links = [unescape(u) for u in re.findall(r'<li class="depth-\d"><a href="([^"]+)">', page)]
    opened = ui.get(links[3])
    assert opened.status_code == 200 and 'id="text"' in opened.text
    assert re.search(r'<li class="depth-\d current"><a [^>]*aria-current="page">3.1 Encoder', opened.text)


def test_paper_links_lead_back_to_the_same_results_page(ui: TestClient) -> None:
    results = ui.get("/ui", params={"q": "neural networks", "categories": "cs", "page": 2})
    link = unescape(re.search(r'<li class="hit">\s*<h2><a href="([^"]+)"', results.text).group(1))  # type: ignore[union-attr]
    assert "back=" in link
    paper = ui.get(link).text
    back = unescape(re.search(r'<p class="back"><a href="([^"]+)">← Back to the results', paper).group(1))  # type: ignore[union-attr]
    assert back == "/ui?q=neural+networks&categories=cs&page=2"
    assert hit_ids(ui.get(back).text) == hit_ids(results.text)
    with_sections = ui.get("/ui/paper/1706.03762", params={"back": back}).text
    section_link = unescape(re.findall(r'<li class="depth-\d"><a href="([^"]+)">', with_sections)[0])
    assert "back=" in section_link and "← Back to the results" in ui.get(section_link).text
    for foreign in ("//evil.example/ui", "https://evil.example/", "/v1/search?q=x"):
        page = ui.get("/ui/paper/1706.03762", params={"back": foreign}).text
        assert "evil.example" not in page and "/v1/search" not in page


def test_paper_and_section_errors_are_friendly(ui: TestClient) -> None:
    missing = ui.get("/ui/paper/1706.03762", params={"section": "no such heading"})
    assert missing.status_code == 404 and "Attention Is All You Need" in missing.text
    assert "its sections are" in error_text(missing.text)
    unknown = ui.get("/ui/paper/2501.99999")
    assert unknown.status_code == 404 and "not in this corpus" in error_text(unknown.text)
    bad = ui.get("/ui/paper/<script>")
    assert bad.status_code == 400 and "not an arXiv id" in error_text(bad.text) and "<script>" not in bad.text
    nowhere = ui.get("/ui/nowhere/<b>")
    assert nowhere.status_code == 404 and nowhere.headers["content-type"].startswith("text/html")
    assert "<b>" not in nowhere.text


# ------------------------------------------------------------------------------- reports
@pytest.fixture(scope="module")
def written_report(ui: TestClient, reports_dir: Path) -> Path:
    """A real report: `openxiv eval ranked --html` over runs the page's own API produced."""
    from openxiv.evaluator.cli import eval_group

    gold = SHARED.gold("topic_queries_dev.jsonl")
    lines = gold.read_text(encoding="utf-8").splitlines()[:5]
    run = reports_dir.parent / "run.jsonl"
    with run.open("w", encoding="utf-8") as fh:
        import json

        for line in lines:
            item = json.loads(line)
            ids, _ = v1_ids(ui, q=item["query"], top_k=20)
            fh.write(json.dumps({"qid": item["qid"], "results": ids}) + "\n")
    out = reports_dir / "ranked-dev.html"
    result = CliRunner().invoke(
        eval_group,
        [
            "ranked",
            "-g",
            str(gold),
            "-s",
            str(run),
            "--k",
            "10",
            "--resamples",
            "20",
            "-q",
            "--html",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.output
    return out


def test_reports_are_listed_and_served_sandboxed(ui: TestClient, written_report: Path) -> None:
    listing = ui.get("/ui/reports")
    assert listing.status_code == 200 and 'href="/ui/reports/ranked-dev.html"' in listing.text
    r = ui.get("/ui/reports/ranked-dev.html")
    assert r.status_code == 200 and r.content == written_report.read_bytes()
    assert r.headers["content-security-policy"].startswith("sandbox")


def test_reports_cannot_reach_other_files(ui: TestClient, written_report: Path, reports_dir: Path) -> None:
    secret = reports_dir.parent / "secret.html"
    secret.write_text("TOP-SECRET")
    (reports_dir / "notes.txt").write_text("TOP-SECRET")
    (reports_dir / ".hidden.html").write_text("TOP-SECRET")
    (reports_dir / "link.html").symlink_to(secret)
    (reports_dir / "sub").mkdir(exist_ok=True)
    (reports_dir / "sub" / "inner.html").write_text("TOP-SECRET")
    listing = ui.get("/ui/reports").text
    for name in ("secret", "notes.txt", ".hidden", "link.html", "inner"):
        assert name not in listing
    attempts = [
        "/ui/reports/../secret.html",
        "/ui/reports/..%2Fsecret.html",
        "/ui/reports/%2e%2e%2fsecret.html",
        "/ui/reports/%2e%2e/secret.html",
        "/ui/reports/..%5Csecret.html",
        "/ui/reports/notes.txt",
        "/ui/reports/.hidden.html",
        "/ui/reports/link.html",
        "/ui/reports/sub/inner.html",
        "/ui/reports/sub%2Finner.html",
        f"/ui/reports/{secret}",
        f"/ui/reports/{str(secret).replace('/', '%2F')}",
    ]
    for path in attempts:
        r = ui.get(path)
        assert "TOP-SECRET" not in r.text, path
        assert r.status_code in (404, 400) or (r.status_code == 200 and "ranked-dev" in r.text), path


# ------------------------------------------------------------------------------- token
def test_with_a_token_the_page_sends_browsers_to_the_form(ui_token: TestClient) -> None:
    r = ui_token.get("/ui?q=neural", follow_redirects=False)
    assert r.status_code == 303 and r.headers["location"] == "/ui/login?next=%2Fui%3Fq%3Dneural"
    login = ui_token.get("/ui/login")
    assert login.status_code == 200 and "Sign out" not in login.text
    assert ui_token.get("/ui/static/ui.css").status_code == 200
    assert ui_token.get("/", follow_redirects=False).status_code == 307
    assert ui_token.post("/", json={"query": "neural"}).status_code == 401  # POST / is the API: token
    assert ui_token.get("/ui/reports", follow_redirects=False).status_code == 303


def test_token_form_sets_a_cookie_that_opens_the_page_only(ui_token: TestClient) -> None:
    wrong = ui_token.post("/ui/login", data={"token": "nope", "next": "/ui?q=neural"}, follow_redirects=False)
    assert wrong.status_code == 401 and "wrong token" in error_text(wrong.text)
    assert UI_COOKIE not in wrong.headers.get("set-cookie", "")
    right = ui_token.post("/ui/login", data={"token": TOKEN, "next": "/ui?q=neural"}, follow_redirects=False)
    assert right.status_code == 303 and right.headers["location"] == "/ui?q=neural"
    cookie = right.headers["set-cookie"]
    assert (
        "HttpOnly" in cookie
        and "SameSite=strict" in cookie.replace("Strict", "strict")
        and "Path=/ui" in cookie
    )
    assert TOKEN not in cookie
    value = right.cookies[UI_COOKIE]
    ui_token.cookies.clear()  # sent by hand below, also where a browser would not send it (Path=/ui)
    jar = {"Cookie": f"{UI_COOKIE}={value}"}
    page = ui_token.get("/ui", params={"q": "neural"}, headers=jar)
    assert page.status_code == 200 and hit_ids(page.text) and "Sign out" in page.text
    # the cookie is no API credential
    assert ui_token.get("/v1/search", params={"q": "neural"}, headers=jar).status_code == 401
    assert ui_token.post("/search", json={"query": "neural"}, headers=jar).status_code == 401
    forged = ui_token.get(
        "/ui", params={"q": "neural"}, headers={"Cookie": f"{UI_COOKIE}={TOKEN}"}, follow_redirects=False
    )
    assert forged.status_code == 303
    # the API's own ways still work on the page
    assert ui_token.get("/ui", params={"q": "neural", "token": TOKEN}).status_code == 200
    assert ui_token.get("/ui", headers={"Authorization": f"Bearer {TOKEN}"}).status_code == 200
    out = ui_token.post("/ui/logout", headers=jar, follow_redirects=False)
    assert out.status_code == 303 and f'{UI_COOKIE}=""' in out.headers["set-cookie"]
    ui_token.cookies.clear()


def test_token_form_refuses_foreign_targets_and_cross_site_posts(ui_token: TestClient) -> None:
    for target in ("//evil.example/ui", "https://evil.example/ui", "/v1/search?q=x", "/\\evil.example"):
        r = ui_token.post("/ui/login", data={"token": TOKEN, "next": target}, follow_redirects=False)
        assert r.status_code == 303 and r.headers["location"] == "/ui", target
    cross = ui_token.post(
        "/ui/login", data={"token": TOKEN}, headers={"Origin": "https://evil.example"}, follow_redirects=False
    )
    assert cross.status_code == 403 and "set-cookie" not in cross.headers
