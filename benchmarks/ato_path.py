"""Where ATO's seed spends its time: its path's parts, per seeded round, under a profiler.

ATO (``alphaseed.seeding.ato``) follows Karasuyama and Takeuchi's path for up to 100 events,
keeping a Cholesky factor of K_MM over the free set M. This runs the first rounds of k-fold CV
(round 1 cold, the next seeded by ATO) and prints, for each seeded round, the seconds of the
path's parts, its events, and the SMO iterations after the seed beside a cold start's on the
same round; it writes them to ``results/bench/ato_path.csv``.

    python benchmarks/ato_path.py --case adult --rounds 3

``--solve-mode`` runs the SMO solves (round 1, and the seeded and cold ones after each seed) in
another kernel mode than the seed's: their iterations are the same in every mode, so the Gram
matrix can stand in where only the seed's time in ``--kernel-mode`` is wanted (on full MNIST a
cold round takes about 2 hours in cache mode, 1 minute on its Gram matrix).

The parts are the profiler's seconds of each function, its callees' included where they are
the part's own work (LAPACK, SciPy's sparse matrices, the kernel's loops): kernel values computed
or read for the column store, their writes into it (converted to sparse columns where the store
keeps non-zeros alone), K_MM gathered from it, K_MM factored, the products with stored kernel
columns, the factor's solves, joins and leaves, and the rest of the path. The profiler adds well under 1 % here: the
parts are a few hundred calls of long-running functions.
"""

from __future__ import annotations

import argparse
import cProfile
import pstats
import time

import numpy as np
import pandas as pd

from common import ROOT, load_case, write_csv

# (column, the function whose seconds it reports, whether callees count): looked up by the
# function's name and file.
PARTS = [
    ("kernel_values_s", "matrix.py", "block", True),
    ("store_writes_s", "ato.py", "_store", False),
    ("gather_K_MM_s", "ato.py", "_stored_square", True),
    ("factor_K_MM_s", "cholesky.py", "pivoted_factor", True),
    ("products_s", "ato.py", "_stored_times", True),
    ("solves_s", "cholesky.py", "solve_pair", False),
    ("joins_s", "cholesky.py", "grow", False),
    ("leaves_s", "cholesky.py", "shrink", False),
]
CALLS = {"steps": "_step", "joins": "grow", "leaves": "shrink"}


def breakdown(profile: cProfile.Profile) -> dict:
    """The seconds of each of PARTS, and the calls of CALLS, from a profile of one seed."""
    stats = pstats.Stats(profile).stats
    out = {column: 0.0 for column, *_ in PARTS} | {name: 0 for name in CALLS}
    for (path, _, function), (_, calls, own, cumulative, _) in stats.items():
        for column, file, name, with_callees in PARTS:
            if function == name and path.endswith(file):
                out[column] += cumulative if with_callees else own
        for column, name in CALLS.items():
            if function == name and path.endswith("ato.py" if name == "_step" else "cholesky.py"):
                out[column] += calls
    return out


def main() -> None:
    from alphaseed.cv import KFoldRounds, stratified_folds
    from alphaseed.kernel import KernelMatrix
    from alphaseed.seeding import SEEDERS, seed_context
    from alphaseed.solver import SolverOptions, solve, upper_bounds, warmup

    parser = argparse.ArgumentParser()
    parser.add_argument("--case", default="adult", help="dataset[:subsample]")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--rounds", type=int, default=3, help="rounds run: round 1 cold, the rest seeded")
    parser.add_argument("--kernel-mode", default="cache", help="the seed's kernel mode")
    parser.add_argument("--solve-mode", help="the SMO solves' kernel mode (default: --kernel-mode)")
    parser.add_argument("--out", default=str(ROOT / "results" / "bench" / "ato_path.csv"))
    args = parser.parse_args()
    name, _, size = args.case.partition(":")
    X, y, entry, seed = load_case(name, int(size) if size else None)
    C = entry["C"]
    solve_mode = args.solve_mode or args.kernel_mode
    options = SolverOptions(kernel_mode=solve_mode)
    warmup()
    kernel = KernelMatrix(X, entry["gamma"], mode=solve_mode)
    seed_kernel = kernel if solve_mode == args.kernel_mode else KernelMatrix(X, entry["gamma"], mode=args.kernel_mode)
    splits = KFoldRounds(stratified_folds(y, args.k, seed), args.k)
    train = splits[0][0]
    previous = (train, solve(kernel, y, train, C, options=options))
    rows = []
    for h in range(2, args.rounds + 1):
        train = splits[h - 1][0]
        ctx = seed_context(seed_kernel, y, C, previous, train)
        alpha = previous[1].alpha
        free = int(((alpha > 0) & (alpha < upper_bounds(y[previous[0]], C))).sum())
        profile = cProfile.Profile()
        clock = time.perf_counter()
        profile.enable()
        alpha0 = SEEDERS["ato"](ctx)
        profile.disable()
        seed_s = time.perf_counter() - clock
        parts = breakdown(profile)
        parts["other_s"] = seed_s - sum(parts[column] for column, *_ in PARTS)
        clock = time.perf_counter()
        seeded = solve(kernel, y, train, C, alpha0=alpha0, previous=previous, options=options)
        train_s = time.perf_counter() - clock
        cold = solve(kernel, y, train, C, options=options)
        rows.append(dict(case=args.case, k=args.k, kernel_mode=args.kernel_mode, solve_mode=solve_mode, round=h,
                         train_size=train.size, free_at_start=free,
                         seed_s=seed_s, **parts, train_s=train_s, iterations=seeded.iterations,
                         iterations_cold=cold.iterations))
        print(f"round {h}: seed {seed_s:.1f} s ({parts['steps']} steps), train {train_s:.1f} s, "
              f"{seeded.iterations:,} iterations (cold {cold.iterations:,})", flush=True)
        previous = (train, seeded)
    table = pd.DataFrame(rows)
    seconds = [c for c in table.columns if c.endswith("_s")]
    print(table.set_index("round")[seconds].T.to_string(float_format=lambda v: f"{v:,.2f}"))
    print(table.set_index("round")[["free_at_start", "steps", "joins", "leaves", "iterations",
                                    "iterations_cold"]].T.to_string())
    write_csv(table, args.out)
    print(f"-> {args.out}")


if __name__ == "__main__":
    main()
