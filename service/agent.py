"""Moved to `openxiv.evaluator.agent` (the baseline agent is a client of the service, like the
evaluator); this shim keeps old imports working."""

from openxiv.evaluator.agent import (
    AgentPolicy,
    BaselineAgent,
    agent,
    calibrate_wide,
    load_policy,
    make_wide_items,
    read_jsonl,
    run_agent,
    select,
    write_jsonl,
)

__all__ = [
    "AgentPolicy",
    "BaselineAgent",
    "agent",
    "calibrate_wide",
    "load_policy",
    "make_wide_items",
    "read_jsonl",
    "run_agent",
    "select",
    "write_jsonl",
]
