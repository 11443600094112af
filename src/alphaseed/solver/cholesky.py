"""A Cholesky factor that gains or loses one row and column at a time.

Active-set and path methods (the active-set finish, ATO's path) solve a system over a free set
that changes by one index per event. Factoring it afresh at each event costs O(m^3); these
updates cost O(m^2): a new index appends one row (a forward solve and its Schur complement), a
leaving one is cut out and the rows below it are brought back to triangular form by Givens
rotations (the rank-one update with the column that left).

The factor L (lower, Q = L L') lives in the leading m x m block of a larger row-major array, so
that its rows are contiguous and it can grow without moving. A run of leaves may leave each row
where it is instead (``cut``, a row map saying where each lies, which the solves read through),
and ``compact`` moves them back once the run ends. A column whose Schur complement
keeps less than ``DEPENDENT`` of its diagonal lies in the span of the others to rounding (a
duplicate instance): it is refused, since the factor would then hold a pivot made of rounding
noise and the solves would blow it up.
"""

from __future__ import annotations

import numpy as np
from llvmlite import ir
from numba import njit, types
from numba.core import cgutils
from numba.extending import intrinsic
from ..kernel import cholesky_in_place, pivoted_cholesky_in_place

DEPENDENT = 1e-12


# _lane_dot's running sums, one per lane of a vector register: their count fixes the order in which
# every dot product of the factor is summed, so changing it changes every result.
LANES = 4


@intrinsic
def _lane_sums(typingctx, a, b):
    """The ``LANES`` sums of a[j] * b[j] over j of each lane (j mod LANES) of the whole blocks of
    two contiguous float64 arrays of a's length, each in increasing j: what ``LANES`` scalar
    running sums give, bit for bit (IEEE products and sums, no fused multiply-add), but as one
    vector multiply and add a block. Numba's compiler left the scalar sums scalar."""
    if not all(isinstance(t, types.Array) and t.ndim == 1 and t.dtype == types.float64 and t.layout == "C"
               for t in (a, b)):
        return None

    def codegen(context, builder, signature, args):
        first, second = (context.make_array(t)(context, builder, v) for t, v in zip(signature.args, args))
        n = builder.extract_value(first.shape, 0)
        vector = ir.VectorType(ir.DoubleType(), LANES)
        sums = cgutils.alloca_once_value(builder, ir.Constant(vector, [0.0] * LANES))
        with cgutils.for_range(builder, builder.sdiv(n, ir.Constant(n.type, LANES))) as loop:
            at = builder.mul(loop.index, ir.Constant(n.type, LANES))
            x, z = (builder.load(builder.bitcast(builder.gep(array.data, [at]), vector.as_pointer()), align=8)
                    for array in (first, second))
            builder.store(builder.fadd(builder.load(sums), builder.fmul(x, z)), sums)
        total = builder.load(sums)
        lanes = [builder.extract_element(total, ir.Constant(ir.IntType(32), k)) for k in range(LANES)]
        return context.make_tuple(builder, signature.return_type, lanes)

    return types.UniTuple(types.float64, LANES)(a, b), codegen


@njit(cache=True, nogil=True, inline="always")
def _lane_dot(a, b):
    """a . b (two contiguous float64 arrays of one length) in four running sums
    (``_lane_sums``), the tail's terms added to the first: one sum would wait on its last addition
    at every term, and a fixed split gives the same result on every machine (no fastmath)."""
    n = a.shape[0]
    s0, s1, s2, s3 = _lane_sums(a, b)
    for j in range(n - n % LANES, n):
        s0 += a[j] * b[j]
    return (s0 + s1) + (s2 + s3)


@njit(cache=True, nogil=True, inline="always")
def row_dot(L, i, z, start=0):
    """L[i, start:i] . z[start:i] by ``_lane_dot``. L and z are C-contiguous, as the factor's
    buffer and its vectors are."""
    return _lane_dot(L[i, start:i], z[start:i])


