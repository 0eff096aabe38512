"""Numeric cases of the recurrent layers lstm, gru and rnn (ONNX LSTM, GRU, RNN).

Oracle: rnn_ref below, a float64 NumPy transcription of the equations of the ONNX
operator documents, one batch entry and one time step at a time (no shared code
with ftrun): lstm gates i, o, f, c with peepholes, input_forget and clip; gru z, r, h
with and without linear_before_reset; rnn one gate; the activation functions and
their alpha/beta; forward, reverse and bidirectional; sequence_lens (entry b runs
its first len_b steps, reverse from len_b - 1 down, Y zero past them, Y_h/Y_c the
last state reached, the initial state when len_b is 0); layout 0 and 1.

Tolerance per output element: 2 eps relative plus an absolute
    eps * (4 sqrt(I + H) + 8) * sqrt(T) * (1 + |exp|)
the rounding of one step's dot products (I + H terms, growing like their square
root) and of its activations, carried through T steps of a recurrence whose gates
are contractions, so that independent step errors add up like sqrt(T) (the cases
with relu / affine keep their weights small so that the recurrence still contracts).
f16 / bf16 run through f32: inputs are generated representable, the oracle works
from them in float64, and the tolerance adds one ulp of the 16-bit type."""
import math
import re

import numpy as np

from cases_attention import rep, tol
from harness import Case, rng_for


def act(name, x, a, b):
    n = name.lower().replace("_", "")
    if n == "sigmoid":
        return 1.0 / (1.0 + np.exp(-x))
    if n == "tanh":
        return np.tanh(x)
    if n == "relu":
        return np.maximum(x, 0.0)
    if n == "affine":
        return a * x + b
    if n == "leakyrelu":
        return np.where(x >= 0, x, a * x)
    if n == "thresholdedrelu":
        return np.where(x > a, x, 0.0)
    if n == "scaledtanh":
        return a * np.tanh(b * x)
    if n == "hardsigmoid":
        return np.clip(a * x + b, 0.0, 1.0)
    if n == "elu":
        return np.where(x >= 0, x, a * (np.exp(np.minimum(x, 0.0)) - 1.0))
    if n == "softsign":
        return x / (1.0 + np.abs(x))
    if n == "softplus":
        return np.log1p(np.exp(-np.abs(x))) + np.maximum(x, 0.0)
    raise ValueError(name)


DEFAULT_AB = {"affine": (1.0, 0.0), "leakyrelu": (0.01, 0.0), "thresholdedrelu": (1.0, 0.0),
              "scaledtanh": (1.0, 1.0), "hardsigmoid": (0.2, 0.5), "elu": (1.0, 0.0)}
USES = {"affine": 2, "leakyrelu": 1, "thresholdedrelu": 1, "scaledtanh": 2, "hardsigmoid": 2, "elu": 1}
NF = {"lstm": 3, "gru": 2, "rnn": 1}
DEFAULT_ACTS = {"lstm": ["sigmoid", "tanh", "tanh"], "gru": ["sigmoid", "tanh"], "rnn": ["tanh"]}


def resolve_acts(op, D, acts, alphas, betas):
    """[(name, alpha, beta)] per direction: alpha/beta taken in order by the functions
    that use them, ONNX defaults otherwise (as ONNX Runtime reads the lists)."""
    nf = NF[op]
    names = acts or DEFAULT_ACTS[op]
    if len(names) == nf:
        names = names * D
    al, be = list(alphas or []), list(betas or [])
    out = []
    for nm in names:
        key = nm.lower().replace("_", "")
        a, b = DEFAULT_AB.get(key, (0.0, 0.0))
        if USES.get(key, 0) >= 1 and al:
            a = al.pop(0)
        if USES.get(key, 0) >= 2 and be:
            b = be.pop(0)
        out.append((nm, a, b))
    return [out[d * nf:(d + 1) * nf] for d in range(D)]


