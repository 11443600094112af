"""Ten-digit MNIST: k-fold CV of an SVC, ours against scikit-learn-intelex and LibSVM, same folds.

The data is ``mnist_scale``'s file (pixels / 255) with its digit labels, not the config's even-vs-odd
task; ``--subsample`` takes a stratified sample. Every configuration runs in a fresh subprocess, its
threads set before any library loads, on the same dense array (MNIST's pixels are dense data, each
peer's fastest input) and the same stratified folds:

- ``ours_cv``: ``sklearn.model_selection.cross_val_score`` of ``alphaseed.SVC`` with ``n_jobs`` set to
  the threads (its default, None, is one job), else its defaults: the drop-in, every fold trained
  cold, its kernel computed afresh;
- ``ours_search``: ``alphaseed.GridSearchCV(SVC(C=..., gamma=...), ...)`` over the one point
  (``refit=False``), every other setting its default: one kernel for all folds, each pair of
  classes seeded along the folds (SIR);
- ``intelex``: scikit-learn-intelex's ``SVC`` by ``cross_val_score``, oneDAL on all the threads
  (its ``cache_size`` does not change its time: on 20,000 digits 48.8-49.5 s at 100, 200 (its
  default), 2,000 and 8,000 MB, at aa3bc30);
- ``sklearn``: scikit-learn's ``SVC`` (LibSVM), the folds in parallel over the threads.

Each side is warmed up first on a few instances (ours compiles, the peers load), and the wall time
of the whole call is reported; ``vs_intelex`` is intelex's seconds over the row's, within the one
invocation. The table goes to stdout and ``results/bench/multiclass.csv``.

In each configuration's process, right before its timed call, most of the machine's available memory
is touched once and freed, untimed (``--no-warm-memory`` skips it; ``warm_s`` says what it took). A
virtual machine's host may back a guest page only while the guest uses it: the 2-core development
VM (Firecracker, its balloon reporting free pages) hands freed memory back to its host within ten
seconds, after which touching 8 GB again takes 16-18 s instead of 0.9 s. Unwarmed, a run would pay
for whatever the host had taken back since the last one, a cost a machine without such a host does
not have (ours most, whose Gram matrix on all 60,000 digits is 14.4 GB); touched sooner, as before
the first configuration, the memory is handed back again while a process starts and compiles.

    python benchmarks/bench_multiclass.py --subsample 6000
    python benchmarks/bench_multiclass.py --configs ours_search intelex --threads 2
    python benchmarks/bench_multiclass.py --configs ours_search --profile   # where our time goes
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

from common import ROOT, run_child, write_csv

CONFIGS = ("ours_cv", "ours_search", "intelex", "sklearn")
PROFILE_LINES = 20
# The share of the available memory touched before the first configuration.
WARM_MEMORY_SHARE = 0.9


def warm_memory() -> tuple[float, float]:
    """Touch WARM_MEMORY_SHARE of the available memory once and free it: (GB, seconds); nothing
    where the system does not say what is available (Linux's /proc/meminfo)."""
    meminfo = Path("/proc/meminfo")
    lines = meminfo.read_text().splitlines() if meminfo.exists() else []
    available = next((int(line.split()[1]) * 1024 for line in lines if line.startswith("MemAvailable:")), 0)
    start = time.perf_counter()
    pages = np.empty(int(WARM_MEMORY_SHARE * available), dtype=np.uint8)
    pages[::4096] = 0
    del pages
    return WARM_MEMORY_SHARE * available / 1e9, time.perf_counter() - start


def load_digits(subsample: int | None):
    """(dense X, digit labels, C, gamma, seed) of mnist_scale, or its stratified sample."""
    from alphaseed.cv import stratified_subsample
    from alphaseed.pipeline.config import load_config
    from alphaseed.pipeline.data import locate_source, parse_libsvm

    config = load_config(ROOT / "config.yaml")
    entry = config["datasets"]["mnist_scale"]
    X, digits = parse_libsvm(locate_source("mnist_scale", config)[0])
    if subsample:
        keep = np.sort(stratified_subsample(digits, subsample, config["seed"]))
        X, digits = X[keep], digits[keep]
    return X.toarray(), digits.astype(np.int64), entry["C"], entry["gamma"], config["seed"]


def run_config(config: str, data: Path, k: int, threads: int, *, warm: bool, profile: bool = False) -> dict:
    """Runs inside the child process: one configuration's cross-validation, as a JSON line; with
    ``warm``, the memory touched right before it (``warm_memory``); with ``profile``, its cProfile
    functions by own time under ``"profile"``."""
    from sklearn.model_selection import StratifiedKFold, cross_val_score

    saved = np.load(data)
    X, y, C, gamma, seed = (saved[key] for key in ("X", "y", "C", "gamma", "seed"))
    folds = StratifiedKFold(k, shuffle=True, random_state=int(seed))
    few = np.concatenate([np.flatnonzero(y == label)[:4] for label in np.unique(y)])
    if config.startswith("ours"):
        from alphaseed import SVC, GridSearchCV

        if config == "ours_cv":
            def run(X_, y_, cv):
                return cross_val_score(SVC(C=float(C), gamma=float(gamma), n_jobs=threads), X_, y_, cv=cv)
        else:
            def run(X_, y_, cv):
                search = GridSearchCV(SVC(C=float(C), gamma=float(gamma)), {"C": [float(C)]}, cv=cv,
                                      refit=False).fit(X_, y_)
                return np.array([search.cv_results_[f"split{h}_test_score"][0] for h in range(search.n_splits_)])
    else:
        if config == "intelex":
            import daal4py
            from sklearnex.svm import SVC as PeerSVC

            daal4py.daalinit(threads)
        else:
            from sklearn.svm import SVC as PeerSVC
        peer = PeerSVC(C=float(C), gamma=float(gamma), cache_size=100.0)
        n_jobs = None if config == "intelex" else threads

        def run(X_, y_, cv):
            return cross_val_score(peer, X_, y_, cv=cv, n_jobs=n_jobs)
    run(X[few], y[few], 2)
    warm_gb, warm_s = warm_memory() if warm else (0.0, 0.0)
    profiler = cProfile.Profile() if profile else None
    start = time.perf_counter()
    if profiler is not None:
        profiler.enable()
    scores = run(X, y, folds)
    seconds = time.perf_counter() - start
    result = {"seconds": seconds, "accuracy": 100.0 * float(np.mean(scores)), "warm_gb": warm_gb, "warm_s": warm_s}
    if profiler is not None:
        profiler.disable()
        text = io.StringIO()
        pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(PROFILE_LINES)
        result["profile"] = text.getvalue()
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--subsample", type=int, default=None, help="a stratified sample of this size")
    parser.add_argument("--k", type=int, default=5)
    parser.add_argument("--threads", type=int, default=2)
    parser.add_argument("--configs", nargs="+", choices=CONFIGS, default=list(CONFIGS))
    parser.add_argument("--profile", action="store_true",
                        help="print where each configuration's time went (cProfile, by own time; "
                             "profiling slows the Python-level calls a little)")
    parser.add_argument("--no-warm-memory", action="store_true",
                        help="do not touch the machine's memory before each timed call")
    parser.add_argument("--child", choices=CONFIGS, help=argparse.SUPPRESS)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        print(json.dumps(run_config(args.child, args.data, args.k, args.threads,
                                    warm=not args.no_warm_memory, profile=args.profile)))
        return
    import pandas as pd

    X, y, C, gamma, seed = load_digits(args.subsample)
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        data = Path(folder) / "digits.npz"
        np.savez(data, X=X, y=y, C=C, gamma=gamma, seed=seed)
        for config in args.configs:
            command = [sys.executable, __file__, "--child", config, "--data", str(data),
                       "--k", str(args.k), "--threads", str(args.threads)] + ["--profile"] * args.profile \
                + ["--no-warm-memory"] * args.no_warm_memory
            result = run_child(command, args.threads)
            profile = result.pop("profile", None)
            rows.append({"config": config, "n": len(y), "classes": int(np.unique(y).size), "k": args.k,
                         "threads": args.threads, **result})
            print(f"{config}: {result['seconds']:.1f} s, accuracy {result['accuracy']:.2f} % "
                  f"(memory touched before: {result['warm_gb']:.1f} GB in {result['warm_s']:.1f} s)", flush=True)
            if profile:
                print(profile, flush=True)
    table = pd.DataFrame(rows)
    if "intelex" in set(table.config):
        table["vs_intelex"] = float(table.loc[table.config == "intelex", "seconds"].iloc[0]) / table.seconds
    print(table.to_string(index=False, float_format=lambda v: f"{v:.3f}"))
    write_csv(table, ROOT / "results" / "bench" / "multiclass.csv")


if __name__ == "__main__":
    main()
