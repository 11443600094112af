"""FULL: every k-fold round seeded from one model trained on all n instances (not in the paper).

The paper seeds round h+1 from round h, which removes one fold and adds another. Here one model
is trained once on every instance; round h's training set is that set minus its test fold, so
its seed only has to remove the fold (R = the test fold, T empty), as AVG and TOP do for one
instance at leave-one-out. The rounds no longer depend on each other.

alpha'_S = alpha_S of the full model. Each removed r with alpha_r > 0, in the order of
``ctx.removed``, is left out as TOP leaves out one instance (Lee et al. 2004; ``top``):
y_r alpha_r goes to the instances of S by decreasing K(x_r, x_s), the most similar s first,
alpha_s += alpha_r if y_s = y_r, -= alpha_r otherwise, each as far as its bound allows, the
rest to the next most similar. That keeps sum y alpha' balanced; what finds no room (every
instance at the bound it is pushed towards) is left to AdjustAlpha over the free alpha'_S,
then all of S (then the cold start). Ties in K go to the earlier instance of S in
``ctx.shared`` order.

Chosen over the alternatives compared in the docs (design, "What FULL and SIR save"): placing alpha_r on r's
label only, spreading it uniformly over the free SVs as AVG does, and mixing the seed with the
previous round's SIR seed (which would also chain the rounds again) all save fewer iterations
on full Adult.
"""

from __future__ import annotations

import numpy as np

from ..errors import SeedingError
from .adjust import adjust_alpha, free_positions, signed_bounds
from .context import SeedContext, carry_shared, layout
from .sir import ROW_SLAB_BYTES


def leave_out_in_turn(ctx: SeedContext, beta: np.ndarray, donors: np.ndarray,
                      change: np.ndarray) -> None:
    """TOP's step for each donor in order: add change[i] to sum(beta) (beta = y alpha over
    ``ctx.shared``) on the most similar instances first, each up to its bound; in place."""
    candidates = ctx.shared
    lo, hi = signed_bounds(ctx.y[candidates], ctx.bounds(ctx.y[candidates]))
    slab = max(1, ROW_SLAB_BYTES // (4 * max(1, candidates.size)))
    for start in range(0, donors.size, slab):
        similarity = ctx.kernel.block(donors[start:start + slab], candidates)
        for i in range(similarity.shape[0]):
            amount = float(change[start + i])
            room = hi - beta if amount > 0 else beta - lo
            score = np.where(room > 0, similarity[i], -np.inf)
            step, left = np.sign(amount), abs(amount)
            while left > 0:
                j = int(np.argmax(score))
                if score[j] == -np.inf:
                    break
                take = min(room[j], left)
                beta[j] += step * take
                left -= take
                score[j] = -np.inf


def seed_full(ctx: SeedContext) -> np.ndarray:
    """FULL's feasible seed for X' = X minus the removed instances, aligned with ``ctx.next_index``.

    See the module docstring; a context that adds instances raises ``SeedingError``.

    Parameters
    ----------
    ctx : SeedContext
        The model on all instances and the round's sets: R = what X' lacks, T empty.
    """
    if ctx.added.size:
        raise SeedingError(
            f"full seeds from the model on all instances: a round only removes instances, "
            f"got {ctx.added.size} added"
        )
    lay = layout(ctx)
    alpha = carry_shared(ctx, lay)
    y = ctx.y[ctx.next_index]
    shared = lay.shared_next
    alpha_removed = ctx.prev_alpha[lay.removed_prev]
    donors = np.flatnonzero(alpha_removed > 0)
    beta = y[shared] * alpha[shared]
    removed = ctx.removed[donors]
    leave_out_in_turn(ctx, beta, removed, ctx.y[removed] * alpha_removed[donors])
    alpha[shared] = y[shared] * beta
    C = ctx.bounds(y)
    return adjust_alpha(alpha, y, C, [free_positions(alpha, C, shared), shared])
