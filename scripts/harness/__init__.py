"""The benchmark harness: what every script of ``scripts/`` shares, so no script imports another.

- `harness.report`: BENCHMARKS.md sections (``write_section``), the load average, ``data/bench``;
- `harness.timing`: the one percentile function, latency summaries, peak memory;
- `harness.server`: an ``openxiv serve`` on a free loopback port, started and stopped;
- `harness.data`: the shared data (``../shared``) and its gold query sets;
- `harness.quality`: running gold queries through a backend and scoring them, and the known-item margins;
- `harness.coverage`: the coverage bias of a ranking on short queries (full texts favoured or not);
- `harness.requests`: the request grid of ``scripts/check_search_identical.py``;
- `harness.stages`: where the time of one search goes, from the engine's own stage timings;
- `harness.load`: closed-loop clients against a live server (latency, throughput, server CPU);
- `harness.scale`, `harness.scale_render`: synthetic corpora at scale and their tables;
- `harness.synthetic`: synthetic evaluator inputs; `harness.ingest_inputs`: hostile ingest inputs;
- `harness.csfcube`: the CSFCube collection and its metrics; `harness.csfcube_steer`: its steered `similar` rows;
- `harness.reliability_*`: the probes of ``scripts/bench_reliability.py``;
- `harness.float_paths_plugin`: the pytest plugin of ``scripts/check_float_paths.py``.

Scripts run as ``python scripts/<name>.py``, so ``scripts/`` is on the import path and ``harness``
is importable as a top-level package. It imports only the product's public names.
"""
