"""Fault and quota injection (``--faults SPEC``): what hosted services do to agents, on purpose, reproducibly.

A spec is clauses separated by ``;``, each ``name=value`` followed by options::

    seed=7; 429=0.2 retry_after=3 route=/search; 503=0.05; latency=0.25s p=0.5;
    timeout=0.01 after=30s; quota=minute:20 shape=arxiv run=r1; quota=day:500

- ``seed=N``: the seed (default 0). Whether a clause fires on a call is a hash of the seed, the
  clause, the call's run, its route and its number among that run's calls to that route: the same
  spec gives the same sequence for the same calls, whatever else the server is serving meanwhile.
- ``429=P`` / ``500=P`` / ``502=P`` / ``503=P`` / ``504=P``: answer that status with probability P
  (a 429 carries ``Retry-After``, ``retry_after`` seconds, default 1).
- ``latency=0.25s`` (or ``2s``, or milliseconds with ``ms``): delay the answer, with probability ``p`` (default 1). The wait is on
  the event loop: it holds no compute slot.
- ``timeout=P``: with probability P, hold the request ``after`` seconds (default 60) and then answer
  504, as a gateway that gave up would.
- ``quota=minute:N`` / ``quota=day:N``: N calls per minute / per UTC day per run (and route, when
  given); past them, DeepXiv's shape (``shape=deepxiv``, the default for ``day``: 429, its
  ``Daily limit reached`` detail, ``Retry-After`` until the window ends) or arXiv's (``shape=arxiv``,
  the default for ``minute``: 503 ``Rate exceeded.`` as text with ``Retry-After``).

Options on any clause: ``route=PREFIX`` (only calls whose route starts with it), ``run=RUN`` (only
that run's calls). A bad spec is a `BadSpec` naming the clause (``openxiv serve`` exits 2).
"""

from __future__ import annotations

import hashlib
import re
import threading
import time
from dataclasses import dataclass, field
from pathlib import Path

__all__ = ["BadSpec", "Fault", "FaultPlan", "parse_faults"]

STATUSES = ("429", "500", "502", "503", "504")
NAMES = (*STATUSES, "seed", "latency", "timeout", "quota")
OPTIONS = {"route", "run", "p", "retry_after", "after", "shape"}
_DURATION = re.compile(r"^(\d+(?:\.\d+)?)(ms|s)?$")


class BadSpec(ValueError):
    """A fault spec that cannot be read; the message names the clause and what is wrong."""


@dataclass(frozen=True)
class Clause:
    name: str
    value: float
    route: str | None = None
    run: str | None = None
    p: float = 1.0
    retry_after: float = 1.0
    after: float = 60.0
    window: str = ""
    shape: str = ""
    text: str = ""

    def applies(self, run: str | None, route: str) -> bool:
        return (self.route is None or route.startswith(self.route)) and (self.run is None or self.run == run)


@dataclass(frozen=True)
class Fault:
    """What to do to one call: wait ``delay`` seconds first, then (``status`` set) answer it with
    ``body`` and ``headers`` instead of serving it. ``label`` is what the ledger records."""

    label: str
    delay: float = 0.0
    status: int | None = None
    body: bytes = b""
    content_type: str = "application/json"
    headers: dict[str, str] = field(default_factory=dict)


def _duration(text: str, clause: str) -> float:
    match = _DURATION.match(text.strip())
    if not match:
        raise BadSpec(f"faults: {clause!r}: {text!r} is not a duration (250ms, 2s, 1.5)")
    value = float(match.group(1))
    return value / 1000 if match.group(2) == "ms" else value


def _probability(text: str, clause: str) -> float:
    try:
        value = float(text)
    except ValueError:
        value = -1.0
    if not 0.0 <= value <= 1.0:
        raise BadSpec(f"faults: {clause!r}: {text!r} is not a probability between 0 and 1")
    return value


def _clause(text: str) -> Clause:
    head, *rest = text.split()
    name, sep, value = head.partition("=")
    if not sep or name not in NAMES:
        raise BadSpec(f"faults: {text!r}: expected one of {', '.join(n + '=' for n in NAMES)} first")
    opts: dict[str, str] = {}
    for item in rest:
        key, sep, val = item.partition("=")
        if not sep or key not in OPTIONS:
            raise BadSpec(
                f"faults: {text!r}: option {item!r} is not one of {', '.join(sorted(OPTIONS))} =VALUE"
            )
        opts[key] = val
    kw: dict[str, object] = {"route": opts.get("route"), "run": opts.get("run"), "text": text}
    if "p" in opts:
        kw["p"] = _probability(opts["p"], text)
    if "retry_after" in opts:
        kw["retry_after"] = _duration(opts["retry_after"], text)
    if "after" in opts:
        kw["after"] = _duration(opts["after"], text)
    if name == "seed":
        if not value.isdigit():
            raise BadSpec(f"faults: {text!r}: the seed is a non-negative integer")
        return Clause(name, float(value), text=text)
    if name == "latency":
        return Clause(name, _duration(value, text), **kw)  # type: ignore[arg-type]
    if name == "quota":
        window, _, count = value.partition(":")
        if window not in ("minute", "day") or not count.isdigit() or int(count) < 1:
            raise BadSpec(f"faults: {text!r}: expected quota=minute:N or quota=day:N (N >= 1)")
        shape = opts.get("shape") or ("arxiv" if window == "minute" else "deepxiv")
        if shape not in ("arxiv", "deepxiv"):
            raise BadSpec(f"faults: {text!r}: shape={shape!r} is not deepxiv or arxiv")
        return Clause(name, float(count), window=window, shape=shape, **kw)  # type: ignore[arg-type]
    return Clause(name, _probability(value, text), **kw)  # type: ignore[arg-type]


