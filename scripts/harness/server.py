"""``openxiv`` servers for benchmarks: a command listening on a free loopback port, started, waited
for until it answers, measured (RSS, CPU) and stopped with SIGTERM."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import IO

import httpx
import psutil

OPENXIV = str(Path(sys.executable).parent / "openxiv")
"""The ``openxiv`` command of the interpreter running the benchmark."""


def env(threads: int | None = None) -> dict[str, str]:
    """The children's environment: offline model, ``OPENXIV_DATA_DIR`` as the caller set it, and
    ``OPENXIV_SERVE_THREADS`` when ``threads`` is given."""
    out = dict(os.environ, HF_HUB_OFFLINE="1")
    if threads is not None:
        out["OPENXIV_SERVE_THREADS"] = str(threads)
    return out


def server_timing(header: str) -> dict[str, float]:
    """A ``Server-Timing`` header as ``{stage: milliseconds}``."""
    out = {}
    for part in header.split(","):
        name, _, rest = part.strip().partition(";dur=")
        if rest:
            out[name] = float(rest)
    return out


class LoopbackProcess:
    """An ``openxiv`` command listening on a free loopback port, its output in ``log`` (a temporary
    file when None): started, waited for until `ready` says it answers (an exit or ``timeout`` raises
    RuntimeError), stopped with SIGTERM."""

    what = "openxiv"

    def __init__(self, args: list[str], log: Path | None, timeout: float, threads: int | None = None) -> None:
        with socket.socket() as s:
            s.bind(("127.0.0.1", 0))
            self.port = int(s.getsockname()[1])
        # held open for the process's life, closed by `stop` (or by `_tail` when it failed to start)
        self._fh: IO[str] = log.open("w+") if log is not None else tempfile.TemporaryFile("w+")  # noqa: SIM115
        cmd = [OPENXIV, *args, "--host", "127.0.0.1", "--port", str(self.port)]
        self.proc = subprocess.Popen(cmd, env=env(threads), stdout=self._fh, stderr=subprocess.STDOUT)
        started = time.monotonic()
        while True:
            if self.proc.poll() is not None:
                raise RuntimeError(f"{self.what} exited {self.proc.returncode}: {self._tail()}")
            try:
                if self.ready():
                    break
            except httpx.HTTPError:
                pass
            if time.monotonic() - started > timeout:
                self.stop()
                raise RuntimeError(f"{self.what} not ready after {timeout} s")
            time.sleep(0.3)
        self.startup_s = time.monotonic() - started

    def _tail(self) -> str:
        self._fh.flush()
        self._fh.seek(0)
        text = self._fh.read()
        self._fh.close()
        return text[-500:]

    def ready(self) -> bool:
        raise NotImplementedError

    def processes(self) -> list[psutil.Process]:
        """The process and its children (the server's workers)."""
        proc = psutil.Process(self.proc.pid)
        return [proc, *proc.children(recursive=True)]

    def rss_mib(self) -> list[float]:
        """RSS of each process (the server, then its workers), MiB."""
        return [p.memory_info().rss / 2**20 for p in self.processes()]

    def cpu_s(self) -> float:
        """CPU seconds (user + system) the server and its workers have used so far."""
        return sum(sum(p.cpu_times()[:2]) for p in self.processes())

    def loop_cpu_s(self) -> float:
        """CPU seconds of the processes' main threads: each serving process runs its event loop there
        (uvicorn's protocol, the ASGI middleware, routing, the request model, sending the response),
        while the search itself runs in the threadpool's worker threads."""
        total = 0.0
        for p in self.processes():
            total += sum(t.user_time + t.system_time for t in p.threads() if t.id == p.pid)
        return total

    def stop(self) -> None:
        if self.proc.poll() is None:
            self.proc.send_signal(signal.SIGTERM)
            try:
                self.proc.wait(timeout=60)
            except subprocess.TimeoutExpired:
                self.proc.kill()
                self.proc.wait()
        self._fh.close()


class Server(LoopbackProcess):
    """``openxiv serve`` of the snapshots under ``root`` (access log off); ready once ``/readyz`` is
    200. ``admin_token`` enables ``POST /v1/admin/reload``; ``threads`` sets its search threadpool;
    ``extra`` are more flags of ``openxiv serve`` (e.g. ``--ledger DIR``)."""

    what = "openxiv serve"

    def __init__(
        self,
        root: Path,
        log: Path | None = None,
        *,
        timeout: float = 600,
        admin_token: str | None = None,
        threads: int | None = None,
        workers: int = 1,
        extra: tuple[str, ...] = (),
    ) -> None:
        self.root = root
        self.admin_token = admin_token
        args = ["serve", "--index", str(root), "--no-access-log", "--workers", str(workers), *extra]
        super().__init__(
            [*args, "--admin-token", admin_token] if admin_token else args, log, timeout, threads
        )

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def ready(self) -> bool:
        return httpx.get(self.url + "/readyz", timeout=2).status_code == 200
