"""LLVM intrinsics for the bit-set kernel rows: a popcount, and a lookup of kernel values by
distance that permutes a register of values where the processor can: AVX-512's two-register
permutation, 16 values an instruction, else AVX2's ``vpermps``, 8, else a plain loop."""

from __future__ import annotations

from llvmlite import ir
from numba import types
from numba.core import cgutils
from numba.extending import intrinsic


@intrinsic
def popcount(typingctx, word):
    """The number of set bits of a uint64, as one instruction (LLVM's ctpop)."""
    if word != types.uint64:
        return None

    def codegen(context, builder, signature, args):
        return builder.ctpop(args[0])

    return types.uint64(types.uint64), codegen


# A table of at most this many kernel values is looked up by permutation, 16 values an instruction
# with AVX-512's two-register vpermi2ps or 8 at a time with AVX2's vpermps, where the processor has
# them: the compiler turns table[d[k]] into one scalar load a value, and gathers are slow on AMD.
# So is a longer table whose float32 values are 0.0 from this many on (the kernel falls with the distance), with
# distances clamped to its last entry: at a large gamma most of a long table is such zeros.
PERMUTED_TABLE = 32


def _target_lanes() -> int:
    """float32 lanes of the permutation the target has: 16 with AVX-512 (vpermi2ps, one register
    pair holds the whole table), 8 with AVX2 (vpermps, four registers and a blend by the index's
    high bits), 0 without either. The target's features, which NUMBA_CPU_NAME / NUMBA_CPU_FEATURES
    may set apart from the host's, decide; 0 if this Numba does not say."""
    from numba.core.registry import cpu_target

    features = getattr(cpu_target.target_context.codegen(), "_tm_features", "").split(",")
    return 16 if "+avx512f" in features else 8 if "+avx2" in features else 0


def _permuted_values(builder, table_registers, d, lanes: int):
    """The table's float32 values at the indices ``d`` (each below PERMUTED_TABLE), ``lanes`` at a
    time: one two-register permutation with AVX-512; with AVX2, a permutation of each of the four
    8-value registers by the index's low 3 bits, blended by its bits 3 and 4."""
    f32, i32 = ir.FloatType(), ir.IntType(32)
    vf, vi = ir.VectorType(f32, lanes), ir.VectorType(i32, lanes)
    if lanes == 16:
        permute = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vf, [vf, vi, vf]),
                                                 "llvm.x86.avx512.vpermi2var.ps.512")
        return builder.call(permute, [table_registers[0], d, table_registers[1]])
    permute = cgutils.get_or_insert_function(builder.module, ir.FunctionType(vf, [vf, vi]),
                                             "llvm.x86.avx2.permps")
    values = [builder.call(permute, [register, d]) for register in table_registers]
    zero = ir.Constant(vi, [0] * lanes)
    bit3 = builder.icmp_unsigned("!=", builder.and_(d, ir.Constant(vi, [8] * lanes)), zero)
    bit4 = builder.icmp_unsigned("!=", builder.and_(d, ir.Constant(vi, [16] * lanes)), zero)
    low = builder.select(bit3, values[1], values[0])
    high = builder.select(bit3, values[3], values[2])
    return builder.select(bit4, high, low)


def _signed(builder, factor, value):
    """factor * value for a float32 factor of +-1 (a scalar or a vector of them): value with its sign
    bit flipped where the factor's is set, the product's bits. A multiply would take the same
    bits, but on AMD's Zen 4 a float32 multiply with a subnormal operand costs 15-40 times as
    much, and at a large gamma many float32 kernel values are subnormal (on Adult at gamma = 8,
    those at distances 11 and 12)."""
    width = getattr(value.type, "count", None)
    bits = ir.IntType(32) if width is None else ir.VectorType(ir.IntType(32), width)
    sign_bit = ir.Constant(bits, 1 << 31 if width is None else [1 << 31] * width)
    flip = builder.and_(builder.bitcast(factor, bits), sign_bit)
    return builder.bitcast(builder.xor(builder.bitcast(value, bits), flip), value.type)


@intrinsic
def times_sign(typingctx, factor, value):
    """factor * value of two float32, factor +-1, by the sign bit (``_signed``): the product's bits
    without the multiply's cost on a subnormal kernel value."""
    if factor != types.float32 or value != types.float32:
        return None

    def codegen(context, builder, signature, args):
        return _signed(builder, *args)

    return types.float32(types.float32, types.float32), codegen


