"""What every seeder receives and must return, and how a round's context is built.

Round h+1 of k-fold CV is seeded from round h: S are the k-2 shared folds, R (removed) the
fold that round h trained on and round h+1 tests on, T (added) the fold round h tested on.
For leave-one-out AVG and TOP, the previous model is the one trained on all n instances,
R = {t} and T is empty.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..errors import SeedingError
from ..kernel import KernelMatrix
from ..solver import upper_bounds


@dataclass(frozen=True)
class SeedContext:
    """Everything a seeder may read: the previous round's optimum and the index sets S, R, T.

    Index arrays hold global instance indices (rows of ``kernel``); the seed a seeder returns
    is aligned with ``next_index``. Build one with ``seed_context``.

    Parameters
    ----------
    kernel : KernelMatrix
        The kernel over all n instances; ``kernel.block(rows, cols)`` gives float32 values.
    y : ndarray
        float64 labels (-1 or +1) of all n instances.
    C : float or tuple of float
        The penalty of both rounds, or its pair (C of +1, C of -1) with class weights: read
        each instance's bound through ``bounds``.
    prev_index : ndarray
        The previous training set X, in its solver order.
    prev_alpha : ndarray
        The previous optimum, aligned with ``prev_index``.
    prev_gradient : ndarray
        LibSVM's G = Q alpha - 1 at that optimum, aligned with ``prev_index``; f_i = y_i G_i.
    prev_rho : float
        The previous model's rho (the paper's b).
    shared : ndarray
        S: the instances in both training sets.
    removed : ndarray
        R: the instances in the previous training set only.
    added : ndarray
        T: the instances in the next training set only.
    next_index : ndarray
        X' = S ∪ T, in the next round's solver order.
    """

    kernel: KernelMatrix      # kernel.block(rows, cols) -> float32 K over global indices
    y: np.ndarray             # float64 labels in {-1, +1} of all n instances
    C: float | tuple
    prev_index: np.ndarray    # global indices of the previous training set X, solver order
    prev_alpha: np.ndarray    # the previous optimum, aligned with prev_index
    prev_gradient: np.ndarray  # LibSVM's G = Q alpha - 1 at that optimum; f_i = y_i G_i
    prev_rho: float           # the previous model's rho (the paper's b)
    shared: np.ndarray        # S: global indices in both training sets
    removed: np.ndarray       # R: in the previous training set only
    added: np.ndarray         # T: in the next training set only
    next_index: np.ndarray    # X' = S ∪ T in the next round's solver order


    def bounds(self, y: np.ndarray) -> np.ndarray:
        """Each instance's bound on alpha, C of its class.

        Parameters
        ----------
        y : ndarray
            Labels (-1 or +1) of the instances.

        Returns
        -------
        ndarray
            One bound per label.
        """
        return upper_bounds(y, self.C)

def seed_context(kernel: KernelMatrix, y: np.ndarray, C, previous: tuple,
                 next_index: np.ndarray) -> SeedContext:
    """The seeders' context for training on ``next_index`` after a solution on another set.

    S and T come in the next set's order, R in the previous set's (for k-fold, R is fold h and
    T fold h-1, each ascending).

    Parameters
    ----------
    kernel : KernelMatrix
        The kernel the seeders read their blocks of K from.
    y : ndarray
        Labels of the whole dataset (-1 or +1), by global index.
    C : float or tuple of float
        The penalty of both rounds, or its pair (C of +1, C of -1).
    previous : tuple
        ``(prev_index, prev)``: the previous training set (global indices) and its
        ``SolveResult``.
    next_index : ndarray
        The next training set (global indices), in the solver's order.

    Returns
    -------
    SeedContext
        The previous solution, and S, R and T between the two training sets.
    """
    prev_index, prev = previous
    in_prev = np.isin(next_index, prev_index)
    return SeedContext(
        kernel=kernel, y=y, C=C, prev_index=prev_index, prev_alpha=prev.alpha,
        prev_gradient=prev.gradient, prev_rho=float(prev.rho), shared=next_index[in_prev],
        removed=prev_index[~np.isin(prev_index, next_index)], added=next_index[~in_prev],
        next_index=next_index,
    )


@dataclass(frozen=True)
class Layout:
    """Where S, R and T sit in the previous and next solver orders (positions, not indices)."""

    shared_prev: np.ndarray   # positions of S in prev_index
    removed_prev: np.ndarray  # positions of R in prev_index
    shared_next: np.ndarray   # positions of S in next_index
    added_next: np.ndarray    # positions of T in next_index


def positions(subset: np.ndarray, index: np.ndarray, n: int, what: str) -> np.ndarray:
    """Positions of the global indices ``subset`` inside ``index``."""
    lookup = np.full(n, -1, dtype=np.int64)
    lookup[index] = np.arange(index.size)
    pos = lookup[subset]
    if (pos < 0).any():
        missing = np.asarray(subset)[pos < 0][:5].tolist()
        raise SeedingError(f"{what}: instances {missing} are not where the context says")
    return pos


def layout(ctx: SeedContext) -> Layout:
    """Check that the context's index sets fit together and locate them."""
    n = ctx.kernel.n
    if ctx.prev_alpha.shape != ctx.prev_index.shape or ctx.prev_gradient.shape != ctx.prev_index.shape:
        raise SeedingError(
            f"prev_alpha ({ctx.prev_alpha.shape}) and prev_gradient ({ctx.prev_gradient.shape}) "
            f"must align with prev_index ({ctx.prev_index.shape})"
        )
    if ctx.y.shape != (n,):
        raise SeedingError(f"y has shape {ctx.y.shape}, the kernel has {n} instances")
    for name in ("prev_index", "next_index", "shared", "removed", "added"):
        idx = getattr(ctx, name)
        if np.unique(idx).size != idx.size:
            raise SeedingError(f"{name} lists an instance twice")
    if ctx.shared.size + ctx.removed.size != ctx.prev_index.size:
        raise SeedingError("shared and removed together must be exactly prev_index")
    if ctx.shared.size + ctx.added.size != ctx.next_index.size:
        raise SeedingError("shared and added together must be exactly next_index")
    shared_prev = positions(ctx.shared, ctx.prev_index, n, "shared in prev_index")
    removed_prev = positions(ctx.removed, ctx.prev_index, n, "removed in prev_index")
    shared_next = positions(ctx.shared, ctx.next_index, n, "shared in next_index")
    added_next = positions(ctx.added, ctx.next_index, n, "added in next_index")
    if np.intersect1d(shared_prev, removed_prev).size or np.intersect1d(shared_next, added_next).size:
        raise SeedingError("shared overlaps removed or added: the three sets must be disjoint")
    return Layout(shared_prev, removed_prev, shared_next, added_next)


def carry_shared(ctx: SeedContext, lay: Layout) -> np.ndarray:
    """alpha' over next_index with alpha'_S = alpha_S and alpha'_T = 0."""
    alpha = np.zeros(ctx.next_index.size)
    alpha[lay.shared_next] = ctx.prev_alpha[lay.shared_prev]
    return alpha


def kernel_matvec(ctx: SeedContext, rows: np.ndarray, cols: np.ndarray, coef: np.ndarray) -> np.ndarray:
    """K[rows][:, cols] @ coef in float64, skipping the columns whose coefficient is zero."""
    keep = coef != 0
    return ctx.kernel.times(rows, cols[keep], coef[keep])
