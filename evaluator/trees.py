"""TaxoBench taxonomy trees: parsing with located errors, and the views the metrics need.

A tree is JSON: an internal topic node ``{"name": str, "subtopics": [node, ...]}`` or a leaf topic
node (a paper category) ``{"name": str, "papers": [title, ...]}``. Papers are plain title strings
(``{"title": str}`` objects are accepted too, as some agents emit them).

Conventions (written down because real outputs break the schema now and then):

* **A node with both ``subtopics`` and ``papers``** is accepted. It is an internal topic node whose
  own papers form one extra paper cluster (numbered before its subtopics' clusters, preorder) and
  whose ancestor path, for Sem-Path, ends at that node. For US-TED only its subtopics count, as
  paper nodes are excluded from the hierarchy. The public scorer treats it the same way.
* A node with neither key is a leaf topic with no papers; ``"papers": []`` likewise. Leaves without
  papers count as topic nodes (|T|, US-TED) but produce no cluster.
* Empty or whitespace-only paper titles are ignored (as the public scorer does).
* **A title listed in several leaves** keeps its *last* leaf (preorder) as its cluster, as the public
  scorer's dict overwrite does; Sem-Path instead uses *every* path of such a title and keeps the best
  pair (paper, A.4).
* Papers are matched by their exact title string inside one tree; matching across trees goes
  through :func:`openxiv.evaluator.titles.align_titles`.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from typing import Any

__all__ = [
    "MAX_DEPTH",
    "TaxoNode",
    "TreeError",
    "ancestor_paths",
    "iter_nodes",
    "leaf_clusters",
    "paper_titles",
    "parse_tree",
    "subtree_size",
    "topic_count",
]


class TreeError(ValueError):
    """A malformed taxonomy tree; the message says where (line and JSON path)."""

    def __init__(self, message: str, *, line: int | None = None, path: str = "$") -> None:
        self.line = line
        self.path = path
        where = f"line {line}: " if line is not None else ""
        super().__init__(f"{where}{path}: {message}")


@dataclass(eq=False)
class TaxoNode:
    """One topic node. ``children`` are subtopics; ``papers`` the titles filed directly under it."""

    name: str
    children: list[TaxoNode] = field(default_factory=list)
    papers: list[str] = field(default_factory=list)
    size: int = 1  # number of topic nodes in this subtree (itself included), set by parse_tree

    @property
    def is_leaf(self) -> bool:
        return not self.children


def _paper_title(item: Any, line: int | None, path: str) -> str:
    if isinstance(item, str):
        return item
    if isinstance(item, Mapping) and isinstance(item.get("title"), str):
        return str(item["title"])
    raise TreeError(f"a paper must be a title string, got {type(item).__name__}", line=line, path=path)


MAX_DEPTH = 256  # far beyond any real taxonomy; keeps every recursive metric inside Python's stack


def _parse(obj: Any, line: int | None, path: str, depth: int = 0) -> TaxoNode:
    if depth > MAX_DEPTH:
        raise TreeError(f"tree is nested too deeply (more than {MAX_DEPTH} levels)", line=line, path=path)
    if not isinstance(obj, Mapping):
        raise TreeError(f"a topic node must be a JSON object, got {type(obj).__name__}", line=line, path=path)
    name = obj.get("name")
    if not isinstance(name, str):
        got = "missing" if name is None else type(name).__name__
        raise TreeError(f'"name" must be a string ({got})', line=line, path=path)
    subs = obj.get("subtopics")
    papers = obj.get("papers")
    if subs is not None and not isinstance(subs, list):
        raise TreeError(f'"subtopics" must be a list, got {type(subs).__name__}', line=line, path=path)
    if papers is not None and not isinstance(papers, list):
        raise TreeError(f'"papers" must be a list, got {type(papers).__name__}', line=line, path=path)
    node = TaxoNode(name=name)
    for k, item in enumerate(papers or []):
        title = _paper_title(item, line, f"{path}.papers[{k}]")
        if title.strip():
            node.papers.append(title)
    for k, child in enumerate(subs or []):
        node.children.append(_parse(child, line, f"{path}.subtopics[{k}]", depth + 1))
    node.size = 1 + sum(c.size for c in node.children)
    return node


def parse_tree(obj: Any, *, line: int | None = None, path: str = "$") -> TaxoNode:
    """Build a :class:`TaxoNode` tree from decoded JSON; raise :class:`TreeError` on malformed input."""
    return _parse(obj, line, path)


def iter_nodes(root: TaxoNode) -> Iterator[TaxoNode]:
    """Topic nodes in preorder (iterative, so deep trees are fine)."""
    stack = [root]
    while stack:
        node = stack.pop()
        yield node
        stack.extend(reversed(node.children))


def subtree_size(node: TaxoNode) -> int:
    """|T_u|: topic nodes in the subtree rooted at ``node`` (paper nodes excluded)."""
    return node.size


def topic_count(root: TaxoNode) -> int:
    """|T|: the number of topic nodes of the tree (papers are not nodes of the hierarchy)."""
    return root.size


def paper_titles(root: TaxoNode) -> list[str]:
    """Every paper title in preorder, duplicates included (the scorer's default retrieved list)."""
    return [t for node in iter_nodes(root) for t in node.papers]


def leaf_clusters(root: TaxoNode) -> dict[str, int]:
    """Paper title -> cluster index. Clusters are the nodes holding papers, numbered in preorder.

    A title filed under several nodes gets the **last** one (public scorer convention). The dict's
    insertion order is the first occurrence of each title, so ``list(leaf_clusters(t))`` is the
    tree's distinct titles in reading order.
    """
    out: dict[str, int] = {}
    cluster = 0
    for node in iter_nodes(root):
        if node.papers:
            for t in node.papers:
                out[t] = cluster
            cluster += 1
    return out


def ancestor_paths(root: TaxoNode) -> dict[str, list[tuple[str, ...]]]:
    """Paper title -> every root-to-paper path with the paper dropped: ``(root name, ..., leaf name)``.

    The root is kept (TaxoBench A.4). A title filed under several nodes has several paths, in
    preorder; a title repeated inside one node gives that path once.
    """
    out: dict[str, list[tuple[str, ...]]] = {}
    stack: list[tuple[TaxoNode, tuple[str, ...]]] = [(root, (root.name,))]
    while stack:
        node, prefix = stack.pop()
        for t in dict.fromkeys(node.papers):
            out.setdefault(t, []).append(prefix)
        for child in reversed(node.children):
            stack.append((child, (*prefix, child.name)))
    return out
