"""Numeric cases of the losses, the window functions and stft (ONNX semantics).

Oracles, in float64 NumPy from the exact input values:
  negative_log_likelihood_loss: l[n, d] = -w[t] * logp[n, t, d] with t = target[n, d]
        (w = 1 without weights); a target equal to ignore_index gives 0 and no weight;
        reductions none, sum, mean = sum / (sum of the weights used) -- NaN when that
        is 0/0 (empty batch, everything ignored), as PyTorch's nll_loss;
  softmax_cross_entropy_loss: the same on log_softmax(x) over dim 1, and log_prob
        = log_softmax(x) as the second output;
  hann/hamming/blackman_window: ONNX's formulas (Hamming with 25/46 and 21/46),
        N = size (periodic) or size - 1 (symmetric; [1] for size 1);
  stft: frames x[b, f*step : f*step+n] times the window, numpy.fft.fft of each,
        the first n//2+1 bins when onesided;
  mel_weight_matrix: ONNX's MelWeightMatrix as its specification's loops write it
        (mel edges in the edges' dtype, bin edges floor((dft_length + 1) * hz /
        sample_rate), rising then falling triangles, a later write winning).
PyTorch 1.13 cross-checks a few of them where present (cross_entropy, nll_loss,
hann_window, stft), so an error shared by the NumPy formulas here would show.
Tolerances: ftrun computes the losses in double from the inputs and rounds once, so
f32 results get a few eps relative to 1 + the sum of |terms|; f64 ones 1e-12 of it;
stft's FFT error grows with log2(n) times the frame's sum of |values|."""
import math

import numpy as np

from cases_half import store, tol as half_tol
from harness import Case, Tol, rng_for

try:
    import torch
except ImportError:  # the cross-checks are skipped, the NumPy oracle stays
    torch = None


def log_softmax(x):
    m = x.max(axis=1, keepdims=True)
    return x - m - np.log(np.exp(x - m).sum(axis=1, keepdims=True))


def nll_ref(logp, t, w, red, ii):
    tt = t.astype(np.int64)
    keep = np.ones(t.shape, bool) if ii is None else tt != ii
    ts = np.where(keep, tt, 0)
    picked = np.take_along_axis(logp, ts[:, None], 1)[:, 0]
    wt = (w.astype(np.float64)[ts] if w is not None else np.ones(ts.shape)) * keep
    l = -picked * wt
    if red == "none":
        return l, np.abs(l)
    with np.errstate(invalid="ignore", divide="ignore"):
        s = l.sum() if red == "sum" else l.sum() / wt.sum()
    return np.float64(s), 1.0 + np.abs(l).sum() + abs(s)


def loss_tol(scale):
    return Tol(r=4, a=4, scale=scale, r64=1e-12, a64=1e-12)


def torch_check(op, x, t, w, red, ii, want):
    """PyTorch's cross_entropy / nll_loss must agree with the NumPy oracle (f64)."""
    if torch is None:
        return
    f = torch.nn.functional.cross_entropy if op == "softmax_cross_entropy_loss" else torch.nn.functional.nll_loss
    kw = {"reduction": red, "weight": None if w is None else torch.from_numpy(w.astype(np.float64))}
    if ii is not None:
        kw["ignore_index"] = int(ii)
    got = f(torch.from_numpy(x.astype(np.float64)), torch.from_numpy(t.astype(np.int64)), **kw).numpy()
    assert np.allclose(got, want, rtol=1e-10, atol=1e-12, equal_nan=True), (op, red, got, want)


