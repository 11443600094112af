"""Where ``solver="auto"`` spends its time at one grid point: SMO's budget and the active-set
finish's parts.

On the first training set of a grid search's folds (``StratifiedKFold``, shuffled with the config
seed, as ``bench_search.py`` splits), the point (log2 gamma, log2 C) is seeded from SMO's solution
at the smaller C by the search's rule along C, then solved by ``auto``. Every call of SMO's loop
and of the finish's parts (its start and factorisation, its kernel rows, the Newton steps, the
entering indices, the fresh gradients) is timed by a wrapper, and each solve's wall time beside.
Best of ``--repeats`` solves, one process, after compiling. Prints a table and writes
results/bench/finish_parts.csv.

    python benchmarks/finish_parts.py --case adult --point=-5,9,7
"""

from __future__ import annotations

import argparse
import time
from collections import defaultdict

import pandas as pd
from common import ROOT, first_training_set, write_csv

# The finish's parts, by their names in alphaseed.solver.active_set (those a commit lacks are left
# out, so that the script times older commits too), and SMO's loop in alphaseed.solver.training.
FINISH_PARTS = ("_start", "pivoted_factor", "_signed_rows", "exact_gradient", "_to_face_optimum",
                "_enter_many", "_enter", "_slide")


def timed(module, names, seconds, calls) -> None:
    """Wrap each of ``names`` in ``module`` so that its calls and wall time add up."""
    for name in names:
        function = getattr(module, name, None)
        if function is None:
            continue

        def wrapper(*args, __function=function, __name=name, **kwargs):
            start = time.perf_counter()
            try:
                return __function(*args, **kwargs)
            finally:
                seconds[__name] += time.perf_counter() - start
                calls[__name] += 1

        setattr(module, name, wrapper)


def main() -> None:
    from alphaseed.kernel import KernelMatrix
    from alphaseed.sklearn.grid_search import C_SEED, seed_from_smaller_C
    from alphaseed.solver import SolverOptions, active_set, solve, training, warmup

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default="adult", help="dataset[:stratified sample size]")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--point", default="-5,9,7",
                        help="log2 gamma,log2 C,log2 C of the seed (written --point=-5,9,7 as its "
                        "values start with a minus)")
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--out", default=str(ROOT / "results" / "bench" / "finish_parts.csv"))
    args = parser.parse_args()
    X, y, train = first_training_set(args.case, args.k)
    log2_gamma, log2_C, log2_C_prev = map(float, args.point.split(","))
    C, C_prev = 2.0 ** log2_C, 2.0 ** log2_C_prev
    warmup()
    kernel = KernelMatrix(X, 2.0 ** log2_gamma, mode="auto")
    previous = solve(kernel, y, train, C_prev, options=SolverOptions(solver="smo"))
    alpha0, gradient0 = seed_from_smaller_C(previous, C_prev, C, C_SEED, y[train])
    seconds, calls = defaultdict(float), defaultdict(int)
    timed(active_set, FINISH_PARTS, seconds, calls)
    timed(training, ("smo_loop", "finish"), seconds, calls)
    runs = []
    for _ in range(args.repeats):
        seconds.clear()
        calls.clear()
        start = time.perf_counter()
        result = solve(kernel, y, train, C, alpha0=alpha0, gradient0=gradient0,
                       options=SolverOptions(solver="auto"))
        runs.append((time.perf_counter() - start, dict(seconds), dict(calls), result))
    wall, parts, counts, result = min(runs, key=lambda run: run[0])
    rows = [{"part": "solve (wall)", "seconds": wall, "calls": 1}]
    rows += [{"part": part, "seconds": parts[part], "calls": counts[part]}
             for part in sorted(parts, key=parts.get, reverse=True)]
    table = pd.DataFrame(rows)
    table.insert(0, "point", f"({log2_C:g}, {log2_gamma:g}) from C = 2^{log2_C_prev:g}")
    print(f"{args.case}, {train.size} training instances: {result.iterations - result.newton_steps} "
          f"SMO iterations, {result.newton_steps} Newton steps, {result.n_sv - result.n_bounded_sv} "
          f"free, finished by {result.finisher}, objective {result.objective:.10e}")
    print(table.to_string(index=False))
    write_csv(table, args.out)


if __name__ == "__main__":
    main()
