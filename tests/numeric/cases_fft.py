"""Numeric cases of fft, ifft, rfft and irfft against numpy.fft in float64.

A complex tensor is a real tensor whose last dim is 2 (re, im).  Inputs are exact values
of their dtype (f16 and bf16 values are generated representable); the expectation is
numpy.fft in float64/complex128 on those exact values, rounded once to the output dtype
(f16 directly from float64; bf16, which travels as an f32 .npy, rounded from float64 to 8
significant bits, nearest even).

Tolerance, per element (documented here because test_ops.py's table predates the FFT):
    |got - exp| <= r * eps * |exp| + C * log2(max(n, 2)) * eps * S
where n is the transform length, S the largest modulus of the exact result along the
transformed line (the same for every element of that line, and for its re and im) and eps
that of the output dtype.  An FFT's error is normwise: ||err||_2 <= c eps log2(n) ||y||_2
(Higham, "Accuracy and Stability of Numerical Algorithms", 24.1), and it spreads over the
line, so per element it is of order eps log2(n) times the size of the line's values, not
of the element itself (small outputs next to large ones have large relative errors).
C = 4 (prime lengths go through Rader's or Bluestein's algorithm, an FFT of a larger
padded length plus a convolution, which costs a few more roundings; FFTW's measured error
stays under a quarter of this bound, see FTNUM_STATS=1).  r = 2 covers the final rounding
to the dtype and the norm scaling.  f16/bf16 are computed by the backend in f32 and
rounded: the f32 error is far below the 16-bit eps, but the two roundings (of the f32
result and of the float64 oracle) may land on neighbouring values, so r is 1 ulp of the
16-bit type (f16: 2 eps of f16; bf16: 2^-7 relative, expressed in f32 eps as the output
is an f32 array).  Round trips (rfft -> irfft, fft -> ifft) compare with the original
input, S = the largest modulus of the input along the line, C doubled (two transforms).
"""
import math

import numpy as np

from harness import NP, Case, Tol, rng_for

NORMS = ("backward", "ortho", "forward")
C = 4
BF16_R = 2.0 ** -7 / float(np.finfo(np.float32).eps)  # one bf16 ulp (relative) in f32 eps


def f64(x):
    return np.asarray(x, dtype=np.float64)


def shp(s):
    return "x".join(map(str, s)) or "[]"


def bf16_round(v):
    """float64 -> nearest-even bf16 value (8 significant bits), as float32."""
    m, e = np.frexp(f64(v))
    return np.ldexp(np.rint(np.ldexp(m, 8)), e - 8).astype(np.float32)


def values(rng, dt, shape):
    """Exact inputs of dtype dt (numpy array as written to the .npy)."""
    x = rng.standard_normal(shape)
    if dt == "bf16":
        return bf16_round(x)
    return x.astype(NP[dt])


def round_to(y, dt):
    if dt == "bf16":
        return bf16_round(y)
    return f64(y).astype(NP[dt])


def npy_dtype(dt):
    return np.float32 if dt == "bf16" else NP[dt]


def to_c(a):
    a = f64(a)
    return a[..., 0] + 1j * a[..., 1]


def from_c(z):
    return np.stack([z.real, z.imag], axis=-1)


def line_max(y, axis):
    """Largest modulus along `axis` of y (complex or real), kept as a size-1 axis."""
    return np.max(np.abs(y), axis=axis, keepdims=True) if y.shape[axis] else np.zeros(y.shape)


def tol_for(dt, n, scale, c=C):
    a = c * math.log2(max(n, 2))
    if dt == "bf16":
        return Tol(r=BF16_R + 2, a=a, scale=scale)
    return Tol(r=2, a=a, scale=scale)


