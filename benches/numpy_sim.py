#!/usr/bin/env python3
"""Vectorised NumPy peer of alsim's per-request path (benches/sim.rs, group request_steps).

Same simulation: 8,192 requests of N = 1,024 output tokens, each step accepting a ~ P(a = 0..3) =
0.22, 0.18, 0.15, 0.45 (the seed case's real chain) drawn by inverse CDF from uniform draws; a request
finishes at S_N = min{s : X_1 + ... + X_s >= N}. Requests run in blocks as a (requests x steps) matrix: draw
all steps up to a cap, cumulative-sum along each row, count the steps below N; rows that need more than the
cap (rare) continue in a second pass. Prints request-steps per second (only steps that count, as the Rust
bench does) for comparison in the same sitting:

    python3 benches/numpy_sim.py
"""

import time

import numpy as np

PROBS = np.array([0.22, 0.18, 0.15, 0.45])
TOKENS = 1024
REQUESTS = 8192
BLOCK = 1024
REPEATS = 5


def simulate(rng: np.random.Generator) -> int:
    """Simulates REQUESTS requests; returns the total number of steps."""
    cdf = np.cumsum(PROBS)[:-1]
    al = 1.0 + float(np.dot(np.arange(len(PROBS)), PROBS))
    var = float(np.dot((np.arange(len(PROBS)) + 1.0 - al) ** 2, PROBS))
    cap = int(TOKENS / al + 6.0 * np.sqrt(TOKENS * var / al**3)) + 8
    total = 0
    for _ in range(REQUESTS // BLOCK):
        need = np.full(BLOCK, TOKENS, dtype=np.int64)
        while need.size:
            u = rng.random((need.size, cap))
            x = np.searchsorted(cdf, u, side="right") + 1  # tokens per step, 1..k+1
            emitted = np.cumsum(x, axis=1)
            steps = (emitted < need[:, None]).sum(axis=1) + 1
            done = steps <= cap
            total += int(steps[done].sum()) + cap * int((~done).sum())
            need = need[~done] - emitted[~done, -1]
    return total


def main() -> None:
    rng = np.random.default_rng(9)
    simulate(rng)  # warm-up
    best = float("inf")
    steps = 0
    for _ in range(REPEATS):
        start = time.perf_counter()
        steps = simulate(rng)
        best = min(best, time.perf_counter() - start)
    print(f"numpy {np.__version__}: {steps} request-steps in {best * 1e3:.1f} ms (best of {REPEATS}) "
          f"= {steps / best / 1e6:.1f} M request-steps/s on one core")


if __name__ == "__main__":
    main()
