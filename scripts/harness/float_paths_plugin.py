"""pytest plugin of `scripts/check_float_paths.py`: onnxruntime session options from the environment.

onnxruntime reads no environment variable for its graph optimisations or kernel choices, so this
applies ``OPENXIV_TEST_ORT_OPTIONS`` to every session the tests open: ``;``-separated items,
``opt=disable|basic|extended|all`` (the graph optimisation level) or ``<config key>=<value>``
(``SessionOptions.add_session_config_entry``, e.g. ``session.disable_prepacking=1``). The options
the product set are kept; these are applied on top. Load with ``pytest -p harness.float_paths_plugin`` and
``scripts`` on ``PYTHONPATH``; without the variable it changes nothing.
"""

from __future__ import annotations

import os
from typing import Any

ENV = "OPENXIV_TEST_ORT_OPTIONS"


def pytest_configure(config: Any) -> None:
    spec = os.environ.get(ENV, "").strip()
    if not spec:
        return
    import onnxruntime as ort

    levels = {
        "disable": ort.GraphOptimizationLevel.ORT_DISABLE_ALL,
        "basic": ort.GraphOptimizationLevel.ORT_ENABLE_BASIC,
        "extended": ort.GraphOptimizationLevel.ORT_ENABLE_EXTENDED,
        "all": ort.GraphOptimizationLevel.ORT_ENABLE_ALL,
    }
    items = [item.partition("=") for item in spec.split(";") if item.strip()]
    original = ort.InferenceSession.__init__

    def init(self: Any, path_or_bytes: Any, sess_options: Any = None, *args: Any, **kwargs: Any) -> None:
        opts = sess_options if sess_options is not None else ort.SessionOptions()
        for key, _, value in items:
            if key.strip() == "opt":
                opts.graph_optimization_level = levels[value.strip()]
            else:
                opts.add_session_config_entry(key.strip(), value.strip())
        original(self, path_or_bytes, opts, *args, **kwargs)

    ort.InferenceSession.__init__ = init


def pytest_report_header(config: Any) -> str:
    return f"{ENV}={os.environ.get(ENV, '')!r}"
