"""``alphaseed.GridSearchCV``: model selection over (C, gamma) that reuses work across the grid.

LIBSVM's grid.py runs one ``svm-train -v`` per grid point and scikit-learn's GridSearchCV
fits every (point, fold) from scratch. Here, for each gamma (a *column* of the grid):

- one kernel (``KernelMatrix`` in the estimator's ``kernel_mode``; ``auto`` keeps the Gram
  matrix when it fits the memory budget) serves every C and every fold;
- each split runs over the C values in ascending order; at the smallest C, split h+1 is
  seeded from split h by the paper's seeder (``method``: ``sir``, ``mir`` or ``ato``;
  ``cold`` seeds nothing); at every larger C, split h is seeded from its own solution at the
  previous C (the same training set), by ``C_SEED``;
- the gradient comes with every seed: carried from the previous split (``smo.solve``'s
  ``previous``), and from the previous C in closed form (no kernel value needed, see
  ``seed_from_smaller_C``).

C ascends because the largest C is by far the most expensive point (Adult: C = 2^15 takes
most of a column's iterations); descending would solve it cold, ascending seeds it.

``C_SEED = "gap"`` was chosen by measurement (README, "Model selection";
``benchmarks/search_seeding.py``): of ``scale`` (alpha * C'/C, as DeCoste and Wagstaff
proposed) and ``keep`` (alpha unchanged; with C ascending, clipping to the new C changes
nothing, so ``clip`` is ``keep`` here), take the one whose LibSVM optimality gap is smaller,
both gaps coming from the closed-form gradients at no kernel cost. Scaling wins at the small C
values where most alphas sit at the bound; keeping wins once they turn free, and reaches the
hard-margin solution at once when C no longer binds. Also measured: ``none`` (every C seeded
along the splits only) and, dropped, raising the alphas at the old bound to the new one.

Every seed is feasible and SMO stops at the same tolerance, so each point's CV accuracy is the
cold search's up to which of several eps-optimal solutions a round ends at (identical on the
tests' data; the README gives the count of differing points on larger grids). Per gamma, the
kernel is a Gram matrix (kernel mode ``auto`` where it fits), and a sequential search
(``n_jobs`` 1) computes X's dot products once for all gammas (``kernel.shared_dots``) when
they fit the memory budget beside one Gram matrix: each gamma then only exponentiates.
"""

from __future__ import annotations

import multiprocessing
import os
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from scipy.stats import rankdata
from sklearn.base import BaseEstimator, MetaEstimatorMixin, clone
from sklearn.exceptions import ConvergenceWarning
from sklearn.model_selection import LeaveOneOut, ParameterGrid, check_cv
from sklearn.utils.validation import check_is_fitted, validate_data

from .errors import ConfigError
from .estimator import SVC, encode_binary_labels, resolve_gamma, solver_max_iter

SEARCH_METHODS = ("cold", "ato", "mir", "sir")
C_SEEDS = ("gap", "scale", "keep", "none")
C_SEED = "gap"
GRID_KEYS = ("C", "gamma")


@dataclass
class PointResult:
    """One (C, gamma) over all splits: test accuracy (a fraction), iterations, seconds, and
    whether SMO stopped at the iteration cap."""

    scores: np.ndarray
    iterations: np.ndarray
    fit_seconds: np.ndarray
    score_seconds: np.ndarray
    capped: np.ndarray


def seed_from_smaller_C(prev, C_prev: float, C: float, rule: str, y=None):
    """(alpha0, (G, G_bar)) at C >= C_prev from the solution ``prev`` at C_prev on the same set.

    ``scale``: alpha * C/C_prev keeps sum y alpha = 0 and the bounded set, so G + 1 = Q alpha
    and G_bar (C times the columns of the bounded alphas) both scale by C/C_prev.
    ``keep``: alpha stays, so G stays, and no alpha sits at the larger C: G_bar = 0.
    ``gap``: whichever of the two has the smaller ``optimality_gap`` (needs the labels ``y``).
    The C values of a column are distinct, so C > C_prev.
    """
    if rule == "gap":
        seeds = [seed_from_smaller_C(prev, C_prev, C, r) for r in ("scale", "keep")]
        return min(seeds, key=lambda seed: optimality_gap(seed[0], seed[1][0], y, C))
    ratio = C / C_prev
    at_bound = prev.alpha >= C_prev
    if rule == "scale":
        alpha = np.where(at_bound, C, np.minimum(prev.alpha * ratio, C))
        return alpha, (ratio * (prev.gradient + 1.0) - 1.0, ratio * prev.gradient_bar)
    return prev.alpha, (prev.gradient, np.zeros_like(prev.gradient_bar))


