"""SMO's seconds at a few grid points by the row cache's size, where rows come from bit sets.

On the first training set of a search's folds (``StratifiedKFold``, shuffled with the config
seed, as ``bench_search.py`` splits), each point (log2 gamma, log2 C) is solved cold by SMO in
``cache`` mode with the row cache held at each ``--cache-mb`` size, and with the default
(``default``: the small cache that grows once the run turns out a tail). The sizes take turns within each repeat; best of ``--repeats``,
one process, after compiling. The iterations and alphas are the same at every size; the kernel
values computed are not. Prints a table and writes results/bench/row_cache.csv.

    python benchmarks/bench_row_cache.py --case adult:5000 --point=-5,9 --point=-1,6.643856

(write a point whose values start with '-' as --point=-5,9: argparse takes "-5,9" for an option).
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import pandas as pd
from common import ROOT, first_training_set, write_csv


def main() -> None:
    from alphaseed.kernel import KernelMatrix
    from alphaseed.solver import SolverOptions, solve, warmup

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--case", default="adult:5000", help="dataset[:stratified sample size]")
    parser.add_argument("--k", type=int, default=5, help="the folds whose first training set is solved")
    parser.add_argument("--point", action="append", required=True,
                        help="log2 gamma,log2 C (repeatable; written --point=-5,9)")
    parser.add_argument("--cache-mb", nargs="+", default=["2", "default", "32"],
                        help="row cache sizes in MB, or 'default'")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--out", default=str(ROOT / "results" / "bench" / "row_cache.csv"))
    args = parser.parse_args()
    X, y, train = first_training_set(args.case, args.k)
    sizes = [None if mb == "default" else float(mb) for mb in args.cache_mb]
    warmup()
    rows = []
    for point in args.point:
        log2_gamma, log2_C = map(float, point.split(","))
        kernel = KernelMatrix(X, 2.0 ** log2_gamma, mode="cache")
        best: dict = {}
        for _ in range(args.repeats):
            for mb in sizes:
                start = time.perf_counter()
                result = solve(kernel, y, train, 2.0 ** log2_C, options=SolverOptions(solver="smo", cache_mb=mb))
                seconds = time.perf_counter() - start
                if mb not in best or seconds < best[mb][0]:
                    best[mb] = (seconds, result)
        for mb in sizes:
            seconds, result = best[mb]
            rows.append({"case": args.case, "training": train.size, "log2_gamma": log2_gamma, "log2_C": log2_C,
                         "cache_mb": "default" if mb is None else mb, "seconds": seconds,
                         "iterations": result.iterations, "per_instance": result.iterations / train.size,
                         "values_computed": result.kernel.values_computed,
                         "vs_default": seconds / best[None][0] if None in best else np.nan})
    table = pd.DataFrame(rows)
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    write_csv(table, args.out)


if __name__ == "__main__":
    main()
