"""`scripts/train_encoder.py`'s data recipe on real records: the gold papers stay out, batches hold
one pair per paper, and the plan is a function of the seed (so a resumed run draws the same)."""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path
from typing import Any

import pytest
from small_index import load_script, make_db, records

from openxiv.corpus.shared import SharedData


@pytest.fixture(scope="module")
def script() -> Any:
    return load_script("train_encoder")


@pytest.fixture(scope="module")
def db(shared: SharedData, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return make_db(tmp_path_factory.mktemp("train") / "corpus.sqlite", records(shared, 120, 20, 4))


def test_every_gold_paper_is_excluded(script: Any, shared: SharedData) -> None:
    ids = script.gold_ids(shared.gold())
    for name in ("topic_queries_dev.jsonl", "topic_queries_more_dev.jsonl", "fulltext_known_item_dev.jsonl"):
        for line in shared.gold(name).read_text(encoding="utf-8").splitlines():
            if line.strip():
                assert set(json.loads(line)["relevant"]) <= ids


def test_pairs_leave_excluded_papers_out_and_depend_on_the_seed_only(script: Any, db: Path) -> None:
    con = sqlite3.connect(db)
    all_ids = {a for (a,) in con.execute("SELECT arxiv_id FROM papers")}
    con.close()
    pairs = script.load_pairs(db, set(), 3)
    assert pairs == script.load_pairs(db, set(), 3)
    assert {p[0] for p in pairs} <= {"title", "sentence", "passage"}
    assert "passage" in {p[0] for p in pairs}  # the full texts give passage pairs
    assert script.load_pairs(db, all_ids, 3) == []
    some = set(sorted(all_ids)[:30])
    assert len(script.load_pairs(db, some, 3)) < len(pairs)


def test_batches_hold_each_pair_once_and_fill_from_one_category(script: Any, db: Path) -> None:
    pairs = script.load_pairs(db, set(), 3)
    plan = script.batches(pairs, 8, 3)
    assert plan == script.batches(pairs, 8, 3)
    flat = [i for b in plan for i in b]
    assert len(flat) == len(set(flat)) and all(len(b) == 8 for b in plan)
    cats = [{pairs[i][1] for i in b} for b in plan]
    assert sum(len(c) == 1 for c in cats) >= len(plan) // 2  # most batches are one field's papers
