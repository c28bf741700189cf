"""Error bounds of float arithmetic that hold on every CPU, for tests comparing library floats.

A SIMD kernel (FAISS's, OpenBLAS's, onnxruntime's MLAS, NumPy's) may add the terms of a sum in
another order on another CPU (1, 8 or 16 lanes, FMA or not, another blocking), so the last digits of
a float32 result differ between machines. What holds for every order: each float32 operation
rounds to nearest with relative error at most u = 2^-24, and an n-term inner product computed in
any order, with or without FMA, is within ``gamma_n * sum_j |a_j b_j|`` of the exact value, where
``gamma_n = n u / (1 - n u)`` (Higham, Accuracy and Stability of Numerical Algorithms, 2nd ed.,
§3.1, eq. 3.5). docs/indexing.md, «Dense scores across CPUs», applies these to the dense index.
"""

from __future__ import annotations

U32 = 2.0**-24
"""float32 unit roundoff (round to nearest)."""
U64 = 2.0**-53
"""float64 unit roundoff."""
U16 = 2.0**-11
"""float16 unit roundoff in the normal range (|x| >= 2^-14)."""
FP16_MIN_NORMAL = 2.0**-14
FP16_SUBNORMAL_ERR = 2.0**-25
"""Largest rounding error of a float16 below 2^-14: half the subnormal spacing 2^-24."""


def gamma(n: int, u: float = U32) -> float:
    """Higham's gamma_n: relative bound of an n-term inner product (or sum), any order."""
    return n * u / (1 - n * u)


def unit_norm_tolerance(d: int) -> float:
    """How far from 1 the length of a float32 row normalised as ``x / ||x||`` may be, measured exactly:
    the sum of d squares is within gamma_d (relative; positive terms), its square root halves that
    and rounds once, each of the d divisions rounds once, which changes the length by at most u:
    ``|‖x̂‖ - 1| <= gamma_d / 2 + 2u`` to first order; 3u covers the second-order terms. For d = 384:
    1.16e-5 (an atol of 1e-5 is what one CPU happens to meet)."""
    return gamma(d) / 2 + 3 * U32