def loss_case(name, op, x, t, w, red, ii, dt=None, log_prob=False, check_torch=True):
    xd = x.astype(np.float64)
    logp = log_softmax(xd) if op == "softmax_cross_entropy_loss" else xd
    y, scale = nll_ref(logp, t, w, red, ii)
    if check_torch:
        torch_check(op, xd, t, w, red, ii, y)
    attrs = {"reduction": red}
    if ii is not None:
        attrs["ignore_index"] = int(ii)
    decl = dt or {np.float32: "f32", np.float64: "f64"}[x.dtype.type]
    ins = [("x", x, decl), ("target", t)] + ([("weight", w, decl)] if w is not None else [])
    if dt in ("f16", "bf16"):
        exp_y, t_y = store(dt, y), half_tol(dt, scale)
        exp_lp, t_lp = store(dt, logp), half_tol(dt, 1 + np.abs(logp))
    else:
        exp_y, t_y = np.asarray(y).astype(x.dtype), loss_tol(scale)
        exp_lp, t_lp = logp.astype(x.dtype), loss_tol(1 + np.abs(xd) + np.abs(logp))
    if log_prob:
        return Case(name, op, ins, attrs, outputs=["y", "log_prob"], expect={"y": exp_y, "log_prob": exp_lp},
                    tol={"y": t_y, "log_prob": t_lp})
    return Case(name, op, ins, attrs, expect={"y": exp_y}, tol=t_y)


def loss_cases():
    c = []
    for npdt in (np.float32, np.float64):
        dn = np.dtype(npdt).name
        for op in ("softmax_cross_entropy_loss", "negative_log_likelihood_loss"):
            for shape in ((6, 5), (3, 4, 2, 3)):
                for red in ("none", "sum", "mean"):
                    for use_w, ii in ((False, None), (True, None), (False, 1), (True, -100)):
                        name = "%s %s %s %s%s%s" % (op, dn, "x".join(map(str, shape)), red,
                                                   " weights" if use_w else "",
                                                   "" if ii is None else " ignore_index %d" % ii)
                        rng = rng_for(name)
                        x = rng.uniform(-3, 3, size=shape).astype(npdt)
                        if op == "negative_log_likelihood_loss":
                            x = log_softmax(x.astype(np.float64)).astype(npdt)
                        tshape = (shape[0],) + shape[2:]
                        t = rng.integers(0, shape[1], size=tshape).astype(np.int64 if red != "sum" else np.int32)
                        if ii is not None:
                            t.flat[::3] = ii
                        w = rng.uniform(0.2, 2.0, size=shape[1]).astype(npdt) if use_w else None
                        c.append(loss_case(name, op, x, t, w, red, ii))
        rng = rng_for("sce log_prob " + dn)
        x = rng.uniform(-5, 5, size=(4, 7, 3)).astype(npdt)
        t = rng.integers(0, 7, size=(4, 3))
        w = rng.uniform(0.5, 1.5, size=7).astype(npdt)
        c.append(loss_case("softmax_cross_entropy_loss %s 4x7x3 mean weights log_prob" % dn,
                           "softmax_cross_entropy_loss", x, t, w, "mean", 2, log_prob=True))
        c.append(loss_case("softmax_cross_entropy_loss %s 4x7x3 none log_prob" % dn,
                           "softmax_cross_entropy_loss", x, t, None, "none", None, log_prob=True))
        # large: the threaded path
        rng = rng_for("sce large " + dn)
        x = rng.uniform(-4, 4, size=(512, 10, 16)).astype(npdt)
        t = rng.integers(0, 10, size=(512, 16))
        c.append(loss_case("softmax_cross_entropy_loss %s 512x10x16 mean" % dn, "softmax_cross_entropy_loss",
                           x, t, None, "mean", None))
        # empty batch and everything ignored: mean is 0/0 = NaN, sum 0, none empty
        xe, te = np.zeros((0, 4), npdt), np.zeros((0,), np.int64)
        for red in ("none", "sum", "mean"):
            c.append(loss_case("negative_log_likelihood_loss %s empty batch %s" % (dn, red),
                               "negative_log_likelihood_loss", xe, te, None, red, None, check_torch=False))
        xi = rng.uniform(-1, 1, size=(3, 4)).astype(npdt)
        c.append(loss_case("softmax_cross_entropy_loss %s all ignored mean" % dn, "softmax_cross_entropy_loss",
                           xi, np.full(3, 2, np.int64), None, "mean", 2))
    for dt in ("f16", "bf16"):
        for op in ("softmax_cross_entropy_loss", "negative_log_likelihood_loss"):
            for red in ("none", "mean"):
                name = "%s %s 8x6x5 %s weights ignore_index 0" % (op, dt, red)
                rng = rng_for(name)
                x = store(dt, rng.uniform(-3, 3, size=(8, 6, 5)))
                if op == "negative_log_likelihood_loss":
                    x = store(dt, log_softmax(x.astype(np.float64)))
                t = rng.integers(0, 6, size=(8, 5))
                w = store(dt, rng.uniform(0.5, 2, size=6))
                c.append(loss_case(name, op, x, t, w, red, 0, dt=dt, log_prob=op == "softmax_cross_entropy_loss"))
    x = np.zeros((3, 4), np.float32)
    for label, t, attrs in (("target 4 of C 4", np.array([0, 4, 1], np.int64), {}),
                            ("target -1 without ignore_index", np.array([0, -1, 1], np.int32), {}),
                            ("target -2 with ignore_index -1", np.array([-1, -2, 1], np.int64), {"ignore_index": -1})):
        for op in ("softmax_cross_entropy_loss", "negative_log_likelihood_loss"):
            c.append(Case("%s %s: exit 3 naming the node" % (op, label), op, [("x", x), ("target", t)], attrs,
                          exit_code=3, node_name="lossnode", stderr_re=[r"lossnode", r"out of range", r"0\.\.3"]))
    c.append(Case("negative_log_likelihood_loss weight of length 3 for C 4: exit 3", "negative_log_likelihood_loss",
                  [("x", x), ("target", np.zeros(3, np.int64)), ("w", np.ones(3, np.float32))], exit_code=3,
                  stderr_re=[r"weight", r"C = 4"]))
    c.append(Case("softmax_cross_entropy_loss reduction 'avg': exit 3", "softmax_cross_entropy_loss",
                  [("x", x), ("target", np.zeros(3, np.int64))], {"reduction": "avg"}, exit_code=3,
                  stderr_re=[r"reduction", r"avg"]))
    return c