def oracle(op, x, axis, norm, n=None):
    """(expected float64 array in the layout ftrun writes, transform length, scale)."""
    if op in ("fft", "ifft"):
        z = to_c(x)
        y = (np.fft.fft if op == "fft" else np.fft.ifft)(z, axis=axis, norm=norm)
        return from_c(y), z.shape[axis], from_c(np.broadcast_to(line_max(y, axis), y.shape))[..., :1]
    if op == "rfft":
        y = np.fft.rfft(f64(x), axis=axis, norm=norm)
        return from_c(y), x.shape[axis], from_c(np.broadcast_to(line_max(y, axis), y.shape))[..., :1]
    z = to_c(x)
    y = np.fft.irfft(z, n=n, axis=axis, norm=norm)
    return y, y.shape[axis], np.broadcast_to(line_max(y, axis), y.shape)


def fft_case(op, dt, shape, axis=-1, norm="backward", n=None, label="", args=(), name=None):
    """shape: the logical shape (a trailing 2 is added for complex inputs)."""
    cplx = op != "rfft"
    attrs = {}
    if axis != -1:
        attrs["axis"] = axis
    if norm != "backward":
        attrs["norm"] = norm
    if n is not None:
        attrs["n"] = n
    if name is None:
        name = "%s %s %s axis=%d norm=%s%s%s" % (op, dt, shp(shape), axis, norm,
                                                "" if n is None else " n=%d" % n, label)

    def build():
        rng = rng_for(name)
        x = values(rng, dt, tuple(shape) + ((2,) if cplx else ()))
        y, tn, scale = oracle(op, x, axis, norm, n)
        return {"inputs": [("x", x, dt)], "expect": {"y": round_to(y, dt)}, "tol": tol_for(dt, tn, scale)}
    return Case(name, op, attrs=attrs or None, args=args, build=build)


