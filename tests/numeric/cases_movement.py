"""Numeric cases of the shape and data-movement ops (exact, every dtype), of the
data-level errors (integer division by zero, index out of range) and of the "init"
value sources (checked against philox.py, an independent Philox-4x32-10)."""
import numpy as np

import philox
from cases_elementwise import random_of
from harness import ALL, EXACT, NP, Case, Tol, rng_for

INT64_MAX = 2 ** 63 - 1


def shp(s):
    return "x".join(map(str, s)) or "[]"


def _dtype_cycle():
    while True:
        for dt in ALL:
            yield dt


def movement(op, variants, all_dtypes_first=True):
    """variants: (label, input shapes, attrs, oracle(list of arrays) -> dict of outputs).
    The first variant runs in every dtype, the others in one dtype each (round robin)."""
    cases, cyc = [], _dtype_cycle()
    for vi, (label, shapes, attrs, fn) in enumerate(variants):
        dts = ALL if (vi == 0 and all_dtypes_first) else (next(cyc),)
        for dt in dts:
            name = "%s %s %s %s" % (op, dt, label, "&".join(shp(s) for s in shapes))

            def build(dt=dt, shapes=shapes, fn=fn, name=name):
                rng = rng_for(name)
                xs = [random_of(rng, dt, s) for s in shapes]
                outs = fn(xs)
                return {"inputs": [("x%d" % i, x) for i, x in enumerate(xs)],
                        "expect": {k: np.array(v, order="C") for k, v in outs.items()}}
            probe = fn([np.zeros(s, np.float32) for s in shapes])  # output names only
            cases.append(Case(name, op, attrs=attrs, outputs=list(probe), build=build))
    return cases


def onnx_reshape(x, shape, allowzero=0):
    s = [x.shape[i] if (d == 0 and not allowzero) else d for i, d in enumerate(shape)]
    return {"y": x.reshape(s)}


def onnx_slice(x, starts, ends, axes=None, steps=None):
    axes = list(range(len(starts))) if axes is None else axes
    steps = [1] * len(starts) if steps is None else steps
    idx = [slice(None)] * x.ndim
    for s, e, a, st in zip(starts, ends, axes, steps):
        a %= x.ndim
        dim = x.shape[a]
        s = s + dim if s < 0 else s
        e = e + dim if e < 0 else e
        if st > 0:
            s, e = min(max(s, 0), dim), min(max(e, 0), dim)
        else:
            s, e = min(max(s, 0), dim - 1), min(max(e, -1), dim - 1)
        idx[a] = slice(s, None if e < 0 else e, st)
    return {"y": x[tuple(idx)]}


def onnx_pad(x, pads, mode="constant", value=0.0, axes=None):
    r = x.ndim
    axes = list(range(r)) if axes is None else [a % r for a in axes]
    n = len(axes)
    width = [[0, 0] for _ in range(r)]
    for i, a in enumerate(axes):
        width[a] = [pads[i], pads[i + n]]
    crop = tuple(slice(-b if b < 0 else 0, (x.shape[a] + e) if e < 0 else None) for a, (b, e) in enumerate(width))
    x = x[crop]
    pw = [(max(b, 0), max(e, 0)) for b, e in width]
    if mode == "constant":
        cv = np.array(value).astype(x.dtype)
        return {"y": np.pad(x, pw, mode="constant", constant_values=cv)}
    if mode == "wrap" and any(b > n or e > n for (b, e), n in zip(pw, x.shape)):
        # ONNX's torus: the axis repeats periodically however far the pads
        # reach (numpy.pad, right for pads up to the axis size, then re-wraps
        # its own padding and breaks the period)
        for a, (b, e) in enumerate(pw):
            x = np.take(x, np.arange(-b, x.shape[a] + e) % x.shape[a], axis=a)
        return {"y": x}
    return {"y": np.pad(x, pw, mode={"reflect": "reflect", "edge": "edge", "wrap": "wrap"}[mode])}