def optimality_gap(alpha, gradient, y, C) -> float:
    """LibSVM's stopping quantity max_{I_up} -y G - min_{I_low} -y G (0 or less at the optimum)."""
    yg = -y * gradient
    up = np.where(y > 0, alpha < C, alpha > 0)
    low = np.where(y > 0, alpha > 0, alpha < C)
    return float(yg[up].max(initial=-np.inf) - yg[low].min(initial=np.inf))


def search_column(X, y, gamma, Cs, splits, method: str, kernel_mode: str = "auto",
                  eps: float = 1e-3, cache_mb: float = 200.0, shrinking: bool = True,
                  max_iter: int | None = None, c_seed: str = C_SEED, progress=None,
                  dots=None) -> dict[float, PointResult]:
    """Cross-validate every C of ``Cs`` at one gamma on ``splits``; labels ``y`` are +-1.

    ``dots`` (``kernel.shared_dots``) are X's dot products, shared by the columns of a search.

    ``gamma`` is a number or ``"scale"``, which scikit-learn resolves on each training set: a
    split whose gamma differs from the previous split's gets its own kernel and is not seeded
    from that split. Splits run in order, each over all C ascending, so only one split's
    solutions are kept.
    """
    from . import smo
    from .cv import seed_context
    from .kernel import KernelMatrix
    from .seeding import SEEDERS

    if method not in SEARCH_METHODS:
        raise ValueError(f"method must be one of {', '.join(SEARCH_METHODS)}; got {method!r}")
    if c_seed not in C_SEEDS:
        raise ValueError(f"c_seed must be one of {', '.join(C_SEEDS)}; got {c_seed!r}")
    Cs = sorted(set(Cs))
    options = dict(eps=eps, cache_mb=cache_mb, shrinking=shrinking, max_iter=max_iter)
    results = {C: PointResult(*(np.zeros(len(splits)) for _ in range(4)), np.zeros(len(splits), bool))
               for C in Cs}
    kernel = None
    previous: dict = {}       # C -> solution of the previous split, on the same kernel
    for h, (train, test) in enumerate(splits):
        gamma_h = resolve_gamma(gamma, X[train])
        if kernel is None or kernel.gamma != gamma_h:
            kernel = KernelMatrix(X, gamma_h, mode=kernel_mode, dots=dots)
            previous = {}
        current: dict = {}
        for j, C in enumerate(Cs):
            start = time.perf_counter()
            alpha0 = gradient0 = carry_from = None
            if method != "cold" and j > 0 and c_seed != "none":
                alpha0, gradient0 = seed_from_smaller_C(current[Cs[j - 1]], Cs[j - 1], C, c_seed,
                                                        y[train])
            elif method != "cold" and C in previous:
                carry_from = (splits[h - 1][0], previous[C])
                alpha0 = SEEDERS[method](seed_context(kernel, y, C, *carry_from, train))
            solution = smo.solve(kernel, y, train, C, alpha0=alpha0, gradient0=gradient0,
                                 previous=carry_from, **options)
            point = results[C]
            point.fit_seconds[h] = time.perf_counter() - start
            start = time.perf_counter()
            support, coef = smo.support_coefficients(y, train, solution.alpha)
            point.scores[h] = np.mean(kernel.decision_signs(test, support, coef, solution.rho) == y[test])
            point.score_seconds[h] = time.perf_counter() - start
            point.iterations[h] = solution.iterations
            point.capped[h] = solution.iteration_cap_hit
            current[C] = solution
            if progress is not None:
                progress(1)
        previous = current if c_seed == "none" else {Cs[0]: current[Cs[0]]}
    return results


