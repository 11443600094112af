"""The solver's settings, as one object that travels wherever Python passes them."""

from __future__ import annotations

from dataclasses import dataclass

SOLVERS = ("smo", "active_set", "auto")
# SMO iterations per training instance after which ``auto`` takes SMO's run for a tail and
# finishes with the active set: an Adult sample at the paper's C and gamma converges in about 2
# per instance, full Adult in 1.4, Webdata in 1.7; the large-C corner of an Adult grid takes 350.
# By 10 the free set has settled enough that the finish takes tens of Newton steps, and SMO's
# iterations after it would cost more than those (measured in docs/benchmarks/results.md, "SMO's
# budget under auto").
AUTO_SMO_ITERATIONS = 10
# ... and never before this many: on a small training set SMO's whole run costs about what the
# finish's start does (on the Adult 3,000 sample's 2,400 instances the two are even at 25,000).
AUTO_SMO_MIN_ITERATIONS = 25_000
# Where SMO reaches that budget with a large free set, the finish's start costs more than the
# budget did: |F| float64 rows of Q, then Q_FF's factor (|F|^3 / 3 flops). ``auto`` then lets SMO go
# on until its iterations cost what that start would (a ski-rental rule: a run that needs the
# finish pays at most about twice its cost, a run close to converging is not handed a factor it
# does not need). The start's cost in SMO iterations over l instances, measured on full Adult's
# first of 5 folds (l = 26,048, gamma = 2^-3, C = 2^9, one thread): SMO took 1.09 ns an instance
# an iteration, the start 25 ns a row's value and 37 ps a flop of the factor: each value costs 23
# instances' share of an iteration, each flop 0.034 (docs/benchmarks/results.md, "SMO goes on
# where the finish's start costs more than its budget").
AUTO_FINISH_ROW_VALUE = 23.0
AUTO_FINISH_FACTOR_FLOP = 0.034
# In a search's chain along C, the largest share of free support vectors at which a run that the
# active set finished sends the next C straight to the active set. On the Adult 5,000 sample's
# large-C points (5-fold, 4,000 instances), against SMO's budget of 10 iterations per instance, the
# direct start won at 0.09-0.21 and lost at 0.26-0.34 (docs/benchmarks/results.md).
AUTO_DIRECT_FREE_SHARE = 0.22
# ... or, where the active set finished that run (so its path's slope is known) and the next C
# starts on the path, on any free set whose share the path's line carries out of [0, C_next] by
# the next C is at least this: on the Adult points measured, SMO did not converge within its
# budget from so far, and the finish that followed paid for the factor and most of those Newton
# steps anyway. On the Adult 5,000 sample and full Adult the direct start won at 0.17-0.24 (by
# 1.17-1.98x) and lost at 0.00-0.10 (by 2.2-6.8x), where SMO converged within its budget
# (docs/benchmarks/results.md, "A direct start where the path turns often").
AUTO_DIRECT_PATH_TURNS = 0.14
# SMO iterations per training instance past which a run is a tail, and the default row cache grows
# to the kernel's ``tail_row_cache_mb``. Runs at the paper's settings converge in under 2 (above)
# and a larger cache slows them (its rows come from memory, not L2); a tail revisits its
# violators' rows, and grows with C.
TAIL_ITERATIONS = 2
# In a search's chain along C, where SMO ended the run at the smaller C within its budget: the
# SMO iterations per training instance that run must reach, times the step to the next C (the
# tail grows about as C), for the next C to start in the active set on a small free set
# (``options_at_larger_C``). On Adult samples and full Adult the direct start lost at 0.25-9.6,
# by 1.3-9.3x, and won at 14-34, by up to 2.4x, but for one point that lost by 1.1x at 22-27
# (docs/benchmarks/results.md, "A chain's direct start weighs the step in C").
AUTO_DIRECT_ITERATIONS = 12


@dataclass(frozen=True)
class SolverOptions:
    """How SMO runs and how its kernel values are kept; none of them changes what is optimal.

    Parameters
    ----------
    eps : float, default 1e-3
        LibSVM's stopping tolerance: SMO stops when the maximal violating pair's gap is below it.
    cache_mb : float or None, default None
        The memory of the solver's row cache per training run, in MB (LibSVM's ``-m``); None
        takes the kernel's ``row_cache_mb``: 2 where rows are computed from bit sets, else 100;
        the 2 MB grow to 32 once a run has made ``TAIL_ITERATIONS`` per training instance, and
        start at 32 where that holds the training set's whole Q.
    shrinking : bool, default True
        LibSVM's shrinking heuristic (``-h``).
    max_iter : int or None, default None
        The cap on SMO iterations; None is LibSVM's, max(10^7, 100 l) for l instances.
    kernel_mode : {"auto", "cache", "shared", "gram"}, default "auto"
        How kernel values are kept (``alphaseed.kernel.KernelMatrix``): time and memory only,
        never the result.
    solver : {"smo", "active_set", "auto"}, default "smo"
        ``smo`` is LibSVM's algorithm step for step. ``active_set`` takes exact Newton steps on
        the free set, one index in or out at a time, with float64 kernel values
        (``solver.active_set``), and goes on with SMO where it cannot finish: far faster where
        SMO's tail is long (large C with a flat kernel); its optimum is exact where SMO's is
        one to eps in float32 values, so a borderline prediction may differ. ``auto`` runs SMO
        and, where it takes more than ``AUTO_SMO_ITERATIONS`` iterations per instance (and more
        than ``AUTO_SMO_MIN_ITERATIONS``), finishes with the active set from where SMO stopped:
        SMO's result wherever SMO converges sooner; where the finish's start would cost more than
        SMO's iterations so far (a large free set), SMO goes on until it has cost that much
        first. ``SVC`` defaults to ``auto``.
    """

    eps: float = 1e-3
    cache_mb: float | None = None
    shrinking: bool = True
    max_iter: int | None = None
    kernel_mode: str = "auto"
    solver: str = "smo"