def split_expect(x, axis, sizes):
    outs, pos = {}, 0
    for i, s in enumerate(sizes):
        outs["y%d" % i] = np.take(x, range(pos, pos + s), axis=axis)
        pos += s
    return outs


def movement_cases():
    c = []
    c += movement("reshape", [
        ("shape=[4,-1]", [(2, 3, 4)], {"shape": [4, -1]}, lambda x: onnx_reshape(x[0], [4, -1])),
        ("shape=[0,-1]", [(2, 3, 4)], {"shape": [0, -1]}, lambda x: onnx_reshape(x[0], [0, -1])),
        ("shape=[-1]", [(2, 3, 4)], {"shape": [-1]}, lambda x: onnx_reshape(x[0], [-1])),
        ("shape=[2,0,2,2]", [(2, 3, 4)], {"shape": [2, 0, 2, 2]}, lambda x: onnx_reshape(x[0], [2, 0, 2, 2])),
        ("shape=[5,0] allowzero=1", [(0, 5)], {"shape": [5, 0], "allowzero": 1},
         lambda x: onnx_reshape(x[0], [5, 0], 1)),
        ("shape=[2,-1] empty", [(2, 0, 3)], {"shape": [2, -1]}, lambda x: onnx_reshape(x[0], [2, -1])),
        ("shape=[1] from scalar", [()], {"shape": [1]}, lambda x: onnx_reshape(x[0], [1])),
        ("shape=[] to scalar", [(1, 1)], {"shape": []}, lambda x: onnx_reshape(x[0], [])),
        ("shape=[512,512]", [(256, 1024)], {"shape": [512, 512]}, lambda x: onnx_reshape(x[0], [512, 512])),
    ])
    c += movement("transpose", [
        ("default perm", [(2, 3, 4)], None, lambda x: {"y": x[0].T}),
        ("perm=[0,2,1]", [(2, 3, 4)], {"perm": [0, 2, 1]}, lambda x: {"y": x[0].transpose(0, 2, 1)}),
        ("perm=[2,0,1]", [(2, 3, 4)], {"perm": [2, 0, 1]}, lambda x: {"y": x[0].transpose(2, 0, 1)}),
        ("perm=[0,2,3,1] NCHW->NHWC", [(2, 8, 5, 7)], {"perm": [0, 2, 3, 1]},
         lambda x: {"y": x[0].transpose(0, 2, 3, 1)}),
        ("default perm big", [(256, 1024)], None, lambda x: {"y": x[0].T}),
        ("perm=[1,0] big f32", [(1000, 333)], {"perm": [1, 0]}, lambda x: {"y": x[0].T}),
        ("scalar", [()], None, lambda x: {"y": x[0]}),
        ("empty perm=[2,0,1]", [(0, 3, 2)], {"perm": [2, 0, 1]}, lambda x: {"y": x[0].transpose(2, 0, 1)}),
        ("rank 6", [(2, 1, 3, 2, 2, 3)], {"perm": [5, 3, 1, 0, 2, 4]},
         lambda x: {"y": x[0].transpose(5, 3, 1, 0, 2, 4)}),
    ])

    def flat(x, axis):
        a = axis + x.ndim if axis < 0 else axis
        return {"y": x.reshape(int(np.prod(x.shape[:a])), int(np.prod(x.shape[a:])))}
    c += movement("flatten", [("axis=%d" % a, [(2, 3, 4, 5)], {"axis": a}, lambda x, a=a: flat(x[0], a))
                              for a in (1, 0, 2, -1, 4)] +
                  [("default", [(2, 3, 4)], None, lambda x: flat(x[0], 1)),
                   ("empty axis=1", [(0, 3, 4)], {"axis": 1}, lambda x: flat(x[0], 1))])
    c += movement("squeeze", [
        ("no axes", [(1, 3, 1, 2)], None, lambda x: {"y": np.squeeze(x[0])}),
        ("axes=[0]", [(1, 3, 1, 2)], {"axes": [0]}, lambda x: {"y": np.squeeze(x[0], 0)}),
        ("axes=[-2]", [(1, 3, 1, 2)], {"axes": [-2]}, lambda x: {"y": np.squeeze(x[0], 2)}),
        ("axes=[0,2]", [(1, 3, 1, 2)], {"axes": [0, 2]}, lambda x: {"y": np.squeeze(x[0], (0, 2))}),
        ("to scalar", [(1,)], None, lambda x: {"y": np.squeeze(x[0])}),
        ("empty", [(0, 1, 4)], {"axes": [1]}, lambda x: {"y": np.squeeze(x[0], 1)}),
    ])
    c += movement("unsqueeze", [
        ("axes=[0]", [(3, 4)], {"axes": [0]}, lambda x: {"y": np.expand_dims(x[0], 0)}),
        ("axes=[-1]", [(3, 4)], {"axes": [-1]}, lambda x: {"y": np.expand_dims(x[0], -1)}),
        ("axes=[0,3]", [(3, 4)], {"axes": [0, 3]}, lambda x: {"y": np.expand_dims(x[0], (0, 3))}),
        ("axes=[1,-1]", [(3, 4)], {"axes": [1, -1]}, lambda x: {"y": np.expand_dims(x[0], (1, 3))}),
        ("scalar axes=[0]", [()], {"axes": [0]}, lambda x: {"y": np.expand_dims(x[0], 0)}),
        ("empty axes=[1]", [(0, 2)], {"axes": [1]}, lambda x: {"y": np.expand_dims(x[0], 1)}),
    ])

    def expand(x, shape):
        return {"y": np.broadcast_to(x, np.broadcast_shapes(x.shape, tuple(shape))).copy()}
    c += movement("expand", [("shape=%s" % s, [xs], {"shape": s}, lambda x, s=s: expand(x[0], s))
                             for xs, s in (((3, 1), [2, 1, 6]), ((2, 3), [3]), ((3, 4), [1, 1]), ((), [2, 3]),
                                           ((1,), [0]), ((256, 1), [256, 1024]), ((1, 4, 1), [3, 1, 5]))])
    c += movement("tile", [("repeats=%s" % r, [xs], {"repeats": r}, lambda x, r=r: {"y": np.tile(x[0], r)})
                           for xs, r in (((2, 3), [2, 3]), ((2, 3, 4), [1, 0, 2]), ((1, 1024), [256, 1]),
                                         ((3,), [4]), ((0, 2), [3, 2]), ((2, 1, 2), [1, 3, 1]))])
    c += movement("concat", [
        ("axis=0 with an empty input", [(2, 3), (4, 3), (0, 3)], {"axis": 0}, lambda x: {"y": np.concatenate(x, 0)}),
        ("axis=-1", [(2, 3), (2, 5)], {"axis": -1}, lambda x: {"y": np.concatenate(x, -1)}),
        ("axis=1 three inputs", [(2, 1, 4), (2, 3, 4), (2, 2, 4)], {"axis": 1}, lambda x: {"y": np.concatenate(x, 1)}),
        ("one input", [(3, 2)], {"axis": 1}, lambda x: {"y": x[0].copy()}),
        ("1-D", [(5,), (0,), (7,)], {"axis": 0}, lambda x: {"y": np.concatenate(x, 0)}),
        ("big axis=1", [(256, 512), (256, 512)], {"axis": 1}, lambda x: {"y": np.concatenate(x, 1)}),
        ("all empty", [(0, 2), (0, 2)], {"axis": 0}, lambda x: {"y": np.concatenate(x, 0)}),
        ("axis=2 rank 4", [(2, 3, 1, 2), (2, 3, 4, 2)], {"axis": 2}, lambda x: {"y": np.concatenate(x, 2)}),
    ])
    c += movement("split", [
        ("split=[2,3,5]", [(10, 4)], {"split": [2, 3, 5]}, lambda x: split_expect(x[0], 0, [2, 3, 5])),
        ("num_outputs=3 (4,4,2)", [(10, 4)], {"num_outputs": 3}, lambda x: split_expect(x[0], 0, [4, 4, 2])),
        ("num_outputs=2 axis=-1", [(3, 10)], {"num_outputs": 2, "axis": -1}, lambda x: split_expect(x[0], 1, [5, 5])),
        ("equal by output count axis=1", [(3, 8)], {"axis": 1}, lambda x: split_expect(x[0], 1, [2, 2, 2, 2])),
        ("split=[0,4] axis=1", [(2, 4, 3)], {"axis": 1, "split": [0, 4]}, lambda x: split_expect(x[0], 1, [0, 4])),
        ("split=[1,1] empty rows", [(0, 2)], {"axis": 1, "split": [1, 1]}, lambda x: split_expect(x[0], 1, [1, 1])),
        ("big split=[100,924] axis=1", [(256, 1024)], {"axis": 1, "split": [100, 924]},
         lambda x: split_expect(x[0], 1, [100, 924])),
    ])
    sl = [("starts=[1] ends=[8] axes=[0]", [1], [8], [0], None),
          ("negative steps", [8, 10], [1, 2], [0, 1], [-2, -3]),
          ("clamped starts=[-100] ends=[100] axes=[-1]", [-100], [100], [-1], None),
          ("no axes, ends=INT64_MAX", [0, 2, 1], [INT64_MAX, -1, 4], None, None),
          ("reverse whole axis ends=-INT64_MAX", [-1], [-INT64_MAX], [1], [-1]),
          ("reverse clamped start=100 ends=-100", [100], [-100], [0], [-1]),
          ("empty result", [5], [2], [0], None),
          ("steps=[3] axis 1", [1], [12], [1], [3]),
          ("three axes", [1, -1, 0], [-1, 0, 5], [2, 1, 0], [2, -4, 2])]
    c += movement("slice", [(label, [(10, 12, 5)],
                             dict({"starts": s, "ends": e}, **({"axes": a} if a is not None else {}),
                                  **({"steps": st} if st is not None else {})),
                             lambda x, s=s, e=e, a=a, st=st: onnx_slice(x[0], s, e, a, st))
                            for label, s, e, a, st in sl] +
                  [("big rows 10:250:3", [(256, 1024)], {"starts": [10], "ends": [250], "steps": [3], "axes": [0]},
                    lambda x: onnx_slice(x[0], [10], [250], [0], [3])),
                   ("empty input", [(0, 6)], {"starts": [1], "ends": [4], "axes": [1]},
                    lambda x: onnx_slice(x[0], [1], [4], [1]))])
    pads = [("constant 0", [(3, 4)], {"pads": [1, 2, 0, 3]}, lambda x: onnx_pad(x[0], [1, 2, 0, 3])),
            ("reflect", [(4, 5)], {"pads": [2, 1, 3, 4], "mode": "reflect"},
             lambda x: onnx_pad(x[0], [2, 1, 3, 4], "reflect")),
            ("edge", [(3, 4)], {"pads": [2, 0, 1, 3], "mode": "edge"}, lambda x: onnx_pad(x[0], [2, 0, 1, 3], "edge")),
            ("negative pads crop", [(5, 6)], {"pads": [-1, 2, -2, 1]}, lambda x: onnx_pad(x[0], [-1, 2, -2, 1])),
            ("edge negative pads", [(5, 6)], {"pads": [0, -2, -1, 0], "mode": "edge"},
             lambda x: onnx_pad(x[0], [0, -2, -1, 0], "edge")),
            ("wrap", [(3, 4)], {"pads": [2, 1, 1, 3], "mode": "wrap"}, lambda x: onnx_pad(x[0], [2, 1, 1, 3], "wrap")),
            ("wrap pads larger than the axis", [(2, 3)], {"pads": [5, 7, 3, 4], "mode": "wrap"},
             lambda x: onnx_pad(x[0], [5, 7, 3, 4], "wrap")),
            ("wrap negative pads", [(5, 6)], {"pads": [-1, 4, 2, -3], "mode": "wrap"},
             lambda x: onnx_pad(x[0], [-1, 4, 2, -3], "wrap")),
            ("NCHW spatial wrap", [(2, 3, 6, 5)], {"pads": [0, 0, 2, 6, 0, 0, 7, 1], "mode": "wrap"},
             lambda x: onnx_pad(x[0], [0, 0, 2, 6, 0, 0, 7, 1], "wrap")),
            ("axes=[-1]", [(2, 3, 4)], {"pads": [1, 2], "axes": [-1]}, lambda x: onnx_pad(x[0], [1, 2], axes=[-1])),
            ("NCHW spatial reflect", [(2, 3, 6, 5)], {"pads": [0, 0, 2, 1, 0, 0, 1, 2], "mode": "reflect"},
             lambda x: onnx_pad(x[0], [0, 0, 2, 1, 0, 0, 1, 2], "reflect")),
            ("empty input constant", [(0, 3)], {"pads": [1, 0, 1, 0]}, lambda x: onnx_pad(x[0], [1, 0, 1, 0])),
            ("big constant", [(256, 1024)], {"pads": [1, 1, 1, 1]}, lambda x: onnx_pad(x[0], [1, 1, 1, 1]))]
    c += movement("pad", pads)
    for dt, value in (("f32", 1.5), ("f64", -2.25), ("i32", 7.0), ("u8", 200.0), ("bool", 1.0), ("f16", 0.5)):
        name = "pad %s constant value=%g" % (dt, value)

        def build(dt=dt, value=value, name=name):
            x = random_of(rng_for(name), dt, (3, 2))
            return {"inputs": [("x", x)], "expect": onnx_pad(x, [1, 0, 2, 1], "constant", value)}
        c.append(Case(name, "pad", attrs={"pads": [1, 0, 2, 1], "value": value}, build=build))
    return c