@njit(cache=True, nogil=True)
def forward_pair(L, m, b1, b2, z1, z2, rows):
    """z1 = L^-1 b1 and z2 = L^-1 b2 (m rows of the factor L, row i of it in L's row rows[i]: see
    ``cut``), each row of L brought from memory once for both."""
    for i in range(m):
        # the row, just read for z1, is still in the processor's nearest cache for z2
        row = L[rows[i]]
        z1[i] = (b1[i] - _lane_dot(row[:i], z1[:i])) / row[i]
        z2[i] = (b2[i] - _lane_dot(row[:i], z2[:i])) / row[i]


@njit(cache=True, nogil=True)
def solve_pair(L, m, b1, b2, z1, z2):
    """z1 = Q^-1 b1 and z2 = Q^-1 b2 through Q's factor L (m rows), each row of L brought from
    memory once for both."""
    forward_pair(L, m, b1, b2, z1, z2, np.arange(m))
    # L' z = w, a row of L at a time: each solved value is taken out of the rest
    for j in range(m - 1, -1, -1):
        z1[j] /= L[j, j]
        z2[j] /= L[j, j]
        x1 = z1[j]
        x2 = z2[j]
        for i in range(j):
            z1[i] -= L[j, i] * x1
            z2[i] -= L[j, i] * x2


@njit(cache=True, nogil=True)
def backward_solve(L, m, x, rows):
    """x = L'^-1 x in place (m rows of the factor L, row i of it in L's row rows[i]: see ``cut``),
    four rows of L at a time: each solved group of four values is taken out of the rest in one
    sweep, so that x, read and written at every row of a one-row sweep, is read and written a
    quarter as often beside the rows streamed from memory."""
    j = m - 1
    while j >= 3:
        r0, r1, r2, r3 = L[rows[j]], L[rows[j - 1]], L[rows[j - 2]], L[rows[j - 3]]
        x[j] /= r0[j]
        a = x[j]
        x[j - 1] = (x[j - 1] - r0[j - 1] * a) / r1[j - 1]
        b = x[j - 1]
        x[j - 2] = (x[j - 2] - r0[j - 2] * a - r1[j - 2] * b) / r2[j - 2]
        c = x[j - 2]
        x[j - 3] = (x[j - 3] - r0[j - 3] * a - r1[j - 3] * b - r2[j - 3] * c) / r3[j - 3]
        d = x[j - 3]
        for i in range(j - 3):
            x[i] -= (r0[i] * a + r1[i] * b) + (r2[i] * c + r3[i] * d)
        j -= 4
    # the first rows, fewer than four, one at a time
    while j >= 0:
        row = L[rows[j]]
        x[j] /= row[j]
        a = x[j]
        for i in range(j):
            x[i] -= row[i] * a
        j -= 1


@njit(cache=True, nogil=True)
def grow(L, m, column, diagonal, tol):
    """Append row m to the factor of the m x m Q: ``column`` holds the new index's entries of Q
    against the m others, in the factor's order, and ``diagonal`` its own. Returns False,
    changing nothing, where the column lies in the others' span (Schur complement at most
    ``tol`` times the diagonal)."""
    r = np.empty(m)
    for i in range(m):
        r[i] = (column[i] - row_dot(L, i, r)) / L[i, i]
    schur = diagonal
    for i in range(m):
        schur -= r[i] * r[i]
    if schur <= tol * diagonal:
        return False
    for j in range(m):
        L[m, j] = r[j]
    L[m, m] = np.sqrt(schur)
    return True


@njit(cache=True, nogil=True)
def grow_many(L, m, forward, among, diagonal, tol, taken):
    """``grow`` for several candidates in turn, each appended unless its column lies in the span
    of the m indices and the candidates appended before it.

    ``forward[c]`` holds L^-1 times candidate c's entries of Q against the m indices (in the
    factor's order), solved for all of them at once by BLAS (``kernel.lower_solves``): the same
    rows as ``grow`` to rounding. ``among[c, a]`` holds c's entry against candidate a and
    ``diagonal[c]`` its own. Where the first candidate is refused, nothing is appended (the caller
    deals with it alone). Writes into ``taken`` the candidate of each row appended, in order;
    returns how many were.
    """
    count = forward.shape[0]
    r = np.empty((count, m + count))
    r[:, :m] = forward
    size = m
    for c in range(count):
        rc = r[c]
        for i in range(m, size):
            rc[i] = (among[c, taken[i - m]] - row_dot(L, i, rc)) / L[i, i]
        schur = diagonal[c]
        for i in range(size):
            schur -= rc[i] * rc[i]
        if schur <= tol * diagonal[c]:
            if c == 0:
                return 0
            continue
        for j in range(size):
            L[size, j] = rc[j]
        L[size, size] = np.sqrt(schur)
        taken[size - m] = c
        size += 1
    return size - m


