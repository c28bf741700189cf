"""An unexpected exception is a JSON 500 and the client's keep-alive connection survives it.

No input reaches a 500 any more (test_bad_input.py holds the ones that did), so this test adds a
route that raises to the real openxiv app, in the test process only (not reachable in production),
and serves it with a real uvicorn server on a loopback port.
"""

from __future__ import annotations

import threading
import time
from collections.abc import Iterator

import httpx
import pytest
import uvicorn
from live_index import BuiltIndex, free_port


def _port(r: httpx.Response) -> int:
    return int(r.extensions["network_stream"].get_extra_info("socket").getsockname()[1])


@pytest.fixture(scope="module")
def raising_server(test_index: BuiltIndex) -> Iterator[str]:
    from openxiv.service.http.app import create_app

    app = create_app(test_index.settings, test_index.root)

    @app.get("/test-only/raise")
    def raise_unexpected() -> None:
        raise RuntimeError("an unexpected failure inside a route")

    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, http="h11", log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 120
    while not server.started and time.monotonic() < deadline:
        time.sleep(0.1)
    assert server.started, "test server did not start"
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        server.should_exit = True
        thread.join(timeout=30)


def test_unexpected_exception_is_a_json_500_and_the_connection_survives(raising_server: str) -> None:
    with httpx.Client(base_url=raising_server, timeout=60, limits=httpx.Limits(max_connections=1)) as c:
        first = c.get("/healthz")
        boom = c.get("/test-only/raise")
        assert boom.status_code == 500
        assert boom.headers["content-type"] == "application/json"
        assert boom.json() == {
            "status": "error",
            "detail": "internal error (RuntimeError); see the server log",
        }
        after = c.post("/search", json={"query": "attention is all you need", "top_k": 1})
        assert after.status_code == 200 and len(after.json()["result"]) == 1
        assert _port(first) == _port(boom) == _port(after)
