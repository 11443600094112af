"""TOP (Lee et al. 2004), leave-one-out only (paper's supplementary material).

The previous model is trained once on all n instances; the round that leaves out t starts from
it without t (R = {t}, T empty). y_t alpha_t goes to the instances of X \\ {t} most similar to
x_t by kernel value, one after another: the most similar j gets alpha_j += alpha_t (y_j = y_t)
or -= alpha_t (y_j = -y_t) up to its bound, the excess goes to the second most similar, and so
on until sum y alpha' = 0.

Where the paper is silent, chosen here: every instance of X \\ {t} is a candidate, support
vector or not (the paper says "the instance with the largest kernel value", not restricted to
SVs); ties in K go to the earlier position in ``next_index``. If all of X \\ {t} cannot absorb
it (one label left), the seed is 0 (AdjustAlpha's last fallback).
"""

from __future__ import annotations

import numpy as np

from .adjust import adjust_alpha, signed_bounds
from .avg import leave_one_out_layout
from .context import SeedContext, carry_shared


def fill_in_order(beta: np.ndarray, lo: np.ndarray, hi: np.ndarray, order: np.ndarray,
                  change: float) -> np.ndarray:
    """Add ``change`` to sum(beta) moving entries in ``order``, each as far as its bound allows."""
    beta = beta.copy()
    room = (hi - beta)[order] if change > 0 else (beta - lo)[order]
    used = np.minimum(room, np.maximum(abs(change) - (np.cumsum(room) - room), 0.0))
    beta[order] += np.sign(change) * used
    return beta


def seed_top(ctx: SeedContext) -> np.ndarray:
    """TOP's feasible seed for X \\ {t} (the round leaving out t), aligned with ``ctx.next_index``.

    alpha_S is kept and y_t alpha_t placed on the instances of S in decreasing K(x_t, x_j), each
    up to its bound (``fill_in_order``); the cold start if it cannot all be placed. Like AVG, it
    refuses a context that is not a leave-one-out round (``SeedingError``).

    Parameters
    ----------
    ctx : SeedContext
        The full model's solution; R holds t alone and T nothing.
    """
    lay = leave_one_out_layout(ctx, "top")
    alpha = carry_shared(ctx, lay)
    y = ctx.y[ctx.next_index]
    shared = lay.shared_next
    similarity = ctx.kernel.block(ctx.removed, ctx.next_index[shared])[0]
    order = shared[np.argsort(-similarity, kind="stable")]
    C = ctx.bounds(y)
    lo, hi = signed_bounds(y, C)
    beta = y * alpha
    beta = fill_in_order(beta, lo, hi, order, -float(beta.sum()))
    return adjust_alpha(y * beta, y, C, [shared])