class GridSearchCV(MetaEstimatorMixin, BaseEstimator):
    """Exhaustive search over C and gamma of an ``alphaseed.SVC``, with alpha seeding.

    A drop-in for ``sklearn.model_selection.GridSearchCV`` with such an estimator:
    ``param_grid`` a dict or a list of dicts over ``C`` and ``gamma`` (numbers, "scale",
    "auto"); ``cv`` an int (scikit-learn's StratifiedKFold, as its GridSearchCV uses),
    ``"loo"``, a scikit-learn splitter or an iterable of (train, test) index arrays; ``method``
    ``cold`` or a seeder (module doc); ``n_jobs`` runs gamma columns in parallel processes;
    ``verbose`` shows a progress bar (fits done: points times splits).
    The score is accuracy. ``cv_results_`` has scikit-learn's keys plus ``split{i}_iterations``,
    ``total_iterations`` (SMO iterations over the splits of each point) and
    ``iteration_cap_hits`` (its splits whose SMO stopped at the estimator's ``max_iter``, LibSVM's
    cap by default; ``fit`` then warns with a ``ConvergenceWarning`` naming the points).
    """

    def __init__(self, estimator, param_grid, *, cv=5, method="sir", refit=True, n_jobs=None,
                 verbose=0):
        self.estimator = estimator
        self.param_grid = param_grid
        self.cv = cv
        self.method = method
        self.refit = refit
        self.n_jobs = n_jobs
        self.verbose = verbose

    def _splits(self, X, y):
        from .folds import custom_rounds

        splitter = LeaveOneOut() if isinstance(self.cv, str) and self.cv == "loo" else (
            check_cv(self.cv, y, classifier=True))
        return custom_rounds(splitter, X, y)[1]

    def _candidates(self) -> list[dict]:
        candidates = list(ParameterGrid(self.param_grid))
        for params in candidates:
            unknown = sorted(set(params) - set(GRID_KEYS))
            if unknown:
                raise ValueError(f"param_grid may search over C and gamma only; got {unknown}")
        return candidates

    def fit(self, X, y):
        from tqdm.auto import tqdm

        from .kernel import shared_dots
        from .smo import warmup

        warmup()  # compiled before the columns' processes start, and never by two processes at once

        if not isinstance(self.estimator, SVC):
            raise TypeError(f"estimator must be an alphaseed.SVC, got {type(self.estimator).__name__}")
        if self.method not in SEARCH_METHODS:
            raise ValueError(f"method must be one of {', '.join(SEARCH_METHODS)}; got {self.method!r}")
        X, y = validate_data(self, X, y, accept_sparse="csr", dtype=np.float64, order="C")
        _, y_signed = encode_binary_labels(y)
        candidates = self._candidates()
        base = self.estimator.get_params()
        points = [(float(p.get("C", base["C"])), _column_gamma(p.get("gamma", base["gamma"]), X))
                  for p in candidates]
        columns: dict = {}   # gamma (a number or "scale") -> its C values
        for C, gamma in points:
            columns.setdefault(gamma, []).append(C)
        splits = self._splits(X, y)
        options = dict(method=self.method, kernel_mode=base["kernel_mode"], eps=base["tol"],
                       cache_mb=base["cache_size"], shrinking=base["shrinking"],
                       max_iter=solver_max_iter(base["max_iter"]))
        jobs = [(gamma, sorted(set(Cs))) for gamma, Cs in columns.items()]
        with tqdm(total=sum(len(Cs) for _, Cs in jobs) * len(splits), unit="fit",
                  desc=f"grid search ({self.method})", disable=not self.verbose) as bar:
            if self.n_jobs in (None, 1):
                # One pass over the data for every gamma: each column's Gram matrix is built
                # from the same dot products.
                dots = shared_dots(X, options["kernel_mode"]) if len(jobs) > 1 else None
                outcomes = [search_column(X, y_signed, gamma, Cs, splits, progress=bar.update,
                                          dots=dots, **options) for gamma, Cs in jobs]
            else:
                # Fresh processes: forking a process whose Numba threads are running is unsafe.
                with ProcessPoolExecutor(max_workers=_workers(self.n_jobs),
                                         mp_context=multiprocessing.get_context("spawn")) as pool:
                    futures = [pool.submit(search_column, X, y_signed, gamma, Cs, splits,
                                           **options) for gamma, Cs in jobs]
                    outcomes = []
                    for (_, Cs), future in zip(jobs, futures):
                        outcomes.append(future.result())
                        bar.update(len(Cs) * len(splits))
        by_point = {(C, gamma): point for (gamma, _), outcome in zip(jobs, outcomes)
                    for C, point in outcome.items()}
        self.cv_results_ = _cv_results(candidates, [by_point[p] for p in points], len(splits))
        _warn_of_capped_fits(candidates, self.cv_results_["iteration_cap_hits"], len(splits))
        self.n_splits_ = len(splits)
        self.best_index_ = int(np.argmin(self.cv_results_["rank_test_score"]))
        self.best_params_ = candidates[self.best_index_]
        self.best_score_ = float(self.cv_results_["mean_test_score"][self.best_index_])
        if self.refit:
            start = time.perf_counter()
            self.best_estimator_ = clone(self.estimator).set_params(**self.best_params_).fit(X, y)
            self.refit_time_ = time.perf_counter() - start
        return self

    def _best(self) -> SVC:
        check_is_fitted(self, "best_estimator_")
        return self.best_estimator_

    @property
    def classes_(self):
        return self._best().classes_

    def predict(self, X):
        return self._best().predict(X)

    def decision_function(self, X):
        return self._best().decision_function(X)

    def score(self, X, y):
        return self._best().score(X, y)