def gather_cases():
    c = []
    specs = [("axis=0 2-D negative indices", (5, 4, 3), [[0, -1], [2, 4]], "i64", 0),
             ("axis=1 i32 indices", (5, 4, 3), [-4, 3, 0, 3], "i32", 1),
             ("axis=-1 scalar index", (5, 4, 3), 2, "i64", -1),
             ("axis=0 empty indices", (5, 4, 3), np.zeros((0,), np.int64), "i64", 0),
             ("axis=1 empty data rows", (0, 4), [1, -1], "i32", 1),
             ("scalar index of 1-D", (6,), -6, "i32", 0)]
    for label, dshape, idx, idt, axis in specs:
        for dt in (("f32", "i8", "bool", "f16", "i64", "f64", "u8", "i16", "i32") if label.startswith("axis=0 2-D") else ("f32",)):
            name = "gather %s %s" % (dt, label)

            def build(dt=dt, dshape=dshape, idx=idx, idt=idt, axis=axis, name=name):
                data = random_of(rng_for(name), dt, dshape)
                ind = np.asarray(idx, dtype=NP[idt])
                return {"inputs": [("data", data), ("indices", ind)], "expect": {"y": np.take(data, ind, axis=axis)}}
            c.append(Case(name, "gather", attrs={"axis": axis}, build=build))

    def build_emb():
        rng = rng_for("gather embedding")
        data = rng.standard_normal((1000, 64)).astype(np.float32)
        ind = rng.integers(-1000, 1000, (32, 16)).astype(np.int64)
        return {"inputs": [("data", data), ("indices", ind)], "expect": {"y": np.take(data, ind, axis=0)}}
    c.append(Case("gather f32 embedding table 1000x64 indices 32x16", "gather", attrs={"axis": 0}, build=build_emb))
    ge = [("axis=1 negative indices", (4, 5), (4, 3), 1, "i64"), ("axis=0", (4, 5), (2, 5), 0, "i32"),
          ("axis=-1 3-D", (3, 4, 6), (3, 4, 2), -1, "i64"), ("axis=0 empty indices", (3, 4), (0, 4), 0, "i64"),
          ("axis=1 larger index tensor", (2, 3), (2, 7), 1, "i32")]
    for label, dshape, ishape, axis, idt in ge:
        for dt in (("f32", "i8", "bool", "f64", "i64") if axis == 1 and label.startswith("axis=1 neg") else ("f32",)):
            name = "gather_elements %s %s" % (dt, label)

            def build(dt=dt, dshape=dshape, ishape=ishape, axis=axis, idt=idt, name=name):
                rng = rng_for(name)
                data = random_of(rng, dt, dshape)
                n = dshape[axis]
                ind = rng.integers(-n, n, ishape).astype(NP[idt])
                y = np.take_along_axis(data, np.where(ind < 0, ind + n, ind).astype(np.int64), axis=axis)
                return {"inputs": [("data", data), ("indices", ind)], "expect": {"y": y}}
            c.append(Case(name, "gather_elements", attrs={"axis": axis}, build=build))
    return c