@njit(cache=True, nogil=True, inline="always")
def _rotate(L, written, read, c0, c1, p, cos, sin, secant, xi):
    """A row below p through rotations c0..c1 - 1: it reads its values from L's row ``read``, one
    column on (the column that left is cut out), and writes them into row ``written`` (the same
    row, or the one above); returns what is left of its share of the column that left."""
    for c in range(c0, c1):
        v = (L[read, p + c + 1] + sin[c] * xi) * secant[c]
        xi = cos[c] * xi - sin[c] * v
        L[written, p + c] = v
    return xi


# Rows below the one cut out that ``shrink`` and ``cut`` take through the rotations already known at once:
# each rotation waits on the last, so BLOCK independent rows keep the processor busy, as
# ROTATED_VECTORS vectors of LANES rows each.
ROTATED_VECTORS = 4
BLOCK = LANES * ROTATED_VECTORS


def _rotations_in_lanes(shift: int):
    """The intrinsic ``_rotate`` for the BLOCK rows at, at + 1, ... below p at once through the
    rotations 0 .. count - 1: row k of the block writes into L's row rows[at + k] and reads from
    L's row rows[at + k + shift] (``shift`` 1: the rows below, each moved up one, as ``shrink``
    moves them; 0: in place, as ``cut`` leaves them), x[at:at + BLOCK] their shares of the column
    that left (updated). Each row's values are _rotate's bit for bit (IEEE products and sums in
    its order), the rows held in the lanes of vectors, read and written one value at a time (they
    are rows apart). The shift is fixed at compile time so that the block takes BLOCK + shift row
    pointers: twice as many would no longer fit the processor's registers."""

    @intrinsic
    def rotate_block(typingctx, L, rows, p, count, cos, sin, secant, x, at):
        arrays = (L, cos, sin, secant, x)
        if not (all(isinstance(t, types.Array) and t.dtype == types.float64 and t.layout == "C" and t.mutable
                    for t in arrays) and L.ndim == 2 and all(t.ndim == 1 for t in arrays[1:])
                and isinstance(rows, types.Array) and rows.ndim == 1 and rows.dtype == types.int64
                and rows.layout == "C"
                and all(isinstance(t, types.Integer) for t in (p, count, at))):
            return None

        def codegen(context, builder, signature, args):
            L_type, rows_type, _, _, *array_types, _ = signature.args
            matrix = context.make_array(L_type)(context, builder, args[0])
            row_index = context.make_array(rows_type)(context, builder, args[1])
            p, count = args[2:4]
            cos, sin, secant, x = (context.make_array(t)(context, builder, v) for t, v in zip(array_types, args[4:8]))
            i64, i32, byte = ir.IntType(64), ir.IntType(32), ir.IntType(8)
            double = ir.DoubleType()
            vector = ir.VectorType(double, LANES)
            row_bytes = builder.extract_value(matrix.strides, 0)
            origin = builder.bitcast(matrix.data, byte.as_pointer())
            # column 0 of L's row rows[at + k]: row k of the block writes there, and reads from k + shift
            starts = [builder.gep(origin, [builder.mul(builder.load(builder.gep(
                row_index.data, [builder.add(args[8], ir.Constant(i64, k))])), row_bytes)])
                for k in range(BLOCK + shift)]
            shares_at = builder.gep(x.data, [args[8]])
            share_vectors = [builder.bitcast(builder.gep(shares_at, [ir.Constant(i64, g * LANES)]), vector.as_pointer())
                             for g in range(ROTATED_VECTORS)]
            shares = [cgutils.alloca_once_value(builder, builder.load(v, align=8)) for v in share_vectors]

            def broadcast(values, c):
                value = builder.load(builder.gep(values.data, [c]))
                one = builder.insert_element(ir.Constant(vector, ir.Undefined), value, ir.Constant(i32, 0))
                return builder.shuffle_vector(one, ir.Constant(vector, ir.Undefined),
                                              ir.Constant(ir.VectorType(i32, LANES), [0] * LANES))

            def at_column(row, column):
                offset = builder.mul(column, ir.Constant(i64, 8))
                return builder.bitcast(builder.gep(row, [offset]), double.as_pointer())

            with cgutils.for_range(builder, count) as loop:
                c = loop.index
                sine, cosine, secant_c = (broadcast(values, c) for values in (sin, cos, secant))
                written = builder.add(p, c)
                read = builder.add(written, ir.Constant(i64, 1))
                for g in range(ROTATED_VECTORS):
                    lanes = range(g * LANES, (g + 1) * LANES)
                    below = ir.Constant(vector, ir.Undefined)
                    for lane, k in enumerate(lanes):
                        below = builder.insert_element(below, builder.load(at_column(starts[k + shift], read)),
                                                       ir.Constant(i32, lane))
                    xs = builder.load(shares[g])
                    # _rotate's v = (L[read, p + c + 1] + sin x) secant, then x = cos x - sin v
                    v = builder.fmul(builder.fadd(below, builder.fmul(sine, xs)), secant_c)
                    builder.store(builder.fsub(builder.fmul(cosine, xs), builder.fmul(sine, v)), shares[g])
                    for lane, k in enumerate(lanes):
                        builder.store(builder.extract_element(v, ir.Constant(i32, lane)), at_column(starts[k], written))
            for share, vector_at in zip(shares, share_vectors):
                builder.store(builder.load(share), vector_at, align=8)
            return context.get_dummy_value()

        return types.none(L, rows, types.int64, types.int64, cos, sin, secant, x, types.int64), codegen

    return rotate_block


