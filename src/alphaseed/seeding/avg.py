"""AVG (DeCoste and Wagstaff 2000), leave-one-out only (paper's supplementary material).

The previous model is trained once on all n instances; the round that leaves out t starts from
it without t (R = {t}, T empty). y_t alpha_t is spread uniformly over the d free SVs
(0 < alpha_j < C) of X \\ {t}: alpha_j += alpha_t / d when y_j = y_t, -= when y_j = -y_t; what
a bound cuts off is spread again over those still free, until the sum is balanced. That is
water filling over the free SVs (``adjust.water_fill``), solved exactly rather than by rounds.

Where the paper is silent, chosen here: when the free SVs cannot absorb y_t alpha_t (no free SV,
or all reach a bound), the rest is shifted uniformly over every instance of X \\ {t}, bounded
ones included; if even that fails (one label left), the seed is 0 (AdjustAlpha's fallbacks).
"""

from __future__ import annotations

import numpy as np

from ..errors import SeedingError
from .adjust import adjust_alpha, free_positions
from .context import Layout, SeedContext, carry_shared, layout


def leave_one_out_layout(ctx: SeedContext, method: str) -> Layout:
    """``layout(ctx)`` after checking that ``ctx`` is a leave-one-out round (one removed, none
    added); ``method`` names the seeder in the error."""
    if ctx.removed.size != 1 or ctx.added.size != 0:
        raise SeedingError(
            f"{method} is a leave-one-out seeder: it needs exactly one removed instance and no "
            f"added one, got {ctx.removed.size} removed and {ctx.added.size} added"
        )
    return layout(ctx)


def seed_avg(ctx: SeedContext) -> np.ndarray:
    """AVG's feasible seed for X \\ {t}, aligned with ``ctx.next_index``.

    alpha_S is kept and y_t alpha_t spread uniformly over the free SVs (then over all of S, then
    the cold start; see the module docstring). A context that removes other than one instance,
    or adds any, raises ``SeedingError``.

    Parameters
    ----------
    ctx : SeedContext
        The model trained on every instance, and the round that leaves out t: R = {t}, T empty.
    """
    lay = leave_one_out_layout(ctx, "avg")
    alpha = carry_shared(ctx, lay)
    y = ctx.y[ctx.next_index]
    shared = lay.shared_next
    C = ctx.bounds(y)
    return adjust_alpha(alpha, y, C, [free_positions(alpha, C, shared), shared])
