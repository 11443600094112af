"""k-fold CV end to end: LibSVM and the scikit-learn peers against cold and SIR in every kernel
mode, same folds, same run.

Each configuration runs in a fresh subprocess, so that its thread counts are set before numba,
LibSVM and oneDAL load, its peak memory is its own and scikit-learn-intelex never reaches a
stock scikit-learn run. Short configurations repeat and report the median. Ratios are taken
between configurations of the same invocation, never across runs.

The peers (``--peers``) cross-validate scikit-learn's ``SVC`` with the same C, gamma, tol and
cache size on our folds (``PredefinedSplit`` of our fold assignment), by ``cross_val_predict``
(one fit and one prediction per fold, as ``cross_val_score`` does, and the predictions to
compare with ours instance by instance), each in the way it uses the threads best:

- ``sklearn``: stock scikit-learn (LibSVM inside, one thread a fit), the folds in parallel
  over the threads (``n_jobs``);
- ``intelex``: scikit-learn-intelex's ``SVC`` (oneDAL), one fold at a time, oneDAL on all
  the threads (``daal4py.daalinit``);
- ``intelex_folds``: the same, the folds in parallel and oneDAL on one thread in each
  (joblib limits every worker's threads to threads / n_jobs, which oneDAL reads).

``vs_fastest_peer`` is the fastest peer's seconds / the row's (above 1: the row is faster),
``fastest_peer`` names that peer. ``cpu_per_wall`` (processor seconds over wall seconds of
the timed part, this process only) shows the threads a configuration kept busy. Every run also
times a STREAM-like triad (a = b + s c, 24 bytes an element) at 1 thread and at the run's
threads; our rows report training microseconds per SMO iteration against the floor that
bandwidth allows for the bytes an iteration must move (``bytes_per_iteration``: two float32
kernel rows and the float64 gradient read and written, over the mean active set).

    python benchmarks/bench_cv.py                         # the full matrix (hours on 2 cores)
    python benchmarks/bench_cv.py --cases heart:10 madelon:100 adult@10000:10 --threads 1
    python benchmarks/bench_cv.py --cases adult:10 --modes auto --libsvm-rounds 2
    python benchmarks/bench_cv.py --cases madelon:10 --modes auto --threads 2 --peers intelex
    python benchmarks/bench_cv.py --cases adult:10 --modes auto --methods sir --peers --chains 1 2

``--chains 1 2`` runs each of our methods also as 2 chains of rounds (``cross_validate``'s
``chains``), and ``vs_one_thread`` is the same method's seconds at 1 thread and 1 chain over the
row's: what the cores buy.

``--solvers smo active_set auto`` runs each of our methods with each solver (``SolverOptions.solver``;
default ``smo``, ``cross_validate``'s default and LibSVM's algorithm; ``iterations`` then count SMO's
iterations and Newton steps together); ``vs_cold_same_mode`` divides by the cold start with the
same solver.

    python benchmarks/bench_cv.py --cases adult:10 --modes auto --methods cold sir --peers --solvers smo auto

``--cache-mb MB`` sets our solver's per-round row cache (default 0: the solver's own, 2 MB where
rows are computed from bit sets and 100, LibSVM's and the peers', elsewhere): a row of bit sets
costs less to compute again than to read back from memory (docs: Kernel modes and threads).

``seconds`` is the wall time of the whole call on both sides, each warmed up before the clock (our
compiled code loaded, the peer's library on a fit of eight instances); ``cv_seconds`` is what our
own timer reports (kernel and rounds, not the input checks and folds). An estimated row's seconds
are the estimate.

``--libsvm-rounds R`` times only LibSVM's first R rounds and estimates its total as their mean
times k; accuracy and iterations then cover those rounds only. A row is ``estimated`` when any
figure in it is: its own time, or the LibSVM or cold time its ratios divide.

Our rows default to what a user gets: chains derived from ``n_jobs=-1`` (``--chains 0``: one per
thread, at most one per round, one per two rounds for ATO, MIR and SIR) and the kernel's own row cache (``--cache-mb 0``). The peers get
their best input (``--peer-inputs``): dense arrays for dense data, CSR for sparse, both where unsure.
With several ``--threads`` the run ends with a table of seconds by threads beside the fastest peer.

    python benchmarks/bench_cv.py --cases madelon:10 --methods sir --modes auto --threads 1 2 4 8 16 --peers intelex
    python benchmarks/bench_cv.py --cases adult:10 mnist@20000:10 --export cases/     # for another machine
    ALPHASEED_BENCH_DATA=cases/ python benchmarks/bench_cv.py --cases adult:10 ...    # there

Prints a table and writes results/bench/cv.csv (the mirror: ALPHASEED_DATA_MIRROR or config).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from common import (
    PEER_INPUTS, PEER_INPUTS_HELP, ROOT, export_case, load_case, peer_inputs, run_child, write_csv,
)

MODES = ("cache", "shared", "gram", "auto")
PEERS = ("sklearn", "intelex", "intelex_folds")
# Bytes an SMO iteration moves per active instance: two float32 kernel rows read, the float64
# gradient read and written (the least any implementation of the update must move).
BYTES_PER_ACTIVE = 2 * 4 + 2 * 8
# dataset[@subsample]:k
FULL = ["heart:10", "heart:100", "madelon:10", "madelon:100", "adult@10000:10", "adult:10",
        "webdata:10"]
# LibSVM's default row cache, which LibSVM and the peers always use (``--cache-mb`` is ours).
LIBSVM_CACHE_MB = 100.0
# A configuration faster than this (seconds) is repeated and its median reported.
SHORT_RUN = 20.0


def run_one(dataset: str, subsample: int | None, k: int, method: str, mode: str,
            max_rounds: int | None, chains: int, cache_mb: float, solver: str) -> dict:
    """Runs inside the child process: one cross-validation, reported as a JSON line. ``chains`` 0 and
    ``cache_mb`` 0 are the defaults: chains from ``n_jobs=-1`` (the process's threads) and the kernel's
    own row cache."""
    from alphaseed.cv import cross_validate
    from alphaseed.solver import SolverOptions, warmup

    X, y, entry, seed = load_case(dataset, subsample)
    options = SolverOptions(kernel_mode=mode, cache_mb=cache_mb or None, solver=solver)
    warmup()   # a process compiles (or loads the compiled code) once, before its first call
    with Clock() as clock:
        result = cross_validate(X, y, entry["C"], entry["gamma"], k, method, seed=seed, max_rounds=max_rounds,
                                n_jobs=-1, chains=chains or None, options=options)
    train_seconds = sum(r.seconds.train for r in result.rounds)
    active = sum(r.kernel.active_sum for r in result.rounds if r.kernel is not None)
    # An estimate extrapolates the rounds run, which the wall clock cannot.
    return {"seconds": result.seconds if result.estimated else clock.seconds, "cv_seconds": result.seconds,
            "estimated": result.estimated,
            "iterations": result.iterations,
            "accuracy": result.accuracy, "kernel_seconds": result.seconds_kernel,
            "predict_seconds": sum(r.seconds.predict for r in result.rounds),
            "us_per_iteration": 1e6 * train_seconds / max(result.iterations, 1),
            "bytes_per_iteration": BYTES_PER_ACTIVE * active / max(result.iterations, 1)
            if active else np.nan,
            "kernel_mode": result.kernel_mode, "chains_run": result.chains, "cache_mb_run": result.cache_mb,
            "cpu_per_wall": clock.cpu_per_wall,
            "predictions": "".join("+" if p > 0 else "-" for p in result.predictions),
            "peak_mb": peak_mb()}


def run_peer(dataset: str, subsample: int | None, k: int, peer: str, threads: int, given: str) -> dict:
    """Runs inside the child process: a peer's cross-validation on our folds, as a JSON line; ``given`` is
    the input it gets, ``dense`` or ``sparse`` (CSR)."""
    from sklearn.model_selection import PredefinedSplit, cross_val_predict

    from alphaseed.cv import stratified_folds

    if peer == "sklearn":
        from sklearn.svm import SVC
    else:
        import daal4py
        from sklearnex.svm import SVC

        daal4py.daalinit(threads if peer == "intelex" else 1)
    X, y, entry, seed = load_case(dataset, subsample)
    X = X.toarray() if given == "dense" else X
    folds = stratified_folds(y, k, seed)
    svc = SVC(C=entry["C"], gamma=entry["gamma"], tol=1e-3, cache_size=LIBSVM_CACHE_MB, shrinking=True)
    n_jobs = None if peer == "intelex" else threads
    # Load the library and start any worker processes before the clock, as ours compiles before.
    few = np.concatenate([np.flatnonzero(y == label)[:4] for label in (-1, 1)])
    cross_val_predict(svc, X[few], y[few], cv=2, n_jobs=n_jobs)
    with Clock() as clock:
        predicted = cross_val_predict(svc, X, y, cv=PredefinedSplit(folds), n_jobs=n_jobs)
    return {"seconds": clock.seconds, "estimated": False, "iterations": np.nan,
            "accuracy": 100.0 * float(np.mean(predicted == y)),
            "kernel_mode": given, "cpu_per_wall": clock.cpu_per_wall,
            "predictions": "".join("+" if p > 0 else "-" for p in predicted),
            "peak_mb": peak_mb()}


def run_triad() -> dict:
    """Runs inside the child process: memory bandwidth (GB/s) of a STREAM triad at the
    process's numba threads, the best of 5."""
    from numba import njit, prange

    @njit(parallel=True)
    def triad(a, b, c, s):
        for i in prange(a.size):
            a[i] = b[i] + s * c[i]

    a, b, c = (np.ones(1 << 25) for _ in range(3))   # 3 x 256 MB, far beyond any cache
    triad(a, b, c, 3.0)
    best = np.inf
    for _ in range(5):
        start = time.perf_counter()
        triad(a, b, c, 3.0)
        best = min(best, time.perf_counter() - start)
    return {"triad_gbs": 3 * a.nbytes / best / 1e9}


class Clock:
    """Wall and processor seconds of a block (processor: every thread of this process)."""

    def __enter__(self):
        self._wall, self._cpu = time.perf_counter(), time.process_time()
        return self

    def __exit__(self, *exc):
        self.seconds = time.perf_counter() - self._wall
        self.cpu_per_wall = (time.process_time() - self._cpu) / self.seconds


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def measure(args, dataset, subsample, k, method, mode, threads, chains=0, solver="") -> dict:
    """``method`` is ours (with ``solver``), LibSVM or a peer (``mode`` is then its input, ``dense``
    or ``sparse``)."""
    rounds = args.libsvm_rounds if method == "libsvm" and args.libsvm_rounds else 0
    cache_mb = LIBSVM_CACHE_MB if method in ("libsvm", *PEERS) else args.cache_mb
    cmd = [sys.executable, __file__, "--one", dataset, str(subsample or 0), str(k), method, mode,
           str(rounds), str(threads), str(chains), str(cache_mb), solver or "smo"]
    runs = []
    while True:
        runs.append(run_child(cmd, threads))
        if runs[-1]["seconds"] > SHORT_RUN or len(runs) >= args.repeats:
            break
    row = pd.DataFrame(runs).median(numeric_only=True).to_dict()
    row.update(dataset=dataset if not subsample else f"{dataset}[{subsample}]", k=k,
               method=method, mode=runs[0]["kernel_mode"], requested_mode=mode,
               threads=threads, chains=chains, cache_mb=cache_mb, solver=solver, runs=len(runs),
               estimated=runs[0]["estimated"], predictions=runs[0]["predictions"])
    print(f"  {row['dataset']:>14} k={k:<4} {method:>6} {solver:>10} {mode:>6} threads={threads} chains={chains} "
          f"{row['seconds']:9.2f}s  iters={row['iterations']:.0f}  accuracy={row['accuracy']:.3f}", file=sys.stderr, flush=True)
    return row


def with_ratios(table: pd.DataFrame, peers) -> pd.DataFrame:
    """``table`` with ``vs_libsvm`` (LibSVM's seconds / the row's, same dataset, k and threads),
    ``vs_cold_same_mode`` (the cold start's in the same requested mode and chains / the row's;
    ours only), ``vs_one_thread`` (the same configuration's at 1 thread and 1 chain / the row's),
    ``vs_fastest_peer`` and ``fastest_peer`` (see the module doc), ``differs_from_cold``
    (instances predicted otherwise than by our cold run), ``floor_ratio`` (training time per
    iteration / the triad's time for its bytes) and ``machine_floor_ratio`` (the same for the
    machine: chains that run at once, one a thread, each take their iterations' time side by
    side, as the triad's threads share the bandwidth side by side, so the machine's time per
    iteration is a chain's over min(chains, threads)), and ``estimated`` set wherever one of
    the times a row shows or divides by is estimated."""
    key = ["dataset", "k", "threads"]

    def reference(rows, keys: list[str], column="seconds"):
        ref = rows[keys + [column, "estimated"]].drop_duplicates(keys)
        merged = table[keys].merge(ref, on=keys, how="left")
        return merged[column].to_numpy(), merged["estimated"].fillna(False).to_numpy(dtype=bool)

    libsvm_seconds, libsvm_estimated = reference(table[table.method == "libsvm"], key)
    cold = table[table.method == "cold"]
    cold_seconds, cold_estimated = reference(cold, key + ["requested_mode", "chains", "solver"])
    one_thread, one_thread_estimated = reference(
        table[(table.threads == 1) & (table.chains <= 1)].drop(columns="threads"),
        ["dataset", "k", "method", "requested_mode", "solver"])
    fastest = table[table.method.isin(peers)].sort_values("seconds")
    peer_seconds, _ = reference(fastest, key)
    peer_name, _ = reference(fastest, key, "method")
    ours = ~table.method.isin(("libsvm", *PEERS)).to_numpy()
    # Our rows against the cold start of their own solver; LibSVM and the peers against SMO's.
    cold_solver = np.where(ours, table.solver, "smo")
    by_solver = table.assign(solver=cold_solver)
    cold_predictions = by_solver[key + ["solver"]].merge(
        cold[key + ["solver", "predictions"]].drop_duplicates(key + ["solver"]), on=key + ["solver"],
        how="left")["predictions"].to_numpy()
    floor_us = 1e6 * table.bytes_per_iteration / (table.triad_gbs * 1e9)
    return table.assign(
        vs_libsvm=libsvm_seconds / table.seconds,
        vs_cold_same_mode=np.where(ours, cold_seconds / table.seconds, np.nan),
        vs_one_thread=one_thread / table.seconds,
        vs_fastest_peer=peer_seconds / table.seconds,
        fastest_peer=peer_name,
        differs_from_cold=[np.nan if not isinstance(c, str) else
                           sum(a != b for a, b in zip(p, c))
                           for p, c in zip(table.predictions, cold_predictions)],
        floor_ratio=table.us_per_iteration / floor_us,
        machine_floor_ratio=table.us_per_iteration / np.minimum(table.get("chains_run", table.chains), table.threads)
        / floor_us,
        estimated=(table.estimated.astype(bool).to_numpy() | libsvm_estimated | (ours & cold_estimated)
                   | one_thread_estimated),
    )


def main() -> None:
    from alphaseed.solver.options import SOLVERS

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--cases", nargs="+", default=FULL, metavar="DATASET[@M]:K",
                        help="datasets (with an optional stratified sample size) and k")
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=MODES)
    parser.add_argument("--methods", nargs="+", default=["libsvm", "cold", "sir"],
                        help="LibSVM and our methods (cold, sir, ...) in each mode")
    parser.add_argument("--peers", nargs="*", default=list(PEERS), choices=PEERS)
    parser.add_argument("--repeats", type=int, default=3, help="runs of a short configuration")
    parser.add_argument("--threads", type=int, nargs="+", default=[1, os.cpu_count()])
    parser.add_argument("--chains", type=int, nargs="+", default=[0],
                        help="chains of rounds for our methods (cross_validate's chains; 0, the default: "
                             "derived from n_jobs=-1, the run's threads)")
    parser.add_argument("--peer-inputs", choices=PEER_INPUTS, default="best", help=PEER_INPUTS_HELP)
    parser.add_argument("--libsvm-rounds", type=int, metavar="R",
                        help="time LibSVM's first R rounds only and estimate its total")
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "bench" / "cv.csv")
    parser.add_argument("--solvers", nargs="+", default=["smo"], choices=SOLVERS,
                        help="our methods' solvers (SolverOptions.solver)")
    parser.add_argument("--cache-mb", type=float, default=0.0,
                        help="our solver's row cache per round (0, the default: the kernel's own, 2 MB "
                             "where rows come from bit sets, else 100; LibSVM and the peers keep 100)")
    parser.add_argument("--export", type=Path, metavar="DIR",
                        help="write the cases' data to DIR and stop; elsewhere, ALPHASEED_BENCH_DATA=DIR reads "
                             "them from there (a machine without the datasets or the pipeline's packages)")
    parser.add_argument("--one", nargs=10, help=argparse.SUPPRESS)
    parser.add_argument("--triad", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.triad:
        print(json.dumps(run_triad()))
        return
    if args.one:
        dataset, subsample, k, method, mode, rounds, threads, chains, cache_mb, solver = args.one
        if method in PEERS:
            result = run_peer(dataset, int(subsample) or None, int(k), method, int(threads), mode)
        else:
            result = run_one(dataset, int(subsample) or None, int(k), method, mode,
                             int(rounds) or None, int(chains), float(cache_mb), solver)
        print(json.dumps(result))
        return
    if args.export:
        for case in args.cases:
            name, _, subsample = case.split(":")[0].partition("@")
            print(export_case(name, int(subsample) if subsample else None, args.export))
        return
    if args.libsvm_rounds is not None and args.libsvm_rounds < 1:
        parser.error("--libsvm-rounds must be at least 1")

    rows = []
    bandwidth = {t: run_child([sys.executable, __file__, "--triad"], t)["triad_gbs"]
                 for t in sorted(set(args.threads))}
    print(f"  triad GB/s by threads: {bandwidth}", file=sys.stderr, flush=True)
    for case in args.cases:
        name, k = case.split(":")
        dataset, _, subsample = name.partition("@")
        subsample, k = int(subsample) if subsample else None, int(k)
        for threads in sorted(set(args.threads)):
            if "libsvm" in args.methods:
                rows.append(measure(args, dataset, subsample, k, "libsvm", "cache", threads))
            for peer in args.peers:
                for given in peer_inputs(args.peer_inputs, dataset, subsample):
                    rows.append(measure(args, dataset, subsample, k, peer, given, threads))
            for mode in args.modes:
                for method in args.methods:
                    for chains in args.chains if method != "libsvm" else ():
                        for solver in args.solvers:
                            rows.append(measure(args, dataset, subsample, k, method, mode, threads, chains,
                                                solver))
    table = pd.DataFrame(rows)
    table["triad_gbs"] = table.threads.map(bandwidth)
    table = with_ratios(table, args.peers)
    columns = ["dataset", "k", "threads", "chains", "chains_run", "cache_mb", "cache_mb_run", "method", "solver",
               "requested_mode", "mode", "seconds", "cv_seconds",
               "vs_fastest_peer", "fastest_peer", "vs_libsvm", "vs_cold_same_mode", "vs_one_thread",
               "iterations", "accuracy", "differs_from_cold", "kernel_seconds",
               "predict_seconds", "us_per_iteration", "bytes_per_iteration", "triad_gbs",
               "floor_ratio", "machine_floor_ratio", "cpu_per_wall", "peak_mb", "runs", "estimated"]
    table = table.reindex(columns=columns)
    write_csv(table, args.out)
    with pd.option_context("display.width", 250, "display.max_rows", 500,
                           "display.max_columns", 50):
        print(table.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    if table.threads.nunique() > 1:
        print("\nSeconds by threads (our rows: the same configuration at every thread count; the peers: each "
              "input):")
        print(scaling(table).to_string(float_format=lambda v: f"{v:.3g}"))
    print(f"\nwritten to {args.out}")


def scaling(table: pd.DataFrame) -> pd.DataFrame:
    """Seconds of each configuration at each thread count, and each of ours against the fastest peer at
    the same threads (``vs_peer``)."""
    keys = ["dataset", "k", "method", "solver", "requested_mode", "chains", "cache_mb"]
    frame = table.assign(requested_mode=table.requested_mode.fillna(""), solver=table.solver.fillna(""))
    seconds = frame.pivot_table(index=keys, columns="threads", values="seconds")
    ratio = frame[~frame.method.isin(PEERS + ("libsvm",))].pivot_table(index=keys, columns="threads",
                                                                         values="vs_fastest_peer")
    return pd.concat({"seconds": seconds, "vs_peer": ratio}, axis=1)


if __name__ == "__main__":
    main()
