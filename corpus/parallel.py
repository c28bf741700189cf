"""Parallel ingest: inputs parsed in worker processes (or Ray tasks), stored by one writer.

Parsing is the slow part of an ingest of PDFs (BENCHMARKS.md, «PDF extraction»), storing is not,
and SQLite wants one writer. So the inputs are split into files, each file is read by a worker into
a list of `PaperRecord` / `ReadError` items, and the parent hands the lists to `Store.ingest` **in
input order**: the items, hence the stored records, the run's counts and the corpus fingerprint, are
those of the serial path. At most ``2 x workers`` files are in flight, so memory stays bounded by a
few files' records however many inputs there are. A file is the unit of work: one large JSONL file is
still read by one worker (split such dumps into parts to spread them).

``ray=True`` runs the same per-file reads as Ray tasks (``ray.init(address=Settings.ray_address)``),
for a cluster whose nodes see the same input paths (a shared filesystem).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from pathlib import Path
from typing import Any, TypeAlias

from openxiv.corpus.records import PaperRecord, ReadError

__all__ = ["ReadTask", "read_parallel", "read_tasks"]

Item: TypeAlias = PaperRecord | ReadError
ReadTask: TypeAlias = tuple[str, str | None, bool]
"""``(path, format, in_folder)``: one input file, or a path that does not exist (its error)."""


def read_tasks(inputs: Sequence[Path]) -> list[ReadTask]:
    """One task per input file, in the order `read_path` would read them."""
    from openxiv.corpus.readers import iter_files

    tasks: list[ReadTask] = []
    for path in inputs:
        if not path.exists():
            tasks.append((str(path), None, False))
            continue
        tasks.extend((str(f), None, f != path) for f in iter_files(path))
    return tasks


def run_task(task: ReadTask, fmt: str | None) -> list[Item]:
    """Every item of one task (runs in a worker)."""
    from openxiv.corpus.readers import read_file, read_path

    path, _, in_folder = task
    p = Path(path)
    if not p.exists():
        return list(read_path(p, fmt))  # its "no such file" error
    return list(read_file(p, fmt, in_folder=in_folder))


def _in_order(submit: Callable[[ReadTask], Any], result: Callable[[Any], list[Item]],
              tasks: Sequence[ReadTask], window: int) -> Iterator[Item]:  # fmt: skip
    pending: deque[Any] = deque()
    todo = iter(tasks)
    for task in todo:
        pending.append(submit(task))
        if len(pending) >= window:
            break
    while pending:
        items = result(pending.popleft())
        nxt = next(todo, None)
        if nxt is not None:
            pending.append(submit(nxt))
        yield from items


def read_parallel(
    tasks: Sequence[ReadTask],
    fmt: str | None,
    workers: int,
    ray_address: str | None = None,
    ray: bool = False,
) -> Iterator[Item]:
    """The items of ``tasks`` (`read_tasks` of the inputs: the items `read_path` gives, same order),
    parsed by ``workers`` processes, or by Ray tasks when ``ray``."""
    window = 2 * max(1, workers)
    if ray:
        yield from _read_on_ray(tasks, fmt, window, ray_address)
        return
    pool: Executor = ProcessPoolExecutor(max_workers=workers)
    try:
        yield from _in_order(lambda t: pool.submit(run_task, t, fmt), lambda f: f.result(), tasks, window)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


def _read_on_ray(
    tasks: Sequence[ReadTask], fmt: str | None, window: int, address: str | None
) -> Iterator[Item]:
    from openxiv.corpus.extras import missing_extra

    try:
        import ray
    except ImportError as exc:
        raise missing_extra("ray", "openxiv ingest --ray", exc) from exc
    started = not ray.is_initialized()
    if started:
        ray.init(address=address, include_dashboard=False, log_to_driver=False)
    try:
        remote = ray.remote(num_cpus=1)(run_task)
        yield from _in_order(lambda t: remote.remote(t, fmt), ray.get, tasks, window)
    finally:
        if started:
            ray.shutdown()
