"""AdjustAlpha: turn any alpha' into a feasible seed (0 <= alpha' <= C, sum y alpha' = 0).

The paper ("Adjusting alpha_T'", MIR section; reused by SIR and ATO) clips alpha'_T to [0, C]
and then "uniformly" raises or lowers every y_t alpha'_t, subject to the bounds, until
sum_T y_t alpha'_t equals -sum_S y_s alpha'_s. Uniform shifting with clipping and handing the
excess to those still free is a water-filling problem: find the shift delta with
sum_t clip(y_t alpha'_t + delta, lo_t, hi_t) = target. ``water_fill`` solves it exactly by
sorting the breakpoints (O(m log m)) instead of iterating.

The paper leaves open what happens when T has no room left (every alpha'_T already at the
bound the shift pushes towards, or T empty). Chosen here, in this order:
1. shift the free alpha'_S (0 < alpha' < C) the same way;
2. shift every alpha'_S, bounded ones included, the same way;
3. if even that cannot balance the sum (all of X' has one label), return alpha' = 0, the
   cold start, which is always feasible.
A last exact correction removes the rounding left by the shifts, so the result meets
|sum y alpha'| <= 1e-10 max(1, sum alpha') and 0 <= alpha' <= C exactly.

C is one penalty, or an array of each alpha's own bound (C of its class, with class weights).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

# Leave a margin of 100 under the promised 1e-10 so that the solver's own check always passes.
BALANCE_TOL = 1e-12


def tolerance(alpha: np.ndarray) -> float:
    """The |sum y alpha| that counts as balanced: BALANCE_TOL relative to sum |alpha| (at least 1)."""
    return BALANCE_TOL * max(1.0, float(alpha.sum()))


def signed_bounds(y: np.ndarray, C) -> tuple[np.ndarray, np.ndarray]:
    """Bounds of beta = y * alpha when 0 <= alpha <= C (one C, or one aligned with y)."""
    lo = np.where(y > 0, 0.0, -C)
    hi = np.where(y > 0, C, 0.0)
    return lo, hi


def water_fill(beta: np.ndarray, lo: np.ndarray, hi: np.ndarray, target: float) -> np.ndarray:
    """Return clip(beta + delta, lo, hi) with the delta that makes its sum ``target``.

    This is the paper's uniform shift with clipping, the excess handed on to the entries still
    free, solved exactly from the sorted breakpoints instead of by rounds of redistribution.

    Parameters
    ----------
    beta : ndarray
        The values to shift (beta = y alpha), each within [lo, hi].
    lo, hi : ndarray
        The bounds of each entry.
    target : float
        The sum wanted.

    Returns
    -------
    ndarray
        The shifted copy; if ``target`` is out of reach, every entry at the bound it is pushed
        towards.
    """
    current = float(beta.sum())
    if target < current:
        return -water_fill(-beta, -hi, -lo, -target)
    if target == current or beta.size == 0:
        return beta.copy()
    room = np.sort(hi - beta)
    m = room.size
    # Sum at delta = room[k]: everything with room <= room[k] is full, the rest moved by room[k].
    filled = current + np.cumsum(room) + room * (m - 1 - np.arange(m))
    k = int(np.searchsorted(filled, target))
    if k >= m:
        return hi.copy()
    below = float(room[:k].sum())
    delta = (target - current - below) / (m - k)
    return np.minimum(beta + delta, hi)


def _polish(beta: np.ndarray, lo: np.ndarray, hi: np.ndarray, group: np.ndarray) -> None:
    """Put the rounding residual of sum(beta) on the entry of ``group`` with the most room."""
    residual = float(beta.sum())
    if residual == 0.0 or group.size == 0:
        return
    room = (beta[group] - lo[group]) if residual > 0 else (hi[group] - beta[group])
    j = group[int(np.argmax(room))]
    beta[j] = min(max(beta[j] - residual, lo[j]), hi[j])


def adjust_alpha(alpha: np.ndarray, y: np.ndarray, C,
                 groups: Sequence[np.ndarray]) -> np.ndarray:
    """Feasible copy of ``alpha`` (aligned with ``y``), moving only ``groups`` in turn.

    Each group in turn absorbs what it can of the imbalance of sum y alpha (water filling);
    the groups after the one that balances it stay untouched. If all of them together cannot, the
    result is zero, the cold start (see the module docstring).

    Parameters
    ----------
    alpha : ndarray
        The seed to repair; clipped to [0, C] first.
    y : ndarray
        The labels (-1 or +1), aligned with ``alpha``.
    C : float or ndarray
        The penalty, or each alpha's bound (aligned with ``alpha``).
    groups : sequence of ndarray
        Positions allowed to move, one array per group, tried in order.

    Returns
    -------
    ndarray
        alpha' with 0 <= alpha' <= C and sum y alpha' = 0 to within ``tolerance``.
    """
    beta = y * np.clip(alpha, 0.0, C)
    lo, hi = signed_bounds(y, C)
    for group in groups:
        residual = float(beta.sum())
        if abs(residual) <= tolerance(np.abs(beta)):
            break
        group = np.asarray(group, dtype=np.int64)
        if group.size == 0:
            continue
        beta[group] = water_fill(beta[group], lo[group], hi[group], float(beta[group].sum()) - residual)
        _polish(beta, lo, hi, group)
    if abs(float(beta.sum())) > tolerance(np.abs(beta)):
        return np.zeros_like(beta)
    return np.clip(y * beta, 0.0, C)


def free_positions(alpha: np.ndarray, C, among: np.ndarray) -> np.ndarray:
    """Positions in ``among`` whose alpha is strictly inside (0, C) (C: one, or aligned with alpha)."""
    a = alpha[among]
    return among[(a > 0) & (a < (C[among] if np.ndim(C) else C))]


def adjust_added(alpha: np.ndarray, y: np.ndarray, C, shared: np.ndarray,
                 added: np.ndarray) -> np.ndarray:
    """The paper's AdjustAlpha for a k-fold seed: T first, then free S, then all of S."""
    return adjust_alpha(alpha, y, C, [added, free_positions(np.clip(alpha, 0.0, C), C, shared), shared])