def _workers(n_jobs) -> int:
    """scikit-learn's n_jobs: a positive count, or -1 for every core (-2 all but one...)."""
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0:
        raise ValueError(f"n_jobs must be None, a positive integer or negative; got {n_jobs!r}")
    return n_jobs if n_jobs > 0 else max(1, (os.cpu_count() or 1) + 1 + n_jobs)


def _column_gamma(gamma, X):
    """A grid column's gamma: a number, or "scale", which depends on each training set."""
    return gamma if isinstance(gamma, str) and gamma == "scale" else resolve_gamma(gamma, X)


def _warn_of_capped_fits(candidates: list[dict], hits: np.ndarray, n_splits: int) -> None:
    """One ConvergenceWarning naming the points whose SMO stopped at the iteration cap."""
    capped = np.flatnonzero(hits)
    if capped.size:
        named = "; ".join(f"{candidates[i]} in {hits[i]} of {n_splits} splits" for i in capped[:5])
        more = f" and {capped.size - 5} more points" if capped.size > 5 else ""
        warnings.warn(f"SMO stopped at the iteration cap before converging at {named}{more}: the "
                      f"scores of those points come from solutions that are not optimal "
                      f"(cv_results_['iteration_cap_hits']).", ConvergenceWarning, stacklevel=3)


def _cv_results(candidates: list[dict], points: list[PointResult], n_splits: int) -> dict:
    """scikit-learn's cv_results_ layout for one accuracy score, plus SMO iterations and the
    number of splits whose SMO stopped at the iteration cap."""
    scores = np.array([p.scores for p in points])
    iterations = np.array([p.iterations for p in points], dtype=np.int64)
    results: dict = {"params": candidates}
    for key in GRID_KEYS:
        column = np.ma.MaskedArray(np.empty(len(candidates), dtype=object),
                                   mask=[key not in p for p in candidates])
        for i, params in enumerate(candidates):
            if key in params:
                column[i] = params[key]
        results[f"param_{key}"] = column
    for what, values in (("fit_time", [p.fit_seconds for p in points]),
                         ("score_time", [p.score_seconds for p in points])):
        results[f"mean_{what}"] = np.mean(values, axis=1)
        results[f"std_{what}"] = np.std(values, axis=1)
    for i in range(n_splits):
        results[f"split{i}_test_score"] = scores[:, i]
    results["mean_test_score"] = scores.mean(axis=1)
    results["std_test_score"] = scores.std(axis=1)
    results["rank_test_score"] = rankdata(-results["mean_test_score"], method="min").astype(np.int32)
    for i in range(n_splits):
        results[f"split{i}_iterations"] = iterations[:, i]
    results["total_iterations"] = iterations.sum(axis=1)
    results["iteration_cap_hits"] = np.array([np.count_nonzero(p.capped) for p in points])
    return results


