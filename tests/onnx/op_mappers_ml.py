#!/usr/bin/env python3
"""ONNX's string conversions and ai.onnx.ml ops against NumPy and Python:
Cast to and from strings (NumPy's astype(str) text of numbers, Python's float()
reading of text), StringSplit (Python's str.split), TfIdfVectorizer (a brute-force n-gram count), LabelEncoder (a Python dict),
TreeEnsemble (a recursive walk of each tree), run through tests/onnx/op_mappers.py's harness. Expected
values come from NumPy or Python, never from ftrun.

Usage: FTRUN=build/ftrun /usr/bin/python3 tests/onnx/op_mappers_ml.py [FILTER]
Prints TAP; exits 1 when a case fails.
"""
import os, re, sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import op_mappers as om  # noqa: E402
from op_mappers import TP  # noqa: E402

om.CASES.clear()
case = om.case

# Cast to strings: NumPy's str() of each element (onnx/reference/ops/op_cast.py casts with astype(str))
xf = np.array([[0.1, 1e-5, 1e20, 100.0], [-0.0, np.nan, np.inf, -np.inf], [123456789.0, 3.4e38, 1.17e-38, 1e-4],
               [9.999e15, 1e16, 0.3333333, -2.5]], np.float32)
case("cast_f32_to_string", "Cast", {"x": xf}, {"y": xf.astype(str)}, 13, {"to": TP.STRING})
xd = np.array([0.1, 1 / 3, 2.0 ** 60, 5e-324, -1e-7, 12345.678], np.float64)
case("cast_f64_to_string", "Cast", {"x": xd}, {"y": xd.astype(str)}, 13, {"to": TP.STRING})
xi = np.array([[0, -7, 2 ** 62], [12, -(2 ** 63), 99]], np.int64)
case("cast_i64_to_string", "Cast", {"x": xi}, {"y": xi.astype(str)}, 13, {"to": TP.STRING})
xb = np.array([True, False, True])
case("cast_bool_to_string", "Cast", {"x": xb}, {"y": xb.astype(str)}, 13, {"to": TP.STRING})

# Cast from strings: Python's float() reading (plain, scientific, NaN/INF in any case, blanks around);
# integers from a decimal text truncate toward zero (ONNX's "100.5" may give 100)
ts = np.array(["3.14", "1e-5", "1E8", " 2.5 ", "NaN", "INF", "+INF", "-inf", "-Infinity", "100", "0.1", "-0"])
case("cast_string_to_f32", "Cast", {"x": ts}, {"y": np.array([float(t) for t in ts], np.float32)}, 13,
     {"to": TP.FLOAT})
case("cast_string_to_f64", "Cast", {"x": ts}, {"y": np.array([float(t) for t in ts], np.float64)}, 13,
     {"to": TP.DOUBLE})
ti = np.array([["100.5", "-7", "42"], ["-3.9", "1e3", "9223372036854775807"]])
case("cast_string_to_i64", "Cast", {"x": ti},
     {"y": np.array([[int(t) if re.fullmatch(r"-?\d+", t) else int(float(t)) for t in r] for r in ti], np.int64)},
     13, {"to": TP.INT64})
tb = np.array(["True", "false", "0", "2.5"])
case("cast_string_to_bool", "Cast", {"x": tb},
     {"y": np.array([t.lower() == "true" if t.lower() in ("true", "false") else float(t) != 0 for t in tb])}, 13,
     {"to": TP.BOOL})
case("castlike_string_to_f32", "CastLike", {"x": ts}, {"y": np.array([float(t) for t in ts], np.float32)}, 15,
     consts={"like": np.zeros(1, np.float32)})


# StringSplit (opset 20) against Python's str.split(sep, maxsplit), rows padded with "" to the most pieces
def split_ref(x, sep=None, maxsplit=-1):
    parts = [t.split(sep, maxsplit) for t in x.ravel()]
    most = max([len(p) for p in parts], default=0)
    y = np.array([p + [""] * (most - len(p)) for p in parts], dtype=str).reshape(*x.shape, most)
    return y, np.array([len(p) for p in parts], np.int64).reshape(x.shape)