def error_cases():
    c = []
    for op, dt, attrs in (("div", "i32", None), ("div", "i8", None), ("mod", "i64", {"fmod": 0}),
                          ("mod", "u8", {"fmod": 1}), ("div", "u8", None)):
        name = "%s %s by zero: exit 3 naming the node" % (op if not attrs else "mod fmod=%d" % attrs["fmod"], dt)
        a = np.arange(1, 13, dtype=NP[dt]).reshape(3, 4)
        b = np.array([3, 1, 0, 2], dtype=NP[dt])
        c.append(Case(name, op, attrs=attrs, inputs=[("a", a), ("b", b)], exit_code=3, node_name="divider",
                      stderr_re=[r"divider", r"(?i)zero"]))
    for label, op, data, ind, axis in (
            ("gather index 5 of dim 5", "gather", np.arange(10.0, dtype=np.float32).reshape(5, 2), [1, 5], 0),
            ("gather index -6 of dim 5", "gather", np.arange(10.0, dtype=np.float32).reshape(5, 2), [-6], 0),
            ("gather i32 index 2 of dim 2 axis=1", "gather", np.arange(10, dtype=np.int64).reshape(5, 2), [0, 2], 1),
            ("gather_elements index 3 of dim 3", "gather_elements", np.zeros((2, 3), np.float32), [[0, 1, 3], [0, 0, 0]], 1)):
        ind = np.asarray(ind, dtype=np.int32 if "i32" in label else np.int64)
        c.append(Case(label + " out of range: exit 3 naming the node", op, attrs={"axis": axis},
                      inputs=[("data", data), ("indices", ind)], exit_code=3, node_name="lookup",
                      stderr_re=[r"lookup"]))
    for mode in ("wrap", "edge"):
        c.append(Case("pad %s of an empty axis: exit 3 naming the node and the axis" % mode, "pad",
                      attrs={"pads": [0, 1, 0, 0], "mode": mode}, inputs=[("x", np.zeros((2, 0), np.float32))],
                      exit_code=3, node_name="padder", stderr_re=[r"padder", r"mode '%s' cannot pad axis 1" % mode]))
    return c


