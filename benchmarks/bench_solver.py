"""Per-round training time of our solver against LibSVM's, on the same folds in the same run.

For each dataset and thread count, one child process (thread counts set before numba and
LibSVM load: ``OMP_NUM_THREADS`` for LibSVM's OpenMP, ``NUMBA_NUM_THREADS`` for ours) runs
k-fold CV with ``libsvm`` and with ``cold`` (kernel mode ``cache``, the same 100 MB row cache as
LibSVM) and reports every round. A round's training time is ``svm_train`` for LibSVM and
gradient initialisation + SMO for ours; the table gives medians over rounds and the ratio
ours / LibSVM (target: <= 1.0).

    python benchmarks/bench_solver.py                                # Madelon, Adult[10000], k=10
    python benchmarks/bench_solver.py --datasets heart madelon --max-rounds 2   # a quick check

Prints a table and writes results/bench/solver.csv (datasets from the mirror or the config).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

import pandas as pd
from common import ROOT, load_case, run_child, write_csv

DEFAULT_DATASETS = ["madelon", "adult:10000"]


def run_one(spec: str, k: int, max_rounds: int | None) -> dict:
    """Runs inside the child process: both methods on the same folds, one JSON line."""
    import numpy as np

    from alphaseed.cv import cross_validate
    from alphaseed.kernel import LIBSVM_CACHE_MB
    from alphaseed.solver import SolverOptions

    name, _, sample = spec.partition(":")
    X, y, entry, seed = load_case(name, int(sample) if sample else None)
    row = {"dataset": spec, "n": int(y.size), "k": k}
    for method, label in (("libsvm", "libsvm"), ("cold", "ours")):
        result = cross_validate(X, y, entry["C"], entry["gamma"], k, method, seed=seed, max_rounds=max_rounds,
                                options=SolverOptions(kernel_mode="cache", cache_mb=LIBSVM_CACHE_MB))
        train = [r.seconds.gradient_init + r.seconds.train for r in result.rounds]
        row.update({
            "rounds": result.rounds_run,
            f"{label}_train_s": float(np.median(train)),
            f"{label}_predict_s": float(np.median([r.seconds.predict for r in result.rounds])),
            f"{label}_iterations": int(np.median([r.iterations for r in result.rounds])),
            f"{label}_accuracy": result.accuracy,
        })
    return row


def measure(spec: str, k: int, max_rounds: int | None, threads: int) -> dict:
    command = [sys.executable, __file__, "--one", spec, "--k", str(k)]
    if max_rounds:
        command += ["--max-rounds", str(max_rounds)]
    row = {"threads": threads, **run_child(command, threads)}
    print(f"  {spec:>14} threads={threads}: libsvm {row['libsvm_train_s']:.4f}s, "
          f"ours {row['ours_train_s']:.4f}s per round", file=sys.stderr, flush=True)
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--datasets", nargs="+", default=DEFAULT_DATASETS, metavar="NAME[:M]",
                        help="config datasets, ':M' for a stratified M-instance sample")
    parser.add_argument("--k", type=int, default=10)
    parser.add_argument("--max-rounds", type=int, help="time only the first rounds")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, os.cpu_count()])
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "bench" / "solver.csv")
    parser.add_argument("--one", metavar="NAME[:M]", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        print(json.dumps(run_one(args.one, args.k, args.max_rounds)))
        return

    rows = [measure(spec, args.k, args.max_rounds, threads)
            for spec in args.datasets for threads in sorted(set(args.threads))]
    table = pd.DataFrame(rows)
    table["ratio_train"] = table["ours_train_s"] / table["libsvm_train_s"]
    table = table[["dataset", "n", "k", "rounds", "threads", "libsvm_train_s", "ours_train_s",
                   "ratio_train", "libsvm_iterations", "ours_iterations", "libsvm_predict_s",
                   "ours_predict_s", "libsvm_accuracy", "ours_accuracy"]]
    write_csv(table, args.out)
    with pd.option_context("display.width", 200):
        print(table.to_string(index=False, float_format=lambda v: f"{v:.4g}"))
    print(f"\nmedians over rounds; ratio_train = ours / LibSVM; written to {args.out}")


if __name__ == "__main__":
    main()
