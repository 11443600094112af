"""What the active-set finish's Newton steps cost: the Cholesky factor's updates at a size.

A Newton step solves backward with the factor once for its direction (``backward_solve``, the whole
factor) and, where it meets a bound, cuts the position out (``shrink``: Givens rotations of the
rows below it, the step's two forward vectors carried along); every ``FRESH_SOLVES`` steps the
forward vectors are solved afresh (``forward_pair``). This times each on the factor of a random
positive definite matrix of ``--size`` rows, the leaving position at the start, the middle and
near the end, as the median of ``--repeats`` calls, one process, one thread, after compiling.
Prints a table and writes results/bench/factor.csv.

    python benchmarks/bench_factor.py --size 1100

Run it from a worktree of another commit through ``PYTHONPATH`` to compare the two, each with an
``--out`` of its own.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from common import ROOT, write_csv


def median_microseconds(call, prepare, repeats: int) -> float:
    """The median of ``repeats`` timed calls of ``call``, each after an untimed ``prepare``."""
    times = []
    for _ in range(repeats):
        prepare()
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    return 1e6 * float(np.median(times))


def main() -> None:
    from alphaseed.solver.cholesky import backward_solve, forward_pair, plain_factor, shrink

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--size", type=int, default=1100, help="rows of the factor (|F|)")
    parser.add_argument("--repeats", type=int, default=101)
    parser.add_argument("--out", default=str(ROOT / "results" / "bench" / "factor.csv"))
    args = parser.parse_args()
    m = args.size
    rng = np.random.default_rng(0)
    A = rng.standard_normal((m, m + 50))
    factor = np.zeros((m + 64, m + 64))   # the finish's factor sits in a larger buffer
    if not plain_factor(A @ A.T / m + np.eye(m), factor):
        raise SystemExit("the test matrix did not factor")
    L = factor.copy()
    x, along = np.empty(m), np.empty((2, m))
    b1, b2 = rng.standard_normal((2, m))

    # Before every timed call, the parts that only read L too: the factor copied back (the
    # downdate's work undone) and the vectors that the calls change in place set afresh (repeated
    # backward solves would grow x without bound), so each call finds the factor in the
    # processor's caches as the last forward pass over it left it.
    def restore():
        L[:m, :m] = factor[:m, :m]
        x[:] = b1
        forward_pair(L, m, b1, b2, along[0], along[1])

    # compile before the clock
    restore()
    backward_solve(L, m, x)
    shrink(L, m, 0, along)
    rows = [{"part": "backward_solve", "size": m, "position": None,
             "microseconds": median_microseconds(lambda: backward_solve(L, m, x), restore, args.repeats)}]
    for p in (0, m // 2, m - 50):
        rows.append({"part": "shrink", "size": m, "position": p,
                     "microseconds": median_microseconds(lambda: shrink(L, m, p, along), restore, args.repeats)})
    rows.append({"part": "forward_pair", "size": m, "position": None,
                 "microseconds": median_microseconds(lambda: forward_pair(L, m, b1, b2, along[0], along[1]),
                                                     restore, args.repeats)})
    table = pd.DataFrame(rows).astype({"position": "Int64"})
    print(table.to_string(index=False))
    write_csv(table, args.out)


if __name__ == "__main__":
    main()
