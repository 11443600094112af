"""Naive twins of the seeders, written from the paper's equations in plain NumPy.

Nothing here imports alphaseed: the kernel is computed directly from pairwise distances, linear
systems are solved with ``np.linalg`` in the paper's own (alpha, Q) form rather than the
package's (beta = y alpha, K) form, and AdjustAlpha is the paper's loop ("uniformly" shift,
clip at the bounds, spread the rest again over those still able to move) instead of the
package's sorted water filling. Slow and simple on purpose: for problems of a few dozen
instances.

Where the paper leaves a step open, each twin makes the choice documented in the package's
module docstring (alphaseed/seeding/*.py), so that the two must agree to rounding:
- AdjustAlpha moves T first, then the free SVs of S, then all of S, and falls back to the cold
  start (alpha' = 0) when even that cannot balance sum y alpha'.
- MIR uses the rows of S only (not R) and the minimum-norm least-squares solution; it reports
  the system as decided by rounding when float64 drops a singular value that is not exactly 0.
- SIR skips r with alpha_r = 0, drops an r without a same-label partner, and takes any
  same-label t (K = 0 included), the first in T's order on ties.
- ATO moves b along the path (the bordered system), lets an added instance that already meets
  its condition at alpha = 0 join as a non-SV, ignores bounded instances that already violate
  their condition, never lets the index that just changed set trigger a zero-length event
  again, and stops after 100 steps.
- TOP ranks every instance of S (not only SVs) by K(x_t, x_j), ties to the earlier position.
- FULL leaves out each r of R in R's order as TOP leaves out t (every instance of S ranked by
  K(x_r, x_s), ties to the earlier instance of S), then AdjustAlpha over the free S and all
  of S.
The twins read a seeding context only as plain data (index arrays, alphas, gradient, rho).
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np

ATO_MAX_STEPS = 100
ZERO_STEP = 1e-12
PATH_CONDITION_LIMIT = 1e6
PATH_TIE = 1e-9
MIR_CONDITION_LIMIT = 1e6
# |sum y alpha| left over that counts as balanced, relative to sum |alpha| (as the package).
BALANCE_TOL = 1e-12


def gaussian_kernel(X: np.ndarray, gamma: float) -> np.ndarray:
    """exp(-gamma ||x_i - x_j||^2) over all pairs, rounded to float32 as the package stores it."""
    X = np.asarray(X, dtype=np.float64)
    distances = ((X[:, None, :] - X[None, :, :]) ** 2).sum(axis=2)
    return np.exp(-gamma * distances).astype(np.float32).astype(np.float64)


def exact_rank(A: np.ndarray) -> int:
    """The rank of ``A`` in exact rational arithmetic (its float64 entries taken as exact)."""
    rows = [[Fraction(float(v)) for v in row] for row in A]
    rank = 0
    for col in range(A.shape[1]):
        pivot = next((r for r in range(rank, len(rows)) if rows[r][col] != 0), None)
        if pivot is None:
            continue
        rows[rank], rows[pivot] = rows[pivot], rows[rank]
        for r in range(rank + 1, len(rows)):
            if rows[r][col] != 0:
                factor = rows[r][col] / rows[rank][col]
                rows[r] = [a - factor * b for a, b in zip(rows[r], rows[rank])]
        rank += 1
    return rank


def _position(index: np.ndarray) -> dict[int, int]:
    return {int(g): p for p, g in enumerate(index)}


def _previous_alpha(ctx) -> dict[int, float]:
    return {int(g): float(a) for g, a in zip(ctx.prev_index, ctx.prev_alpha)}


def _previous_f(ctx) -> dict[int, float]:
    """The paper's optimality indicator f_i = y_i G_i of the previous model (Eq. 1)."""
    return {int(g): float(ctx.y[g] * G) for g, G in zip(ctx.prev_index, ctx.prev_gradient)}


def _balanced(y: np.ndarray, alpha: np.ndarray) -> bool:
    return abs(float(y @ alpha)) <= BALANCE_TOL * max(1.0, float(np.abs(alpha).sum()))