def rnn_ref(op, X, W, R, B=None, seq=None, h0=None, c0=None, P=None, direction="forward", layout=0, clip=None,
            acts=None, alphas=None, betas=None, input_forget=0, lbr=0):
    X, W, R = (np.asarray(a, np.float64) for a in (X, W, R))
    if layout:
        X = X.transpose(1, 0, 2)
        h0 = None if h0 is None else np.asarray(h0, np.float64).transpose(1, 0, 2)
        c0 = None if c0 is None else np.asarray(c0, np.float64).transpose(1, 0, 2)
    T, Bn, _ = X.shape
    D, H = W.shape[0], R.shape[2]
    fs = resolve_acts(op, D, acts, alphas, betas)
    Y = np.zeros((T, D, Bn, H))
    Yh, Yc = np.zeros((D, Bn, H)), np.zeros((D, Bn, H))
    for d in range(D):
        rev = direction == "reverse" or d == 1
        g = [lambda x, f=f: act(f[0], x if clip is None else np.clip(x, -clip, clip), f[1], f[2]) for f in fs[d]]
        bias = np.zeros(2 * W.shape[1]) if B is None else np.asarray(B, np.float64)[d]
        wb, rb = bias[:W.shape[1]], bias[W.shape[1]:]
        for b in range(Bn):
            L = T if seq is None else int(seq[b])
            h = np.zeros(H) if h0 is None else np.asarray(h0, np.float64)[d, b].copy()
            c = np.zeros(H) if c0 is None else np.asarray(c0, np.float64)[d, b].copy()
            for t in (range(L - 1, -1, -1) if rev else range(L)):
                x = X[t, b]
                if op == "lstm":
                    pre = W[d] @ x + R[d] @ h + wb + rb
                    pi, po, pf = (np.zeros(H),) * 3 if P is None else np.split(np.asarray(P, np.float64)[d], 3)
                    gi, go, gf, gc = np.split(pre, 4)
                    i = g[0](gi + pi * c)
                    f = 1 - i if input_forget else g[0](gf + pf * c)
                    c = f * c + i * g[1](gc)
                    h = g[0](go + po * c) * g[2](c)
                elif op == "gru":
                    xw = W[d] @ x + wb
                    Rz, Rr, Rh = np.split(R[d], 3)
                    rbz, rbr, rbh = np.split(rb, 3)
                    xz, xr, xh = np.split(xw, 3)
                    z = g[0](xz + Rz @ h + rbz)
                    r = g[0](xr + Rr @ h + rbr)
                    hh = g[1](xh + r * (Rh @ h + rbh)) if lbr else g[1](xh + Rh @ (r * h) + rbh)
                    h = (1 - z) * hh + z * h
                else:
                    h = g[0](W[d] @ x + R[d] @ h + wb + rb)
                Y[t, d, b] = h
            Yh[d, b], Yc[d, b] = h, c
    if layout:
        return Y.transpose(2, 0, 1, 3), Yh.transpose(1, 0, 2), Yc.transpose(1, 0, 2)
    return Y, Yh, Yc


G = {"lstm": 4, "gru": 3, "rnn": 1}