xs = np.array([["a,b,,c", ",lead", "none"], ["trail,", "", "x,y,z,w,v"]])
ys, ls = split_ref(xs, ",")
case("string_split_comma_2d", "StringSplit", {"x": xs}, {"y": ys, "n": ls}, 20, {"delimiter": ","})
ys, ls = split_ref(xs, ",", 1)
case("string_split_comma_maxsplit1", "StringSplit", {"x": xs}, {"y": ys, "n": ls}, 20, {"delimiter": ",", "maxsplit": 1})
xw = np.array(["  héllo \t wörld  ", "", "   ", "one", "a b  c\nd e"])
ys, ls = split_ref(xw)
case("string_split_blanks", "StringSplit", {"x": xw}, {"y": ys, "n": ls}, 20)
ys, ls = split_ref(xw, None, 2)
case("string_split_blanks_maxsplit2", "StringSplit", {"x": xw}, {"y": ys, "n": ls}, 20, {"maxsplit": 2})
xm = np.array(["a<>b<><>c", "<>", "<<>>"])
ys, ls = split_ref(xm, "<>")
case("string_split_two_char_delimiter", "StringSplit", {"x": xm}, {"y": ys, "n": ls}, 20, {"delimiter": "<>"})
xe = np.array(["", ""])
ys, ls = split_ref(xe)
case("string_split_all_empty", "StringSplit", {"x": xe}, {"y": ys, "n": ls}, 20)


# TfIdfVectorizer (opset 9) against a brute-force count: every n-gram of sizes min..max whose items
# are d apart (d = 1 .. max_skip_count + 1; a unigram once), looked up in the pool's n-grams
def tfidf_ref(x, pool, counts, idxs, lo, hi, skip, mode, w=None):
    grams, k = {}, 0
    for g, s in enumerate(counts):
        e = counts[g + 1] if g + 1 < len(counts) else len(pool)
        for a in range(s, e, g + 1):
            if lo <= g + 1 <= hi:
                grams[tuple(pool[a:a + g + 1])] = idxs[k]
            k += 1
    cols = max(idxs) + 1
    rows = x if x.ndim == 2 else x.reshape(1, -1)
    y = np.zeros((len(rows), cols), np.float32)
    for r, row in enumerate(rows.tolist()):
        for s in range(len(row)):
            if lo == 1 and (row[s],) in grams:
                y[r, grams[(row[s],)]] += 1
            for d in range(1, skip + 2):
                for n in range(max(lo, 2), hi + 1):
                    t = tuple(row[s + i * d] for i in range(n) if s + (n - 1) * d < len(row))
                    if len(t) == n and t in grams:
                        y[r, grams[t]] += 1
    if mode == "IDF":
        y = np.where(y > 0, np.float32(1) if w is None else np.asarray(w, np.float32)[:cols], np.float32(0))
    elif mode == "TFIDF" and w is not None:
        y = y * np.asarray(w, np.float32)[:cols]
    return y.astype(np.float32) if x.ndim == 2 else y.reshape(cols).astype(np.float32)


def tfidf_case(name, x, pool, counts, idxs, lo, hi, skip, mode, w=None):
    attrs = {"min_gram_length": lo, "max_gram_length": hi, "max_skip_count": skip, "mode": mode,
             "ngram_counts": counts, "ngram_indexes": idxs}
    attrs["pool_strings" if x.dtype.kind == "U" else "pool_int64s"] = list(pool)
    if w is not None:
        attrs["weights"] = w
    case(name, "TfIdfVectorizer", {"x": x}, {"y": tfidf_ref(x, list(pool), counts, idxs, lo, hi, skip, mode, w)}, 9,
         attrs)


xt = np.array([[1, 2, 3, 4, 5, 0, 4, 4, 2], [4, 4, 4, 0, 2, 3, 1, 2, 3], [1, 5, 2, 3, 3, 4, 5, 0, 1]], np.int64)
pt = [1, 4, 5, 1, 2, 3, 4, 4, 0, 2, 1, 2, 3, 4, 5, 0]  # 4 unigrams, 3 bigrams, 2 trigrams (and a repeated 2-gram start)
tfidf_case("tfidf_i64_uni_to_tri_skip2_tf", xt, pt, [0, 4, 10], list(range(9)), 1, 3, 2, "TF")
tfidf_case("tfidf_i64_bi_tri_skip1_idf_weights", xt, pt, [0, 4, 10], [8, 7, 6, 5, 4, 3, 2, 1, 0], 2, 3, 1, "IDF",
           [0.5, 1.5, 2.0, 0.25, 3.0, 1.0, 0.75, 2.5, 4.0])