def window_ref(op, size, periodic):
    N = size if periodic else size - 1
    if N == 0:
        return np.ones(size)
    a = 2 * np.pi * np.arange(size) / N
    if op == "hann_window":
        return 0.5 - 0.5 * np.cos(a)
    if op == "hamming_window":
        return 25 / 46 - 21 / 46 * np.cos(a)
    return 0.42 - 0.5 * np.cos(a) + 0.08 * np.cos(2 * a)


def window_cases():
    c = []
    if torch is not None:  # cross-check of the formulas
        for periodic in (True, False):
            assert np.allclose(window_ref("hann_window", 12, periodic),
                               torch.hann_window(12, periodic=periodic, dtype=torch.float64).numpy(), atol=1e-15)
            assert np.allclose(window_ref("blackman_window", 12, periodic),
                               torch.blackman_window(12, periodic=periodic, dtype=torch.float64).numpy(), atol=1e-15)
            assert np.allclose(window_ref("hamming_window", 12, periodic),
                               torch.hamming_window(12, periodic=periodic, alpha=25 / 46, beta=21 / 46,
                                                    dtype=torch.float64).numpy(), atol=1e-15)
    for op in ("hann_window", "hamming_window", "blackman_window"):
        for periodic in (1, 0):
            for size, sdt in ((10, np.int64), (1, np.int32), (0, np.int64), (257, np.int32)):
                for odt in ("f32", "f64", "f16", "bf16"):
                    v = window_ref(op, size, periodic)
                    if odt in ("f16", "bf16"):
                        want, t = store(odt, v), half_tol(odt)
                    else:
                        want = v.astype(np.float32 if odt == "f32" else np.float64)
                        t = Tol(r=4, a=4, r64=1e-14, a64=1e-15)
                    c.append(Case("%s size %d periodic %d %s" % (op, size, periodic, odt), op,
                                  [("size", np.array(size, sdt))], {"periodic": periodic, "output_datatype": odt},
                                  expect={"y": want}, tol=t, via_flag=()))
    c.append(Case("hann_window size given at run time: exit 3", "hann_window", [("size", np.array(8, np.int64))],
                  via_flag=("size",), exit_code=3, stderr_re=[r"constant"]))
    c.append(Case("hann_window size -1: exit 3", "hann_window", [("size", np.array(-1, np.int64))], via_flag=(),
                  exit_code=3, stderr_re=[r">= 0"]))
    return c