_rotate_block_moved = _rotations_in_lanes(1)
_rotate_block_in_place = _rotations_in_lanes(0)


@njit(cache=True, nogil=True)
def shrink(L, m, p, along):
    """Cut row and column p out of the factor (m rows): the rows below p, each moved up one, are
    brought back to a Cholesky factor by the Givens rotations of the rank-one update with the
    column that left (``_rotations``; ``along`` as there). L is C-contiguous, as the factor's
    buffer is."""
    for r in range(p, m - 1):
        for j in range(p):
            L[r, j] = L[r + 1, j]
    _rotations(L, m, p, along, np.arange(p, m), 1)


@njit(cache=True, nogil=True)
def cut(L, rows, m, p, along):
    """``shrink`` with no row moved: row i of the factor lives in L's row rows[i] (the identity
    where nothing was cut yet), and cutting p out hands each row below it the next one's L row,
    its values from column p + 1 on rotated in place and written one column to the left, and
    gives p's L row to position m - 1 (the map stays a permutation of L's rows). A leave
    then costs only its rotations: moving the rows below p up one reads and writes all their
    values left of p, in a large factor more than the rotations do. ``compact`` puts the rows
    back in place."""
    freed = rows[p]
    for i in range(p, m - 1):
        rows[i] = rows[i + 1]
    rows[m - 1] = freed
    _rotations(L, m, p, along, rows[p:m - 1], 0)


@njit(cache=True, nogil=True)
def compact(L, rows, m):
    """Move the factor's m rows into L's first m rows and make ``rows`` the identity again. After
    ``cut`` the first m entries of ``rows`` ascend with rows[i] >= i, so each row is copied (its
    columns 0..i, the factor's) before any copy overwrites it."""
    for i in range(m):
        r = rows[i]
        if r != i:
            for j in range(i + 1):
                L[i, j] = L[r, j]
    for i in range(rows.shape[0]):
        rows[i] = i


