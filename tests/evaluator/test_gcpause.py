"""`gc_paused` pauses the cyclic collector and always puts back the state it found."""

from __future__ import annotations

import gc

import pytest

from openxiv.evaluator.gcpause import gc_paused


def test_paused_inside_restored_after_also_on_errors_and_when_nested() -> None:
    assert gc.isenabled()
    with gc_paused():
        assert not gc.isenabled()
        with gc_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the inner block found it disabled and leaves it so
    assert gc.isenabled()
    with pytest.raises(ValueError), gc_paused():
        raise ValueError("boom")
    assert gc.isenabled()


def test_a_caller_that_disabled_the_collector_keeps_it_disabled() -> None:
    gc.disable()
    try:
        with gc_paused():
            pass
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_the_blocks_survivors_leave_the_young_generations_and_a_callers_freeze_is_kept() -> None:
    with gc_paused():
        kept = [{"a": [i]} for i in range(10_000)]
    young = len(gc.get_objects(generation=0)) + len(gc.get_objects(generation=1))
    assert young < 5_000  # not the block's 20,000 objects, waiting to be walked by young collections
    assert gc.get_freeze_count() == 0
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        with gc_paused():
            kept += [{"b": [1]}]
        assert gc.get_freeze_count() == frozen  # the caller's frozen objects were not thawed
    finally:
        gc.unfreeze()
    assert len(kept) == 10_001
