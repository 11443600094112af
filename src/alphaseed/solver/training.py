"""``solve``: one C-SVC training run on instances of a kernel, cold or from a warm start."""

from __future__ import annotations

import time
from dataclasses import dataclass, field, replace

import numpy as np
from numba import get_num_threads

from ..errors import SolverInputError
from ..kernel import (
    EVICTIONS, HITS, REQUESTS, ROWS_COMPUTED, ROWS_EXTENDED, VALUES_COMPUTED, KernelMatrix, budget_values,
    new_cache,
)
from .active_set import finish, libsvm_rho
from .carry import carry_gradient
from .options import (
    AUTO_DIRECT_FREE_SHARE, AUTO_DIRECT_ITERATIONS, AUTO_DIRECT_PATH_TURNS, AUTO_FINISH_FACTOR_FLOP,
    AUTO_FINISH_ROW_VALUE, AUTO_SMO_ITERATIONS, AUTO_SMO_MIN_ITERATIONS, SOLVERS, TAIL_ITERATIONS, SolverOptions,
)
from .penalty import check_C, class_bounds, upper_bounds
from .smo import smo_loop
from .state import (
    ACTIVE_SUM, BOUND_ROUNDING, G_BAR_ROWS, G_BAR_VALUES, RECONSTRUCTION_VALUES, RECONSTRUCTIONS, init_gradient,
    kernel_rows, new_state, rows_apart,
)


@dataclass
class KernelCounts:
    """The kernel work of one training run, counted at the round's row cache (``RowCache``).

    In ``cache`` mode each computed value is one kernel evaluation; in ``shared`` and ``gram``
    modes it is a value copied from the shared rows or the Gram matrix (and ``gram`` mode's
    reconstruction reads the matrix directly, outside the cache). A miss either computes a row
    from scratch or extends the computed prefix of a cached row.

    Parameters
    ----------
    requests : int, default 0
        Rows of Q requested through the cache.
    hits : int, default 0
        Requests answered without computing a value.
    rows_computed : int, default 0
        Misses that computed a row from scratch.
    rows_extended : int, default 0
        Misses that extended a cached row.
    values_computed : int, default 0
        Total length computed by the misses.
    evictions : int, default 0
        Rows evicted from the cache.
    init_values : int, default 0
        Of values_computed: the starting gradient's (initialised or carried).
    reconstructions : int, default 0
        Gradient reconstructions (unshrinking).
    reconstruction_values : int, default 0
        Of values_computed: by the reconstructions.
    g_bar_rows : int, default 0
        Full-length rows requested as an alpha crossed C.
    g_bar_values : int, default 0
        Of values_computed: by those requests.
    active_sum : int, default 0
        Active-set size summed over the iterations.
    carried : bool, default False
        Whether the gradient was carried over (else LibSVM's initialisation, or given).
    carry_values_outside : int, default 0
        Kernel values the carry computed outside the cache.
    """
    # what the row cache counted: requests and hits, then the misses and what they cost
    requests: int = 0
    hits: int = 0
    # a miss computes a row from scratch or extends its computed prefix
    rows_computed: int = 0
    rows_extended: int = 0
    values_computed: int = 0
    evictions: int = 0
    # the values computed where: the start's gradient, the reconstructions, the G_bar updates
    init_values: int = 0
    reconstructions: int = 0
    reconstruction_values: int = 0
    g_bar_rows: int = 0
    g_bar_values: int = 0
    # the loop's length, and how the start's gradient was found
    active_sum: int = 0
    carried: bool = False
    carry_values_outside: int = 0