def shift_uniformly(alpha: np.ndarray, y: np.ndarray, C: float, members, change: float) -> float:
    """Add ``change`` to sum y_j alpha_j over ``members`` in equal shares, in place.

    The paper's loop: every member that can still move gets the same share; a member that
    reaches 0 or C stops there and what it could not take is shared again among the rest.
    Returns the part of ``change`` that could not be placed.
    """
    left = change
    members = list(members)
    while members and abs(left) > BALANCE_TOL * max(1.0, float(np.abs(alpha).sum())):
        direction = np.sign(left)
        movable = [j for j in members
                   if (y[j] * direction > 0 and alpha[j] < C) or (y[j] * direction < 0 and alpha[j] > 0)]
        if not movable:
            break
        share = left / len(movable)
        for j in movable:
            new_alpha = min(max(alpha[j] + y[j] * share, 0.0), C)
            left -= y[j] * (new_alpha - alpha[j])
            alpha[j] = new_alpha
    return left


def adjust_alpha(alpha: np.ndarray, y: np.ndarray, C: float, groups) -> np.ndarray:
    """AdjustAlpha: clip to [0, C], then balance sum y alpha by shifting each group in turn."""
    alpha = np.clip(np.asarray(alpha, dtype=np.float64), 0.0, C)
    for group in groups:
        if _balanced(y, alpha):
            break
        shift_uniformly(alpha, y, C, group, -float(y @ alpha))
    return alpha if _balanced(y, alpha) else np.zeros_like(alpha)


def _kfold_adjust(alpha, y, C, shared_pos, added_pos) -> np.ndarray:
    """The k-fold order: T, then the free SVs of S, then every instance of S."""
    free_shared = [p for p in shared_pos if 0.0 < alpha[p] < C]
    return adjust_alpha(alpha, y, C, [added_pos, free_shared, shared_pos])


def _start(ctx):
    """alpha' over X' (next_index order) with alpha'_S = alpha_S and alpha'_T = 0."""
    prev = _previous_alpha(ctx)
    pos = _position(ctx.next_index)
    alpha = np.zeros(len(ctx.next_index))
    for s in ctx.shared:
        alpha[pos[int(s)]] = prev[int(s)]
    y = np.asarray(ctx.y, dtype=np.float64)[ctx.next_index]
    shared_pos = [pos[int(s)] for s in ctx.shared]
    added_pos = [pos[int(t)] for t in ctx.added]
    return alpha, y, shared_pos, added_pos, prev, pos


def naive_sir(ctx, K: np.ndarray, floor: float | None = None) -> np.ndarray:
    """Algorithm 3: each r in R (with alpha_r > 0) gives alpha_r to its most similar unused t;
    with a ``floor``, Algorithm 3's running maximum starts there and a t must beat it."""
    alpha, y, shared_pos, added_pos, prev, pos = _start(ctx)
    used: set[int] = set()
    for r in ctx.removed:
        r = int(r)
        if prev[r] <= 0.0:
            continue
        best_t, best_value = None, floor
        for t in ctx.added:
            t = int(t)
            if t in used or ctx.y[t] != ctx.y[r]:
                continue
            if best_value is None or K[r, t] > best_value:
                best_t, best_value = t, K[r, t]
        if best_t is not None:
            used.add(best_t)
            alpha[pos[best_t]] = prev[r]
    return _kfold_adjust(alpha, y, ctx.C, shared_pos, added_pos)