# ---------------------------------------------------------------- init value sources

def _init_expect(spec, dt, shape, seed):
    n = int(np.prod(shape))
    v = philox.init_values_f64(spec, n, seed)
    d = NP[dt]
    if d == np.bool_:
        y = v != 0
    elif d.kind in "iu":
        y = np.trunc(v).astype(d)  # decisions: truncate toward zero
    else:
        y = v.astype(d)
    return y.reshape(shape)


def init_case(label, tensors, args=(), tol=EXACT):
    """tensors: name -> (dtype, shape, init spec, seed used for the expectation)."""
    outs = ["y_" + k for k in tensors]
    decl = {}
    for k, (dt, shape, spec, _seed) in tensors.items():
        decl[k] = {"dtype": dt, "shape": list(shape), "init": spec}
    nodes = [{"name": "id_" + k, "op": "identity", "inputs": [k], "outputs": ["y_" + k]} for k in tensors]

    def build():
        exp = {}
        for k, (dt, shape, spec, seed) in tensors.items():
            body = {kk: vv for kk, vv in spec.items() if kk != "seed"}
            exp["y_" + k] = _init_expect(body, dt, shape, seed)
        return {"expect": exp}
    return Case("init " + label, tensors=decl, nodes=nodes, outputs=outs, graph_inputs=[], args=args, tol=tol,
                build=build)


