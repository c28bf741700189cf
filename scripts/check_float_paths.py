"""Run the float-comparing tests on every arithmetic path the libraries let this machine select.

The tests that compare floats from FAISS, OpenBLAS, onnxruntime or torch state tolerances derived
from the arithmetic (docs/indexing.md, «Dense scores across CPUs»), so they must pass whichever
SIMD kernels compute the numbers. One CI machine exercises one path; this runs each test group
again with the library's own switch for another path:

- FAISS: ``FAISS_SIMD_LEVEL`` (faiss-cpu >= 1.12 dispatches at run time; ``FAISS_OPT_LEVEL`` only
  picks among separately compiled modules, which these wheels no longer ship, so it changes nothing)
- OpenBLAS (NumPy's and the copy bundled with faiss-cpu): ``OPENBLAS_CORETYPE``
- onnxruntime: intra-op threads (``OMP_NUM_THREADS``, which `onnx_threads` reads), the graph
  optimisation level and session config entries (``OPENXIV_TEST_ORT_OPTIONS``, applied by
  `harness.float_paths_plugin`)
- torch (the MiniLM reference encoder): ``ATEN_CPU_CAPABILITY``, ``ONEDNN_MAX_CPU_ISA``,
  ``MKL_ENABLE_INSTRUCTIONS``

Only paths this CPU can execute are run (an AVX-512 kernel on a CPU without it dies of SIGILL);
the others are listed as skipped. Each row is one pytest process; the table says what each gave.

    .venv/bin/python scripts/check_float_paths.py            # every row (long: each row re-encodes)
    .venv/bin/python scripts/check_float_paths.py --only faiss,openblas --out paths.md
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

DENSE = [
    "tests/indexer/engine/test_dense.py",
]
BLAS = [*DENSE, "tests/indexer/engine/test_fusion_sparse.py"]
ONNX = [
    "tests/indexer/encoders/test_encoder_determinism.py",
    "tests/indexer/encoders/test_embed.py::test_onnx_int8_default_agrees_with_torch",
]
TORCH = [
    "tests/indexer/encoders/test_embed.py::test_packaged_model_loads_offline_and_gives_unit_384_vectors",
    "tests/indexer/encoders/test_embed.py::test_query_vector_matches_batch_vector",
    "tests/indexer/building/test_embcache.py",
]


def cpu_flags() -> set[str]:
    try:
        text = Path("/proc/cpuinfo").read_text()
    except OSError:
        return set()
    for line in text.splitlines():
        if line.startswith("flags"):
            return set(line.split(":", 1)[1].split())
    return set()


def rows(flags: set[str]) -> list[tuple[str, str, dict[str, str], list[str], str]]:
    """(group, name, environment, tests, why it is skipped or '')."""
    avx2, avx512 = {"avx2", "fma", "f16c"} <= flags, "avx512f" in flags
    spr = avx512 and "avx512_fp16" in flags
    need = {"AVX2": "" if avx2 else "no AVX2", "AVX512": "" if avx512 else "no AVX-512F"}
    need["AVX512_SPR"] = "" if spr else "no AVX512-FP16"
    out: list[tuple[str, str, dict[str, str], list[str], str]] = [("default", "as detected", {}, [], "")]
    for level in ("NONE", "AVX2", "AVX512", "AVX512_SPR"):
        out.append(
            ("faiss", f"FAISS_SIMD_LEVEL={level}", {"FAISS_SIMD_LEVEL": level}, DENSE, need.get(level, ""))
        )
    blas = {"Prescott": "", "Sandybridge": "" if "avx" in flags else "no AVX", "Haswell": need["AVX2"]}
    blas |= {"SkylakeX": need["AVX512"], "SapphireRapids": "" if "avx512_bf16" in flags else "no AVX512-BF16"}
    for core, why in blas.items():
        out.append(("openblas", f"OPENBLAS_CORETYPE={core}", {"OPENBLAS_CORETYPE": core}, BLAS, why))
    ort = {
        "intra-op threads 1": {"OMP_NUM_THREADS": "1"},
        "intra-op threads 2": {"OMP_NUM_THREADS": "2"},
        "graph optimisation off": {"OPENXIV_TEST_ORT_OPTIONS": "opt=disable"},
        "graph optimisation basic": {"OPENXIV_TEST_ORT_OPTIONS": "opt=basic"},
        "QDQ not fused (float kernels)": {"OPENXIV_TEST_ORT_OPTIONS": "session.disable_quant_qdq=1"},
        "no weight prepacking": {"OPENXIV_TEST_ORT_OPTIONS": "session.disable_prepacking=1"},
    }
    out += [("onnxruntime", name, env, ONNX, "") for name, env in ort.items()]
    torch = {
        "ATEN_CPU_CAPABILITY=default": ({"ATEN_CPU_CAPABILITY": "default"}, ""),
        "ONEDNN_MAX_CPU_ISA=SSE41": ({"ONEDNN_MAX_CPU_ISA": "SSE41"}, ""),
        "MKL_ENABLE_INSTRUCTIONS=SSE4_2": ({"MKL_ENABLE_INSTRUCTIONS": "SSE4_2"}, ""),
        "ATEN_CPU_CAPABILITY=avx512": ({"ATEN_CPU_CAPABILITY": "avx512"}, need["AVX512"]),
    }
    out += [("torch", name, env, TORCH, why) for name, (env, why) in torch.items()]
    return out


def run(env: dict[str, str], tests: list[str]) -> tuple[str, float, str]:
    full = {**os.environ, **env}
    full["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "scripts"), full.get("PYTHONPATH", "")]))
    cmd = [
        sys.executable,
        "-m",
        "pytest",
        "-q",
        "-p",
        "harness.float_paths_plugin",
        "-p",
        "no:cacheprovider",
        *tests,
    ]
    start = time.monotonic()
    proc = subprocess.run(cmd, cwd=ROOT, env=full, capture_output=True, text=True)
    last = (proc.stdout.strip().splitlines() or ["(no output)"])[-1]
    if proc.returncode < 0:
        last = f"killed by signal {-proc.returncode}"
    return ("pass" if proc.returncode == 0 else "FAIL"), time.monotonic() - start, last


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument(
        "--only", default="", help="comma-separated groups: default,faiss,openblas,onnxruntime,torch"
    )
    ap.add_argument(
        "--match", default="", help="comma-separated substrings: run only rows whose path has one"
    )
    ap.add_argument("--out", type=Path, help="also write the table (markdown) here")
    args = ap.parse_args()
    groups = {g.strip() for g in args.only.split(",") if g.strip()}
    table = ["| group | path | result | seconds | pytest summary |", "|---|---|---|---|---|"]
    failed = 0
    for group, name, env, tests, why in rows(cpu_flags()):
        if groups and group not in groups:
            continue
        if args.match and not any(m.strip() and m.strip() in name for m in args.match.split(",")):
            continue
        if why:
            line = f"| {group} | {name} | skipped | - | this CPU: {why} |"
        else:
            everything = [*DENSE, "tests/indexer/engine/test_fusion_sparse.py", *ONNX, *TORCH]
            result, seconds, summary = run(env, tests or list(dict.fromkeys(everything)))
            failed += result == "FAIL"
            line = f"| {group} | {name} | {result} | {seconds:.0f} | {summary} |"
        print(line, flush=True)
        table.append(line)
    if args.out:
        args.out.write_text("\n".join(table) + "\n", encoding="utf-8")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
