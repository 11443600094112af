"""k-fold CV end to end: LibSVM against cold and SIR in every kernel mode, same folds, same run.

Each configuration runs in a fresh subprocess, so that its thread counts are set before numba
and LibSVM load and its peak memory is its own. Short configurations repeat and report the
median. Ratios are taken between configurations of the same invocation, never across runs.

    python benchmarks/bench_cv.py                         # the full matrix (hours on 2 cores)
    python benchmarks/bench_cv.py --cases heart:10 madelon:100 adult@10000:10 --threads 1
    python benchmarks/bench_cv.py --cases adult:10 --modes auto --libsvm-rounds 2

``--libsvm-rounds R`` times only LibSVM's first R rounds and estimates its total as their mean
times k; accuracy and iterations then cover those rounds only. A row is ``estimated`` when any
figure in it is: its own time, or the LibSVM or cold time its ratios divide.

Prints a table and writes results/bench/cv.csv (the mirror: ALPHASEED_DATA_MIRROR or config).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
from pathlib import Path

import numpy as np
import pandas as pd
from common import ROOT, load_case, run_child, write_csv

MODES = ("cache", "shared", "gram", "auto")
# dataset[@subsample]:k
FULL = ["heart:10", "heart:100", "madelon:10", "madelon:100", "adult@10000:10", "adult:10",
        "webdata:10"]
# A configuration faster than this (seconds) is repeated and its median reported.
SHORT_RUN = 20.0


def run_one(dataset: str, subsample: int | None, k: int, method: str, mode: str,
            max_rounds: int | None) -> dict:
    """Runs inside the child process: one cross-validation, reported as a JSON line."""
    from alphaseed.cv import cross_validate

    X, y, entry, seed = load_case(dataset, subsample)
    result = cross_validate(X, y, entry["C"], entry["gamma"], k, method,
                            seed=seed, kernel_mode=mode, max_rounds=max_rounds)
    return {"seconds": result.seconds, "estimated": result.estimated,
            "iterations": result.iterations,
            "accuracy": result.accuracy, "kernel_seconds": result.seconds_kernel,
            "kernel_mode": result.kernel_mode,
            "peak_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024}


def measure(args, dataset, subsample, k, method, mode, threads) -> dict:
    rounds = args.libsvm_rounds if method == "libsvm" and args.libsvm_rounds else 0
    cmd = [sys.executable, __file__, "--one", dataset, str(subsample or 0), str(k), method, mode,
           str(rounds)]
    runs = []
    while True:
        runs.append(run_child(cmd, threads))
        if runs[-1]["seconds"] > SHORT_RUN or len(runs) >= args.repeats:
            break
    row = pd.DataFrame(runs).median(numeric_only=True).to_dict()
    row.update(dataset=dataset if not subsample else f"{dataset}[{subsample}]", k=k,
               method=method, mode=runs[0]["kernel_mode"], requested_mode=mode,
               threads=threads, runs=len(runs), estimated=runs[0]["estimated"])
    print(f"  {row['dataset']:>14} k={k:<4} {method:>6} {mode:>6} threads={threads} "
          f"{row['seconds']:9.2f}s  iters={int(row['iterations'])}", file=sys.stderr, flush=True)
    return row


def with_ratios(table: pd.DataFrame) -> pd.DataFrame:
    """``table`` with ``vs_libsvm`` (LibSVM's seconds / the row's, same dataset, k and threads) and
    ``vs_cold_same_mode`` (the cold start's in the same requested mode / the row's; none for LibSVM),
    and ``estimated`` set wherever one of the times a row shows or divides by is estimated."""
    key = ["dataset", "k", "threads"]

    def reference(method: str, keys: list[str]):
        ref = table.loc[table.method == method, keys + ["seconds", "estimated"]]
        merged = table[keys].merge(ref, on=keys, how="left")
        return merged["seconds"].to_numpy(), merged["estimated"].fillna(False).to_numpy(dtype=bool)

    libsvm_seconds, libsvm_estimated = reference("libsvm", key)
    cold_seconds, cold_estimated = reference("cold", key + ["requested_mode"])
    against_cold = (table.method != "libsvm").to_numpy()
    return table.assign(
        vs_libsvm=libsvm_seconds / table.seconds,
        vs_cold_same_mode=np.where(against_cold, cold_seconds / table.seconds, np.nan),
        estimated=table.estimated.astype(bool).to_numpy() | libsvm_estimated | (against_cold & cold_estimated),
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=FULL, metavar="DATASET[@M]:K",
                        help="datasets (with an optional stratified sample size) and k")
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    parser.add_argument("--repeats", type=int, default=3, help="runs of a short configuration")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, os.cpu_count()])
    parser.add_argument("--libsvm-rounds", type=int, metavar="R",
                        help="time LibSVM's first R rounds only and estimate its total")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "bench" / "cv.csv")
    parser.add_argument("--one", nargs=6, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.one:
        dataset, subsample, k, method, mode, rounds = args.one
        print(json.dumps(run_one(dataset, int(subsample) or None, int(k), method, mode,
                                 int(rounds) or None)))
        return
    if args.libsvm_rounds is not None and args.libsvm_rounds < 1:
        parser.error("--libsvm-rounds must be at least 1")

    rows = []
    for case in args.cases:
        name, k = case.split(":")
        dataset, _, subsample = name.partition("@")
        subsample, k = int(subsample) if subsample else None, int(k)
        for threads in sorted(set(args.threads)):
            rows.append(measure(args, dataset, subsample, k, "libsvm", "cache", threads))
            for mode in args.modes:
                for method in ("cold", "sir"):
                    rows.append(measure(args, dataset, subsample, k, method, mode, threads))
    table = with_ratios(pd.DataFrame(rows))
    columns = ["dataset", "k", "threads", "method", "requested_mode", "mode", "seconds",
               "vs_libsvm", "vs_cold_same_mode", "iterations", "accuracy", "kernel_seconds",
               "peak_mb", "runs", "estimated"]
    table = table[columns]
    write_csv(table, args.out)
    with pd.option_context("display.width", 200, "display.max_rows", 500):
        print(table.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    print(f"\nwritten to {args.out}")


if __name__ == "__main__":
    main()