@dataclass
class SolveResult:
    """One training run's solution and figures, aligned with its training index.

    Parameters
    ----------
    alpha : ndarray
        The solution.
    gradient : ndarray
        G = Q alpha - 1, which a warm start on an overlapping training set carries over.
    gradient_bar : ndarray
        LibSVM's G_bar = C * sum of Q[:, j] over alpha_j = C.
    rho : float
        The decision value is sum_j y_j alpha_j K(x_j, x) - rho.
    objective : float
        The dual objective at alpha, alpha^T Q alpha / 2 - sum(alpha).
    iterations : int
        The solver's iterations: SMO's pair updates, and the active-set solver's Newton steps.
    iteration_cap_hit : bool
        Whether SMO stopped at the iteration cap rather than at eps.
    seconds_gradient_init : float
        Seconds spent on the starting gradient (carried, given or initialised).
    seconds_train : float
        Seconds spent in SMO's loop.
    n_sv : int
        Support vectors (alpha > 0).
    n_bounded_sv : int
        Of those, the ones at C.
    kernel : KernelCounts
        The run's kernel work.
    newton_steps : int
        Of ``iterations``, the active-set solver's Newton steps.
    finisher : str
        The solver that reached the solution: ``smo``, or ``active_set`` where its finish was
        optimal on its own.
    slope : ndarray or None
        Where the active set finished: d alpha / d ln C along the regularisation path
        (``active_set.path_slope``), which seeds the next C of a search. Else None.
    """
    alpha: np.ndarray
    gradient: np.ndarray
    gradient_bar: np.ndarray
    rho: float
    objective: float
    iterations: int
    iteration_cap_hit: bool
    seconds_gradient_init: float
    seconds_train: float
    n_sv: int
    n_bounded_sv: int
    kernel: KernelCounts = field(default_factory=KernelCounts)
    newton_steps: int = 0
    finisher: str = "smo"
    slope: np.ndarray | None = None


def check_labels(y: np.ndarray) -> np.ndarray:
    """``y`` as a flat float64 array, after checking every label is -1 or +1."""
    y = np.asarray(y, dtype=np.float64).ravel()
    if y.size and not ((y == 1.0) | (y == -1.0)).all():
        bad = np.unique(y[~np.isin(y, (-1.0, 1.0))])[:5]
        raise SolverInputError(f"labels must be -1 or +1; found {bad.tolist()}")
    return y


def check_warm_start(alpha0, y_train: np.ndarray, C) -> np.ndarray:
    """Validate a feasible start and return it clipped exactly into [0, C], each value within
    rounding of a bound on it (C: one penalty, or the pair of ``class_bounds``)."""
    a = np.asarray(alpha0, dtype=np.float64).ravel()
    if a.shape != y_train.shape:
        raise SolverInputError(f"alpha0 has {a.size} values for {y_train.size} training instances")
    if not np.isfinite(a).all():
        raise SolverInputError("alpha0 contains NaN or infinity")
    bound = upper_bounds(y_train, C)
    tol = 1e-9 * bound
    if (a < -tol).any() or (a > bound + tol).any():
        raise SolverInputError(
            f"alpha0 leaves [0, C={class_bounds(C)[0]:g}]: min {a.min():.6g}, max {a.max():.6g}"
            if np.ndim(C) == 0 else f"alpha0 leaves [0, C of its class {class_bounds(C)}]: min "
            f"{a.min():.6g}, max {a.max():.6g}")
    a = np.clip(a, 0.0, bound)
    a = np.where(a >= bound - BOUND_ROUNDING * bound, bound, np.where(a <= BOUND_ROUNDING * bound, 0.0, a))
    residual = float(y_train @ a)
    if abs(residual) > 1e-9 * max(1.0, float(a.sum())):
        raise SolverInputError(
            f"alpha0 violates sum(y * alpha) = 0: the sum is {residual:.3g} "
            f"(tolerance {1e-9 * max(1.0, float(a.sum())):.3g})"
        )
    return a