def naive_mir(ctx, K: np.ndarray, trace: dict | None = None) -> np.ndarray:
    """Eq. 13 in the paper's Q form, solved in the least-squares sense (Eq. 14), then AdjustAlpha.

    ``trace``, if given, receives "decided_by_rounding": why the least-squares solution is not
    determined to 1e-9 (its matrix has a condition number above MIR_CONDITION_LIMIT, or float64
    drops singular values that exact arithmetic keeps), or None.
    """
    trace = {} if trace is None else trace
    trace.update(decided_by_rounding=None)
    alpha, y, shared_pos, added_pos, prev, pos = _start(ctx)
    S, R, T = (np.asarray(a, dtype=np.int64) for a in (ctx.shared, ctx.removed, ctx.added))
    if S.size and T.size:
        yy = np.asarray(ctx.y, dtype=np.float64)
        f = _previous_f(ctx)
        b = ctx.prev_rho
        delta_f = np.array([0.0 if 0.0 < prev[int(s)] < ctx.C else b - f[int(s)] for s in S])
        alpha_R = np.array([prev[int(r)] for r in R])
        Q_ST = yy[S, None] * yy[None, T] * K[np.ix_(S, T)]
        Q_SR = yy[S, None] * yy[None, R] * K[np.ix_(S, R)]
        A = np.vstack((Q_ST, yy[T][None, :]))
        rhs = np.append(yy[S] * delta_f + Q_SR @ alpha_R, yy[R] @ alpha_R)
        alpha_T, _, rank, singular = np.linalg.lstsq(A, rhs, rcond=None)
        # Exact rank deficiency (duplicate instances in T, a kernel row underflowing to zeros)
        # is well defined: the minimum-norm solution. Two things are not: singular values kept
        # that are small without being rounding noise, and singular values dropped as noise
        # that are not zero. The latter come from kernel entries too small for float64 to see
        # beside the row of ones (K_{s,t} = 2e-15 against 1): exact arithmetic keeps them and
        # gives a different seed, and whether a float64 solver keeps them is up to its cutoff.
        kept = singular[:rank]
        if kept[0] / kept[-1] > MIR_CONDITION_LIMIT:
            trace["decided_by_rounding"] = f"least squares with condition number {kept[0] / kept[-1]:.3g}"
        elif rank < min(A.shape) and exact_rank(A) > rank:
            trace["decided_by_rounding"] = (f"least squares dropping nonzero singular values with "
                                            f"{singular[rank] / singular[0]:.3g} of the largest")
        for t, a in zip(T, alpha_T):
            alpha[pos[int(t)]] = a
    return _kfold_adjust(alpha, y, ctx.C, shared_pos, added_pos)


def naive_avg(ctx, K: np.ndarray) -> np.ndarray:
    """DeCoste-Wagstaff: y_t alpha_t spread in equal shares over the free SVs of X minus t."""
    alpha, y, shared_pos, _, prev, _ = _start(ctx)
    free = [p for p in shared_pos if 0.0 < alpha[p] < ctx.C]
    return adjust_alpha(alpha, y, ctx.C, [free, shared_pos])


def naive_top(ctx, K: np.ndarray) -> np.ndarray:
    """Lee et al.: y_t alpha_t goes to the most similar instance, the excess to the next, ..."""
    alpha, y, shared_pos, _, _, _ = _start(ctx)
    t = int(ctx.removed[0])
    similarity = [K[t, int(ctx.next_index[p])] for p in shared_pos]
    # Python's sort is stable: ties keep the earlier position.
    ranked = [p for _, p in sorted(zip(similarity, shared_pos), key=lambda pair: -pair[0])]
    left = -float(y @ alpha)
    for j in ranked:
        if left == 0.0:
            break
        target = min(max(alpha[j] + y[j] * left, 0.0), ctx.C)
        left -= y[j] * (target - alpha[j])
        alpha[j] = target
    return alpha if _balanced(y, alpha) else np.zeros_like(alpha)


def naive_full(ctx, K: np.ndarray) -> np.ndarray:
    """The full model's alpha without R: each removed r in turn hands y_r alpha_r to the most
    similar instance of S (alpha_s up if y_s = y_r, down if not) up to its bound, the excess to
    the next most similar, ..."""
    alpha, y, shared_pos, _, prev, pos = _start(ctx)
    for r in ctx.removed:
        r = int(r)
        left = prev[r]
        # Python's sort is stable: ties keep the earlier instance of S.
        for s in sorted((int(s) for s in ctx.shared), key=lambda s: -K[r, s]):
            if left <= 0.0:
                break
            p = pos[s]
            take = min(ctx.C - alpha[p] if ctx.y[s] == ctx.y[r] else alpha[p], left)
            alpha[p] += take if ctx.y[s] == ctx.y[r] else -take
            left -= take
    free = [p for p in shared_pos if 0.0 < alpha[p] < ctx.C]
    return adjust_alpha(alpha, y, ctx.C, [free, shared_pos])


