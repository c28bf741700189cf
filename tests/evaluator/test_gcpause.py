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