def solve(kernel: KernelMatrix, y: np.ndarray, index: np.ndarray, C, *, alpha0=None,
          previous: tuple[np.ndarray, SolveResult] | None = None,
          gradient0: tuple[np.ndarray, np.ndarray] | None = None,
          options: SolverOptions = SolverOptions()) -> SolveResult:
    """Train a C-SVC on the instances ``index`` of ``kernel``, cold or from a warm start.

    Parameters
    ----------
    kernel : KernelMatrix
        The kernel over the whole dataset; ``index`` picks the training instances.
    y : ndarray
        Every instance's label, -1 or +1 (only ``y[index]`` is read).
    index : ndarray
        The training instances (global indices), in the order LibSVM would be given them.
    C : float or tuple of float
        The penalty, or LibSVM's pair (C of the +1 instances, C of the -1 instances): C times
        each class's weight.
    alpha0 : ndarray, optional
        A feasible start (0 <= alpha <= C, sum y alpha = 0) aligned with ``index``; zero if None.
    previous : tuple, optional
        ``(its training index, its SolveResult)`` on an overlapping training set: the gradient at
        ``alpha0`` is carried over from it (``carry_gradient``) where that costs fewer kernel values.
    gradient0 : tuple, optional
        ``(G, G_bar)`` at ``alpha0`` in the order of ``index``, known without kernel values (the
        grid search's closed form along C); not with ``previous``.
    options : SolverOptions
        eps, the row cache's size, shrinking and the iteration cap.

    Returns
    -------
    SolveResult
        alpha, the gradients and the figures of the run, aligned with ``index``.
    """
    C = class_bounds(C)
    y, y_train, index, alpha = _checked(kernel, y, index, C, alpha0, options)
    gradient0 = _checked_gradient(gradient0, previous, l := index.size)
    if y_train.min() == y_train.max():
        return _one_class(alpha, y_train)
    if options.solver == "active_set":
        return _solve_active_set(kernel, y, index, C, alpha, options)
    if options.solver == "auto":
        return _solve_auto(kernel, y, index, C, alpha, previous, gradient0, options)
    # LibSVM's svm_train groups a -1/+1 training set by class, the +1 instances first, each
    # class in its given order; solving in that order keeps ties and iteration counts equal.
    order = np.concatenate([np.flatnonzero(y_train > 0), np.flatnonzero(y_train < 0)])
    cache_mb, tail_mb = _row_cache_mb(kernel, options, l)
    rows = kernel_rows(kernel, index[order], y_train[order], new_cache(l, cache_mb * (1 << 20)))
    growth_values = budget_values(l, tail_mb * (1 << 20)) - budget_values(l, cache_mb * (1 << 20))
    t0 = time.perf_counter()
    carried = None if previous is None else carry_gradient(kernel, y, previous, index, alpha, C, rows)
    alpha = alpha[order]
    G, G_bar, values_outside = _start_gradient(rows, alpha, C, order, gradient0, carried)
    t1 = time.perf_counter()
    init_values = int(rows.cache.counts[VALUES_COMPUTED])
    state = new_state(alpha, G, G_bar, upper_bounds(y_train[order], C), get_num_threads())
    max_iter = _iteration_cap(options, l)
    rho, objective, iterations, cap_hit = smo_loop(state, *rows_apart(rows), *C, float(options.eps),
                                                   bool(options.shrinking), int(max_iter),
                                                   TAIL_ITERATIONS * l, growth_values)
    t2 = time.perf_counter()
    alpha_out, grad_out, grad_bar_out = (_in_caller_order(v, order[state.perm]) for v in (alpha, G, G_bar))
    return SolveResult(
        alpha=alpha_out, gradient=grad_out, gradient_bar=grad_bar_out, rho=float(rho),
        objective=float(objective), iterations=int(iterations), iteration_cap_hit=bool(cap_hit),
        seconds_gradient_init=t1 - t0, seconds_train=t2 - t1,
        n_sv=int(np.count_nonzero(alpha_out > 0)),
        n_bounded_sv=int(np.count_nonzero(alpha_out >= upper_bounds(y_train, C))),
        kernel=_kernel_counts(rows.cache.counts, state.events, init_values, carried is not None, values_outside))


def _row_cache_mb(kernel: KernelMatrix, options: SolverOptions, l: int) -> tuple[float, float]:
    """The row cache's MB at the start of an SMO run on l instances, and once the run has made
    ``TAIL_ITERATIONS`` per instance. A cache the caller sized stays that size. The default starts
    at the kernel's ``row_cache_mb`` and grows to its ``tail_row_cache_mb``, or starts there where
    that holds all of Q (l x l float32 values): each row is then computed once."""
    if options.cache_mb:   # 0 was refused
        return options.cache_mb, options.cache_mb
    start, tail = kernel.row_cache_mb, kernel.tail_row_cache_mb
    if 4 * l * l <= tail * (1 << 20):
        start = max(start, tail)
    return start, tail


