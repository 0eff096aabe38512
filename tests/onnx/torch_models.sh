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
# For each model folder (ONNX backend-test layout), one test per test data set:
#   ftrun run DIR/model.onnx -i NAME=input_0.pb --expect output_0.pb --rtol R --atol A
# with R and A from DIR/tolerance; the dynamic-batch model (gpt_block: symbolic
# dim "batch") runs at batch 1 and 3, binding the dim with --dim batch=N (when
# this ftrun has --dim; else from the input's shape). Then
# `ftrun test` over every folder, when this ftrun has the test command. An ftrun
# whose --help does not mention ONNX gives one skipped test.
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
for m in "${models[@]}"; do
    d=$DIR/$m
    read -r rtol atol < "$d/tolerance"
    for set in "$d"/test_data_set_*; do
        k=${set##*_}
        in_name=$("$PYTHON" -c "import onnx, sys; t = onnx.TensorProto(); t.ParseFromString(open(sys.argv[1], 'rb').read()); print(t.name)" "$set/input_0.pb")
        batch=$("$PYTHON" -c "import onnx, sys; t = onnx.TensorProto(); t.ParseFromString(open(sys.argv[1], 'rb').read()); print(t.dims[0])" "$set/input_0.pb")
        extra=()
        label="torch/$m"
        if [ "$m" = gpt_block ] || [ "$m" = gpt_block_opset17 ]; then
            if grep -q -- '--dim' <<< "$help"; then extra=(--dim "batch=$batch"); fi
            label="torch/$m batch=$batch"
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

if grep -q '^ *ftrun test ' <<< "$help"; then
    dirs=()
    for m in "${models[@]}"; do dirs+=("$DIR/$m"); done
    res=$("$FTRUN" test -d cpu "${dirs[@]}" 2>&1)
    rc=$?
    if [ $rc -eq 0 ]; then ok "torch/ftrun test (${#dirs[@]} folders)"; else notok "torch/ftrun test (exit $rc)" "$res"; fail=1; fi
fi
echo "1..$n"
exit $fail
