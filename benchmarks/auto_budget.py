"""SMO's budget under ``solver="auto"``: where handing a run over to the active set pays.

On the first training set of a grid search's folds (``StratifiedKFold``, shuffled with the config
seed, as ``bench_search.py`` splits), each point (log2 gamma, log2 C) is seeded from the solution
at a smaller C (SMO's) by the search's rule along C, then solved by SMO alone, by ``auto`` handing
over after each budget of SMO iterations per training instance, and by the active set from the
seed (a chain's direct start). Best of ``--repeats`` solves each, one process, after compiling.
Prints a table and writes results/bench/auto_budget.csv.

    python benchmarks/auto_budget.py --case adult:5000 --point=-5,11,9 --point=-5,13,11 \\
        --point=-7,11,9 --point=-5,9,7 --point=-9,13,11 --point=-11,15,13 --point=-7,13,11 \\
        --point=-7,15,13 --point=-9,15,13
"""

from __future__ import annotations

import argparse
import time
from dataclasses import replace

import pandas as pd
from common import ROOT, first_training_set, write_csv


def main() -> None:
    from alphaseed.kernel import KernelMatrix
    from alphaseed.sklearn.grid_search import C_SEED, seed_from_smaller_C
    from alphaseed.solver import SolverOptions, solve, training, warmup

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default="adult:5000", help="dataset[:stratified sample size]")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--point", action="append", dest="points",
                        help="log2 gamma,log2 C,log2 C of the seed (repeat for more points; written "
                        "--point=-5,11,9 as its values start with a minus)")
    parser.add_argument("--budgets", nargs="+", type=float, default=[2.5, 5, 10, 25],
                        help="SMO iterations per training instance before auto hands over")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--out", default=str(ROOT / "results" / "bench" / "auto_budget.csv"))
    args = parser.parse_args()
    args.points = args.points or ["-5,11,9", "-9,13,11"]
    X, y, train = first_training_set(args.case, args.k)
    warmup()
    smo = SolverOptions(solver="smo")
    rows = []
    for point in args.points:
        log2_gamma, log2_C, log2_C_prev = map(float, point.split(","))
        kernel = KernelMatrix(X, 2.0 ** log2_gamma, mode="gram")
        C, C_prev = 2.0 ** log2_C, 2.0 ** log2_C_prev
        prev = solve(kernel, y, train, C_prev, options=smo)
        alpha0, gradient0 = seed_from_smaller_C(prev, C_prev, C, C_SEED, y[train])
        ways = [("smo", None)] + [("auto", b) for b in args.budgets] + [("active_set", None)]
        for solver, budget in ways:
            if budget is not None:
                # the budget is auto's module constant: set for this solve only
                training.AUTO_SMO_ITERATIONS, training.AUTO_SMO_MIN_ITERATIONS = budget, 0
            seconds = []
            for _ in range(args.repeats):
                start = time.perf_counter()
                result = solve(kernel, y, train, C, alpha0=alpha0,
                               gradient0=None if solver == "active_set" else gradient0,
                               options=replace(smo, solver=solver))
                seconds.append(time.perf_counter() - start)
            rows.append({"log2_gamma": log2_gamma, "log2_C": log2_C, "seed_log2_C": log2_C_prev,
                         "training_set": train.size, "solver": solver, "budget_per_instance": budget,
                         "seconds": min(seconds), "smo_iterations": result.iterations - result.newton_steps,
                         "newton_steps": result.newton_steps, "free": result.n_sv - result.n_bounded_sv,
                         "finisher": result.finisher, "objective": result.objective})
            print(f"  ({log2_C:g}, {log2_gamma:g}) {solver:>10} {budget or '':>5} {min(seconds):7.3f} s",
                  flush=True)
    table = pd.DataFrame(rows)
    print(table.to_string(index=False))
    write_csv(table, args.out)


if __name__ == "__main__":
    main()