def rnn_case(name, op, dt, T, Bn, I, H, direction="forward", layout=0, bias=True, seq=None, init=False, peep=False,
             clip=None, acts=None, alphas=None, betas=None, input_forget=0, lbr=0, nout=None, wscale=0.6):
    D = 2 if direction == "bidirectional" else 1
    attrs = {"direction": direction, "layout": layout, "hidden_size": H}
    if clip is not None:
        attrs["clip"] = clip
    if acts:
        attrs["activations"] = ",".join(acts)
    if alphas:
        attrs["activation_alpha"] = alphas
    if betas:
        attrs["activation_beta"] = betas
    if input_forget:
        attrs["input_forget"] = 1
    if lbr:
        attrs["linear_before_reset"] = 1
    nout = nout or (3 if op == "lstm" else 2)
    outs = ["y", "y_h", "y_c"][:nout]

    def build():
        rng = rng_for(name)
        xs = (Bn, T, I) if layout else (T, Bn, I)
        ss = (Bn, D, H) if layout else (D, Bn, H)
        X = rep(rng.standard_normal(xs), dt)
        W = rep(rng.uniform(-wscale, wscale, (D, G[op] * H, I)), dt)
        R = rep(rng.uniform(-wscale, wscale, (D, G[op] * H, H)), dt)
        Bv = rep(rng.uniform(-0.5, 0.5, (D, 2 * G[op] * H)), dt) if bias else None
        S = np.asarray(seq, np.int32) if seq is not None else None
        h0 = rep(rng.uniform(-1, 1, ss), dt) if init else None
        c0 = rep(rng.uniform(-1, 1, ss), dt) if init and op == "lstm" else None
        P = rep(rng.uniform(-0.5, 0.5, (D, 3 * H)), dt) if peep else None
        ins = [("X", X, dt), ("W", W, dt), ("R", R, dt), ("B", Bv, dt) if bias else None,
               ("sequence_lens", S) if seq is not None else None, ("initial_h", h0, dt) if init else None]
        if op == "lstm":
            ins += [("initial_c", c0, dt) if init else None, ("P", P, dt) if peep else None]
        y, yh, yc = rnn_ref(op, X, W, R, Bv, S, h0, c0, P, direction, layout, clip, acts, alphas, betas,
                            input_forget, lbr)
        exp = dict(zip(outs, (y, yh, yc)))
        t = {k: tol(dt, (4 * math.sqrt(I + H) + 8) * math.sqrt(max(T, 1)) * (1 + np.abs(v))) for k, v in exp.items()}
        return {"inputs": ins, "expect": {k: rep(v, dt) for k, v in exp.items()}, "tol": t}
    return Case(name, op, attrs=attrs, outputs=outs, build=build)