def stft_ref(sig, step, n, win, onesided):
    s = sig[..., 0] + (1j * sig[..., 1] if sig.shape[-1] == 2 else 0)
    B, L = s.shape
    F = (L - n) // step + 1
    frames = np.stack([s[:, f * step:f * step + n] for f in range(F)], axis=1)  # [B, F, n]
    if win is not None:
        frames = frames * win
    spec = np.fft.fft(frames, axis=-1)
    if onesided:
        spec = spec[..., :n // 2 + 1]
    out = np.stack([spec.real, spec.imag], axis=-1)
    scale = np.abs(frames).sum(axis=-1).max() if frames.size else 1.0
    return out, scale


def stft_cases():
    c = []
    if torch is not None:  # numpy's framing against torch.stft (center=False, real input)
        x = np.random.default_rng(7).uniform(-1, 1, size=(2, 50))
        w = np.hanning(16)
        ref, _ = stft_ref(x[..., None], 4, 16, w, True)
        tt = torch.stft(torch.from_numpy(x), 16, hop_length=4, window=torch.from_numpy(w), center=False,
                        onesided=True, return_complex=True).numpy().transpose(0, 2, 1)
        assert np.allclose(ref, np.stack([tt.real, tt.imag], -1), atol=1e-12)
    for npdt in (np.float32, np.float64):
        dn = np.dtype(npdt).name
        for cw in (1, 2):
            for n, step, use_w, onesided in ((16, 8, True, 1), (16, 8, False, 0), (7, 3, True, 0),
                                             (7, 3, False, 1), (64, 16, True, 1)):
                name = "stft %s %s n %d step %d%s onesided %d" % (dn, "complex" if cw == 2 else "real", n, step,
                                                                  " window" if use_w else "", onesided)
                rng = rng_for(name)
                sig = rng.uniform(-1, 1, size=(3, 130, cw)).astype(npdt)
                win = rng.uniform(0, 1, size=n).astype(npdt) if use_w else None
                want, scale = stft_ref(sig.astype(np.float64), step, n, None if win is None else
                                       win.astype(np.float64), onesided)
                attrs = {"frame_step": step, "onesided": onesided}
                if not use_w or n == 7:
                    attrs["frame_length"] = n
                ins = [("signal", sig)] + ([("window", win)] if use_w else [])
                t = Tol(a=8 * math.log2(n) + 8, scale=scale, a64=1e-13 * scale)
                c.append(Case(name, "stft", ins, attrs, expect={"y": want.astype(npdt)}, tol=t))
    for dt in ("f16", "bf16"):
        name = "stft %s real n 16 step 4 window" % dt
        rng = rng_for(name)
        sig = store(dt, rng.uniform(-1, 1, size=(2, 64, 1)))
        win = store(dt, np.hanning(16))
        want, scale = stft_ref(sig.astype(np.float64), 4, 16, win.astype(np.float64), 1)
        c.append(Case(name, "stft", [("signal", sig, dt), ("window", win, dt)], {"frame_step": 4},
                      expect={"y": store(dt, want)}, tol=half_tol(dt, scale, 16)))
    sig = np.zeros((1, 10, 1), np.float32)
    c.append(Case("stft frame_length 11 > signal 10: exit 3", "stft", [("signal", sig)],
                  {"frame_step": 1, "frame_length": 11}, exit_code=3, stderr_re=[r"frame length 11"]))
    c.append(Case("stft without window or frame_length: exit 3", "stft", [("signal", sig)], {"frame_step": 1},
                  exit_code=3, stderr_re=[r"frame_length"]))
    c.append(Case("stft signal [1, 10, 3]: exit 3", "stft", [("signal", np.zeros((1, 10, 3), np.float32))],
                  {"frame_step": 1, "frame_length": 4}, exit_code=3, stderr_re=[r"\[batch, length, 1\]"]))
    return c


def mel_ref(bins, dft, sr, lo, hi):
    """lo, hi: NumPy scalars of the edges' dtype (their arithmetic stays in it)."""
    edges = np.arange(bins + 2)
    lm = 2595 * np.log10(1 + lo / lo.dtype.type(700))
    hm = 2595 * np.log10(1 + hi / hi.dtype.type(700))
    step = (hm - lm) / lo.dtype.type(bins + 2)
    hz = 700 * (np.power(10.0, (edges * np.float64(step) + np.float64(lm)) / 2595) - 1)
    edges = np.floor((dft + 1) * hz / sr).astype(np.int64)
    w = np.zeros((dft // 2 + 1, bins))
    for i in range(bins):
        left, mid, right = edges[i], edges[i + 1], edges[i + 2]
        if mid == left:
            w[mid, i] = 1
        else:
            for j in range(left, mid + 1):
                w[j, i] = (j - left) / (mid - left)
        for j in range(mid, right):
            w[j, i] = (right - j) / (right - mid)
    return w


def mel_cases():
    c = []
    cfgs = [(8, 16, 8192, 0, 4096, np.float32, np.int32, "f32", ()),
            (20, 512, 16000, 0, 8000, np.float32, np.int64, "f32", ("sample_rate", "lower", "upper")),
            (10, 256, 22050, 300, 5000, np.float64, np.int64, "f64", ()),
            (16, 32, 8000, 0, 4000, np.float32, np.int32, "f32", ()),  # narrow triangles: left == mid
            (4, 64, 8000, 100, 3900, np.float32, np.int32, "f16", ("lower",)),
            (6, 100, 11025, 50, 5000, np.float64, np.int64, "bf16", ()),
            (1, 1, 100, 0, 10, np.float32, np.int64, "f64", ())]
    for bins, dft, sr, lo, hi, fdt, idt, odt, flag in cfgs:
        v = mel_ref(bins, dft, sr, fdt(lo), fdt(hi))
        assert v.shape == (dft // 2 + 1, bins) and v.max() <= 1 and v.min() >= 0
        want = store(odt, v) if odt in ("f16", "bf16") else v.astype(np.float32 if odt == "f32" else np.float64)
        ins = [("num_mel_bins", np.array(bins, idt)), ("dft_length", np.array(dft, idt)),
               ("sample_rate", np.array(sr, idt)), ("lower", np.array(lo, fdt)), ("upper", np.array(hi, fdt))]
        c.append(Case("mel_weight_matrix %d bins dft %d rate %d %g..%g Hz %s -> %s" %
                      (bins, dft, sr, lo, hi, np.dtype(fdt).name, odt), "mel_weight_matrix", ins,
                      {"output_datatype": odt}, expect={"y": want}, via_flag=flag))
    ins = [("num_mel_bins", np.array(8, np.int64)), ("dft_length", np.array(16, np.int64)),
           ("sample_rate", np.array(8000, np.int64)), ("lower", np.array(0, np.float32)),
           ("upper", np.array(4000, np.float32))]
    c.append(Case("mel_weight_matrix num_mel_bins given at run time: exit 3", "mel_weight_matrix", ins,
                  via_flag=("num_mel_bins",), exit_code=3, stderr_re=[r"num_mel_bins", r"constant"]))
    c.append(Case("mel_weight_matrix f64 upper edge with an f32 lower one: exit 3", "mel_weight_matrix",
                  ins[:4] + [("upper", np.array(4000, np.float64))], via_flag=(), exit_code=3,
                  stderr_re=[r"lower_edge_hertz and upper_edge_hertz"]))
    c.append(Case("mel_weight_matrix output_datatype i32: exit 3", "mel_weight_matrix", ins,
                  {"output_datatype": "i32"}, via_flag=(), exit_code=3, stderr_re=[r"output_datatype"]))
    return c


def cases():
    return loss_cases() + window_cases() + stft_cases() + mel_cases()
