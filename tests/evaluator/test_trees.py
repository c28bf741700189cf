"""TaxoBench tree parsing (located errors) and the views the metrics use."""

from __future__ import annotations

import pytest

from openxiv.evaluator import taxobench_metrics as tm
from openxiv.evaluator.labelsim import ExactSimilarity
from openxiv.evaluator.trees import (
    MAX_DEPTH,
    TreeError,
    ancestor_paths,
    iter_nodes,
    leaf_clusters,
    paper_titles,
    parse_tree,
    subtree_size,
    topic_count,
)

TREE = {
    "name": "Root",
    "subtopics": [
        {
            "name": "A",
            "subtopics": [{"name": "A1", "papers": ["p1", "p2"]}, {"name": "A2", "papers": ["p3"]}],
        },
        {"name": "B", "papers": ["p4", "p1"]},
        {"name": "C", "papers": []},
    ],
}


def test_parse_and_sizes() -> None:
    root = parse_tree(TREE)
    assert root.name == "Root"
    assert [n.name for n in iter_nodes(root)] == ["Root", "A", "A1", "A2", "B", "C"]
    assert topic_count(root) == 6  # papers are not topic nodes
    assert subtree_size(root.children[0]) == 3
    assert root.children[2].is_leaf and root.children[2].papers == []


def test_paper_titles_keep_duplicates_in_preorder() -> None:
    assert paper_titles(parse_tree(TREE)) == ["p1", "p2", "p3", "p4", "p1"]


def test_leaf_clusters_last_leaf_wins() -> None:
    # clusters numbered in preorder over nodes holding papers: A1=0, A2=1, B=2 (C has no papers)
    clusters = leaf_clusters(parse_tree(TREE))
    assert clusters == {"p1": 2, "p2": 0, "p3": 1, "p4": 2}
    assert list(clusters) == ["p1", "p2", "p3", "p4"]  # first-occurrence order


def test_ancestor_paths_keep_root_and_all_paths() -> None:
    paths = ancestor_paths(parse_tree(TREE))
    assert paths["p1"] == [("Root", "A", "A1"), ("Root", "B")]
    assert paths["p3"] == [("Root", "A", "A2")]
    assert paths["p4"] == [("Root", "B")]


def test_node_with_both_subtopics_and_papers() -> None:
    tree = {"name": "R", "papers": ["direct"], "subtopics": [{"name": "X", "papers": ["x1"]}]}
    root = parse_tree(tree)
    assert topic_count(root) == 2  # R and X; the paper under R does not add a node
    assert not root.is_leaf
    assert leaf_clusters(root) == {"direct": 0, "x1": 1}  # R's own papers: a cluster before its subtopics
    assert ancestor_paths(root) == {"direct": [("R",)], "x1": [("R", "X")]}


def test_lenient_inputs() -> None:
    root = parse_tree({"name": "R", "papers": [{"title": "As object"}, "", "  ", "plain"]})
    assert root.papers == ["As object", "plain"]
    assert parse_tree({"name": "only a name"}).is_leaf


@pytest.mark.parametrize(
    ("obj", "where", "what"),
    [
        ([], "$", "must be a JSON object"),
        ({"subtopics": []}, "$", '"name" must be a string (missing)'),
        ({"name": 3}, "$", '"name" must be a string (int)'),
        ({"name": "R", "subtopics": {"name": "x"}}, "$", '"subtopics" must be a list'),
        ({"name": "R", "papers": "p1"}, "$", '"papers" must be a list'),
        (
            {"name": "R", "subtopics": [{"name": "A", "papers": [1]}]},
            "$.subtopics[0].papers[0]",
            "title string",
        ),
        ({"name": "R", "subtopics": [{"name": "A"}, "B"]}, "$.subtopics[1]", "must be a JSON object"),
    ],
)
def test_malformed_trees_have_located_errors(obj: object, where: str, what: str) -> None:
    with pytest.raises(TreeError) as info:
        parse_tree(obj, line=7, path="$")
    msg = str(info.value)
    assert msg.startswith(f"line 7: {where}: ")
    assert what in msg
    assert info.value.line == 7 and info.value.path == where


def test_too_deep_is_a_tree_error() -> None:
    node: dict = {"name": "leaf", "papers": ["p"]}
    for k in range(MAX_DEPTH):
        node = {"name": f"n{k}", "subtopics": [node]}
    root = parse_tree(node)  # MAX_DEPTH levels below the root are fine, and so are the metrics on it
    assert topic_count(root) == MAX_DEPTH + 1
    assert tm.us_ted(root, root, ExactSimilarity()) == 0.0
    with pytest.raises(TreeError, match="nested too deeply"):
        parse_tree({"name": "top", "subtopics": [node]})
