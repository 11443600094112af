"""How far can a seed cut SMO's iterations? Iterations to each stopping tolerance, cold vs seeded.

SMO converges linearly near the optimum: every tenfold tighter ``eps`` costs about the same
number of iterations, however the solve started. A seed only saves the iterations a cold start
spends before reaching the seed's distance from the optimum, so the iterations per seeded round
at LibSVM's eps = 1e-3 are bounded below by the tail from there. This prints, for each method,
the iterations of its seeded rounds (all rounds for ``cold``) at each eps, and writes them to
``results/bench/seed_tail.csv``.

    python benchmarks/seed_tail.py --case adult --methods cold sir full --rounds 3
"""

from __future__ import annotations

import argparse
import sys

import numpy as np
import pandas as pd

from common import ROOT, load_case, write_csv

# The rounds of each method that start from a seed (the others are cold): sir's round 1 is cold.
FIRST_SEEDED_ROUND = {"cold": 1, "full": 1}


def main() -> None:
    from alphaseed.cv import cross_validate
    from alphaseed.solver import SolverOptions

    parser = argparse.ArgumentParser()
    parser.add_argument("--case", default="adult", help="dataset[:subsample]")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--methods", nargs="+", default=["cold", "sir", "full"])
    parser.add_argument("--eps", nargs="+", type=float, default=[1.0, 0.1, 0.01, 1e-3])
    parser.add_argument("--rounds", type=int, default=3, help="rounds run per method (max_rounds)")
    parser.add_argument("--kernel-mode", default="auto")
    parser.add_argument("--out", default=str(ROOT / "results" / "bench" / "seed_tail.csv"))
    args = parser.parse_args()
    name, _, size = args.case.partition(":")
    X, y, entry, seed = load_case(name, int(size) if size else None)
    rows = []
    for eps in args.eps:
        for method in args.methods:
            result = cross_validate(X, y, entry["C"], entry["gamma"], k=args.k, method=method,
                                    seed=seed, max_rounds=args.rounds,
                                    options=SolverOptions(eps=eps, kernel_mode=args.kernel_mode))
            first = FIRST_SEEDED_ROUND.get(method, 2)
            seeded = [r.iterations for r in result.rounds if r.round >= first]
            rows.append(dict(case=args.case, k=args.k, eps=eps, method=method,
                             rounds=len(seeded), iterations_per_round=float(np.mean(seeded)),
                             iterations_full_model=result.iterations_full_model,
                             accuracy=result.accuracy))
            print(f"eps {eps:<6g} {method:5s} {rows[-1]['iterations_per_round']:>10,.0f} iterations "
                  f"per {'seeded ' if method != 'cold' else ''}round", flush=True)
    table = pd.DataFrame(rows)
    cold = table[table.method == "cold"].set_index("eps").iterations_per_round
    table["of_cold_at_eps"] = table.iterations_per_round / table.eps.map(cold)
    print(table.pivot(index="eps", columns="method", values="iterations_per_round")
          .sort_index(ascending=False).to_string(float_format=lambda v: f"{v:,.0f}"))
    write_csv(table, args.out)


if __name__ == "__main__":
    sys.exit(main())
