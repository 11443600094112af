"""What the active-set finish's Newton steps cost: the Cholesky factor's updates at a size.

A Newton step solves backward with the factor once for its direction (``backward_solve``, the whole
factor) and, where it meets a bound, cuts the position out (``cut``: Givens rotations of the rows
below it, the step's two forward vectors carried along, each row left where it is in the buffer);
the rows are put back in place once the steps reach the face's optimum (``compact``, timed after
one cut at the middle), and every ``FRESH_SOLVES`` steps the forward vectors are solved afresh
(``forward_pair``). ``shrink``, the cut that moves the rows below up one row at once (ATO's path
takes it), is timed beside ``cut``. This times each on the factor of a random positive definite
matrix of ``--size`` rows, the leaving position at the start, the middle and near the end, as the
median of ``--repeats`` calls, one process, one thread, after compiling. Prints a table and writes
results/bench/factor.csv.

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
    from alphaseed.solver.cholesky import backward_solve, compact, cut, forward_pair, plain_factor, shrink

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
    identity = np.arange(m, dtype=np.int64)
    order = identity.copy()

    # Before every timed call, the parts that only read L too: the factor copied back (the
    # downdate's work undone) and the vectors that the calls change in place set afresh (repeated
    # backward solves would grow x without bound), so each call finds the factor in the
    # processor's caches as the last forward pass over it left it.
    def restore():
        L[:m, :m] = factor[:m, :m]
        order[:] = identity
        x[:] = b1
        forward_pair(L, m, b1, b2, along[0], along[1], order)

    def cut_in_the_middle():
        restore()
        cut(L, order, m, m // 2, along)

    # compile before the clock
    restore()
    backward_solve(L, m, x, order)
    shrink(L, m, 0, along)
    cut_in_the_middle()
    compact(L, order, m - 1)
    rows = [{"part": "backward_solve", "size": m, "position": None,
             "microseconds": median_microseconds(lambda: backward_solve(L, m, x, order), restore, args.repeats)}]
    for part, call in (("cut", lambda p: cut(L, order, m, p, along)), ("shrink", lambda p: shrink(L, m, p, along))):
        for p in (0, m // 2, m - 50):
            rows.append({"part": part, "size": m, "position": p,
                         "microseconds": median_microseconds(lambda: call(p), restore, args.repeats)})
    rows.append({"part": "compact", "size": m, "position": m // 2,
                 "microseconds": median_microseconds(lambda: compact(L, order, m - 1), cut_in_the_middle,
                                                     args.repeats)})
    rows.append({"part": "forward_pair", "size": m, "position": None,
                 "microseconds": median_microseconds(lambda: forward_pair(L, m, b1, b2, along[0], along[1], order),
                                                     restore, args.repeats)})
    table = pd.DataFrame(rows).astype({"position": "Int64"})
    print(table.to_string(index=False))
    write_csv(table, args.out)


if __name__ == "__main__":
    main()