def _iteration_cap(options: SolverOptions, l: int) -> int:
    """SMO's cap on iterations: the options', or LibSVM's max(10^7, 100 l) for l instances."""
    return max(10_000_000, 100 * l) if options.max_iter is None else options.max_iter


def _solve_auto(kernel: KernelMatrix, y, index, C: tuple, alpha, previous, gradient0,
                options: SolverOptions) -> SolveResult:
    """``solve`` by SMO for up to ``AUTO_SMO_ITERATIONS`` per training instance (at least
    ``AUTO_SMO_MIN_ITERATIONS``), and on for as long as its iterations cost less than the finish's
    start would on the free set it holds at the budget (``_finish_start_iterations``); then, where
    SMO has not converged (its tail), by the active set from where SMO stopped. SMO's own cap, if
    lower, still stops it."""
    budget = _auto_budget(index.size)
    cap = _iteration_cap(options, index.size)
    smo = solve(kernel, y, index, C, alpha0=alpha, previous=previous, gradient0=gradient0,
                options=replace(options, solver="smo", max_iter=min(budget, cap)))
    if not smo.iteration_cap_hit or cap <= budget:
        return smo
    start_cost = min(cap, _finish_start_iterations(smo.n_sv - smo.n_bounded_sv, index.size))
    if start_cost > smo.iterations:
        more = solve(kernel, y, index, C, alpha0=smo.alpha, gradient0=(smo.gradient, smo.gradient_bar),
                     options=replace(options, solver="smo", max_iter=start_cost - smo.iterations))
        smo = _one_after_another(smo, more)
        if not smo.iteration_cap_hit or start_cost == cap:
            return smo
    # where the finish gives up, SMO goes on with what is left of the cap: SMO's iterations in
    # all stay within it, as in one SMO run
    rest = _solve_active_set(kernel, y, index, C, smo.alpha, replace(options, max_iter=cap - smo.iterations))
    return _one_after_another(smo, rest)


def _one_after_another(first: SolveResult, then: SolveResult) -> SolveResult:
    """``then``'s run, which started where ``first`` stopped, with both runs' iterations and
    seconds: the start's gradient is ``first``'s, and everything after it counts as training."""
    return replace(then, iterations=first.iterations + then.iterations,
                   seconds_gradient_init=first.seconds_gradient_init,
                   seconds_train=first.seconds_train + then.seconds_gradient_init + then.seconds_train)


def _auto_budget(l: int) -> int:
    """The SMO iterations ``auto`` gives a training set of l instances before it takes the run for
    a tail."""
    return max(AUTO_SMO_MIN_ITERATIONS, int(AUTO_SMO_ITERATIONS * l))


def _finish_start_iterations(free: int, l: int) -> int:
    """What the active set's start on ``free`` free alphas costs (their rows of Q and Q_FF's
    factor), in SMO iterations over l instances (``AUTO_FINISH_ROW_VALUE``,
    ``AUTO_FINISH_FACTOR_FLOP``)."""
    return int(AUTO_FINISH_ROW_VALUE * free + AUTO_FINISH_FACTOR_FLOP * free**3 / (3.0 * l))


