"""Numeric cases of the wider unsigned dtypes u16, u32 and u64 (ONNX's UINT16, UINT32,
UINT64): arithmetic with wrap-around, unsigned division and remainder, comparisons in
unsigned order, max/min, shifts and the bitwise ops, clip, cast to and from every dtype,
pow with an unsigned exponent, data movement, where, reductions, argmax, cumsum, topk,
and values given as JSON "data". The inputs hold the values where a signed or a 64-bit
signed reading goes wrong: 2^15, 2^31, 2^32 - 1, 2^53 + 1, 2^63 - 1, 2^63, 2^64 - 1.
Expectations come from Python integers or NumPy, never from ftrun's output."""
import os

import numpy as np

from harness import FLOATS, INTS, MATH, NP, UINTS, Case, rng_for
from cases_elementwise import cast_expect, cast_input
from cases_bitwise_norm import shift_expect


# The CUDA backend leaves the reductions, argmax, cumsum and topk of u16, u32 and u64
# to the CPU (ftrun(1), ops): the CUDA tier (FTNUM_ARGS="-d cuda") runs them so.
CPU_ONLY = ["--fallback", "cpu"] if "cuda" in os.environ.get("FTNUM_ARGS", "") else []


def special(dt):
    """Values at the edges of dt and of the signed types of its size and below."""
    bits = np.dtype(NP[dt]).itemsize * 8
    top = (1 << bits) - 1
    v = [0, 1, 2, 3, 7, top, top - 1, top >> 1, (top >> 1) + 1, 0x7fff, 0x8000, 0xffff]
    if bits >= 32:
        v += [0x7fffffff, 0x80000000, 0x80000001, 0xffffffff]
    if bits == 64:
        v += [1 << 32, (1 << 53) + 1, (1 << 63) - 1, 1 << 63, (1 << 63) + 1, 0xfedcba9876543210]
    return list(dict.fromkeys(x for x in v if x <= top))


def uvals(rng, dt, shape, nonzero=False):
    """Random values over the whole range of dt, the special values first."""
    info = np.iinfo(NP[dt])
    x = rng.integers(0, info.max, shape, dtype=NP[dt], endpoint=True)
    flat = x.reshape(-1)
    sp = special(dt)
    k = min(len(sp), flat.size)
    flat[:k] = rng.permutation(np.array(sp, dtype=NP[dt]))[:k]
    if nonzero:
        flat[flat == 0] = 5
    return x


def ints(a):
    """An object array of Python ints (exact arithmetic)."""
    return np.asarray(a).astype(object)


def to_dt(v, dt):
    """Python ints wrapped to the unsigned dtype dt (modulo 2^bits)."""
    m = 1 << (np.dtype(NP[dt]).itemsize * 8)
    f = np.frompyfunc(lambda x: int(x) % m, 1, 1)
    return np.asarray(f(v), dtype=object).astype(NP[dt]) if np.size(v) else np.zeros(np.shape(v), NP[dt])


SHAPES = (((37, 41), (37, 41)), ((6, 1, 5), (4, 1)), ((), (3,)), ((2, 3), ()), ((0, 4), (4,)))
ARITH = {
    "add": lambda a, b: a + b,
    "sub": lambda a, b: a - b,
    "mul": lambda a, b: a * b,
    "div": lambda a, b: a // b,  # unsigned: truncation and floor agree
}


