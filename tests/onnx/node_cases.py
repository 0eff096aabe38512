#!/usr/bin/env python3
"""ONNX's own node test cases (Debian's libonnx-testdata: model.onnx,
test_data_set_0/input_K.pb and output_K.pb, the expected values from ONNX's
reference) run through `ftrun run`, tallied by op family of the mappers
(src/graph/onnx_ops_*.c). One TAP line per family:
  not ok  when a case runs and its outputs differ from ONNX's (exit 1) or ftrun
          fails in another way than refusing the model (exit 2, 4, a crash), or
          fewer cases pass than the family's floor below (a mapping that broke);
  ok      otherwise, with the counts: passed, and refused (exit 3: an op,
          attribute or dtype ftrun does not support, or a parameter input the
          model feeds at run time where ftrun needs it at load).

Usage: FTRUN=build/ftrun /usr/bin/python3 tests/onnx/node_cases.py [-v] [FILTER]
  -v lists every case that did not pass, with ftrun's message.
"""
import collections, glob, os, re, subprocess, sys, tempfile

import onnx

FTRUN = os.environ.get("FTRUN", "build/ftrun")
DATA = os.environ.get("ONNX_NODE_DATA", "/usr/share/libonnx-testdata/data/node")
FAMILIES = {
    "elementwise": "Abs Acosh Add And Asinh Atanh Cast CastLike Ceil Celu Clip Cos Cosh Div Elu Equal Erf Exp Floor "
                   "Gelu Greater GreaterOrEqual HardSigmoid HardSwish IsInf IsNaN LeakyRelu Less LessOrEqual Log Max "
                   "Mean Min Mish Mod Mul Neg Not Or PRelu Pow Reciprocal Relu Round Selu Shrink Sigmoid Sign Sin Sinh "
                   "Softplus Softsign Sqrt Sub Sum Tan Tanh ThresholdedRelu Where Xor",
    "math": "ArgMax ArgMin CumSum DFT Einsum Gemm MatMul ReduceL1 ReduceL2 ReduceLogSum ReduceLogSumExp ReduceMax "
            "ReduceMean ReduceMin ReduceProd ReduceSum ReduceSumSquare TopK",
    "norm": "Attention BatchNormalization GroupNormalization Hardmax InstanceNormalization LayerNormalization "
            "LogSoftmax LpNormalization MeanVarianceNormalization RMSNormalization Softmax",
    "quant": "ConvInteger DequantizeLinear DynamicQuantizeLinear MatMulInteger QLinearConv QLinearMatMul QuantizeLinear",
    "loss": "NegativeLogLikelihoodLoss SoftmaxCrossEntropyLoss",
    "movement": "CenterCropPad Concat DepthToSpace Dropout Expand Flatten Gather GatherElements GatherND Identity "
                "OneHot Pad Reshape Slice SpaceToDepth Split Squeeze Tile Transpose Trilu Unsqueeze",
    "nn": "AveragePool BlackmanWindow Conv ConvTranspose GlobalAveragePool GlobalLpPool GlobalMaxPool HammingWindow "
          "HannWindow LRN LpPool MaxPool Resize Upsample",
}
FAMILY_OF = {op: f for f, ops in FAMILIES.items() for op in ops.split()}
# Cases that pass today, per family: fewer means a mapping broke.
FLOORS = {"elementwise": 210, "math": 140, "norm": 43, "quant": 14, "loss": 52, "movement": 109, "nn": 44}


def family(model):
    for n in model.graph.node:
        if n.op_type in FAMILY_OF:
            return FAMILY_OF[n.op_type]
    return "other (no mapped op)"


def run_case(case, out):
    m = onnx.load(case + "/model.onnx", load_external_data=False)
    inits = {t.name for t in m.graph.initializer}
    ins = [v.name for v in m.graph.input if v.name not in inits]
    ds = case + "/test_data_set_0"
    exp = tempfile.mkdtemp(dir=out)
    for k, v in enumerate(m.graph.output):
        os.symlink("%s/output_%d.pb" % (ds, k), "%s/%s.pb" % (exp, re.sub(r"[^A-Za-z0-9._-]", "_", v.name)))
    args = [FTRUN, "run", case + "/model.onnx", "-q", "-d", "cpu", "-o", exp + "/out", "--expect", exp]
    for k, name in enumerate(ins):
        args += ["-i", "%s=%s/input_%d.pb" % (name, ds, k)]
    try:
        p = subprocess.run(args, capture_output=True, text=True, timeout=120)
        return family(m), p.returncode, p.stderr.strip()
    except subprocess.TimeoutExpired:
        return family(m), -1, "timed out after 120 s"


def main():
    verbose = "-v" in sys.argv
    pat = ([a for a in sys.argv[1:] if a != "-v"] or [""])[0]
    cases = [c for c in sorted(glob.glob(DATA + "/test_*")) if re.search(pat, os.path.basename(c))]
    if not cases:
        print("1..1\nnot ok 1 no ONNX node test cases under %s (Debian package libonnx-testdata)" % DATA)
        return 1
    tally = collections.defaultdict(collections.Counter)
    bad = collections.defaultdict(list)
    with tempfile.TemporaryDirectory() as out:
        for case in cases:
            fam, rc, msg = run_case(case, out)
            kind = "pass" if rc == 0 else "refused" if rc == 3 else "FAILED"
            tally[fam][kind] += 1
            if rc != 0:
                bad[fam].append((os.path.basename(case), kind, rc, msg.replace("\n", " | ")[-300:]))
    fams = sorted(tally)
    print("1..%d" % len(fams))
    status = 0
    for i, fam in enumerate(fams, 1):
        t = tally[fam]
        floor = FLOORS.get(fam, 0) if not pat else 0
        ok = t["FAILED"] == 0 and t["pass"] >= floor
        status |= not ok
        print("%s %d %s: %d passed, %d refused, %d failed%s" % ("ok" if ok else "not ok", i, fam, t["pass"],
              t["refused"], t["FAILED"], "" if t["pass"] >= floor else " (fewer than %d passing)" % floor))
        for name, kind, rc, msg in bad[fam]:
            if kind == "FAILED" or verbose:
                print("#   %s %s (exit %d): %s" % (name, kind, rc, msg))
    return status


if __name__ == "__main__":
    sys.exit(main())