def cases():
    cs = []

    def add(op, dt, label, **kw):
        T, Bn, I, H = kw.pop("dims", (5, 3, 4, 6))
        cs.append(rnn_case("%s %s T%d B%d I%d H%d %s" % (op, dt, T, Bn, I, H, label), op, dt, T, Bn, I, H, **kw))

    for op in ("lstm", "gru", "rnn"):
        for dt in ("f32", "f64"):
            add(op, dt, "forward")
            add(op, dt, "reverse, initial state, no bias", direction="reverse", init=True, bias=False)
            add(op, dt, "bidirectional, sequence_lens, initial state", direction="bidirectional", init=True,
                seq=[5, 2, 0], peep=op == "lstm")
            add(op, dt, "layout 1, bidirectional, sequence_lens", direction="bidirectional", layout=1, init=True,
                seq=[3, 5, 1])
        for dt in ("f16", "bf16"):
            add(op, dt, "bidirectional, sequence_lens", direction="bidirectional", seq=[4, 5, 2], init=True)
        add(op, "f32", "clip 0.5", clip=0.5, init=True, wscale=1.5)
        add(op, "f32", "one output (Y)", nout=1)
        add(op, "f32", "longer and wider", dims=(37, 5, 24, 40), direction="bidirectional", seq=[37, 1, 20, 36, 9],
            wscale=0.2)
        add(op, "f32", "threads 3 wide batch", dims=(6, 64, 16, 128), wscale=0.1)
        # the f32 kernel's threaded forms (src/cpu/rnn_f32.c): the two directions side by side, the batch
        # rows split among threads, and (one batch row) the hidden units split among threads at a barrier
        # per step (264 units: split at 128 on the 16-unit grid, the last panel of 16 half padding)
        add(op, "f32", "threads 2 bidirectional side by side", dims=(9, 5, 12, 100), direction="bidirectional",
            seq=[9, 4, 0, 7, 9], init=True, peep=op == "lstm", wscale=0.15)
        add(op, "f32", "threads 2 batch rows split, reverse, sequence_lens", dims=(9, 8, 12, 128),
            direction="reverse", seq=[9, 4, 0, 7, 9, 1, 2, 8], init=True, wscale=0.15)
        add(op, "f32", "threads 2 units split, reverse, sequence_lens", dims=(9, 1, 12, 264), direction="reverse",
            seq=[7], init=True, wscale=0.1)
    add("gru", "f32", "threads 2 units split, linear_before_reset, clip", dims=(7, 1, 10, 264), lbr=1, init=True,
        clip=0.9, wscale=0.3)
    add("lstm", "f32", "peepholes, input_forget", peep=True, input_forget=1, init=True)
    add("lstm", "f64", "layout 1 reverse, peepholes, clip", layout=1, direction="reverse", peep=True, init=True,
        clip=0.8, seq=[2, 5, 4])
    add("lstm", "f32", "activations hard_sigmoid, elu, softsign", acts=["hard_sigmoid", "elu", "softsign"],
        alphas=[0.3, 0.7], betas=[0.4], init=True)
    add("lstm", "f64", "bidirectional, ONNX activation names per direction", direction="bidirectional",
        acts=["Sigmoid", "Tanh", "Tanh", "HardSigmoid", "ScaledTanh", "Softplus"], alphas=[0.25, 0.9],
        betas=[0.45, 0.8])
    add("gru", "f32", "linear_before_reset", lbr=1, init=True)
    add("gru", "f64", "linear_before_reset, bidirectional, layout 1, sequence_lens", lbr=1,
        direction="bidirectional", layout=1, init=True, seq=[5, 0, 3])
    add("gru", "f64", "activations leaky_relu, affine", acts=["LeakyRelu", "Affine"], alphas=[0.1, 0.5], betas=[0.2])
    add("rnn", "f64", "activation relu", acts=["Relu"], wscale=0.3)
    add("rnn", "f64", "activations thresholded_relu / softplus per direction", direction="bidirectional",
        acts=["thresholded_relu", "softplus"], alphas=[0.2], wscale=0.3)
    for c in cs:
        if c.name.startswith(("lstm f32 T6 B64", "gru f32 T6 B64")):
            c.args = ["--threads", "3"]
        if "threads 2" in c.name:
            c.args = ["--threads", "2"]

    # errors: named, exit 3, no result files
    def bad(name, op, attrs, shapes, pat, seq=None):
        ins = [(n, np.zeros(s, np.float32)) for n, s in zip(("X", "W", "R"), shapes)]
        if seq is not None:
            ins += [None, ("sequence_lens", np.asarray(seq, np.int32))]
        cs.append(Case(name, op, attrs=attrs, inputs=ins, outputs=["y"], exit_code=3, node_name="rec",
                       stderr_re=[r"rec", pat]))
    bad("lstm error: W rows not 4*H", "lstm", None, [(2, 1, 3), (1, 12, 3), (1, 16, 4)], r"W 'W' has shape \[1,12,3\]")
    bad("gru error: unknown activation", "gru", {"activations": "sigmoid,swish"}, [(2, 1, 3), (1, 6, 3), (1, 6, 2)],
        re.escape('unknown function "swish"'))
    bad("rnn error: bad direction", "rnn", {"direction": "both"}, [(2, 1, 3), (1, 2, 3), (1, 2, 2)], r"direction")
    bad("rnn error: hidden_size differs from R", "rnn", {"hidden_size": 3}, [(2, 1, 3), (1, 2, 3), (1, 2, 2)],
        r"hidden_size")
    bad("lstm error: two activations", "lstm", {"activations": "sigmoid,tanh"}, [(2, 1, 3), (1, 8, 3), (1, 8, 2)],
        r"names 2 functions")
    bad("gru error: sequence_lens beyond T", "gru", None, [(2, 2, 3), (1, 6, 3), (1, 6, 2)], r"sequence_lens\[1\] is 3",
        seq=[1, 3])
    return cs