def write_search(X, y, name: str, log2_C, log2_gamma, k: int, seed: int, method: str, out,
                 n_jobs: int = 1, eps: float = 1e-3, cache_mb: float = 100.0,
                 shrinking: bool = True, kernel_mode: str = "auto", max_iter: int | None = None,
                 provenance=None) -> dict:
    """Grid search on LibSVM's stratified k folds (``alphaseed.folds``, drawn with ``seed``),
    with a progress bar; writes ``out`` (JSON), ``out``.csv and ``out``.png (the heat map).

    ``max_iter`` is ``alphaseed.SVC``'s (None: LibSVM's cap). ``provenance(started_utc,
    finished_utc)``, when given, adds its dict to the JSON. Returns what the JSON holds.
    """
    import pandas as pd

    from .cv import utc_now
    from .folds import KFoldRounds, stratified_folds

    started = utc_now()
    log2_C, log2_gamma = sorted(log2_C), sorted(log2_gamma)
    grid = {"C": [2.0 ** v for v in log2_C], "gamma": [2.0 ** v for v in log2_gamma]}
    splits = KFoldRounds(stratified_folds(np.asarray(y), k, seed), k)
    estimator = SVC(tol=eps, cache_size=cache_mb, shrinking=shrinking, kernel_mode=kernel_mode,
                    max_iter=max_iter)
    search = GridSearchCV(estimator, grid, cv=splits, method=method, refit=False, n_jobs=n_jobs,
                          verbose=1)
    start = time.perf_counter()
    search.fit(X, y)
    seconds = time.perf_counter() - start
    results = search.cv_results_
    points = pd.DataFrame({
        "log2_C": np.log2(np.asarray(results["param_C"], dtype=float)),
        "log2_gamma": np.log2(np.asarray(results["param_gamma"], dtype=float)),
        "C": np.asarray(results["param_C"], dtype=float),
        "gamma": np.asarray(results["param_gamma"], dtype=float),
        "accuracy": 100.0 * results["mean_test_score"],
        **{f"split{i}_accuracy": 100.0 * results[f"split{i}_test_score"] for i in range(k)},
        "iterations": results["total_iterations"],
        "iteration_cap_hits": results["iteration_cap_hits"],
        "fit_seconds": results["mean_fit_time"] * k,
    })
    summary = {
        "dataset": name, "n": int(X.shape[0]), "dim": int(X.shape[1]), "k": k, "seed": seed,
        "method": method, "kernel_mode": kernel_mode, "eps": eps, "shrinking": shrinking,
        "max_iter": max_iter, "log2_C": log2_C, "log2_gamma": log2_gamma, "seconds": seconds,
        "started_utc": started, "finished_utc": utc_now(),
    }
    if provenance is not None:
        summary["provenance"] = provenance(summary["started_utc"], summary["finished_utc"])
    return _write_search(summary, points, out)


# What every part of a search split by gamma column must share to be merged.
SEARCH_SETTINGS = ("dataset", "n", "dim", "k", "seed", "method", "kernel_mode", "eps", "shrinking", "max_iter",
                   "log2_C")


def merge_searches(parts, out) -> dict:
    """One search from searches of the same grid's gamma columns (``write_search`` outputs, e.g. one
    Snakemake job per column): the points of all, the best point as one search would choose it, the
    iterations and seconds summed, the first start and the last finish. Writes ``out`` as
    ``write_search`` does and returns what the JSON holds."""
    import json

    import pandas as pd

    summaries = [json.loads(Path(part).read_text(encoding="utf-8")) for part in parts]
    if not summaries:
        raise ConfigError("merging a search needs at least one part")
    first = summaries[0]
    for part, summary in zip(parts, summaries):
        differing = [key for key in SEARCH_SETTINGS if summary.get(key) != first.get(key)]
        if differing:
            raise ConfigError(f"{part} is a part of another search: its {', '.join(differing)} differ from "
                              f"{parts[0]}'s")
        if any("iteration_cap_hits" not in point for point in summary["points"]):
            raise ConfigError(f"{part} comes from an older alphaseed that did not record which points stopped "
                              f"at the iteration cap: run its search again")
    gammas = [g for summary in summaries for g in summary["log2_gamma"]]
    if len(set(gammas)) != len(gammas):
        raise ConfigError(f"the parts share gamma columns: log2 gamma {sorted(gammas)}")
    merged = {key: first[key] for key in SEARCH_SETTINGS}
    merged.update(log2_gamma=sorted(gammas), seconds=sum(summary["seconds"] for summary in summaries),
                  started_utc=min(summary["started_utc"] for summary in summaries),
                  finished_utc=max(summary["finished_utc"] for summary in summaries))
    if "provenance" in first:
        merged["provenance"] = first["provenance"]
    points = pd.DataFrame([point for summary in summaries for point in summary["points"]])
    return _write_search(merged, points, out)