def options_at_larger_C(options: SolverOptions, asked: SolverOptions, result: SolveResult, *,
                        C: float, step: float, seeded: bool, path_seed: bool = False) -> SolverOptions:
    """The options of the next run on the same training set at a larger C (a search's chain).

    Under ``auto`` the chain remembers what its last run showed. A run whose active set gave up (its
    free set beyond the memory it may take), or that SMO ended past its budget because the finish's
    start would have cost more, sends every larger C to SMO, the free set growing with C. A
    run that was a tail sends the next C straight to the active set, skipping SMO's budget, where
    its free set was small (at most ``AUTO_DIRECT_FREE_SHARE`` of the training set): from a seed the
    active set takes some hundreds of steps whose cost grows as the free set's square, while the
    budget's SMO iterations cost about the same whatever the free set, and the tail grows with C.
    Where the active set finished the run and the next C starts at its path's line (``path_seed``),
    the line also counts the free alphas that leave [0, step C] by the next C (``path_turns``): at
    least ``AUTO_DIRECT_PATH_TURNS`` of the free set sends the next C straight on whatever the free
    set's size, as on the Adult points measured SMO did not converge within its budget from so far
    and the finish then paid for the factor anyway. A tail is here a run that SMO left and the
    active set finished, or one that SMO ended within its budget after so many iterations that,
    grown with C, the next run's would reach ``AUTO_DIRECT_ITERATIONS`` per instance (and at least
    one itself): a step of 16x in C from a run of 1.6 an instance is one, a step of 4x from 2.4 is
    not. Any other run keeps ``auto``; ``smo`` and ``active_set`` asked for by the caller are never
    changed. The direct start needs a seed, so a run at a larger C that starts from zero is never
    sent to it.

    Parameters
    ----------
    options : SolverOptions
        The options the caller asked for.
    asked : SolverOptions
        The options ``result`` was solved with (``options`` at the chain's first C).
    result : SolveResult
        The run at the smaller C.
    C : float
        The smaller C, ``result``'s (one for both classes, as a search takes no class weights).
    step : float
        The larger C over the smaller.
    seeded : bool
        Whether the run at the larger C starts from a seed (along C or along the splits).
    path_seed : bool, default False
        Whether that seed is the path's (``sklearn.along_path``) where the run goes straight to
        the active set: the path's turns say how far that start is, not another seed.

    Returns
    -------
    SolverOptions
        The options for the larger C.
    """
    if options.solver != "auto" or asked.solver == "smo":
        return asked
    l = result.alpha.size
    direct = seeded and result.n_sv - result.n_bounded_sv <= AUTO_DIRECT_FREE_SHARE * l
    if asked.solver == "auto" and result.newton_steps == 0 and result.iterations <= _auto_budget(l):
        # SMO converged within its budget (or stopped at the caller's cap, which the next C keeps);
        # a run of fewer iterations than instances barely left its seed, whatever the step
        tail = (l <= result.iterations and result.iterations * step >= AUTO_DIRECT_ITERATIONS * l
                and not result.iteration_cap_hit)
        return replace(options, solver="active_set") if tail and direct else options
    if result.finisher == "smo":
        return replace(options, solver="smo")
    direct = direct or (path_seed and path_turns(result, C, step) >= AUTO_DIRECT_PATH_TURNS)
    return replace(options, solver="active_set") if direct else options


def path_turns(result: SolveResult, C: float, step: float) -> float:
    """The share of ``result``'s free alphas (at C) that its path's line (``result.slope``)
    carries out of [0, step C] by step C: each is a turn of the path, and a Newton step for the
    active set started there. 0 where the run has no slope or no free alpha."""
    free = (result.alpha > 0) & (result.alpha < C)
    if result.slope is None or not free.any():
        return 0.0
    line = result.alpha[free] + (step - 1.0) * result.slope[free]
    return float(np.mean((line <= 0.0) | (line >= step * C)))


def _solve_active_set(kernel: KernelMatrix, y, index, C: tuple, alpha, options: SolverOptions) -> SolveResult:
    """``solve`` by the active-set finish (``active_set.finish``) from ``alpha``, and on with SMO
    from where the finish gave up, if it did."""
    clock = time.perf_counter()
    y_train = y[index]
    bounds = upper_bounds(y_train, C)
    exact = kernel.exact(index)
    done = finish(exact, y_train, bounds, alpha, options.eps)
    if not done.optimal:
        rest = solve(kernel, y, index, C, alpha0=done.alpha, options=replace(options, solver="smo"))
        return replace(rest, iterations=rest.iterations + done.steps, newton_steps=done.steps,
                       seconds_train=time.perf_counter() - clock - rest.seconds_gradient_init)
    alpha, G = done.alpha, done.gradient
    return SolveResult(
        alpha=alpha, gradient=G, gradient_bar=done.gradient_bar, rho=libsvm_rho(y_train, alpha, bounds, G),
        objective=float(alpha @ (G - 1.0)) / 2.0, iterations=done.steps, iteration_cap_hit=False,
        seconds_gradient_init=0.0, seconds_train=time.perf_counter() - clock,
        n_sv=int(np.count_nonzero(alpha > 0)), n_bounded_sv=int(np.count_nonzero(alpha >= bounds)),
        newton_steps=done.steps,
        finisher="active_set", slope=done.slope)