def parse_faults(spec: str) -> FaultPlan:
    """The plan of ``spec`` (``@FILE`` reads the spec from a file; ``#`` starts a comment)."""
    if spec.startswith("@"):
        path = Path(spec[1:])
        try:
            spec = path.read_text(encoding="utf-8")
        except OSError as exc:
            raise BadSpec(f"faults: cannot read {path}: {exc.strerror or exc}") from exc
    lines = [line.split("#", 1)[0] for line in spec.splitlines()]
    clauses = [_clause(c.strip()) for c in ";".join(lines).split(";") if c.strip()]
    if not clauses:
        raise BadSpec("faults: the spec is empty")
    seeds = [c for c in clauses if c.name == "seed"]
    return FaultPlan(
        seed=int(seeds[-1].value) if seeds else 0,
        clauses=tuple(c for c in clauses if c.name != "seed"),
        text="; ".join(c.text for c in clauses),
    )


class FaultPlan:
    """The parsed spec, its call counters and its quota windows (one per server process)."""

    def __init__(self, seed: int, clauses: tuple[Clause, ...], text: str):
        self.seed = seed
        self.clauses = clauses
        self.text = text
        self._lock = threading.Lock()
        self._calls: dict[tuple[str | None, str], int] = {}
        self._used: dict[tuple[int, str | None, str, int], int] = {}

    def _draw(self, index: int, run: str | None, route: str, n: int) -> float:
        key = f"{self.seed}\x00{index}\x00{run or ''}\x00{route}\x00{n}".encode()
        return int.from_bytes(hashlib.sha256(key).digest()[:8], "big") / 2.0**64

    def decide(self, run: str | None, route: str, now: float | None = None) -> Fault | None:
        """The fault for the next call of ``run`` to ``route`` (``None``: serve it as it is)."""
        now = time.time() if now is None else now
        with self._lock:
            n = self._calls.get((run, route), 0)
            self._calls[(run, route)] = n + 1
            delay, labels = 0.0, []
            for i, c in enumerate(self.clauses):
                if not c.applies(run, route):
                    continue
                if c.name == "quota":
                    over = self._quota(i, c, run, now)
                    if over is not None:
                        return over
                    continue
                fires = self._draw(i, run, route, n) < (c.p if c.name == "latency" else c.value)
                if not fires:
                    continue
                if c.name == "latency":
                    delay += c.value
                    labels.append(f"latency:{round(c.value * 1000)}")
                elif c.name == "timeout":
                    return _error(504, "timeout", "gateway timeout (injected)", delay + c.after)
                else:
                    return _status(int(c.name), c, delay)
        return Fault(label=",".join(labels), delay=delay) if labels else None

    def _quota(self, i: int, c: Clause, run: str | None, now: float) -> Fault | None:
        span = 60 if c.window == "minute" else 86400
        window = int(now // span)
        key = (i, run, c.route or "", window)
        used = self._used.get(key, 0)
        if used < c.value:
            self._used[key] = used + 1
            return None
        retry = str(max(1, int((window + 1) * span - now)))
        label = f"quota:{c.window}"
        if c.shape == "arxiv":
            return Fault(
                label,
                status=503,
                body=b"Rate exceeded.",
                content_type="text/plain",
                headers={"Retry-After": retry},
            )
        detail = f"Daily limit reached ({int(c.value)} requests per {c.window} for this run)."
        return _error(429, label, detail, 0.0, {"Retry-After": retry, "Daily-Limit": str(int(c.value))})

    def calls_of(self, run: str | None, route: str) -> int:
        """How many calls of ``run`` to ``route`` the plan has decided so far."""
        with self._lock:
            return self._calls.get((run, route), 0)

    def describe(self) -> dict[str, object]:
        """What ``/healthz`` and ``/v1/index`` say about the active spec."""
        return {"active": True, "seed": self.seed, "spec": self.text}


def _status(status: int, c: Clause, delay: float) -> Fault:
    if status == 429:
        retry = f"{c.retry_after:g}"
        return _error(429, "429", "rate limit exceeded (injected)", delay, {"Retry-After": retry})
    return _error(status, str(status), f"server error {status} (injected)", delay)


def _error(
    status: int, label: str, detail: str, delay: float, headers: dict[str, str] | None = None
) -> Fault:
    body = ('{"status":"error","detail":' + _json_str(detail) + "}").encode()
    return Fault(label=label, delay=delay, status=status, body=body, headers=headers or {})


def _json_str(text: str) -> str:
    import json

    return json.dumps(text)