def init_cases():
    U = {"uniform": {"low": -2.0, "high": 3.0}, "seed": 7}
    G = {"normal": {"mean": 1.0, "std": 2.0}, "seed": 7}
    G0 = {"normal": {"mean": 0.0, "std": 1.5}, "seed": 7}
    # f32: the double value is rounded once, so a 1-ulp difference can only come from the
    # double computation (log/cos of two libms) landing on the other side of a rounding
    # boundary.  f64 normal: NumPy's and glibc's log and cos may differ by a few ulp each.
    c = [init_case("uniform f32 seed 7", {"x": ("f32", (64, 33), U, 7)}, tol=Tol(ulp=1)),
         init_case("normal f32 seed 7", {"x": ("f32", (64, 33), G, 7)}, tol=Tol(ulp=1)),
         init_case("uniform f64 seed 7", {"x": ("f64", (50, 41), U, 7)}, tol=Tol(ulp=1)),
         init_case("normal f64 mean 0 seed 7", {"x": ("f64", (50, 41), G0, 7)}, tol=Tol(ulp=8)),
         init_case("uniform f32 default seed 0", {"x": ("f32", (1000,), {"uniform": {"low": 0, "high": 1}}, 0)},
                   tol=Tol(ulp=1)),
         init_case("uniform f32 1000x1000 seed 3", {"x": ("f32", (1000, 1000), dict(U, seed=3), 3)}, tol=Tol(ulp=1)),
         init_case("normal f16 seed 11", {"x": ("f16", (40, 40), dict(G, seed=11), 11)}, tol=Tol(ulp=1)),
         init_case("uniform i32 [0,100) seed 5", {"x": ("i32", (30, 30), {"uniform": {"low": 0, "high": 100}, "seed": 5}, 5)}),
         init_case("uniform u8 [0,256) seed 9", {"x": ("u8", (30, 30), {"uniform": {"low": 0, "high": 256}, "seed": 9}, 9)}),
         init_case("uniform i32 [-10,10) truncates toward zero", {"x": ("i32", (20, 20), {"uniform": {"low": -10, "high": 10}, "seed": 1}, 1)}),
         init_case("arange i16 start -2.5 step 0.75 truncates toward zero", {"x": ("i16", (12,), {"arange": {"start": -2.5, "step": 0.75}}, 0)}),
         init_case("normal i64 mean 1000 std 10", {"x": ("i64", (500,), {"normal": {"mean": 1000, "std": 10}, "seed": 2}, 2)}),
         init_case("fill f32 3.25", {"x": ("f32", (5, 7), {"fill": 3.25}, 0)}),
         init_case("fill i64 -7", {"x": ("i64", (4,), {"fill": -7}, 0)}),
         init_case("fill bool 1", {"x": ("bool", (3, 3), {"fill": 1}, 0)}),
         init_case("fill f16 0.1", {"x": ("f16", (6,), {"fill": 0.1}, 0)}),
         init_case("fill f32 scalar", {"x": ("f32", (), {"fill": -1.5}, 0)}),
         init_case("fill f32 empty", {"x": ("f32", (0, 3), {"fill": 2.0}, 0)}),
         init_case("arange f32 start 0.5 step 0.25", {"x": ("f32", (8, 9), {"arange": {"start": 0.5, "step": 0.25}}, 0)}),
         init_case("arange f64 start -3 step 0.1", {"x": ("f64", (100,), {"arange": {"start": -3, "step": 0.1}}, 0)},
                   tol=Tol(ulp=1)),
         init_case("arange i64 start 5 step -3", {"x": ("i64", (4, 5), {"arange": {"start": 5, "step": -3}}, 0)}),
         init_case("arange i32 start 0 step 1", {"x": ("i32", (1000,), {"arange": {"start": 0, "step": 1}}, 0)}),
         # --seed replaces the seed of every uniform/normal init, leaving fill/arange alone
         init_case("--seed 123 replaces seed 7 of uniform and normal", {
             "u": ("f32", (20, 30), U, 123), "g": ("f32", (20, 30), G, 123),
             "f": ("f32", (4,), {"fill": 2.5}, 0), "a": ("i32", (5,), {"arange": {"start": 1, "step": 2}}, 0)},
             args=["--seed", "123"], tol=Tol(ulp=1)),
         init_case("--seed 4294967301 uses both key words", {"u": ("f64", (10, 10), U, 2 ** 32 + 5)},
                   args=["--seed", str(2 ** 32 + 5)], tol=Tol(ulp=1)),
         init_case("--seed 0 replaces seed 7", {"u": ("f32", (10, 10), U, 0)}, args=["--seed", "0"], tol=Tol(ulp=1))]
    return c