tfidf_case("tfidf_i32_1d_tfidf_weights", xt[0].astype(np.int32), pt, [0, 4, 10], list(range(9)), 1, 2, 3, "TFIDF",
           [0.5, 1.5, 2.0, 0.25, 3.0, 1.0, 0.75, 2.5, 4.0])
tfidf_case("tfidf_i64_idf_no_weights", xt, pt, [0, 4, 10], list(range(9)), 1, 1, 0, "IDF")
xw2 = np.array([["the", "cat", "sat", "on", "the", "mat", "the", "dog", "cat", "sat"],
                ["héllo", "the", "cat", "a", "sat", "the", "cat", "sat", "dog", "on"]])
ps = ["cat", "dog", "héllo", "the", "cat", "sat", "on", "the", "dog", "the", "cat", "sat"]
tfidf_case("tfidf_strings_uni_bi_tri_skip1_tfidf", xw2, ps, [0, 3, 9], [2, 0, 1, 3, 5, 4, 6], 1, 3, 1, "TFIDF",
           [1.0, 2.0, 0.5, 1.5, 3.0, 0.25, 2.0])
tfidf_case("tfidf_strings_only_bigrams_tf", xw2, ps, [0, 3, 9], list(range(7)), 2, 2, 0, "TF")


# ai.onnx.ml LabelEncoder (versions 2-4) against a Python dict (a repeated key: the last value, as dict() keeps)
def encode(x, keys, values, default):
    d = {}
    for k, v in zip(keys, values):
        d[0.0 if isinstance(k, float) and k == 0 else k] = v
    nan = [v for k, v in zip(keys, values) if isinstance(k, float) and k != k]
    f = lambda e: nan[-1] if nan and isinstance(e, float) and e != e else d.get(e, default)
    return [f(e) for e in x.ravel().tolist()]


xle = np.array([["b", "zz", "a"], ["c", "a", "é"]])
ks, vs = ["a", "b", "c", "é", "a"], [3, 1, 2, 7, 9]
case("label_encoder_v2_string_to_i64", "ai.onnx.ml@2:LabelEncoder", {"x": xle},
     {"y": np.array(encode(xle, ks, vs, 42), np.int64).reshape(2, 3)}, 17,
     {"keys_strings": ks, "values_int64s": vs, "default_int64": 42})
xli = np.array([5, -1, 7, 0, 5], np.int64)
ki, vsi = [5, 7, 0], ["five", "seven", "zéro"]
case("label_encoder_v2_i64_to_string_default_unused", "ai.onnx.ml@2:LabelEncoder", {"x": xli},
     {"y": np.array(encode(xli, ki, vsi, "_Unused"))}, 17, {"keys_int64s": ki, "values_strings": vsi})
xlf = np.array([0.5, -0.0, np.nan, 2.0, 1.5, 3.25], np.float32)
kf, vf = [0.0, float("nan"), 1.5, 3.25], [10.0, 20.0, 30.0, 40.0]
case("label_encoder_v2_f32_nan_and_signed_zero_keys", "ai.onnx.ml@2:LabelEncoder", {"x": xlf},
     {"y": np.array(encode(xlf, kf, vf, -0.0), np.float32)}, 17, {"keys_floats": kf, "values_floats": vf})
xlt = np.array([[3, 1], [4, 1]], np.int32)
kt, vt = np.array([1, 3, 9], np.int32), np.array([0.25, 0.5, 0.75])
case("label_encoder_v4_tensors_i32_to_f64", "ai.onnx.ml@4:LabelEncoder", {"x": xlt},
     {"y": np.array(encode(xlt, kt.tolist(), vt.tolist(), -2.5)).reshape(2, 2)}, 17,
     {"keys_tensor": om.nh.from_array(kt), "values_tensor": om.nh.from_array(vt),
      "default_tensor": om.nh.from_array(np.array([-2.5]))})


