"""SMO against the active-set solver on one training set: time, steps, and the optimum measured
in float64 kernel values for both alike.

Solves round 1's training set of a k-fold split (LibSVM's folds, the config seed) at one
(log2 C, log2 gamma) from zero with each solver, in ``gram`` mode, after compiling. SMO stops
within eps of the optimum in its float32 kernel values; the active-set solver finds the optimum
in float64 ones. Both are measured the same way: the maximal violating pair's gap and the dual
objective with float64 kernel values. Prints a table and writes results/bench/solver_choice.csv.

    python benchmarks/solver_choice.py --case adult:5000 --log2-C 15 --log2-gamma -9
    python benchmarks/solver_choice.py --case adult:5000 --log2-C 6.643856 --log2-gamma -1
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from common import ROOT, load_case, write_csv


def main() -> None:
    from alphaseed.cv import stratified_folds
    from alphaseed.kernel import KernelMatrix
    from alphaseed.solver import SolverOptions, solve, upper_bounds, warmup
    from alphaseed.solver.active_set import exact_gradient, gap

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default="adult:5000", help="dataset[:stratified sample size]")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--log2-C", type=float, default=15.0)
    parser.add_argument("--log2-gamma", type=float, default=-9.0)
    parser.add_argument("--eps", type=float, default=1e-3)
    parser.add_argument("--out", default=str(ROOT / "results" / "bench" / "solver_choice.csv"))
    args = parser.parse_args()
    name, _, size = args.case.partition(":")
    X, y, _, seed = load_case(name, int(size) if size else None)
    y = np.where(y == y.max(), 1.0, -1.0)
    train = np.flatnonzero(stratified_folds(y, args.k, seed) != 0)
    C = 2.0**args.log2_C
    kernel = KernelMatrix(X, 2.0**args.log2_gamma, mode="gram")
    exact = kernel.exact(train)
    y_train = y[train]
    warmup()
    rows = []
    for solver in ("smo", "active_set"):
        start = time.perf_counter()
        result = solve(kernel, y, train, C, options=SolverOptions(eps=args.eps, solver=solver))
        seconds = time.perf_counter() - start
        alpha = result.alpha
        G = exact_gradient(exact, y_train, alpha)
        rows.append(dict(
            case=args.case, log2_C=args.log2_C, log2_gamma=args.log2_gamma, l=train.size, solver=solver,
            seconds=seconds, smo_iterations=result.iterations - result.newton_steps,
            newton_steps=result.newton_steps, n_sv=result.n_sv,
            free=int(np.count_nonzero((alpha > 0) & (alpha < C))),
            gap_float64=gap(y_train, alpha, upper_bounds(y_train, C), G),
            objective_float64=float(alpha @ (G - 1.0)) / 2.0))
        print(f"  {solver:>10} {seconds:8.2f} s", flush=True)
    table = pd.DataFrame(rows)
    print(table.to_string(index=False))
    write_csv(table, args.out)


if __name__ == "__main__":
    main()