@intrinsic
def signed_lookup(typingctx, out, distance, table, y, sign):
    """out[k] = float32(sign * y[k]) * float32(table[distance[k]]) for k < len(out): int32
    distances, float64 y and sign, each +-1, and a nonincreasing float64 table which every
    distance indexes; 16 (AVX-512) or 8 (AVX2) at a time by permutation where the target has it
    and the table has at most PERMUTED_TABLE values or float32 0.0 from there on, the rest (all of
    them otherwise) one by one. The same float32 products either way, sign bits too."""
    lanes = _target_lanes()

    def codegen(context, builder, signature, args):
        arrays = [context.make_array(t)(context, builder, a)
                  for t, a in zip(signature.args[:4], args[:4])]
        out_, dist_, table_, y_ = (a.data for a in arrays)
        n = cgutils.unpack_tuple(builder, arrays[0].shape, 1)[0]
        entries = cgutils.unpack_tuple(builder, arrays[2].shape, 1)[0]
        f32, i32, i64 = ir.FloatType(), ir.IntType(32), ir.IntType(64)
        sign32 = builder.fptrunc(args[4], f32)
        last = ir.Constant(i64, PERMUTED_TABLE - 1)
        short = builder.icmp_unsigned("<=", entries, ir.Constant(i64, PERMUTED_TABLE))
        zero_tail = cgutils.alloca_once_value(builder, ir.Constant(ir.IntType(1), 0))
        with builder.if_then(builder.not_(short)):
            value = builder.fptrunc(builder.load(builder.gep(table_, [last])), f32)
            builder.store(builder.fcmp_ordered("==", value, ir.Constant(f32, 0.0)), zero_tail)
        fits = builder.or_(short, builder.load(zero_tail))
        blocked = (builder.select(fits, builder.and_(n, ir.Constant(i64, -lanes)), ir.Constant(i64, 0))
                   if lanes else ir.Constant(i64, 0))
        if lanes:
            vf, vi = ir.VectorType(f32, lanes), ir.VectorType(i32, lanes)
            vd = ir.VectorType(ir.DoubleType(), lanes)
            local = cgutils.alloca_once(builder, ir.ArrayType(f32, PERMUTED_TABLE))
            builder.store(ir.Constant(ir.ArrayType(f32, PERMUTED_TABLE), None), local)
            first = builder.gep(local, [ir.Constant(i32, 0), ir.Constant(i32, 0)])
            copied = builder.select(short, entries, ir.Constant(i64, PERMUTED_TABLE))
            with builder.if_then(fits), cgutils.for_range(builder, copied) as loop:
                value = builder.fptrunc(builder.load(builder.gep(table_, [loop.index])), f32)
                builder.store(value, builder.gep(first, [loop.index]))
            registers = builder.bitcast(first, vf.as_pointer())
            table_registers = [builder.load(builder.gep(registers, [ir.Constant(i64, r)]), align=4)
                               for r in range(PERMUTED_TABLE // lanes)]
            signs = ir.Constant(vf, None)
            for lane in range(lanes):
                signs = builder.insert_element(signs, sign32, ir.Constant(i32, lane))
            lasts = ir.Constant(vi, [PERMUTED_TABLE - 1] * lanes)
            with cgutils.for_range_slice(builder, ir.Constant(i64, 0), blocked, ir.Constant(i64, lanes)) as (k, _):
                d = builder.load(builder.bitcast(builder.gep(dist_, [k]), vi.as_pointer()), align=4)
                ys = builder.load(builder.bitcast(builder.gep(y_, [k]), vd.as_pointer()), align=8)
                d = builder.select(builder.icmp_unsigned("<", d, lasts), d, lasts)
                values = _permuted_values(builder, table_registers, d, lanes)
                product = _signed(builder, builder.fmul(signs, builder.fptrunc(ys, vf)), values)
                builder.store(product, builder.bitcast(builder.gep(out_, [k]), vf.as_pointer()), align=4)
        with cgutils.for_range_slice(builder, blocked, n, ir.Constant(i64, 1)) as (k, _):
            d = builder.sext(builder.load(builder.gep(dist_, [k])), i64)
            value = builder.fptrunc(builder.load(builder.gep(table_, [d])), f32)
            factor = builder.fptrunc(builder.fmul(args[4], builder.load(builder.gep(y_, [k]))), f32)
            builder.store(_signed(builder, factor, value), builder.gep(out_, [k]))
        return context.get_dummy_value()

    return types.void(out, distance, table, y, sign), codegen
