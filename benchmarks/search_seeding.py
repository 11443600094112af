"""Which seed along C pays: SMO iterations of a grid search, cold vs seeded variants.

Runs ``alphaseed.sklearn.search_column`` over a (log2 C, log2 gamma) grid on the same folds
(StratifiedKFold, shuffled with the config seed) for cold and for each (method, C seed) and
prints total iterations, wall time and the grid points whose CV accuracy differs from cold.

    python benchmarks/search_seeding.py --case adult:2000 --C -5:15:4 --gamma 1:-15:-3
"""

from __future__ import annotations

import argparse
import sys
import time

import numpy as np

from common import load_case, search_splits


def log2_range(text: str) -> list[float]:
    begin, end, step = (float(v) for v in text.split(":"))
    return [2.0 ** v for v in np.arange(begin, end + step / 2, step)]


def main() -> None:

    from alphaseed.sklearn import search_column
    from alphaseed.solver import SolverOptions, warmup

    parser = argparse.ArgumentParser()
    parser.add_argument("--case", default="heart", help="dataset[:subsample]")
    parser.add_argument("--C", default="-5:15:4")
    parser.add_argument("--gamma", default="1:-15:-3")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--variants", nargs="+",
                        default=["cold", "sir:gap", "sir:keep", "sir:scale", "sir:none"])
    args = parser.parse_args()
    name, _, size = args.case.partition(":")
    X, y, _, seed = load_case(name, int(size) if size else None)
    codes = np.where(y > 0, 0, 1)   # search_column's class codes; class 0 is LibSVM's +1
    splits = search_splits(X, y, args.k, seed)
    Cs, gammas = log2_range(args.C), log2_range(args.gamma)
    warmup()
    scores = {}
    for variant in args.variants:
        method, _, c_seed = variant.partition(":")
        start = time.perf_counter()
        iterations, points = 0, {}
        for gamma in gammas:
            column = search_column(X, codes, gamma, Cs, splits, method=method, options=SolverOptions(cache_mb=200.0),
                                   c_seed=c_seed or "gap")
            for C, point in column.items():
                iterations += int(point.iterations.sum())
                points[(C, gamma)] = point.scores.mean()
        seconds = time.perf_counter() - start
        scores[variant] = points
        reference = scores[args.variants[0]]
        differing = [p for p in points if points[p] != reference[p]]
        differ = len(differing)
        best = max(points, key=lambda p: (points[p], -np.log2(p[0])))
        print(f"{args.case} {len(Cs)}x{len(gammas)} k={args.k} {variant:10s} iterations {iterations:>10,d} "
              f"seconds {seconds:7.2f} points differing from {args.variants[0]}: {differ} "
              f"best log2(C, gamma) = ({np.log2(best[0]):g}, {np.log2(best[1]):g}) "
              f"accuracy {100 * points[best]:.2f}", flush=True)
        for C, gamma in differing:
            print(f"    log2(C, gamma) = ({np.log2(C):g}, {np.log2(gamma):g}): "
                  f"{100 * reference[(C, gamma)]:.2f}% -> {100 * points[(C, gamma)]:.2f}%")


if __name__ == "__main__":
    sys.exit(main())