def lengths_cases():
    cases = []
    for dt in ("f32", "f64"):
        for n in (1, 2, 7, 12, 97, 1000):
            for op in ("fft", "ifft", "rfft"):
                cases.append(fft_case(op, dt, (3, n)))
            # irfft: m bins, default n = 2*(m-1) (m = 1 needs an explicit n)
            cases.append(fft_case("irfft", dt, (3, n // 2 + 1), n=None if n >= 2 else 1))
    return cases


def norm_cases():
    cases = []
    for dt in ("f32", "f64"):
        for norm in ("ortho", "forward"):
            for op, shape in (("fft", (5, 12)), ("ifft", (5, 97)), ("rfft", (5, 30)), ("irfft", (5, 16))):
                cases.append(fft_case(op, dt, shape, norm=norm))
            cases.append(fft_case("irfft", dt, (4, 9), norm=norm, n=15))
    return cases


def axis_cases():
    """Every axis of a 3-D (logical) tensor, positive and negative."""
    cases = []
    shape = (4, 6, 5)
    for op in ("fft", "ifft", "rfft", "irfft"):
        for axis in (0, 1, 2, -1, -2, -3):
            dt = "f64" if axis % 2 == 0 else "f32"
            norm = NORMS[axis % 3]
            cases.append(fft_case(op, dt, shape, axis=axis, norm=norm))
    # irfft with an explicit odd n along a middle axis
    cases.append(fft_case("irfft", "f64", (3, 5, 4), axis=1, n=9))
    cases.append(fft_case("irfft", "f32", (3, 5, 4), axis=-3, n=7, norm="ortho"))
    return cases


def irfft_n_cases():
    cases = []
    for dt in ("f32", "f64"):
        m = 9  # default n = 16
        for n in (16, 17, 15, 5, 1, 2, 40, 41):  # equal, odd, smaller (truncates), larger (pads)
            cases.append(fft_case("irfft", dt, (3, m), n=n))
        cases.append(fft_case("irfft", dt, (3, 2), label=" (default n=2)"))
        cases.append(fft_case("irfft", dt, (3, 1), n=6, label=" (m=1 padded)"))
    # every bin is padding: zeros (numpy.fft.irfft(a[:, :0], n=4) is all zeros)
    cases.append(fft_case("irfft", "f64", (3, 0), n=4, label=" (no bins)"))
    return cases


def batch_cases():
    cases = []
    for op in ("fft", "ifft", "rfft"):
        cases.append(fft_case(op, "f32", (256, 512)))
    cases.append(fft_case("irfft", "f32", (256, 257)))
    cases.append(fft_case("rfft", "f32", (256, 512), axis=0, label=" leading axis"))
    cases.append(fft_case("fft", "f64", (64, 1000, 3), axis=1, norm="ortho"))
    # threads: uneven splits of the batch and of the scaling loop, non-last axis too
    for c in (fft_case("rfft", "f32", (256, 512), label=" --threads 3", args=["--threads", "3"]),
              fft_case("fft", "f32", (100, 97, 7), axis=1, norm="forward", label=" --threads 3",
                       args=["--threads", "3"]),
              fft_case("irfft", "f64", (37, 300, 5), axis=-2, n=599, label=" --threads 3",
                       args=["--threads", "3"]),
              fft_case("ifft", "f32", (513, 128), label=" --threads 2", args=["--threads", "2"])):
        cases.append(c)
    return cases


def half_cases():
    cases = []
    for dt in ("f16", "bf16"):
        for op, shape, n in (("fft", (6, 12), None), ("ifft", (6, 97), None), ("rfft", (6, 64), None),
                             ("rfft", (5, 7), None), ("irfft", (6, 33), None), ("irfft", (6, 9), 11)):
            cases.append(fft_case(op, dt, shape, n=n))
        cases.append(fft_case("rfft", dt, (4, 6, 5), axis=1, norm="ortho"))
        cases.append(fft_case("fft", dt, (4, 6, 5), axis=0, norm="forward"))
    return cases


def empty_cases():
    """Empty batches (a 0 dim other than the transformed one) are empty results."""
    cases = []
    for op, shape, axis in (("fft", (0, 5), -1), ("ifft", (4, 0, 3), 0), ("rfft", (0, 8), 1),
                            ("rfft", (3, 0), 0), ("irfft", (0, 5), -1)):
        cases.append(fft_case(op, "f32", shape, axis=axis, label=" empty batch"))
    return cases


def roundtrip_cases():
    cases = []
    for dt, shape, axis in (("f64", (4, 12), -1), ("f64", (4, 13), -1), ("f32", (97, 6), 0),
                            ("f32", (8, 1000), 1), ("f32", (3, 5, 7), 1)):
        for norm in ("backward", "ortho"):
            name = "roundtrip rfft->irfft %s %s axis=%d norm=%s" % (dt, shp(shape), axis, norm)

            def build(dt=dt, shape=shape, axis=axis, norm=norm, name=name):
                x = values(rng_for(name), dt, shape)
                scale = np.broadcast_to(line_max(f64(x), axis), x.shape)
                return {"inputs": [("x", x, dt)], "expect": {"y": x},
                        "tol": tol_for(dt, shape[axis], scale, c=2 * C)}
            nodes = [{"name": "fwd", "op": "rfft", "inputs": ["x"], "outputs": ["X"],
                      "attrs": {"axis": axis, "norm": norm}},
                     {"name": "inv", "op": "irfft", "inputs": ["X"], "outputs": ["y"],
                      "attrs": {"axis": axis, "norm": norm, "n": shape[axis]}}]
            cases.append(Case(name, nodes=nodes, outputs=["y"], build=build))
    for dt, shape, axis, norm in (("f64", (5, 97), -1, "forward"), ("f32", (6, 12, 4), 1, "backward")):
        name = "roundtrip fft->ifft %s %s axis=%d norm=%s" % (dt, shp(shape), axis, norm)

        def build(dt=dt, shape=shape, axis=axis, name=name):
            x = values(rng_for(name), dt, tuple(shape) + (2,))
            m = line_max(to_c(x), axis)
            scale = np.broadcast_to(m[..., None], x.shape)
            return {"inputs": [("x", x, dt)], "expect": {"y": x}, "tol": tol_for(dt, shape[axis], scale, c=2 * C)}
        nodes = [{"name": "fwd", "op": "fft", "inputs": ["x"], "outputs": ["X"], "attrs": {"axis": axis, "norm": norm}},
                 {"name": "inv", "op": "ifft", "inputs": ["X"], "outputs": ["y"], "attrs": {"axis": axis, "norm": norm}}]
        cases.append(Case(name, nodes=nodes, outputs=["y"], build=build))
    return cases


def many_plans_case():
    """40 irfft nodes of different output lengths in one graph, run 3 times: more plans
    than the kernel's plan cache holds, so plans are evicted and re-made between runs."""
    name = "irfft f32 40 nodes n=1..40 (plan cache eviction) -w 1 -n 2"
    outs = ["y%d" % n for n in range(1, 41)]

    def build():
        x = values(rng_for(name), "f32", (3, 11, 2))
        z = to_c(x)
        exp, tol = {}, {}
        for n, o in zip(range(1, 41), outs):
            y = np.fft.irfft(z, n=n, axis=-1)
            exp[o] = y.astype(np.float32)
            tol[o] = tol_for("f32", n, np.broadcast_to(line_max(y, -1), y.shape))
        return {"inputs": [("x", x)], "expect": exp, "tol": tol}
    nodes = [{"name": "inv%d" % n, "op": "irfft", "inputs": ["x"], "outputs": [o], "attrs": {"n": n}}
             for n, o in zip(range(1, 41), outs)]
    return Case(name, nodes=nodes, outputs=outs, args=["-w", "1", "-n", "2"], build=build)


def error_cases():
    """Graphs that must be refused before anything runs (exit 3, naming node and values)."""
    z = np.zeros
    specs = [
        ("fft input not complex (last dim 3)", "fft", z((4, 3), np.float32), None, [r"not complex", r"\[4,3\]"]),
        ("ifft input is a complex scalar [2]", "ifft", z((2,), np.float32), None, [r"axis", r"scalar"]),
        ("irfft input not complex (last dim 5)", "irfft", z((2, 5), np.float64), None, [r"not complex"]),
        ("fft axis=1 out of range for logical rank 1", "fft", z((4, 2), np.float32), {"axis": 1},
         [r"'axis' = 1", r"\[-1, 0\]"]),
        ("fft axis=-3 out of range for logical rank 2", "fft", z((3, 4, 2), np.float32), {"axis": -3},
         [r"'axis' = -3"]),
        ("rfft axis=2 out of range for rank 2", "rfft", z((3, 4), np.float32), {"axis": 2}, [r"'axis' = 2"]),
        ("rfft of a scalar", "rfft", np.float32(1.5), None, [r"scalar"]),
        ("rfft unknown norm 'none'", "rfft", z((3, 4), np.float32), {"norm": "none"}, [r"'norm'", r"none"]),
        ("fft unknown norm 'Ortho'", "fft", z((3, 2), np.float32), {"norm": "Ortho"}, [r"Ortho"]),
        ("irfft n=0", "irfft", z((3, 4, 2), np.float32), {"n": 0}, [r"'n' = 0"]),
        ("irfft n=-4", "irfft", z((3, 4, 2), np.float32), {"n": -4}, [r"'n' = -4"]),
        ("irfft default n with one bin", "irfft", z((3, 1, 2), np.float32), None, [r"default", r"'n'"]),
        ("irfft default n with no bins", "irfft", z((3, 0, 2), np.float32), None, [r"default"]),
        ("fft over a length-0 axis", "fft", z((3, 0, 2), np.float32), None, [r"length 0"]),
        ("rfft over a length-0 axis", "rfft", z((3, 0), np.float64), None, [r"length 0"]),
        ("ifft over a length-0 axis 0", "ifft", z((0, 4, 2), np.float32), {"axis": 0}, [r"length 0"]),
    ]
    cases = []
    for label, op, x, attrs, res in specs:
        cases.append(Case(label + ": exit 3", op, attrs=attrs, inputs=[("x", x)], exit_code=3, node_name="spectrum",
                          stderr_re=[r"spectrum", r"\(%s\)" % op] + res))
    return cases


def cases():
    return (lengths_cases() + norm_cases() + axis_cases() + irfft_n_cases() + batch_cases() + half_cases()
            + empty_cases() + roundtrip_cases() + [many_plans_case()] + error_cases())
