"""How close to the optimum must a seed be? SMO's iterations from starts on the way to it.

``seed_tail.py`` shows that every tenfold tighter eps costs about as many iterations from any
start. This asks the converse for one k-fold round: how close must a seed be to save a given
share of cold's iterations? For the round's training set it solves to a tight eps (the
optimum alpha*), then runs SMO to LibSVM's eps = 1e-3 from alpha* + t (s - alpha*) for a few t,
on the segment from alpha* to a seed s: SIR's (from the previous round's solution), FULL's
(from the model on all instances) and the cold start (zeros). Every such start is feasible, a
convex combination of two feasible points of the same training set. t = 1 is the seed itself;
t = 0.1 is ten times closer to the optimum in every coordinate. From each start it also runs
the active-set solver (``solver="active_set"``): its Newton steps and seconds beside SMO's.

A dashed line is the share of cold's iterations at which a method's seeded rounds total half
of cold's iterations (the project's target for a seeder; docs: design, "The floor under any seed"): for SIR, whose
round 1 is cold, 4/9 at k = 10; for FULL, whose k rounds follow the full model, less by that
model's share.

    python benchmarks/seed_distance.py --case adult              # full Adult, k = 10, round 2
    python benchmarks/seed_distance.py --case adult:5000 --k 5 --log2-C 15 --log2-gamma -9
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd

from common import ROOT, load_case, write_csv


def timed(function, *args, **kwargs):
    """(function's result, its seconds)."""
    start = time.perf_counter()
    result = function(*args, **kwargs)
    return result, time.perf_counter() - start


def main() -> None:
    from matplotlib.figure import Figure

    from alphaseed.seeding import seed_context
    from alphaseed.report.figures import save
    from alphaseed.cv import KFoldRounds, stratified_folds
    from alphaseed.kernel import KernelMatrix
    from alphaseed.seeding import SEEDERS
    from alphaseed.solver import SolverOptions, solve, warmup

    parser = argparse.ArgumentParser()
    parser.add_argument("--case", default="adult", help="dataset[:subsample]")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--round", type=int, default=2, help="the round (2..k) whose training set is solved")
    parser.add_argument("--log2-C", type=float, help="default: the config's C")
    parser.add_argument("--log2-gamma", type=float, help="default: the config's gamma")
    parser.add_argument("--t", nargs="+", type=float, default=[1.0, 0.5, 0.2, 0.1, 0.05, 0.01])
    parser.add_argument("--tight-eps", type=float, default=1e-6, help="eps of the optimum alpha*")
    parser.add_argument("--kernel-mode", default="auto")
    parser.add_argument("--out", default=str(ROOT / "results" / "bench" / "seed_distance.csv"),
                        help="the CSV; the figure goes beside it as a PNG of the same name")
    args = parser.parse_args()
    if not 2 <= args.round <= args.k:
        sys.exit(f"--round must be 2..{args.k}: round 1 has no previous round to seed SIR")
    name, _, size = args.case.partition(":")
    X, y, entry, seed = load_case(name, int(size) if size else None)
    C = 2.0 ** args.log2_C if args.log2_C is not None else entry["C"]
    gamma = 2.0 ** args.log2_gamma if args.log2_gamma is not None else entry["gamma"]

    kernel = KernelMatrix(X, gamma, mode=args.kernel_mode)
    warmup()
    rounds = KFoldRounds(stratified_folds(y, args.k, seed), args.k)
    previous, _ = rounds[args.round - 2]
    train, _ = rounds[args.round - 1]
    everything = np.arange(y.size)
    optimum = solve(kernel, y, train, C, options=SolverOptions(eps=args.tight_eps)).alpha
    full_model = solve(kernel, y, everything, C)
    seeds = {
        "sir": SEEDERS["sir"](seed_context(kernel, y, C, (previous, solve(kernel, y, previous, C)), train)),
        "full": SEEDERS["full"](seed_context(kernel, y, C, (everything, full_model), train)),
        "cold": np.zeros(train.size),
    }
    cold_iterations = solve(kernel, y, train, C).iterations
    # The share of cold's iterations per seeded round at which a method's total is half of
    # cold's: SIR's round 1 is cold; FULL's k rounds come after the full model.
    half_of_cold = {"sir": (args.k / 2 - 1) / (args.k - 1),
                    "full": (args.k / 2 - full_model.iterations / cold_iterations) / args.k}
    rows = []
    for seed_name, start in seeds.items():
        for t in args.t:
            alpha0 = optimum + t * (start - optimum)
            (smo, smo_seconds), (newton, newton_seconds) = (
                timed(solve, kernel, y, train, C, alpha0=alpha0, options=SolverOptions(solver=solver))
                for solver in ("smo", "active_set"))
            rows.append(dict(case=args.case, k=args.k, round=args.round, C=C, gamma=gamma, seed=seed_name,
                             t=t, iterations=smo.iterations, of_cold=smo.iterations / cold_iterations,
                             l1_from_optimum=float(np.abs(alpha0 - optimum).sum()),
                             alphas_off_optimum=int((np.abs(alpha0 - optimum) > 1e-6 * C).sum()),
                             smo_seconds=smo_seconds, active_set_steps=newton.newton_steps,
                             active_set_smo_iterations=newton.iterations - newton.newton_steps,
                             active_set_seconds=newton_seconds))
            print(f"{seed_name:4s} t = {t:<5g} {smo.iterations:>10,} iterations, {rows[-1]['of_cold']:.2f} of cold's "
                  f"{cold_iterations:,}, {smo_seconds:.2f} s; active set {newton.newton_steps:,} steps, "
                  f"{newton_seconds:.2f} s", flush=True)
    table = pd.DataFrame(rows)
    write_csv(table, args.out)

    figure = Figure(figsize=(5.5, 3.6))
    axes = figure.add_subplot()
    for seed_name, part in table.groupby("seed", sort=False):
        line, = axes.plot(part.t, part.of_cold, marker="o",
                          label="from the cold start" if seed_name == "cold" else f"from {seed_name}'s seed")
        if seed_name in half_of_cold:
            axes.axhline(half_of_cold[seed_name], color=line.get_color(), linestyle="--", linewidth=1,
                         label=f"{seed_name}: rounds at this share total half of cold's")
    axes.set_xscale("log")
    axes.invert_xaxis()
    axes.set_ylim(0, 1.05)
    axes.set_xlabel("start's distance from the optimum, as a share t of the seed's")
    axes.set_ylabel("iterations to eps = 1e-3 / cold's")
    axes.set_title(f"{args.case}, k = {args.k}, round {args.round}, C = {C:g}, gamma = {gamma:g}", fontsize=9)
    axes.legend(fontsize=7, loc="lower left")
    out = Path(args.out)
    print(f"wrote {out} and", *save(figure, out.parent, out.stem, formats=("png",)))


if __name__ == "__main__":
    main()
