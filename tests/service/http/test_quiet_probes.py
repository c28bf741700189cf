"""The access log leaves out a container healthcheck's loopback probes, and nothing else (issue 22.5)."""

from __future__ import annotations

import logging

import pytest

from openxiv.service.launch import QuietProbes, log_config

ACCESS = '%s - "%s %s HTTP/%s" %d'  # uvicorn's access-log message and its five arguments


def _kept(client: str, path: str, status: int = 200) -> bool:
    record = logging.LogRecord(
        "uvicorn.access", logging.INFO, __file__, 0, ACCESS, (client, "GET", path, "1.1", status), None
    )
    return QuietProbes().filter(record)


@pytest.mark.parametrize(
    ("client", "path", "status", "kept"),
    [
        ("127.0.0.1:51234", "/healthz", 200, False),
        ("127.0.0.1:51234", "/readyz", 200, False),
        ("[::1]:51234", "/readyz", 200, False),
        ("127.0.0.1:51234", "/readyz", 503, True),  # a failing probe is worth a line
        ("10.0.0.7:40000", "/healthz", 200, True),  # so is a probe from elsewhere
        ("127.0.0.1:51234", "/search", 200, True),
        ("127.0.0.1:51234", "/healthz?x=1", 200, True),
    ],
)
def test_probe_lines(client: str, path: str, status: int, kept: bool) -> None:
    assert _kept(client, path, status) is kept


def test_the_access_handler_uses_it() -> None:
    config = log_config("info")
    assert "quiet_probes" in config["handlers"]["access"]["filters"]
    assert "quiet_probes" not in config["handlers"]["default"]["filters"]
    other = logging.LogRecord("x", logging.INFO, __file__, 0, "plain message", None, None)
    assert QuietProbes().filter(other)
