"""Parallel ingest: inputs parsed in worker processes (or Ray tasks), stored by one writer.

Parsing is the slow part of an ingest of PDFs (BENCHMARKS.md, «PDF extraction»), storing is not,
and SQLite wants one writer. So the inputs are split into files, each file is read by a worker into
a list of `PaperRecord` / `ReadError` items, and the parent hands the lists to `Store.ingest` **in
input order**: the items, hence the stored records, the run's counts and the corpus fingerprint, are
those of the serial path. At most ``2 x workers`` files are in flight, so memory stays bounded by a
few files' records however many inputs there are. A JSON-lines file over ``split_bytes``
(`Settings.ingest_split_bytes`; the OAI/Kaggle snapshot is one such file) is handed out as
line-aligned byte ranges of about that size instead (`openxiv.corpus.readers.split`), each one unit
of work numbered as in the whole file, so one big file is parsed by every worker and memory stays
bounded by a few ranges' records; a gzipped file cannot be cut so and is read by one worker.

``ray=True`` runs the same per-file reads as Ray tasks (``ray.init(address=Settings.ray_address)``),
for a cluster whose nodes see the same input paths (a shared filesystem).
"""

from __future__ import annotations

import os
from collections import deque
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Executor, ProcessPoolExecutor
from pathlib import Path
from typing import Any, TypeAlias, cast

from openxiv.corpus.readers.jsonl import Span
from openxiv.corpus.records import PaperRecord, ReadError
from openxiv.corpus.settings.model import Settings

__all__ = ["RAY_PORT_WAIT_ENV", "RAY_PORT_WAIT_S", "ReadTask", "ray_start", "read_parallel", "read_tasks"]

Item: TypeAlias = PaperRecord | ReadError
ReadTask: TypeAlias = tuple[str, str | None, bool]
"""``(path, format, in_folder)``: one input file, or a path that does not exist (its error)."""
SpanTask: TypeAlias = tuple[str, str, bool, Span]
"""``(path, format, in_folder, span)``: one byte range of a big JSON-lines file."""
Task: TypeAlias = ReadTask | SpanTask


def read_tasks(inputs: Sequence[Path]) -> list[ReadTask | ReadError]:
    """One task per input file, in the order `read_path` would read them; in their place, the
    error of each folder or link that cannot be read (`walk_inputs`)."""
    from openxiv.corpus.readers.walk import walk_inputs

    tasks: list[ReadTask | ReadError] = []
    for path in inputs:
        if not path.exists():
            tasks.append((str(path), None, False))
            continue
        tasks.extend(f if isinstance(f, ReadError) else (str(f), None, f != path) for f in walk_inputs(path))
    return tasks


def run_task(task: Task, fmt: str | None) -> list[Item]:
    """Every item of one task (runs in a worker)."""
    from openxiv.corpus.readers import read_file, read_path

    if len(task) == 4:
        path, found, in_folder, span = task
        return list(read_file(Path(path), found, in_folder, span=span))
    path, _, in_folder = task
    p = Path(path)
    if not p.exists():
        return list(read_path(p, fmt))  # its "no such file" error
    return list(read_file(p, fmt, in_folder=in_folder))


def _split(
    tasks: Iterable[ReadTask | ReadError], fmt: str | None, split_bytes: int
) -> Iterator[Task | ReadError]:
    """``tasks`` with each JSON-lines file over ``split_bytes`` replaced by its spans, in order."""
    from openxiv.corpus.readers.split import spans, split_format

    for task in tasks:
        found = None if isinstance(task, ReadError) else split_format(Path(task[0]), fmt, split_bytes)
        if found is None:
            yield task
            continue
        path, _, in_folder = cast(ReadTask, task)
        yield from ((path, found, in_folder, span) for span in spans(Path(path), split_bytes))


def _in_order(submit: Callable[[Task], Any], result: Callable[[Any], list[Item]],
              tasks: Iterable[Task | ReadError], window: int) -> Iterator[Item]:  # fmt: skip
    """The items of ``tasks`` in order, at most ``window`` of them in flight; a `ReadError` in the
    list (a part of a folder that cannot be read) is passed on in its place, not submitted."""
    pending: deque[tuple[bool, Any]] = deque()

    def start(task: Task | ReadError) -> tuple[bool, Any]:
        return (True, [task]) if isinstance(task, ReadError) else (False, submit(task))

    todo = iter(tasks)
    for task in todo:
        pending.append(start(task))
        if len(pending) >= window:
            break
    while pending:
        known, handle = pending.popleft()
        items = handle if known else result(handle)
        nxt = next(todo, None)
        if nxt is not None:
            pending.append(start(nxt))
        yield from items


def read_parallel(
    tasks: Sequence[ReadTask | ReadError],
    fmt: str | None,
    workers: int,
    ray_address: str | None = None,
    ray: bool = False,
    split_bytes: int | None = None,
) -> Iterator[Item]:
    """The items of ``tasks`` (`read_tasks` of the inputs: the items `read_path` gives, same order),
    parsed by ``workers`` processes, or by Ray tasks when ``ray``; a JSON-lines file over
    ``split_bytes`` (default: `Settings.ingest_split_bytes`'s) is parsed in ranges of about that
    size (`_split`)."""
    window = 2 * max(1, workers)
    if split_bytes is None:
        split_bytes = int(Settings.model_fields["ingest_split_bytes"].default)
    units = _split(tasks, fmt, split_bytes)
    if ray:
        yield from _read_on_ray(units, fmt, window, ray_address)
        return
    pool: Executor = ProcessPoolExecutor(max_workers=workers)
    try:
        yield from _in_order(lambda t: pool.submit(run_task, t, fmt), lambda f: f.result(), units, window)
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


RAY_PORT_WAIT_ENV = "RAY_gcs_server_port_wait_time_s"
"""Ray's own variable (lower case, as Ray spells it) for `RAY_PORT_WAIT_S`."""
RAY_PORT_WAIT_S = "120"
"""Seconds a Ray node started here waits for its GCS server to write its port (Ray's
``RAY_gcs_server_port_wait_time_s``; its own default, 30, ran out on a busy 2-core machine, which
failed the start with "Timed out waiting for file .../gcs_server_port_..."). A value the operator
set is kept."""


def ray_start(ray: Any, address: str | None) -> None:
    """``ray.init`` for openxiv's Ray stages (ingest, embed): a local node (no ``address``) gets
    `RAY_PORT_WAIT_S` to start in, no dashboard, and no worker logs on the driver."""
    if address is None:
        os.environ.setdefault(RAY_PORT_WAIT_ENV, RAY_PORT_WAIT_S)
    ray.init(address=address, include_dashboard=False, log_to_driver=False)


def _read_on_ray(
    tasks: Iterable[Task | ReadError], fmt: str | None, window: int, address: str | None
) -> Iterator[Item]:
    from openxiv.corpus.extras import missing_extra

    try:
        import ray
    except ImportError as exc:
        raise missing_extra("ray", "openxiv ingest --ray", exc) from exc
    started = not ray.is_initialized()
    if started:
        ray_start(ray, address)
    try:
        remote = ray.remote(num_cpus=1)(run_task)
        yield from _in_order(lambda t: remote.remote(t, fmt), ray.get, tasks, window)
    finally:
        if started:
            ray.shutdown()
