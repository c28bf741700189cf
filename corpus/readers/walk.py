"""The input files of a folder, and a `ReadError` for every part of it that cannot be read.

`walk_inputs` lists a folder recursively in sorted order (each folder's entries by name, a folder's
files before the entries that sort after it: the order of ``sorted(folder.rglob("*"))``) and
follows symbolic links to files and to folders. Nothing is passed over in silence (issue 21): a
folder that cannot be listed (no read permission), a broken symbolic link, a link that points back
into the folders above it or into itself (a loop), and an entry whose type cannot be read each
become one `ReadError` naming the path below the input folder, so the ingest reports it and ends
with exit status 3. Files that are not input files (``notes.txt``, hidden files) are not inputs
and are passed over, as before.
"""

from __future__ import annotations

import errno
import os
from collections.abc import Iterator
from pathlib import Path

from openxiv.corpus.records import ReadError

__all__ = ["INPUT_SUFFIXES", "is_input_file", "walk_inputs"]

INPUT_SUFFIXES = (".jsonl", ".json", ".jsonl.gz", ".json.gz", ".ndjson", ".ndjson.gz", ".pdf", ".txt.gz")


def is_input_file(path: Path) -> bool:
    """A file name the readers take: one of `INPUT_SUFFIXES`, not hidden."""
    name = path.name.lower()
    return not name.startswith(".") and name.endswith(INPUT_SUFFIXES)


def walk_inputs(path: Path) -> Iterator[Path | ReadError]:
    """The input files under ``path`` (itself if it is not a folder), recursively, in sorted order,
    with a `ReadError` in their place for every folder or link that cannot be read."""
    if not path.is_dir():
        yield path
        return
    yield from _walk(path, path, _identity(path))


def _identity(folder: Path) -> tuple[int, int]:
    st = folder.stat()
    return st.st_dev, st.st_ino


def _walk(root: Path, folder: Path, *above: tuple[int, int]) -> Iterator[Path | ReadError]:
    """``folder``'s entries; ``above``: the (device, inode) of each folder from ``root`` down to it."""
    try:
        with os.scandir(folder) as it:
            entries = sorted(it, key=lambda e: e.name)
    except OSError as exc:
        yield _error(root, folder, "folder", f"cannot read folder: {exc.strerror or exc}")
        return
    for entry in entries:
        child = Path(entry.path)
        if entry.name.startswith("."):
            continue
        try:
            st = child.stat()  # follows links: a broken one or a loop raises here
        except OSError as exc:
            if entry.is_symlink():
                yield _error(root, child, "file", _link_problem(child, exc))
            elif is_input_file(child):
                yield _error(root, child, "file", f"cannot read file: {exc.strerror or exc}")
            continue
        if entry.is_dir():  # a folder, or a link to one
            key = (st.st_dev, st.st_ino)
            if key in above:
                target = os.readlink(child) if entry.is_symlink() else child
                yield _error(root, child, "folder", f"symbolic link loop: {target} is a folder above it")
                continue
            yield from _walk(root, child, *above, key)
        elif entry.is_file() and is_input_file(child):
            yield child


def _link_problem(link: Path, exc: OSError) -> str:
    try:
        target = os.readlink(link)
    except OSError:
        target = "?"
    if exc.errno == errno.ELOOP:
        return f"symbolic link loop ({link.name} -> {target})"
    if exc.errno == errno.ENOENT:
        return f"broken symbolic link: {target} does not exist"
    return f"cannot follow symbolic link to {target}: {exc.strerror or exc}"


def _error(root: Path, path: Path, kind: str, reason: str) -> ReadError:
    """A `ReadError` naming ``path`` below ``root`` (``sub/locked``), or the root folder itself."""
    rel = path.relative_to(root).as_posix() if path != root else (root.name or str(root))
    return ReadError(rel, kind, reason)
