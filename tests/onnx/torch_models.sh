#!/bin/bash
# Real models exported from PyTorch (tests/onnx/export_torch.py), run by ftrun on
# the cpu against PyTorch's float64 outputs. Prints TAP.
#
#   tests/onnx/torch_models.sh [MODEL...]     default: export_torch.py's CI set
#
#   FTRUN              the binary under test (default build/ftrun)
#   PYTHON             python3 with torch, torchvision and onnx (default /usr/bin/python3)
#   TORCH_MODELS_DIR   where the exports are cached (default build/torch-models; a
#                      folder is exported again only when export_torch.py changed)
#
# For each model folder (ONNX backend-test layout), one test:
#   ftrun test -d cpu --rtol R --atol A DIR      (every data set must PASS)
# with R and A from DIR/tolerance (without the test command: ftrun run on each
# data set). The dynamic-batch models (gpt_block*: symbolic dim "batch", data
# sets at batch 1 and 3) also run each data set with
#   ftrun run DIR/model.onnx --dim batch=N -i x=input_0.pb --expect output_0.pb
# A detector whose folder holds "unordered" (export_torch.py: UNORDERED) runs
#   ftrun run DIR/model.onnx -i image=input_0.pb -o OUT
# on each data set, and match_detections.py compares OUT with PyTorch's
# detections as a set (near-equal scores may come in either order).
# An ftrun whose --help does not mention ONNX gives one skipped test.
set -u
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
FTRUN=${FTRUN:-$root/build/ftrun}
PYTHON=${PYTHON:-/usr/bin/python3}
DIR=${TORCH_MODELS_DIR:-$root/build/torch-models}
export FTRUN_CUDA_DRIVER=${FTRUN_CUDA_DRIVER:-/nonexistent/libcuda.so.1}

n=0
ok() { n=$((n + 1)); echo "ok $n - $1"; }
notok() {
    n=$((n + 1))
    echo "not ok $n - $1"
    [ -n "${2:-}" ] && printf '%s\n' "$2" | head -5 | sed 's/^/#   /'
    return 0
}

help=$("$FTRUN" --help 2>&1)
if ! grep -qi onnx <<< "$help"; then
    echo "1..1"
    echo "ok 1 - torch models # skip this ftrun reads no ONNX (no mention in --help)"
    exit 0
fi

models=("$@")
if [ ${#models[@]} -eq 0 ]; then
    mapfile -t models < <("$PYTHON" "$here/export_torch.py" --list 2>/dev/null | awk '!/slow/ {print $1}')
fi
if [ ${#models[@]} -eq 0 ]; then
    echo "1..1"
    notok "torch/export: export_torch.py --list gave no model" "$("$PYTHON" "$here/export_torch.py" --list 2>&1)"
    exit 1
fi

log=$(mktemp)
out=$(mktemp -d)
trap 'rm -rf "$log" "$out"' EXIT
if ! nice "$PYTHON" "$here/export_torch.py" "$DIR" "${models[@]}" > "$log" 2>&1; then
    echo "1..1"
    notok "torch/export: export_torch.py failed" "$(grep -v Warning "$log" | tail -5)"
    exit 1
fi
grep '^# exported' "$log"

echo "# real models exported from PyTorch"
fail=0
have_test=0
grep -q '^ *ftrun test ' <<< "$help" && have_test=1
pb_field() { # pb_field FILE name|batch: a TensorProto file's name, or its first dim
    "$PYTHON" -c "import onnx, sys
t = onnx.TensorProto(); t.ParseFromString(open(sys.argv[1], 'rb').read())
print(t.name if sys.argv[2] == 'name' else t.dims[0])" "$1" "$2"
}
for m in "${models[@]}"; do
    d=$DIR/$m
    read -r rtol atol < "$d/tolerance"
    dynamic=0
    case $m in gpt_block*) dynamic=1 ;; esac
    if [ -f "$d/unordered" ]; then
        for set in "$d"/test_data_set_*; do
            label="torch/$m"
            [ "${set##*_}" = 0 ] || label="torch/$m set ${set##*_}"
            rm -rf "${out:?}"/*
            res=$("$FTRUN" run "$d/model.onnx" -d cpu -n 1 -q -o "$out/o" \
                      -i "$(pb_field "$set/input_0.pb" name)=$set/input_0.pb" 2>&1) &&
                res=$("$PYTHON" "$here/match_detections.py" "$set" "$out/o" "$rtol" "$atol" 2>&1)
            rc=$?
            if [ $rc -eq 0 ]; then ok "$label"; else notok "$label (exit $rc)" "$res"; fail=1; fi
        done
        continue
    fi
    if [ $have_test = 1 ]; then
        # every data set of the folder; the case passes only when all do
        res=$("$FTRUN" test -d cpu -j 1 --rtol "$rtol" --atol "$atol" "$d" 2>&1)
        rc=$?
        if [ $rc -eq 0 ] && grep -q '^PASS ' <<< "$res" && ! grep -qv '^PASS \|passed, 0 failed, 0 unsupported' <<< "$res"; then
            ok "torch/$m"
        else
            notok "torch/$m (ftrun test, exit $rc)" "$res"
            fail=1
        fi
        [ $dynamic = 1 ] || continue
    fi
    # ftrun run on each data set; the dynamic-batch model with --dim batch=N
    for set in "$d"/test_data_set_*; do
        k=${set##*_}
        in_name=$(pb_field "$set/input_0.pb" name)
        extra=()
        label="torch/$m"
        if [ $dynamic = 1 ]; then
            batch=$(pb_field "$set/input_0.pb" batch)
            extra=(--dim "batch=$batch")
            label="torch/$m run --dim batch=$batch"
        elif [ "$k" != 0 ]; then
            label="torch/$m set $k"
        fi
        rm -rf "${out:?}"/*
        res=$("$FTRUN" run "$d/model.onnx" -d cpu -n 1 -o "$out/o" "${extra[@]}" -i "$in_name=$set/input_0.pb" \
                  --expect "$set/output_0.pb" --rtol "$rtol" --atol "$atol" 2>&1)
        rc=$?
        if [ $rc -eq 0 ]; then ok "$label"; else notok "$label (exit $rc)" "$res"; fail=1; fi
    done
done
echo "1..$n"
exit $fail
