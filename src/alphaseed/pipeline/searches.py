"""A grid search on LibSVM's stratified folds, run for the pipeline (``alphaseed search``): its
settings, every point's figures and the provenance, ready to be written (``report.search``)."""

from __future__ import annotations

import time
from dataclasses import dataclass

import numpy as np
import pandas as pd

from ..cv import KFoldRounds, stratified_folds, utc_now
from ..sklearn import SVC, GridSearchCV
from ..solver import SolverOptions


@dataclass(frozen=True)
class SearchSpec:
    """What a grid search is over: a dataset's name, the log2 grid, the folds and the method.

    Parameters
    ----------
    name : str
        The dataset's name, as the results will say it.
    log2_C, log2_gamma : list of float
        The grid's exponents of C and gamma.
    k : int
        The number of LibSVM's stratified folds.
    seed : int
        The seed of the folds.
    method : str
        ``cold`` or the seeder (``GridSearchCV``'s ``method``).
    """

    name: str
    log2_C: list
    log2_gamma: list
    k: int
    seed: int
    method: str


def run_search(X, y, spec: SearchSpec, *, n_jobs: int = 1, options: SolverOptions = SolverOptions(),
               provenance=None) -> tuple[dict, pd.DataFrame]:
    """Run ``alphaseed.GridSearchCV`` over ``spec``'s grid, with a progress bar.

    Parameters
    ----------
    X : ndarray or sparse matrix
        The features.
    y : ndarray
        The labels.
    spec : SearchSpec
        The grid, folds and method.
    n_jobs : int, default 1
        Gamma columns run in parallel processes.
    options : SolverOptions
        The solver's settings (``max_iter`` is ``alphaseed.SVC``'s: None is LibSVM's cap).
    provenance : callable, optional
        ``provenance(started_utc, finished_utc)``, whose dict the summary carries.

    Returns
    -------
    summary : dict
        The settings, seconds and times of the search.
    points : DataFrame
        One row per (C, gamma): accuracy over all folds and of each, iterations, cap hits and
        fitting seconds.
    """
    started = utc_now()
    log2_C, log2_gamma = sorted(spec.log2_C), sorted(spec.log2_gamma)
    grid = {"C": [2.0 ** v for v in log2_C], "gamma": [2.0 ** v for v in log2_gamma]}
    splits = KFoldRounds(stratified_folds(np.asarray(y), spec.k, spec.seed), spec.k)
    estimator = SVC(tol=options.eps, cache_size=options.cache_mb, shrinking=options.shrinking,
                    kernel_mode=options.kernel_mode, max_iter=options.max_iter, solver=options.solver)
    search = GridSearchCV(estimator, grid, cv=splits, method=spec.method, refit=False, n_jobs=n_jobs,
                          verbose=1)
    start = time.perf_counter()
    search.fit(X, y)
    seconds = time.perf_counter() - start
    summary = {
        "dataset": spec.name, "n": int(X.shape[0]), "dim": int(X.shape[1]), "k": spec.k, "seed": spec.seed,
        "method": spec.method, "solver": options.solver, "kernel_mode": options.kernel_mode, "eps": options.eps,
        "shrinking": options.shrinking, "max_iter": options.max_iter, "log2_C": log2_C,
        "log2_gamma": log2_gamma, "seconds": seconds, "started_utc": started, "finished_utc": utc_now(),
    }
    if provenance is not None:
        summary["provenance"] = provenance(summary["started_utc"], summary["finished_utc"])
    return summary, _points(search.cv_results_, spec.k)


def _points(results: dict, k: int) -> pd.DataFrame:
    """One row per point of ``GridSearchCV.cv_results_``, accuracies in percent."""
    C = np.asarray(results["param_C"], dtype=float)
    gamma = np.asarray(results["param_gamma"], dtype=float)
    return pd.DataFrame({
        "log2_C": np.log2(C), "log2_gamma": np.log2(gamma), "C": C, "gamma": gamma,
        "accuracy": 100.0 * results["mean_test_score"],
        **{f"split{i}_accuracy": 100.0 * results[f"split{i}_test_score"] for i in range(k)},
        "iterations": results["total_iterations"],
        "iteration_cap_hits": results["iteration_cap_hits"],
        "fit_seconds": results["mean_fit_time"] * k,
    })
