"""A bounded, reproducible schemathesis fuzz of every operation of a live server's OpenAPI schema.

Shared by the reliability suite (``test_fuzz.py``) and ``scripts/bench_reliability.py``. For each
operation and generation mode (schema-valid, schema-violating) hypothesis draws ``examples``
requests, derandomized (the same requests on every run of the same schema), and every request goes
out over one keep-alive ``requests`` session. Nothing is asserted here: every answer is counted, and
each distinct bad answer (5xx, not JSON, connection dropped) is kept with the request that caused it.

Driven through schemathesis' Python API rather than ``schema.parametrize()``: its lazy fixture
loader (``schemathesis.pytest.from_fixture``) breaks under pytest 9 (``Function._nodeid``).
"""

from __future__ import annotations

import json
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

import requests
import schemathesis
from hypothesis import HealthCheck, Phase, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode

MODES = (GenerationMode.POSITIVE, GenerationMode.NEGATIVE)


@dataclass
class Finding:
    """One distinct bad answer: what was sent and what came back."""

    operation: str
    kind: str  # "5xx", "not-json", "reset"
    status: int | None
    request: str
    response: str


@dataclass
class FuzzResult:
    requests: int = 0
    statuses: Counter[int] = field(default_factory=Counter)
    resets: int = 0
    per_operation: Counter[str] = field(default_factory=Counter)
    findings: list[Finding] = field(default_factory=list)
    unsatisfiable: list[str] = field(default_factory=list)
    seconds: float = 0.0

    @property
    def server_errors(self) -> int:
        return sum(n for s, n in self.statuses.items() if s >= 500)

    def add(self, finding: Finding) -> None:
        key = (finding.operation, finding.kind, finding.status, finding.response[:80])
        if all((f.operation, f.kind, f.status, f.response[:80]) != key for f in self.findings):
            self.findings.append(finding)


def _request_text(case: Any) -> str:
    """The request as a copy-pasteable curl line (falls back to the case's repr)."""
    try:
        return str(case.as_curl_command())
    except Exception:  # a case that cannot be rendered is still worth reporting
        return repr(case)


def _is_json(response: Any) -> bool:
    """``response`` is a schemathesis ``Response``: headers map lower-case names to lists of values.
    A stream (``application/x-ndjson``, the agent search's) counts when every line is JSON."""
    content_type = (response.headers.get("content-type") or [""])[0]
    try:
        if content_type.startswith("application/x-ndjson"):
            lines = response.content.splitlines()
            return bool(lines) and all(json.loads(line) is not None for line in lines)
        if not content_type.startswith("application/json"):
            return False
        json.loads(response.content)
    except ValueError:
        return False
    return True


def fuzz(base_url: str, examples: int, timeout: float = 60.0) -> FuzzResult:
    """Fuzz every operation of ``base_url``'s ``/openapi.json`` with ``examples`` requests per mode."""
    schema = schemathesis.openapi.from_url(base_url + "/openapi.json")
    schema.config.update(base_url=base_url)
    result = FuzzResult()
    session = requests.Session()
    started = time.monotonic()

    def send(case: Any, label: str) -> None:
        nonlocal session
        result.requests += 1
        result.per_operation[label] += 1
        try:
            response = case.call(session=session, timeout=timeout)
        except requests.ConnectionError as exc:
            result.resets += 1
            result.add(Finding(label, "reset", None, _request_text(case), repr(exc)[:300]))
            session.close()
            session = requests.Session()
            return
        status = response.status_code
        result.statuses[status] += 1
        text = response.content[:300].decode("utf-8", "replace")
        if status >= 500:
            result.add(Finding(label, "5xx", status, _request_text(case), text))
        elif status != 204 and case.method.upper() != "HEAD" and not _is_json(response):
            result.add(Finding(label, "not-json", status, _request_text(case), text))

    for op_result in schema.get_all_operations():
        operation = op_result.ok()
        label = f"{operation.method.upper()} {operation.path}"
        for mode in MODES:

            @given(operation.as_strategy(generation_mode=mode))
            @settings(
                max_examples=examples,
                derandomize=True,
                deadline=None,
                database=None,
                phases=[Phase.explicit, Phase.generate],
                suppress_health_check=list(HealthCheck),
            )
            def run(case: Any) -> None:
                send(case, label)  # noqa: B023 (run() is called at once, inside this iteration)

            try:
                run()
            except Unsatisfiable:  # nothing to violate (an operation without parameters or body)
                result.unsatisfiable.append(f"{label} ({mode.value})")
    session.close()
    result.seconds = time.monotonic() - started
    return result
