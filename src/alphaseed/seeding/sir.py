"""SIR, Single Instance Replacement (paper Section 3, Algorithm 3 of the supplement).

alpha'_S = alpha_S. Each removed instance r with alpha_r > 0, in the order of ``ctx.removed``,
hands its alpha to the most similar added instance: the not-yet-used t in T with y_t = y_r and
the largest K(x_r, x_t). Then AdjustAlpha restores sum y alpha' = 0.

Where the paper is ambiguous, chosen here:
- Only r with alpha_r > 0 take part. Algorithm 3 loops over every r, so an r with alpha_r = 0
  would use up a t while changing nothing; the text says only alpha_p > 0 matters.
- The text says an r without a same-label t in T gets a random t; Algorithm 3 and the
  issue drop it. It is dropped (deterministic), and AdjustAlpha absorbs the imbalance.
- Algorithm 3 starts its running maximum at 0 with a strict ``>``, so a t with K = 0 (which
  float32 kernels produce for distant points, e.g. raw MNIST) would never be picked. The text's
  definition (K(x_p, x_q) >= K(x_p, x_t) for all t) has no such threshold, so any same-label t
  qualifies; ties go to the first t in ``ctx.added`` order. ``similarity_floor=0.0`` takes
  Algorithm 3 literally, to measure what the threshold does to the paper's counts
  (``benchmarks/paper_counts.py``).
"""

from __future__ import annotations

import numpy as np

from .adjust import adjust_added
from .context import SeedContext, carry_shared, layout

# Rows of K(R, T) computed at a time; bounds memory for large folds (MNIST at small k).
ROW_SLAB_BYTES = 128 << 20


def match_most_similar(ctx: SeedContext, donors: np.ndarray, candidates: np.ndarray, *,
                       similarity_floor: float | None = None) -> np.ndarray:
    """For each donor in order, the position in ``candidates`` it hands over to, or -1; with a
    ``similarity_floor``, only a candidate of K above it qualifies."""
    taken = np.zeros(candidates.size, dtype=bool)
    y_cand = ctx.y[candidates]
    match = np.full(donors.size, -1, dtype=np.int64)
    slab = max(1, ROW_SLAB_BYTES // (4 * max(1, candidates.size)))
    for start in range(0, donors.size, slab):
        rows = donors[start:start + slab]
        score = ctx.kernel.block(rows, candidates)
        score[ctx.y[rows][:, None] != y_cand[None, :]] = -np.inf
        if similarity_floor is not None:
            score[score <= similarity_floor] = -np.inf
        for i in range(rows.size):
            row = score[i]
            row[taken] = -np.inf
            j = int(np.argmax(row))
            if row[j] != -np.inf:
                match[start + i] = j
                taken[j] = True
    return match


def seed_sir(ctx: SeedContext, *, similarity_floor: float | None = None) -> np.ndarray:
    """SIR's feasible seed for X' = ``ctx.next_index``, aligned with it.

    alpha_S is kept, each alpha_r > 0 handed to its most similar same-label instance of T
    (``match_most_similar``), then AdjustAlpha (T, then free S, then all of S).

    Parameters
    ----------
    ctx : SeedContext
        The previous optimum and the shared, removed and added sets.
    similarity_floor : float, optional
        Hand over only to a t with K(x_r, x_t) above it; 0.0 is Algorithm 3's literal
        threshold. None (the default): any same-label t, as the paper's text defines it.
    """
    lay = layout(ctx)
    alpha = carry_shared(ctx, lay)
    alpha_removed = ctx.prev_alpha[lay.removed_prev]
    donors = np.flatnonzero(alpha_removed > 0)
    if donors.size and ctx.added.size:
        match = match_most_similar(ctx, ctx.removed[donors], ctx.added, similarity_floor=similarity_floor)
        ok = match >= 0
        alpha[lay.added_next[match[ok]]] = alpha_removed[donors[ok]]
    y_next = ctx.y[ctx.next_index]
    return adjust_added(alpha, y_next, ctx.bounds(y_next), lay.shared_next, lay.added_next)
