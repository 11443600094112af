"""Grid search end to end: seeded against cold search, the LibSVM loop and scikit-learn.

Every variant cross-validates the same (log2 C, log2 gamma) grid on the same folds
(StratifiedKFold shuffled with the config seed, handed to each as explicit splits, which is
what PredefinedSplit does):

- ``libsvm``: what LIBSVM's grid.py does, one LibSVM cross-validation per grid point
  (``cross_validate(method="libsvm")``, the real LibSVM, no reuse between points);
- ``sklearn``: ``sklearn.model_selection.GridSearchCV(sklearn.svm.SVC(), n_jobs=...)``;
- ``intelex``: the same with scikit-learn-intelex's ``SVC`` (``sklearnex.svm.SVC``, oneDAL;
  nothing is patched, and it runs in its own process): each of the ``n_jobs`` workers runs
  oneDAL on threads / n_jobs threads (joblib sets the workers' limit, which oneDAL reads);
- ``cold``, ``seeded``: ``alphaseed.GridSearchCV`` with method ``cold`` and ``sir``, and
  ``SVC(solver="smo")``;
- ``cold_active_set``, ``seeded_active_set``, ``seeded_auto``: the same with
  ``SVC(solver="active_set")`` and ``SVC(solver="auto")``;
- ``defaults``: ``alphaseed.GridSearchCV(SVC(), grid)`` with every default, ``n_jobs`` too
  (whatever ``--jobs`` gives the others): what a user gets;
- ``halving``, ``sklearn_halving``, ``intelex_halving``: successive halving
  (``alphaseed.HalvingGridSearchCV(SVC())`` with its defaults, and scikit-learn's
  ``HalvingGridSearchCV`` with each SVC; factor 3, ``random_state`` the config seed). They judge
  most points on subsamples, so only their best point and its accuracy are compared.

The scikit-learn peers get their best input (``--peer-inputs``, as ``bench_cv.py``'s): dense
arrays for dense data, CSR for sparse, both (a row each) where the data's density leaves it open.

Beside the table, every exhaustive variant's points go to results/bench/search_points.csv (its
name taken from ``--out``'s): each point's fit seconds summed over its splits (``cv_results_``'s
``mean_fit_time`` times the splits: thread-seconds where the search runs points side by side; for
``libsvm``, the point's whole cross-validation, one after the other), its iterations where the
variant counts them, and its accuracy. ``--points`` also prints each variant's fit seconds as a
C-by-gamma table: where a grid's time goes.

Each variant runs in a fresh subprocess with its thread counts set before numba and LibSVM
load, and every search runs once on the grid's first point before the clock (imports, worker
processes and thread pools), ours as the peers'. Ratios are taken within one invocation. Prints
a table and writes results/bench/search.csv; the accuracy of every point is compared with the
cold search's.

    python benchmarks/bench_search.py --case adult:2000 --C=-5:15:4 --gamma=1:-15:-3
    python benchmarks/bench_search.py --case adult --C=9:15:2 --gamma=-5:-5:1 --folds 1

(the second: one gamma column's large-C points on the first of 5 folds of all of Adult).

(write a range that starts with '-' as --C=-5:15:4: argparse takes "-5:15:4" for an option).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
from common import (
    PEER_INPUTS, PEER_INPUTS_HELP, ROOT, add_grid_arguments, check_grid_arguments, load_case, peer_inputs, run_child,
    grid_points, search_splits, write_csv,
)

VARIANTS = ("libsvm", "sklearn", "intelex", "cold", "seeded", "cold_active_set", "seeded_active_set",
            "seeded_auto", "defaults", "halving", "sklearn_halving", "intelex_halving")
# The variants that run scikit-learn's search over a peer's SVC, each on the inputs ``--peer-inputs`` gives.
PEERS = tuple(v for v in VARIANTS if v.startswith(("sklearn", "intelex")))


def log2_values(text: str) -> list[float]:
    from alphaseed.pipeline.grid import log2_range

    return log2_range(text)


def run_one(case: str, variant: str, given: str, log2_C: str, log2_gamma: str, k: int, folds: int | None,
            n_jobs: int) -> dict:
    """Runs inside the child process: one whole grid search, reported as a JSON line. ``given`` is a
    peer's input, ``dense`` or ``sparse`` (CSR); ours and LibSVM take the case's CSR matrix."""
    name, _, size = case.partition(":")
    X, y, _, seed = load_case(name, int(size) if size else None)
    splits = search_splits(X, y, k, seed, folds)
    Cs = [2.0 ** v for v in log2_values(log2_C)]
    gammas = [2.0 ** v for v in log2_values(log2_gamma)]
    points = [(C, gamma) for C in Cs for gamma in gammas]
    iterations = None
    grid = {"C": Cs, "gamma": gammas}
    if variant == "libsvm":
        from alphaseed.cv.baseline import warmup
        from alphaseed.cv import cross_validate

        warmup()
        runs, point_seconds = [], []
        start = time.perf_counter()
        for C, gamma in points:
            clock = time.perf_counter()
            runs.append(cross_validate(X, y, C, gamma, cv=splits, method="libsvm"))
            point_seconds.append(time.perf_counter() - clock)
        seconds = time.perf_counter() - start
        # grid_points' columns: scikit-learn's mean_test_score is the mean of the per-split accuracies
        by_point = pd.DataFrame({"log2_C": [np.log2(C) for C, _ in points],
                                 "log2_gamma": [np.log2(gamma) for _, gamma in points],
                                 "fit_seconds": point_seconds, "iterations": [run.iterations for run in runs],
                                 "accuracy": [100.0 * np.mean([r.n_correct / r.test_size for r in run.rounds])
                                              for run in runs]})
        iterations = int(by_point.iterations.sum())
    else:
        if variant in PEERS:
            X = X.toarray() if given == "dense" else X
            from sklearn.experimental import enable_halving_search_cv  # noqa: F401
            from sklearn.model_selection import GridSearchCV, HalvingGridSearchCV

            if variant.startswith("sklearn"):
                from sklearn.svm import SVC
            else:
                import daal4py
                from sklearnex.svm import SVC

                # In this process (n_jobs = 1): the variant's threads, which run_child set.
                daal4py.daalinit(int(os.environ["OMP_NUM_THREADS"]))
            search = (HalvingGridSearchCV(SVC(), grid, cv=splits, n_jobs=n_jobs, refit=False,
                                          random_state=seed, return_train_score=False)
                      if variant.endswith("halving") else
                      GridSearchCV(SVC(), grid, cv=splits, n_jobs=n_jobs, refit=False))
            # The workers start and import before the clock, as our solver compiles before.
            GridSearchCV(SVC(), {"C": Cs[:1], "gamma": gammas[:1]}, cv=splits, n_jobs=n_jobs,
                         refit=False).fit(X, y)
        else:
            from alphaseed import SVC, GridSearchCV, HalvingGridSearchCV
            from alphaseed.solver import warmup

            warmup()
            if variant == "halving":
                search = HalvingGridSearchCV(SVC(), grid, cv=splits, refit=False, random_state=seed,
                                             n_jobs=n_jobs)
            elif variant == "defaults":
                search = GridSearchCV(SVC(), grid, cv=splits, refit=False)
            else:
                method, _, solver = variant.partition("_")
                search = GridSearchCV(SVC(solver=solver or "smo"), grid, cv=splits, refit=False,
                                      method="cold" if method == "cold" else "sir", n_jobs=n_jobs)
            # The search's own imports and thread pools before the clock, as the peers' above.
            GridSearchCV(search.estimator, {"C": Cs[:1], "gamma": gammas[:1]}, cv=splits, refit=False,
                         method=search.method, n_jobs=search.n_jobs).fit(X, y)
        start = time.perf_counter()
        search.fit(X, y)
        seconds = time.perf_counter() - start
        if "total_iterations" in search.cv_results_:
            iterations = int(search.cv_results_["total_iterations"].sum())
        best = (np.log2(search.best_params_["C"]), np.log2(search.best_params_["gamma"]))
        if variant.endswith("halving"):
            return {"seconds": seconds, "iterations": iterations, "points": None,
                    "best": best, "best_accuracy": 100.0 * float(search.best_score_)}
        by_point = (grid_points(search.cv_results_, len(splits)).set_index(["log2_C", "log2_gamma"])
                    .loc[[(np.log2(C), np.log2(gamma)) for C, gamma in points]].reset_index())
    return {"seconds": seconds, "iterations": iterations, "points": json.loads(by_point.to_json(orient="records"))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_grid_arguments(parser, case="heart", C="-5:15:2", gamma="3:-15:-2")
    parser.add_argument("--variants", nargs="+", default=list(VARIANTS), choices=VARIANTS)
    parser.add_argument("--threads", type=int, default=1, help="threads of each variant")
    parser.add_argument("--jobs", type=int, default=1,
                        help="n_jobs of scikit-learn's and our search")
    parser.add_argument("--peer-inputs", choices=PEER_INPUTS, default="best", help=PEER_INPUTS_HELP)
    parser.add_argument("--out", type=Path, default=ROOT / "results" / "bench" / "search.csv")
    parser.add_argument("--points", action="store_true",
                        help="also print each exhaustive variant's fit seconds at every point, C by gamma")
    # The child's arguments as one JSON object: a range like -5:15:2 would read as an option.
    parser.add_argument("--one", help=argparse.SUPPRESS)
    args = parser.parse_args()
    check_grid_arguments(parser, args)
    if args.one:
        print(json.dumps(run_one(**json.loads(args.one))))
        return

    name, _, size = args.case.partition(":")
    given_to_peers = peer_inputs(args.peer_inputs, name, int(size) if size else None)
    runs = {}
    for variant in args.variants:
        for given in given_to_peers if variant in PEERS else [""]:
            one = dict(case=args.case, variant=variant, given=given, log2_C=args.C, log2_gamma=args.gamma,
                       k=args.k, folds=args.folds, n_jobs=args.jobs)
            run = runs[variant, given] = run_child([sys.executable, __file__, "--one", json.dumps(one)],
                                                   args.threads)
            print(f"  {variant:>8} {given:>6} {run['seconds']:9.2f} s", file=sys.stderr, flush=True)
    Cs, gammas = log2_values(args.C), log2_values(args.gamma)
    points = [(c, g) for c in Cs for g in gammas]
    by_point = point_table(runs)
    accuracy = {key: points.accuracy.to_numpy() for key, points in by_point.groupby(["variant", "input"], sort=False)}
    reference = accuracy.get(("cold", ""), next(iter(accuracy.values()), None))
    seeded = runs.get(("seeded", ""), {}).get("seconds")
    rows = []
    for (variant, given), run in runs.items():
        if run["points"] is None:   # a halving search: its best point, scored on its last round's subsample
            best, best_accuracy, differing = run["best"], run["best_accuracy"], None
        else:
            scores = accuracy[variant, given]
            best, best_accuracy = points[int(np.argmax(scores))], scores.max()
            differing = int(np.sum(scores != reference))
        rows.append({
            "case": args.case, "grid": f"{len(Cs)}x{len(gammas)}", "k": args.k,
            "folds": args.folds or args.k,
            "variant": variant, "input": given, "threads": args.threads,
            "jobs": None if variant == "defaults" else args.jobs,
            "seconds": run["seconds"], "iterations": run["iterations"],
            "seconds_over_seeded": run["seconds"] / seeded if seeded else None,
            "points_differing_from_cold": differing,
            "best_log2_C": best[0], "best_log2_gamma": best[1],
            "best_accuracy": best_accuracy,
        })
    table = pd.DataFrame(rows)
    print(table.to_string(index=False))
    write_csv(table, args.out)
    if args.points:
        for (variant, given), seconds in by_point.groupby(["variant", "input"], sort=False):
            what = "seconds of its cross-validation" if variant == "libsvm" else "fit seconds summed over its splits"
            print(f"\n{variant}{' on ' + given if given else ''}: {what} at each point "
                  f"({seconds.fit_seconds.sum():.2f} in all)")
            print(seconds.pivot(index="log2_C", columns="log2_gamma", values="fit_seconds")
                  .round(2).to_string())
    write_csv(by_point, args.out.with_name(f"{args.out.stem}_points.csv"))


def point_table(runs: dict) -> pd.DataFrame:
    """``grid_points``' rows of every exhaustive variant, each with its variant and input."""
    tables = [pd.DataFrame(run["points"]).assign(variant=variant, input=given)
              for (variant, given), run in runs.items() if run["points"] is not None]
    columns = ["variant", "input", "log2_C", "log2_gamma", "fit_seconds", "iterations", "accuracy"]
    return (pd.concat(tables)[columns] if tables else pd.DataFrame(columns=columns)).astype({"iterations": "Int64"})


if __name__ == "__main__":
    main()
