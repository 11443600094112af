"""FULL: every k-fold round seeded from one model trained on all n instances (not in the paper).

The paper seeds round h+1 from round h, which removes one fold and adds another. Here one model
is trained once on every instance; round h's training set is that set minus its test fold, so
its seed only has to remove the fold (R = the test fold, T empty), as AVG and TOP do for one
instance at leave-one-out. The rounds no longer depend on each other.

alpha'_S = alpha_S of the full model. Each removed r with alpha_r > 0, in the order of
``ctx.removed``, places alpha_r on the instances of S with its label, the most similar first
(largest K(x_r, x_s)), each up to C, the rest on the next most similar: TOP's fill restricted
to r's label, so that sum y alpha' stays balanced. What cannot be placed (every same-label
instance at C) is left to AdjustAlpha over the free alpha'_S, then all of S (then the cold
start).

Chosen by measurement (full Adult, k = 10, README's Seeding section): the label-blind fill
(an opposite-label neighbour's alpha lowered instead) and AVG's uniform spread over the free
SVs saved fewer iterations, and so did mixing the seed with the previous round's SIR seed,
which would also chain the rounds again. Ties in K go to the earlier instance of S in
``ctx.shared`` order.
"""

from __future__ import annotations

import numpy as np

from ..errors import SeedingError
from .adjust import adjust_alpha, free_positions
from .base import SeedContext, carry_shared, layout
from .sir import ROW_SLAB_BYTES


def place_on_most_similar(ctx: SeedContext, alpha: np.ndarray, shared_next: np.ndarray,
                          donors: np.ndarray, amounts: np.ndarray) -> None:
    """Add each donor's amount to ``alpha`` (over next_index) at the positions ``shared_next``
    of its label, most similar first, each up to C; in place, donors in order."""
    candidates = ctx.shared
    y_cand = ctx.y[candidates]
    level = alpha[shared_next]
    slab = max(1, ROW_SLAB_BYTES // (4 * max(1, candidates.size)))
    for start in range(0, donors.size, slab):
        rows = donors[start:start + slab]
        similarity = ctx.kernel.block(rows, candidates)
        for i, r in enumerate(rows):
            score = np.where((y_cand == ctx.y[r]) & (level < ctx.C), similarity[i], -np.inf)
            left = float(amounts[start + i])
            while left > 0:
                j = int(np.argmax(score))
                if score[j] == -np.inf:
                    break
                take = min(ctx.C - level[j], left)
                level[j] += take
                left -= take
                score[j] = -np.inf
    alpha[shared_next] = level


def seed_full(ctx: SeedContext) -> np.ndarray:
    """FULL's seed for X' = X minus the removed instances (see the module docstring)."""
    if ctx.added.size:
        raise SeedingError(
            f"full seeds from the model on all instances: a round only removes instances, "
            f"got {ctx.added.size} added"
        )
    lay = layout(ctx)
    alpha = carry_shared(ctx, lay)
    alpha_removed = ctx.prev_alpha[lay.removed_prev]
    donors = np.flatnonzero(alpha_removed > 0)
    place_on_most_similar(ctx, alpha, lay.shared_next, ctx.removed[donors], alpha_removed[donors])
    y = ctx.y[ctx.next_index]
    shared = lay.shared_next
    return adjust_alpha(alpha, y, ctx.C, [free_positions(alpha, ctx.C, shared), shared])