def _bordered_step(Q, y, free, pushed, push, trace):
    """(Delta alpha_M, Delta b) per unit eta keeping sum y alpha = 0 and f_i = b on M.

    Unknowns [Delta alpha_M; Delta b] of
        y_M^T Delta alpha_M            = -y_P^T Delta alpha_P
        Q_MM Delta alpha_M - y_M Delta b = -Q_MP Delta alpha_P
    with P the pushed instances (T and R). A singular or numerically singular matrix takes the
    minimum-norm least-squares solution (the paper's pseudo-inverse); with M empty that is 0.
    """
    m = len(free)
    if m == 0:
        return np.zeros(0), 0.0
    B = np.zeros((m + 1, m + 1))
    B[0, :m] = y[free]
    B[1:, :m] = Q[np.ix_(free, free)]
    B[1:, m] = -y[free]
    rhs = np.concatenate(([-(y[pushed] @ push)], -Q[np.ix_(free, pushed)] @ push))
    condition = np.linalg.cond(B)
    if condition > PATH_CONDITION_LIMIT:
        trace["decided_by_rounding"] = f"bordered matrix with condition number {condition:.3g}"
    if condition < 1.0 / np.finfo(float).eps:
        z = np.linalg.solve(B, rhs)
    else:
        z = np.linalg.lstsq(B, rhs, rcond=None)[0]
    return z[:m], float(z[m])