def arith_cases():
    cases = []
    for dt in UINTS:
        for sa, sb in SHAPES:
            for op, fn in ARITH.items():
                name = "%s %s %s&%s" % (op, dt, list(sa), list(sb))

                def build(dt=dt, sa=sa, sb=sb, fn=fn, op=op, name=name):
                    rng = rng_for(name)
                    a, b = uvals(rng, dt, sa), uvals(rng, dt, sb, nonzero=op == "div")
                    A, B = np.broadcast_arrays(ints(a), ints(b))
                    return {"inputs": [("a", a), ("b", b)], "expect": {"y": to_dt(fn(A, B), dt)}}
                cases.append(Case(name, op, build=build))
            for fmod in (0, 1):
                name = "mod fmod=%d %s %s&%s" % (fmod, dt, list(sa), list(sb))

                def build(dt=dt, sa=sa, sb=sb, name=name):
                    rng = rng_for(name)
                    a, b = uvals(rng, dt, sa), uvals(rng, dt, sb, nonzero=True)
                    A, B = np.broadcast_arrays(ints(a), ints(b))
                    return {"inputs": [("a", a), ("b", b)], "expect": {"y": to_dt(A % B, dt)}}
                cases.append(Case(name, "mod", attrs={"fmod": fmod}, build=build))
        # small divisors of large dividends (2^63 / 3 read as int64 would be negative)
        name = "div %s large by small" % dt

        def build(dt=dt, name=name):
            a = np.array(special(dt) * 3, dtype=NP[dt])
            b = np.array(([1, 2, 3, 7, 10] * len(a))[:len(a)], dtype=NP[dt])
            return {"inputs": [("a", a), ("b", b)], "expect": {"y": to_dt(ints(a) // ints(b), dt)}}
        cases.append(Case(name, "div", build=build))
        name = "mod %s large by small" % dt

        def build(dt=dt, name=name):
            a = np.array(special(dt) * 3, dtype=NP[dt])
            b = np.array(([3, 7, 10, 1000, 65535] * len(a))[:len(a)], dtype=NP[dt])
            return {"inputs": [("a", a), ("b", b)], "expect": {"y": to_dt(ints(a) % ints(b), dt)}}
        cases.append(Case(name, "mod", build=build))
        name = "div %s by zero: exit 3 naming the node" % dt
        cases.append(Case(name, "div", inputs=[("a", np.arange(1, 9, dtype=NP[dt])),
                                               ("b", np.array([3, 1, 0, 2, 1, 1, 1, 1], dtype=NP[dt]))],
                          exit_code=3, node_name="divider", stderr_re=[r"divider", r"(?i)zero"]))
    return cases


CMP = {"equal": np.equal, "less": np.less, "less_equal": np.less_equal, "greater": np.greater,
       "greater_equal": np.greater_equal}


def compare_cases():
    cases = []
    for dt in UINTS:
        for sa, sb in SHAPES[:4]:
            for op, fn in CMP.items():
                name = "%s %s %s&%s" % (op, dt, list(sa), list(sb))

                def build(dt=dt, sa=sa, sb=sb, fn=fn, name=name):
                    rng = rng_for(name)
                    a, b = uvals(rng, dt, sa), uvals(rng, dt, sb)
                    if a.size > 4 and b.size == a.size:
                        b.reshape(-1)[::3] = a.reshape(-1)[::3]  # some equal pairs
                    A, B = np.broadcast_arrays(ints(a), ints(b))
                    return {"inputs": [("a", a), ("b", b)], "expect": {"y": fn(A, B).astype(bool)}}
                cases.append(Case(name, op, build=build))
        for op, fn in (("max", max), ("min", min)):
            name = "%s %s three inputs" % (op, dt)

            def build(dt=dt, fn=fn, name=name):
                rng = rng_for(name)
                x = [uvals(rng, dt, (5, 7)), uvals(rng, dt, (7,)), uvals(rng, dt, (1, 1))]
                X = np.broadcast_arrays(*[ints(v) for v in x])
                y = np.frompyfunc(lambda p, q, r: fn(p, q, r), 3, 1)(*X)
                return {"inputs": [("a", x[0]), ("b", x[1]), ("c", x[2])], "expect": {"y": to_dt(y, dt)}}
            cases.append(Case(name, op, build=build))
    return cases


def bit_cases():
    cases = []
    for dt in UINTS:
        bits = np.dtype(NP[dt]).itemsize * 8
        for sa, sb in SHAPES[:4]:
            for op, fn in (("bitwise_and", np.bitwise_and), ("bitwise_or", np.bitwise_or),
                           ("bitwise_xor", np.bitwise_xor)):
                name = "%s %s %s&%s" % (op, dt, list(sa), list(sb))

                def build(dt=dt, sa=sa, sb=sb, fn=fn, name=name):
                    rng = rng_for(name)
                    a, b = uvals(rng, dt, sa), uvals(rng, dt, sb)
                    return {"inputs": [("a", a), ("b", b)], "expect": {"y": fn(a, b).astype(NP[dt])}}
                cases.append(Case(name, op, build=build))
            for direction in ("left", "right"):
                name = "bit_shift %s %s %s&%s" % (direction, dt, list(sa), list(sb))

                def build(dt=dt, sa=sa, sb=sb, direction=direction, name=name, bits=bits):
                    rng = rng_for(name)
                    a = uvals(rng, dt, sa)
                    b = rng.integers(0, bits + 3, sb).astype(NP[dt])
                    flat = b.reshape(-1)
                    sp = [0, bits - 1, bits, 1, bits // 2][:flat.size]
                    flat[:len(sp)] = sp
                    return {"inputs": [("a", a), ("b", b)],
                            "expect": {"y": shift_expect(a, b, NP[dt], direction == "right")}}
                cases.append(Case(name, "bit_shift", attrs={"direction": direction}, build=build))
        # a shift amount above INT64_MAX shifts every bit out
        if dt == "u64":
            a = np.array([1 << 63, 5, (1 << 64) - 1], dtype=np.uint64)
            b = np.array([1 << 63, (1 << 64) - 1, 64], dtype=np.uint64)
            for direction in ("left", "right"):
                cases.append(Case("bit_shift %s u64 by amounts above 2^63" % direction, "bit_shift",
                                  inputs=[("a", a), ("b", b)], attrs={"direction": direction},
                                  expect={"y": np.zeros(3, dtype=np.uint64)}))
        name = "bitwise_not %s" % dt

        def build(dt=dt, name=name):
            x = uvals(rng_for(name), dt, (33, 17))
            return {"inputs": [("x", x)], "expect": {"y": np.invert(x)}}
        cases.append(Case(name, "bitwise_not", build=build))
    return cases


def clip_cases():
    cases = []
    bounds = {"u16": ((-3.5, 100.7), (1000.0, 40000.0)), "u32": ((-3.5, 100.7), (5.0, 4.0e9)),
              "u64": ((-3.5, 100.7), (1000.0, 1.5e19), (2.0 ** 63, 2.0 ** 70))}
    for dt in UINTS:
        for lo, hi in bounds[dt]:
            name = "clip %s min=%g max=%g" % (dt, lo, hi)

            def build(dt=dt, lo=lo, hi=hi, name=name):
                top = int(np.iinfo(NP[dt]).max)
                x = uvals(rng_for(name), dt, (300,))
                b0 = min(max(int(np.ceil(lo)), 0), top)
                b1 = min(max(int(np.floor(hi)), 0), top)
                y = np.frompyfunc(lambda v: min(max(int(v), b0), b1), 1, 1)(ints(x))
                return {"inputs": [("x", x)], "expect": {"y": to_dt(y, dt)}}
            cases.append(Case(name, "clip", attrs={"min": lo, "max": hi}, build=build))
    return cases


def cast_cases():
    cases = []
    others = list(FLOATS) + list(INTS) + ["bool", "f16"]
    pairs = [(s, d) for s in UINTS for d in others + list(UINTS)] + [(s, d) for s in others for d in UINTS]
    for src, dst in pairs:
        name = "cast %s to %s" % (src, dst)

        def build(src=src, dst=dst, name=name):
            rng = rng_for(name)
            x = uvals(rng, src, (40, 25)) if src in UINTS else cast_input(rng, src)
            return {"inputs": [("x", x)], "expect": {"y": cast_expect(x, dst)}}
        cases.append(Case(name, "cast", attrs={"to": dst}, build=build))
    return cases


def pow_cases():
    """A float base with an unsigned exponent (ONNX's Pow T1 takes every numeric type)."""
    cases = []
    for base, exp in (("f32", "u32"), ("f32", "u64"), ("f64", "u16"), ("f64", "u64")):
        name = "pow %s ^ %s" % (base, exp)

        def build(base=base, exp=exp, name=name):
            rng = rng_for(name)
            a = rng.uniform(0.5, 2.0, (6, 7)).astype(NP[base])
            e = rng.integers(0, 12, (7,)).astype(NP[exp])
            with np.errstate(all="ignore"):
                y = np.power(a.astype(np.float64), e.astype(np.float64)).astype(NP[base])
            return {"inputs": [("a", a), ("b", e)], "expect": {"y": y}, "tol": MATH}
        cases.append(Case(name, "pow", build=build))
    return cases


def movement_cases():
    cases = []
    for dt in UINTS:
        def b_transpose(dt=dt, name="transpose %s" % dt):
            x = uvals(rng_for(name), dt, (3, 4, 5))
            return {"inputs": [("x", x)], "expect": {"y": np.transpose(x, (2, 0, 1))}}
        cases.append(Case("transpose %s" % dt, "transpose", attrs={"perm": [2, 0, 1]}, build=b_transpose))

        def b_concat(dt=dt, name="concat %s" % dt):
            rng = rng_for(name)
            a, b = uvals(rng, dt, (2, 3)), uvals(rng, dt, (2, 5))
            return {"inputs": [("a", a), ("b", b)], "expect": {"y": np.concatenate([a, b], axis=1)}}
        cases.append(Case("concat %s" % dt, "concat", attrs={"axis": 1}, build=b_concat))

        def b_gather(dt=dt, name="gather %s" % dt):
            rng = rng_for(name)
            x = uvals(rng, dt, (6, 4))
            ind = np.array([[5, 0], [-1, 2]], dtype=np.int64)
            return {"inputs": [("x", x), ("i", ind)], "expect": {"y": np.take(x, ind, axis=0)}}
        cases.append(Case("gather %s" % dt, "gather", attrs={"axis": 0}, build=b_gather))

        def b_slice(dt=dt, name="slice %s" % dt):
            x = uvals(rng_for(name), dt, (7, 9))
            return {"inputs": [("x", x)], "expect": {"y": x[1:6:2, ::-3]}}
        cases.append(Case("slice %s" % dt, "slice",
                          attrs={"starts": [1, -1], "ends": [6, -100], "axes": [0, 1], "steps": [2, -3]},
                          build=b_slice))

        def b_where(dt=dt, name="where %s" % dt):
            rng = rng_for(name)
            c = rng.integers(0, 2, (4, 1, 6)).astype(bool)
            a, b = uvals(rng, dt, (3, 6)), uvals(rng, dt, (6,))
            return {"inputs": [("c", c), ("a", a), ("b", b)], "expect": {"y": np.where(c, a, b)}}
        cases.append(Case("where %s" % dt, "where", build=b_where))

        def b_reshape(dt=dt, name="reshape %s" % dt):
            x = uvals(rng_for(name), dt, (4, 6))
            return {"inputs": [("x", x)], "expect": {"y": x.reshape(2, 3, 4)}}
        cases.append(Case("reshape %s" % dt, "reshape", attrs={"shape": [2, 3, 4]}, build=b_reshape))
    return cases


def reduce_cases():
    cases = []
    for dt in UINTS:
        for op, fn in (("reduce_max", np.max), ("reduce_min", np.min)):
            for axes in ([1], [0, 1]):
                name = "%s %s axes=%s" % (op, dt, axes)

                def build(dt=dt, fn=fn, axes=axes, name=name):
                    x = uvals(rng_for(name), dt, (5, 300))
                    return {"inputs": [("x", x)], "expect": {"y": fn(x, axis=tuple(axes), keepdims=True)}}
                cases.append(Case(name, op, attrs={"axes": axes}, args=CPU_ONLY, build=build))
        for axes in ([1], [0]):
            name = "reduce_sum %s axes=%s wraps" % (dt, axes)

            def build(dt=dt, axes=axes, name=name):
                x = uvals(rng_for(name), dt, (6, 50))
                return {"inputs": [("x", x)],
                        "expect": {"y": np.sum(x, axis=tuple(axes), keepdims=True, dtype=NP[dt])}}
            cases.append(Case(name, "reduce_sum", attrs={"axes": axes}, args=CPU_ONLY, build=build))
        for op, fn in (("argmax", np.argmax), ("argmin", np.argmin)):
            name = "%s %s axis=1" % (op, dt)

            def build(dt=dt, fn=fn, name=name):
                x = uvals(rng_for(name), dt, (4, 37))
                return {"inputs": [("x", x)], "expect": {"y": fn(x, axis=1).reshape(4, 1).astype(np.int64)}}
            cases.append(Case(name, op, attrs={"axis": 1}, args=CPU_ONLY, build=build))
        name = "cumsum %s axis=1" % dt

        def build(dt=dt, name=name):
            x = uvals(rng_for(name), dt, (3, 40))
            return {"inputs": [("x", x)], "expect": {"y": np.cumsum(x, axis=1, dtype=NP[dt])}}
        cases.append(Case(name, "cumsum", attrs={"axis": 1}, args=CPU_ONLY, build=build))
        name = "topk %s k=5" % dt

        def build(dt=dt, name=name):
            rng = rng_for(name)
            x = rng.permutation(np.array(special(dt) + list(range(100, 120)), dtype=NP[dt]))[None, :]
            order = np.array(sorted(range(x.shape[1]), key=lambda i: -int(x[0, i]))[:5])  # distinct values
            return {"inputs": [("x", x)], "expect": {"values": x[:, order], "indices": order[None, :].astype(np.int64)}}
        cases.append(Case(name, "topk", attrs={"k": 5}, outputs=["values", "indices"], args=CPU_ONLY, build=build))
    return cases


def json_cases():
    cases = []
    vals = {"u16": [0, 1, 65535, 32768], "u32": [0, 4294967295, 2147483648, 7],
            "u64": [0, 4294967296, 9223372036854775808, 18446744073709551615]}
    for dt, v in vals.items():
        tensors = {"x": {"dtype": dt, "shape": [len(v)], "data": v}}
        cases.append(Case("json data %s" % dt, nodes=[{"name": "n0", "op": "identity", "inputs": ["x"],
                                                       "outputs": ["y"]}],
                          tensors=tensors, graph_inputs=[], expect={"y": np.array(v, dtype=NP[dt])}))
    for dt, bad in (("u16", 65536), ("u32", -1), ("u64", -1)):
        tensors = {"x": {"dtype": dt, "shape": [1], "data": [bad]}}
        cases.append(Case("json data %s %d out of range: exit 3" % (dt, bad),
                          nodes=[{"name": "n0", "op": "identity", "inputs": ["x"], "outputs": ["y"]}],
                          tensors=tensors, graph_inputs=[], exit_code=3, stderr_re=[r"out of range for %s" % dt]))
    return cases


def cases():
    return (arith_cases() + compare_cases() + bit_cases() + clip_cases() + cast_cases() + pow_cases()
            + movement_cases() + reduce_cases() + json_cases())