# ai.onnx.ml TreeEnsemble (version 5) against a recursive walk of each tree, written from the operator's text
def tree_ref(x, a):
    sets, it = {}, iter(a.get("membership_values", []))
    for i, m in enumerate(a["nodes_modes"]):
        if m == 6:
            sets[i] = set()
            for v in it:
                if v != v:
                    break
                sets[i].add(v)
    mtt = a.get("nodes_missing_value_tracks_true", [0] * len(a["nodes_modes"]))
    ops = [lambda v, s: v <= s, lambda v, s: v < s, lambda v, s: v >= s, lambda v, s: v > s,
           lambda v, s: v == s, lambda v, s: v != s, None]

    def walk(row, i):
        v = float(row[a["nodes_featureids"][i]])
        m = a["nodes_modes"][i]
        go = (v != v and mtt[i]) or (v in sets[i] if m == 6 else ops[m](v, float(a["nodes_splits"][i])))
        leaf, nxt = (a["nodes_trueleafs"][i], a["nodes_truenodeids"][i]) if go else \
            (a["nodes_falseleafs"][i], a["nodes_falsenodeids"][i])
        return nxt if leaf else walk(row, nxt)

    agg, nt, big = a.get("aggregate_function", 1), a["n_targets"], np.finfo(x.dtype).max
    y = np.zeros((len(x), nt))
    for r, row in enumerate(x):
        acc = [big if agg == 2 else -big if agg == 3 else 0.0] * nt
        for root in a["tree_roots"]:
            lf = walk(row, root)
            t, w = a["leaf_targetids"][lf], float(a["leaf_weights"][lf])
            acc[t] = [acc[t] + w / len(a["tree_roots"]), acc[t] + w, min(acc[t], w), max(acc[t], w)][agg]
        y[r] = acc
    return y.astype(x.dtype)


def tree_case(name, x, a):
    attrs = dict(a)
    for k in ("nodes_splits", "leaf_weights", "membership_values"):
        if k in attrs:
            attrs[k] = om.nh.from_array(np.array(attrs[k], x.dtype), k)
    attrs["nodes_modes"] = om.nh.from_array(np.array(a["nodes_modes"], np.uint8), "nodes_modes")
    case(name, "ai.onnx.ml@5:TreeEnsemble", {"x": x}, {"y": tree_ref(x, a)}, 21, attrs)


# two trees over 3 features: tree 0 (nodes 0-3) LEQ, GT, MEMBER; tree 1 (nodes 4-6) LT, NEQ, GTE with NaN tracking
te = dict(nodes_featureids=[0, 1, 2, 0, 2, 1, 0], nodes_modes=[0, 3, 6, 4, 1, 5, 2],
          nodes_splits=[0.5, -1.0, 0.0, 2.0, 0.25, 3.0, -0.5],
          nodes_truenodeids=[1, 0, 1, 2, 5, 3, 4], nodes_trueleafs=[0, 1, 1, 1, 0, 1, 1],
          nodes_falsenodeids=[2, 3, 0, 4, 6, 5, 6], nodes_falseleafs=[0, 0, 1, 1, 0, 1, 1],
          leaf_targetids=[0, 1, 2, 0, 1, 2, 0], leaf_weights=[1.5, -2.0, 4.0, 0.25, 8.0, -1.0, 3.0],
          membership_values=[1.0, 2.0, 7.0, float("nan")], tree_roots=[0, 4], n_targets=3,
          nodes_missing_value_tracks_true=[1, 0, 0, 0, 1, 0, 1])
xte = np.array([[0.1, 0.0, 2.0], [0.9, -3.0, 7.0], [np.nan, 5.0, 0.5], [2.0, 3.0, np.nan], [0.5, -1.0, 1.0],
                [-4.0, 9.0, 0.3], [3.0, 0.2, -2.0], [2.0, np.nan, 0.1]], np.float32)
for agg, an in enumerate(["average", "sum", "min", "max"]):
    tree_case("tree_ensemble_f32_two_trees_" + an, xte, dict(te, aggregate_function=agg))
tree_case("tree_ensemble_f64_sum", xte.astype(np.float64), te)


