"""Parity cases of the losses, window functions and stft (family "loss"):
softmax_cross_entropy_loss, negative_log_likelihood_loss, hann_window,
hamming_window, blackman_window, mel_weight_matrix and stft, each run on the
device and on the CPU by tests/cuda/parity.py, which calls gen_loss(parity) with itself as p.

Tolerances: the losses are computed in double on both backends (src/cpu/loss.c,
src/cuda/loss.cu) but the log-sum-exp and the reductions add in different orders,
so they use the accum class with K the classes (none) or the elements summed
(sum, mean); the windows are one libm cos per value (elem); mel_weight_matrix is
exact (the same double arithmetic, src/graph/mel.h, on both); stft is an FFT of
frame_length (accum with K = frame_length, as fft's cases)."""
import numpy as np


def gen_loss(p):
    sh, single, case, accum, elem = p.sh, p.single, p.case, p.accum, p.elem
    cfgs = [([8, 5], "mean", False, None), ([4, 6, 3], "none", True, None), ([3, 7, 2, 5], "sum", False, 2),
            ([2, 4, 9], "mean", True, -1), ([1000, 10], "mean", True, 3), ([64, 33, 40], "sum", False, None),
            ([0, 4], "mean", False, None), ([0, 3, 2], "none", True, None)]
    for op in ("softmax_cross_entropy_loss", "negative_log_likelihood_loss"):
        for j, dt in enumerate(p.FLOATS):
            for k, (s, red, use_w, ii) in enumerate(p.pick(cfgs, dt, j, 3)):
                idt = ("i64", "i32")[(j + k) % 2]
                nlp = op == "softmax_cross_entropy_loss" and k % 2 == 0

                def mk(g, dt=dt, s=s, use_w=use_w, ii=ii, idt=idt, op=op):
                    ts = [s[0]] + s[2:]
                    t = g.rng.integers(0, s[1], ts) if s[0] else np.zeros(ts, np.int64)
                    if ii is not None and t.size:
                        t.flat[::4] = ii
                    lo = -4.0 if op == "softmax_cross_entropy_loss" else -6.0
                    ins = [g.x(dt, s, lo, 0.0 if lo < -5 else 4.0), g.arr(idt, t)]
                    return ins + ([g.x(dt, [s[1]], 0.2, 2.0)] if use_w else [])
                attrs = {"reduction": red}
                if ii is not None:
                    attrs["ignore_index"] = ii
                terms = s[1] if red == "none" else int(np.prod(s)) // max(s[1], 1)
                single("loss/%s/%s/%s,%s%s%s,%s%s" % (op, dt, sh(s), red, ",weights" if use_w else "",
                                                      "" if ii is None else ",ignore_index=%d" % ii, idt,
                                                      ",log_prob" if nlp else ""),
                       op, mk, attrs=attrs, nout=2 if nlp else 1, tol=accum(dt, max(terms, s[1]), 8.0))
    for op in ("softmax_cross_entropy_loss", "negative_log_likelihood_loss"):
        case("loss/%s/f32/target_out_of_range" % op,
             lambda g, op=op: [g.op(op, [g.x("f32", [6, 4]), g.arr("i64", [0, 1, 2, 4, 3, 0])])],
             rc=3, err="out of range")
    for op in ("hann_window", "hamming_window", "blackman_window"):
        for j, dt in enumerate(p.FLOATS):
            for size, periodic in ((1, 0), (16, 1), (17, 0), (4096, 1), (0, 1)):
                single("loss/%s/%s/size=%d,periodic=%d" % (op, dt, size, periodic), op,
                       lambda g, size=size: [g.arr("i64", np.array(size))],
                       attrs={"periodic": periodic, "output_datatype": dt}, tol=elem(dt))
    for j, dt in enumerate(p.FLOATS):
        for bins, dft, sr, lo, hi, idt, fdt in ((8, 16, 8192, 0, 4096, "i32", "f32"), (40, 1024, 16000, 20, 7600, "i64", dt),
                                                (64, 64, 8000, 0, 4000, "i64", "f64")):
            single("loss/mel_weight_matrix/%s/bins=%d,dft=%d,rate=%d,%g..%g,%s,%s" % (dt, bins, dft, sr, lo, hi, idt, fdt),
                   "mel_weight_matrix",
                   lambda g, bins=bins, dft=dft, sr=sr, lo=lo, hi=hi, idt=idt, fdt=fdt:
                   [g.arr(idt, np.array(bins)), g.arr(idt, np.array(dft)), g.arr(idt, np.array(sr)),
                    g.arr(fdt, np.array(lo)), g.arr(fdt, np.array(hi))], attrs={"output_datatype": dt})
    st = [([2, 130, 1], 16, 8, True, 1), ([3, 100, 2], 7, 3, False, 0), ([1, 4096, 1], 512, 128, True, 1),
          ([2, 64, 2], 64, 1, True, 1), ([0, 40, 1], 8, 4, False, 1), ([4, 33, 1], 33, 5, True, 0)]
    for j, dt in enumerate(p.FLOATS):
        for k, (s, n, step, use_w, ones) in enumerate(p.pick(st, dt, j, 2)):
            def mk(g, dt=dt, s=s, n=n, use_w=use_w):
                return [g.x(dt, s)] + ([g.x(dt, [n], 0.0, 1.0)] if use_w else [])
            attrs = {"frame_step": step, "onesided": ones}
            if not use_w:
                attrs["frame_length"] = n
            single("loss/stft/%s/%s,n=%d,step=%d%s,onesided=%d" % (dt, sh(s), n, step, ",window" if use_w else "",
                                                                     ones),
                   "stft", mk, attrs=attrs, tol=accum(dt, n))