def naive_ato(ctx, K: np.ndarray, trace: dict | None = None) -> np.ndarray:
    """Algorithm 1 with Eqs. 6, 10 and 11: the incremental-decremental path, then AdjustAlpha.

    Works over X' (positions of next_index) plus the instances of R still carrying alpha.
    ``trace``, if given, receives the events [(eta, index)] of the path and "decided_by_rounding":
    the reason, if any, why rounding alone may change the path, else None. The path is then
    not determined to 1e-9 and two correct implementations may part: a bordered matrix with
    condition number above PATH_CONDITION_LIMIT, a step whose first two events lie within
    PATH_TIE of each other, or an instance sitting on f = b (within PATH_TIE relative) whose
    set rests on the sign of rounding noise: an added one at the start (a duplicate of a free
    SV), or a bounded one moving towards the wrong side or
    barely moving (a duplicate of a free SV: its f moves exactly as b in exact arithmetic).
    """
    trace = {} if trace is None else trace
    trace.update(events=[], decided_by_rounding=None)
    alpha, y, shared_pos, added_pos, prev, pos = _start(ctx)
    C = ctx.C
    yy = np.asarray(ctx.y, dtype=np.float64)
    n_next = len(ctx.next_index)
    R = [int(r) for r in ctx.removed if prev[int(r)] != 0.0]
    everyone = np.concatenate((np.asarray(ctx.next_index, dtype=np.int64), np.asarray(R, dtype=np.int64)))
    ye = yy[everyone]
    Q = ye[:, None] * ye[None, :] * K[np.ix_(everyone, everyone)]
    alpha_R = np.array([prev[r] for r in R])
    removed_at = list(range(n_next, n_next + len(R)))

    f_prev = _previous_f(ctx)
    f = np.empty(n_next)
    for s in ctx.shared:
        f[pos[int(s)]] = f_prev[int(s)]
    prev_idx = np.asarray(ctx.prev_index, dtype=np.int64)
    alpha_prev = np.array([prev[int(j)] for j in prev_idx])
    for t in ctx.added:
        t = int(t)
        Q_row = yy[t] * yy[prev_idx] * K[t, prev_idx]
        f[pos[t]] = yy[t] * (Q_row @ alpha_prev - 1.0)  # Eq. 1 under the previous model
    b = float(ctx.prev_rho)

    FREE, BOUND, ADDING = "free", "bound", "adding"
    status = [FREE if 0.0 < alpha[p] < C else BOUND for p in range(n_next)]
    for p in added_pos:
        status[p] = ADDING if y[p] * (f[p] - b) < 0 else BOUND
        if abs(f[p] - b) <= PATH_TIE * max(1.0, abs(b), float(np.abs(f).max())):
            trace["decided_by_rounding"] = f"added instance {p} starts on f = b"

    last = None
    for _ in range(ATO_MAX_STEPS):
        if not R:
            break
        free = [p for p in range(n_next) if status[p] == FREE]
        adding = [p for p in range(n_next) if status[p] == ADDING]
        pushed = adding + removed_at
        push = np.concatenate((C - alpha[adding], -alpha_R))  # Eq. 6
        d_alpha_M, d_b = _bordered_step(Q, ye, free, pushed, push, trace)
        d_alpha = np.zeros(len(everyone))
        d_alpha[pushed] = push
        d_alpha[free] = d_alpha_M
        d_f = y * (Q[:n_next] @ d_alpha)  # Eq. 11

        # The step size: the first eta at which an instance changes set.
        candidates = []
        on_the_edge = PATH_TIE * max(1.0, abs(b), float(np.abs(f).max()))
        barely_moving = PATH_TIE * max(1.0, abs(d_b), float(np.abs(d_f).max()))
        for p in range(n_next):
            g, dg = f[p] - b, d_f[p] - d_b
            eta = np.inf
            if status[p] == FREE:
                if d_alpha[p] > 0:
                    eta = (C - alpha[p]) / d_alpha[p]
                elif d_alpha[p] < 0:
                    eta = -alpha[p] / d_alpha[p]
            elif status[p] == BOUND:
                at_zero = alpha[p] < 0.5 * C
                needs_above = (y[p] > 0) == at_zero  # I_u: f >= b; I_l: f <= b
                towards_the_wrong_side = dg < 0 if needs_above else dg > 0
                if towards_the_wrong_side and (g >= 0 if needs_above else g <= 0):
                    eta = abs(g / dg)
                drifting = towards_the_wrong_side or abs(dg) <= barely_moving
                if abs(g) <= on_the_edge and drifting and p != last:
                    trace["decided_by_rounding"] = f"instance {p} on f = b moving across it"
            elif y[p] * dg > 0:  # an added instance moving towards f = b
                eta = -g / dg
            if p == last and eta <= ZERO_STEP:
                eta = np.inf
            candidates.append(max(eta, 0.0))
        who = int(np.argmin(candidates)) if candidates else -1
        eta = candidates[who] if who >= 0 and candidates[who] < 1.0 else 1.0
        first, second = np.partition(np.append(candidates, [1.0, np.inf]), 1)[:2]
        # Exact ties included: symmetric data (K = I, every alpha at C) gives them, and the
        # two implementations' rounding does not break them the same way.
        if second - first <= PATH_TIE:
            trace["decided_by_rounding"] = f"two events within {second - first:.3g} of each other"
        trace["events"].append((eta, who if eta < 1.0 else -1))

        for p in free:
            alpha[p] = min(max(alpha[p] + eta * d_alpha[p], 0.0), C)
        for p in adding:
            alpha[p] += eta * (C - alpha[p])
        alpha_R = (1.0 - eta) * alpha_R
        f += eta * d_f
        b += eta * d_b
        if eta == 1.0:  # no event before the end: every added instance at C, R gone
            alpha[adding] = C
            status = [BOUND if state == ADDING else state for state in status]
            break
        # The instance of the event changes set: a free SV lands on its nearer bound, a bounded
        # or added instance reaching f = b joins M.
        leaves_M = status[who] == FREE
        status[who] = BOUND if leaves_M else FREE
        if leaves_M:
            alpha[who] = C if alpha[who] >= 0.5 * C else 0.0
        last = who
    return _kfold_adjust(alpha, y, C, shared_pos, added_pos)


NAIVE_SEEDERS = {"ato": naive_ato, "mir": naive_mir, "sir": naive_sir, "avg": naive_avg,
                 "top": naive_top, "full": naive_full}