def _one_class(alpha, y_train) -> SolveResult:
    """One class only: nothing to separate. LibSVM then predicts that class; a zero solution with
    rho = -y does the same through the usual decision rule."""
    l = y_train.size
    return SolveResult(alpha=alpha, gradient=np.full(l, -1.0), gradient_bar=np.zeros(l),
                       rho=-float(y_train[0]), objective=0.0, iterations=0, iteration_cap_hit=False,
                       seconds_gradient_init=0.0, seconds_train=0.0, n_sv=0, n_bounded_sv=0)


def _start_gradient(rows, alpha, C: tuple, order, gradient0, carried):
    """(G, G_bar, kernel values computed outside the cache) at ``alpha`` in the solver's order:
    given (``gradient0``, in the caller's order), carried over, or LibSVM's initialisation."""
    if gradient0 is not None:
        return gradient0[0][order], gradient0[1][order], 0
    if carried is not None:
        return carried
    return *init_gradient(*rows_apart(rows), alpha, *C), 0


def _in_caller_order(values, positions) -> np.ndarray:
    """``values`` of the solver's positions put back where ``positions`` says the caller had them."""
    out = np.empty(values.size)
    out[positions] = values
    return out


def _checked(kernel: KernelMatrix, y, index, C: tuple, alpha0, options: SolverOptions):
    """(all labels, the training labels, the training index, the start) after checking every input
    of ``solve``."""
    if not options.eps > 0:
        raise SolverInputError(f"eps must be positive, got {options.eps!r}")
    if options.solver not in SOLVERS:
        raise SolverInputError(f"solver must be one of {SOLVERS}, got {options.solver!r}")
    if options.cache_mb is not None and not options.cache_mb > 0:
        raise SolverInputError(f"cache_mb must be positive, got {options.cache_mb!r}")
    y = check_labels(y)
    if y.size != kernel.n:
        raise SolverInputError(f"y has {y.size} labels for a kernel over {kernel.n} instances")
    index = np.ascontiguousarray(index, dtype=np.int64)
    if index.size and not (0 <= index.min() and index.max() < kernel.n):
        raise SolverInputError(f"training indices must lie in [0, {kernel.n})")
    y_train = np.ascontiguousarray(y[index])
    alpha = np.zeros(index.size) if alpha0 is None else check_warm_start(alpha0, y_train, C)
    if index.size == 0:
        raise SolverInputError("the training set is empty")
    return y, y_train, index, alpha


def _checked_gradient(gradient0, previous, l: int):
    """``gradient0`` as two float64 arrays of l values, or None."""
    if gradient0 is None:
        return None
    if previous is not None:
        raise SolverInputError("give previous or gradient0, not both")
    gradient0 = tuple(np.asarray(g, dtype=np.float64) for g in gradient0)
    if len(gradient0) != 2 or any(g.shape != (l,) for g in gradient0):
        raise SolverInputError(f"gradient0 must hold two arrays of {l} values")
    return gradient0


def _kernel_counts(counts, events, init_values: int, carried: bool, values_outside: int) -> KernelCounts:
    """The run's KernelCounts from its cache's counts and the loop's events."""
    return KernelCounts(
        requests=int(counts[REQUESTS]), hits=int(counts[HITS]),
        rows_computed=int(counts[ROWS_COMPUTED]), rows_extended=int(counts[ROWS_EXTENDED]),
        values_computed=int(counts[VALUES_COMPUTED]), evictions=int(counts[EVICTIONS]),
        init_values=init_values, reconstructions=int(events[RECONSTRUCTIONS]),
        reconstruction_values=int(events[RECONSTRUCTION_VALUES]),
        g_bar_rows=int(events[G_BAR_ROWS]), g_bar_values=int(events[G_BAR_VALUES]),
        active_sum=int(events[ACTIVE_SUM]), carried=carried, carry_values_outside=int(values_outside),
    )
