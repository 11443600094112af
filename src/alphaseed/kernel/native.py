"""LLVM intrinsics for the bit-set kernel rows: a popcount, and a lookup of kernel values by
distance that uses AVX-512's two-register permutation where the processor has it."""

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


# A table of at most this many kernel values is looked up 16 values an instruction by AVX-512's
# two-register permutation (vpermi2ps), where the processor has it: the compiler turns
# table[d[k]] into one scalar load a value, and gathers are slow on AMD. So is a longer table
# whose float32 values are 0.0 from this many on (the kernel falls with the distance), with
# distances clamped to its last entry: at a large gamma most of a long table is such zeros.
PERMUTED_TABLE = 32


def _target_has_avx512() -> bool:
    """Whether Numba compiles for a processor with AVX-512 (its target's features, which
    NUMBA_CPU_NAME / NUMBA_CPU_FEATURES may set apart from the host's); False if this Numba
    does not say."""
    from numba.core.registry import cpu_target

    features = getattr(cpu_target.target_context.codegen(), "_tm_features", "")
    return "+avx512f" in features.split(",")


@intrinsic
def signed_lookup(typingctx, out, distance, table, y, sign):
    """out[k] = float32(sign * y[k]) * float32(table[distance[k]]) for k < len(out): int32
    distances, float64 y and sign, each +-1, and a nonincreasing float64 table which every
    distance indexes; 16 at a time by permutation where the target has AVX-512 and the table
    has at most PERMUTED_TABLE values or float32 0.0 from there on, the rest (all of them
    otherwise) one by one. The same float32 products either way, sign bits too."""
    vector = _target_has_avx512()

    def codegen(context, builder, signature, args):
        arrays = [context.make_array(t)(context, builder, a)
                  for t, a in zip(signature.args[:4], args[:4])]
        out_, dist_, table_, y_ = (a.data for a in arrays)
        n = cgutils.unpack_tuple(builder, arrays[0].shape, 1)[0]
        entries = cgutils.unpack_tuple(builder, arrays[2].shape, 1)[0]
        f32, i32, i64 = ir.FloatType(), ir.IntType(32), ir.IntType(64)
        sign32 = builder.fptrunc(args[4], f32)
        step = ir.Constant(i64, 16 if vector else 1)
        last = ir.Constant(i64, PERMUTED_TABLE - 1)
        short = builder.icmp_unsigned("<=", entries, ir.Constant(i64, PERMUTED_TABLE))
        zero_tail = cgutils.alloca_once_value(builder, ir.Constant(ir.IntType(1), 0))
        with builder.if_then(builder.not_(short)):
            value = builder.fptrunc(builder.load(builder.gep(table_, [last])), f32)
            builder.store(builder.fcmp_ordered("==", value, ir.Constant(f32, 0.0)), zero_tail)
        fits = builder.or_(short, builder.load(zero_tail))
        blocked = (builder.select(fits, builder.and_(n, ir.Constant(i64, -16)), ir.Constant(i64, 0))
                   if vector else ir.Constant(i64, 0))
        if vector:
            v16f, v16i = ir.VectorType(f32, 16), ir.VectorType(i32, 16)
            v16d = ir.VectorType(ir.DoubleType(), 16)
            permute = cgutils.get_or_insert_function(
                builder.module, ir.FunctionType(v16f, [v16f, v16i, v16f]),
                "llvm.x86.avx512.vpermi2var.ps.512")
            local = cgutils.alloca_once(builder, ir.ArrayType(f32, PERMUTED_TABLE))
            builder.store(ir.Constant(ir.ArrayType(f32, PERMUTED_TABLE), None), local)
            first = builder.gep(local, [ir.Constant(i32, 0), ir.Constant(i32, 0)])
            copied = builder.select(short, entries, ir.Constant(i64, PERMUTED_TABLE))
            with builder.if_then(fits), cgutils.for_range(builder, copied) as loop:
                value = builder.fptrunc(builder.load(builder.gep(table_, [loop.index])), f32)
                builder.store(value, builder.gep(first, [loop.index]))
            halves = builder.bitcast(first, v16f.as_pointer())
            low = builder.load(halves, align=4)
            high = builder.load(builder.gep(halves, [ir.Constant(i64, 1)]), align=4)
            signs = ir.Constant(v16f, None)
            for lane in range(16):
                signs = builder.insert_element(signs, sign32, ir.Constant(i32, lane))
            lasts = ir.Constant(v16i, [PERMUTED_TABLE - 1] * 16)
            with cgutils.for_range_slice(builder, ir.Constant(i64, 0), blocked, step) as (k, _):
                d = builder.load(builder.bitcast(builder.gep(dist_, [k]), v16i.as_pointer()),
                                 align=4)
                ys = builder.load(builder.bitcast(builder.gep(y_, [k]), v16d.as_pointer()),
                                  align=8)
                d = builder.select(builder.icmp_unsigned("<", d, lasts), d, lasts)
                values = builder.call(permute, [low, d, high])
                product = builder.fmul(builder.fmul(signs, builder.fptrunc(ys, v16f)), values)
                builder.store(product, builder.bitcast(builder.gep(out_, [k]), v16f.as_pointer()),
                              align=4)
        with cgutils.for_range_slice(builder, blocked, n, ir.Constant(i64, 1)) as (k, _):
            d = builder.sext(builder.load(builder.gep(dist_, [k])), i64)
            value = builder.fptrunc(builder.load(builder.gep(table_, [d])), f32)
            factor = builder.fptrunc(builder.fmul(args[4], builder.load(builder.gep(y_, [k]))), f32)
            builder.store(builder.fmul(factor, value), builder.gep(out_, [k]))
        return context.get_dummy_value()

    return types.void(out, distance, table, y, sign), codegen