@njit(cache=True, nogil=True)
def _rotations(L, m, p, along, rows, shift):
    """The rotations that bring the rows below p (each the next one of the m on, without column
    p, read from L's row rows[i + shift] and written into rows[i]) back to a Cholesky factor: the
    rank-one update with the column that left. Row by row, each row read whole; BLOCK rows at a
    time through the rotations already known (``_rotations_in_lanes``), then through their own
    one after the other. A rotation multiplies by its cosine's reciprocal (``secant``): a division
    in that chain would cost several times its latency.

    Each row z of ``along`` (shape (k, m) or wider; k may be 0) that holds L^-1 b follows the
    factor: it ends holding L^-1 b for the new factor and b without its value p. That is the same
    rotations applied to z's values from p on as to a row below all of L's, z's value at p its
    share of the column that left: O(m) a vector, where solving afresh would read all of L.
    """
    n = m - 1 - p
    x = np.empty(n)
    for i in range(n):
        x[i] = L[rows[i + shift], p]
    cos = np.empty(n)
    sin = np.empty(n)
    secant = np.empty(n)
    i0 = 0
    while i0 < n:
        count = min(BLOCK, n - i0)
        known = 0
        if count == BLOCK and i0 > 0:
            if shift:
                _rotate_block_moved(L, rows, p, i0, cos, sin, secant, x, i0)
            else:
                _rotate_block_in_place(L, rows, p, i0, cos, sin, secant, x, i0)
            known = i0
        for i in range(i0, i0 + count):
            xi = _rotate(L, rows[i], rows[i + shift], known, i, p, cos, sin, secant, x[i])
            diag = L[rows[i + shift], p + i + 1]
            root = np.sqrt(diag * diag + xi * xi)
            cos[i] = root / diag
            sin[i] = xi / diag
            secant[i] = diag / root
            L[rows[i], p + i] = root
        i0 += count
    for k in range(along.shape[0]):
        z = along[k]
        share = z[p]
        for c in range(n):
            v = (z[p + c + 1] + sin[c] * share) * secant[c]
            share = cos[c] * share - sin[c] * v
            z[p + c] = v


@njit(cache=True, nogil=True)
def _lower_into(Q, L, m):
    """The lower triangle of Q's first m rows into L's. Q may be L's own buffer (its first values,
    rows of Q's length): a value's place in L lies at or after its place in Q, so copied from the
    last value back, each covers only values already copied."""
    for i in range(m - 1, -1, -1):
        for j in range(i, -1, -1):
            L[i, j] = Q[i, j]


def pivoted_factor(Q: np.ndarray, L: np.ndarray, tol: float = DEPENDENT) -> np.ndarray:
    """Factor the symmetric positive semi-definite ``Q`` with pivoting (LAPACK's dpstrf) into L's
    leading block, stopping where the pivots left are at most ``tol`` (Q's diagonal is 1 for the
    Gaussian kernel, so that is relative): the columns beyond lie in the span of those taken.

    Parameters
    ----------
    Q : ndarray
        The m x m matrix, C-contiguous float64; overwritten. It may be L's own buffer (its first
        m * m values), so that the factor needs no second m x m array.
    L : ndarray
        Receives the factor of Q restricted to the columns taken, in their pivot order.

    Returns
    -------
    ndarray
        The positions in Q of the columns taken, in the factor's order.
    """
    m = Q.shape[0]
    if m == 0:
        return np.zeros(0, dtype=np.int64)
    pivots, rank = pivoted_cholesky_in_place(Q, tol)
    _lower_into(Q, L, rank)
    return (pivots[:rank] - 1).astype(np.int64)


def plain_factor(Q: np.ndarray, L: np.ndarray, tol: float = DEPENDENT) -> bool:
    """Factor the symmetric ``Q`` without pivoting (LAPACK's dpotrf) into L's leading block, where
    every pivot is above ``tol`` (as ``pivoted_factor``'s test, relative where Q's diagonal is 1):
    ``pivoted_factor`` would then take every column, at about twice the cost.

    Parameters
    ----------
    Q : ndarray
        The m x m matrix, C-contiguous float64; overwritten. It may be L's own buffer, as for
        ``pivoted_factor``.
    L : ndarray
        Receives the factor where it is returned True.

    Returns
    -------
    bool
        Whether Q was factored so: False where a column lies in the span of those before it to
        ``tol`` (then Q holds rounding noise, and L is not written unless Q is its own buffer).
    """
    m = Q.shape[0]
    # dpstrf's test: a pivot is the diagonal of the Schur complement, the square of L's
    if cholesky_in_place(Q) != 0 or not (Q.diagonal() ** 2 > tol).all():
        return False
    _lower_into(Q, L, m)
    return True