def _write_search(summary: dict, points, out) -> dict:
    """Writes ``out`` (JSON: ``summary`` with the best point, the total iterations, the number of
    points where SMO stopped at the iteration cap in some split, and the points),
    ``out``.csv (the points) and ``out``.png (the heat map); returns what the JSON holds.

    The points are put in GridSearchCV's candidate order (C, then gamma, each ascending), and the best is
    the first of the highest accuracy in it, as GridSearchCV's rank 1 is.
    """
    import json

    from .atomic import atomic_path

    points = points.sort_values(["log2_C", "log2_gamma"], kind="stable").reset_index(drop=True)
    best = points.loc[points["accuracy"].idxmax()]
    summary = {**summary,
               "best": {key: float(best[key]) for key in ("log2_C", "log2_gamma", "C", "gamma", "accuracy")},
               "total_iterations": int(points["iterations"].sum()),
               "points_at_iteration_cap": int((points["iteration_cap_hits"] > 0).sum()),
               "points": points.to_dict(orient="records")}
    out = Path(out)
    with atomic_path(out) as temporary:
        temporary.write_text(json.dumps(summary, indent=1, default=float) + "\n")
    with atomic_path(out.with_suffix(".csv")) as temporary:
        points.to_csv(temporary, index=False)
    accuracy = points.pivot(index="log2_gamma", columns="log2_C", values="accuracy")
    capped = points[points["iteration_cap_hits"] > 0]
    heat_map(list(accuracy.columns), list(accuracy.index), accuracy.to_numpy(),
             (best["log2_C"], best["log2_gamma"]), list(zip(capped["log2_C"], capped["log2_gamma"])),
             f"{summary['dataset']}: {summary['k']}-fold CV accuracy ({summary['method']})", out.with_suffix(".png"))
    return summary


def heat_map(log2_C, log2_gamma, accuracy, best, capped, title: str, path) -> None:
    """CV accuracy (percent) over (log2 C, log2 gamma), the best point and the points where SMO
    stopped at the iteration cap marked; PNG, atomically.

    ``accuracy[i, j]`` belongs to ``log2_gamma[i]`` and ``log2_C[j]``, both ascending and evenly
    spaced; ``best`` is (log2 C, log2 gamma), ``capped`` a list of them.
    """
    from matplotlib.figure import Figure
    from matplotlib.patheffects import withStroke

    from .atomic import atomic_path

    figure = Figure(figsize=(1.2 + 0.55 * len(log2_C), 1.0 + 0.45 * len(log2_gamma)))
    axes = figure.add_subplot()
    image = axes.imshow(accuracy, origin="lower", aspect="auto", cmap="viridis",
                        extent=_extent(log2_C) + _extent(log2_gamma))
    figure.colorbar(image, ax=axes, label="CV accuracy (%)")
    if capped:  # under the best point's star
        # white with a black edge: visible on every colour of the map and on the legend's white
        axes.plot(*zip(*capped), marker="x", markersize=9, markeredgewidth=2, color="white",
                  linestyle="none", label="SMO stopped at the iteration cap (not converged)",
                  path_effects=[withStroke(linewidth=4, foreground="black")])
    axes.plot(*best, marker="*", markersize=16, color="red", markeredgecolor="white",
              linestyle="none", label=f"best: log2 C = {best[0]:g}, log2 gamma = {best[1]:g}")
    axes.set_xticks(log2_C)
    axes.set_yticks(log2_gamma)
    axes.set_xlabel("log2 C")
    axes.set_ylabel("log2 gamma")
    axes.set_title(title)
    axes.legend(loc="upper center", bbox_to_anchor=(0.5, -0.15), frameon=False)
    with atomic_path(path) as temporary:
        figure.savefig(temporary, format="png", dpi=150, bbox_inches="tight")


def _extent(values) -> list[float]:
    """Image bounds that centre each cell on its value (one cell: a unit-wide cell)."""
    low, high = min(values), max(values)
    half = (high - low) / (len(values) - 1) / 2 if len(values) > 1 else 0.5
    return [low - half, high + half]


def compare_methods(summaries: dict[str, dict]) -> pd.DataFrame:
    """One row per method of one search (``write_search``'s summaries by method): its best
    point, iterations, time and points where SMO stopped at the iteration cap, and against
    ``cold`` when it ran: its ratios and the points whose accuracy differs."""
    import pandas as pd

    cold = summaries.get("cold")
    rows = []
    for method, summary in summaries.items():
        row = {"method": method, "best log2 C": summary["best"]["log2_C"],
               "best log2 gamma": summary["best"]["log2_gamma"],
               "best accuracy (%)": summary["best"]["accuracy"],
               "iterations": summary["total_iterations"], "seconds": summary["seconds"],
               "points at the iteration cap": summary["points_at_iteration_cap"]}
        if cold is not None:
            accuracy = {(p["log2_C"], p["log2_gamma"]): p["accuracy"] for p in cold["points"]}
            row["cold / method iterations"] = cold["total_iterations"] / max(1, summary["total_iterations"])
            row["cold / method seconds"] = cold["seconds"] / summary["seconds"]
            row["points differing from cold"] = sum(
                p["accuracy"] != accuracy[(p["log2_C"], p["log2_gamma"])] for p in summary["points"])
        rows.append(row)
    return pd.DataFrame(rows)