def view_chain_cases():
    """Reshape-like nodes that are the last reader of their input take its memory
    (src/runtime/plan.c): chains of them, one whose input is read again after it (it
    must copy), one whose output is a graph output, an f16 one; run at -O0 so that
    the optimizer leaves the nodes as written."""
    rng = rng_for("view chains")
    x = rng.standard_normal((6, 35)).astype(np.float32)
    h = rng.standard_normal((4, 9)).astype(np.float16)
    nodes = [
        {"name": "n1", "op": "neg", "inputs": ["x"], "outputs": ["t1"]},
        {"name": "v1", "op": "reshape", "inputs": ["t1"], "outputs": ["t2"], "attrs": {"shape": [3, 2, 35]}},
        {"name": "v2", "op": "unsqueeze", "inputs": ["t2"], "outputs": ["t3"], "attrs": {"axes": [0]}},
        {"name": "v3", "op": "squeeze", "inputs": ["t3"], "outputs": ["t4"], "attrs": {"axes": [0]}},
        {"name": "v4", "op": "flatten", "inputs": ["t4"], "outputs": ["t5"], "attrs": {"axis": 2}},
        {"name": "e1", "op": "exp", "inputs": ["t5"], "outputs": ["a"]},
        # t6 is read by v5 and then by m1: v5 is not its last reader
        {"name": "n2", "op": "abs", "inputs": ["x"], "outputs": ["t6"]},
        {"name": "v5", "op": "reshape", "inputs": ["t6"], "outputs": ["t7"], "attrs": {"shape": [210]}},
        {"name": "s1", "op": "sqrt", "inputs": ["t7"], "outputs": ["b"]},
        # t7's last reader has run: a wrong hand-over would give t6's block to t11 here
        {"name": "n6", "op": "neg", "inputs": ["x"], "outputs": ["t11"]},
        {"name": "m1", "op": "mul", "inputs": ["t6", "t11"], "outputs": ["c"]},
        # a view straight into a graph output
        {"name": "n3", "op": "add", "inputs": ["x", "x"], "outputs": ["t8"]},
        {"name": "v6", "op": "identity", "inputs": ["t8"], "outputs": ["d"]},
        {"name": "n4", "op": "neg", "inputs": ["h"], "outputs": ["t9"]},
        {"name": "v7", "op": "reshape", "inputs": ["t9"], "outputs": ["t10"], "attrs": {"shape": [36]}},
        {"name": "n5", "op": "abs", "inputs": ["t10"], "outputs": ["e"]},
    ]
    X = x.astype(np.float64)
    expect = {"a": np.exp(-X).reshape(6, 35).astype(np.float32),
              "b": np.sqrt(np.abs(X)).reshape(210).astype(np.float32),
              "c": (np.abs(X) * -X).astype(np.float32), "d": (X + X).astype(np.float32),
              "e": np.abs(h).reshape(36)}
    return [Case("reshape-like views over freed, live and output tensors (-O0)", inputs=[("x", x), ("h", h)],
                 nodes=nodes, outputs=list(expect), expect=expect, args=["-O0"],
                 tol={"a": Tol(r=8), "b": Tol(r=2), "c": Tol(r=2), "d": EXACT, "e": EXACT})]


def cases():
    return movement_cases() + gather_cases() + error_cases() + init_cases() + view_chain_cases()