# ai.onnx.ml TreeEnsembleRegressor (the legacy tables scikit-learn's converters write) against a walk of
# those tables by (tree id, node id), base_values added, then the post transform
def regressor_ref(x, a):
    nodes = {(t, i): k for k, (t, i) in enumerate(zip(a["nodes_treeids"], a["nodes_nodeids"]))}
    ops = {"BRANCH_LEQ": lambda v, s: v <= s, "BRANCH_LT": lambda v, s: v < s, "BRANCH_GTE": lambda v, s: v >= s,
           "BRANCH_GT": lambda v, s: v > s, "BRANCH_EQ": lambda v, s: v == s, "BRANCH_NEQ": lambda v, s: v != s}
    mtt = a.get("nodes_missing_value_tracks_true", [0] * len(nodes))
    trees = sorted(set(a["nodes_treeids"]))
    y = np.zeros((len(x), a["n_targets"]))
    for r, row in enumerate(x.astype(np.float64)):
        for t in trees:
            k = nodes[(t, min(i for tt, i in nodes if tt == t))]
            while a["nodes_modes"][k] != "LEAF":
                v = row[a["nodes_featureids"][k]]
                go = (v != v and mtt[k]) or ops[a["nodes_modes"][k]](v, a["nodes_values"][k])
                k = nodes[(t, (a["nodes_truenodeids"] if go else a["nodes_falsenodeids"])[k])]
            for j in range(len(a["target_ids"])):
                if (a["target_treeids"][j], a["target_nodeids"][j]) == (t, a["nodes_nodeids"][k]):
                    w = a["target_weights"][j]
                    y[r, a["target_ids"][j]] += w / len(trees) if a.get("aggregate_function") == "AVERAGE" else w
    y = y + np.array(a.get("base_values", [0.0] * a["n_targets"]))
    if a.get("post_transform") == "LOGISTIC":
        y = 1 / (1 + np.exp(-y))
    return y.astype(np.float32)


reg = dict(nodes_treeids=[0, 0, 0, 0, 0, 1, 1, 1, 2], nodes_nodeids=[0, 1, 2, 3, 4, 0, 1, 2, 0],
           nodes_featureids=[1, 0, 0, 0, 0, 2, 0, 0, 0],
           nodes_modes=["BRANCH_LEQ", "BRANCH_GT", "LEAF", "LEAF", "LEAF", "BRANCH_LT", "LEAF", "LEAF", "LEAF"],
           nodes_values=[0.5, -1.0, 0, 0, 0, 2.0, 0, 0, 0], nodes_truenodeids=[1, 2, 0, 0, 0, 1, 0, 0, 0],
           nodes_falsenodeids=[4, 3, 0, 0, 0, 2, 0, 0, 0], nodes_missing_value_tracks_true=[1, 0, 0, 0, 0, 0, 0, 0, 0],
           target_treeids=[0, 0, 0, 1, 1, 2], target_nodeids=[2, 3, 4, 1, 2, 0], target_ids=[0] * 6,
           target_weights=[1.5, -2.0, 4.0, 0.25, -0.75, 0.5], n_targets=1)
xreg = np.array([[0.0, 0.1, 3.0], [-2.0, 0.4, 1.0], [5.0, 0.9, 2.0], [1.0, np.nan, -1.0], [0.3, -4.0, np.nan]],
                np.float32)
case("tree_regressor_sum", "ai.onnx.ml@3:TreeEnsembleRegressor", {"x": xreg}, {"y": regressor_ref(xreg, reg)}, 17, reg)
reg2 = dict(reg, aggregate_function="AVERAGE", base_values=[0.125], post_transform="LOGISTIC")
case("tree_regressor_f64_average_base_logistic", "ai.onnx.ml@3:TreeEnsembleRegressor", {"x": xreg.astype(np.float64)},
     {"y": regressor_ref(xreg, reg2)}, 17, reg2)

if __name__ == "__main__":
    pat = sys.argv[1] if len(sys.argv) > 1 else ""
    sel = [c for c in om.CASES if re.search(pat, c[0])]
    print("1..%d" % len(sel))
    bad = sum(not om.run(i + 1, c) for i, c in enumerate(sel))
    sys.exit(1 if bad else 0)
