#!/bin/bash
# Runs every test tier and ends with the line "N passed, N failed[, N skipped]".
#   FTRUN   the binary under test (default build/ftrun)
#   PYTHON  a python3 with NumPy (default /usr/bin/python3)
# Each tier prints TAP; this script counts "ok" / "not ok" lines (a "# skip"
# directive counts as skipped, never as passed).
set -u
here=$(cd "$(dirname "$0")" && pwd)
export FTRUN=${FTRUN:-$here/../build/ftrun}
export PYTHON=${PYTHON:-/usr/bin/python3}
export TESTS_DIR=$here
# one run, not a second of them, where a test gives neither -n, -w nor --duration
export FTRUN_DEFAULT_DURATION=${FTRUN_DEFAULT_DURATION:-0}
log=$(mktemp)
trap 'rm -f "$log"' EXIT

status=0
# The command-line and numeric tiers test the CPU reference: with the NVIDIA
# driver hidden, the default device (auto) is the cpu on every machine. The
# CUDA tier below runs with the driver.
cpu_env=(env FTRUN_CUDA_DRIVER=/nonexistent/libcuda.so.1)
echo "# command-line tests (bats)"
"${cpu_env[@]}" bats --tap "$here"/cli/*.bats 2>&1 | tee -a "$log" || status=1
echo "# numeric tests against NumPy"
"${cpu_env[@]}" "$PYTHON" "$here"/numeric/test_ops.py 2>&1 | tee -a "$log" || status=1
echo "# numeric conv tests in each CPU form of f32 conv (FTRUN_CONV_IMPL, ftrun(1))"
for impl in native plain blocked blocked-add; do
    "${cpu_env[@]}" FTRUN_CONV_IMPL=$impl FTNUM_ONLY='^conv[123]d ' FTNUM_TAG="$impl: " "$PYTHON" \
        "$here"/numeric/test_ops.py 2>&1 | tee -a "$log" || status=1
done
echo "# numeric matmul / gemm tests in each CPU form of the f32 product (FTRUN_MATMUL_IMPL, ftrun(1))"
for impl in blas dnnl conv; do
    "${cpu_env[@]}" FTRUN_MATMUL_IMPL=$impl FTNUM_ONLY='^(matmul|gemm) ' FTNUM_TAG="$impl: " "$PYTHON" \
        "$here"/numeric/test_ops.py 2>&1 | tee -a "$log" || status=1
done
echo "# ONNX's own test data (libonnx-testdata) through ftrun test"
"${cpu_env[@]}" "$PYTHON" "$here"/onnx/testdata.py 2>&1 | tee -a "$log" || status=1
echo "# the same at -O0: the optimizer changes no verdict (its expanded-form cases run fused above)"
"${cpu_env[@]}" FTRUN_TEST_OPT=-O0 "$PYTHON" "$here"/onnx/testdata.py 2>&1 | tee -a "$log" || status=1
echo "# ONNX's test data at 6be0677 (IR 3-13, opsets 1-26; tests/data/onnx-testdata-6be0677) through ftrun test"
"${cpu_env[@]}" "$here"/onnx/testdata_6be0677.sh 2>&1 | tee -a "$log" || status=1
echo "# the same at -O0"
"${cpu_env[@]}" FTRUN_TEST_OPT=-O0 "$here"/onnx/testdata_6be0677.sh 2>&1 | tee -a "$log" || status=1
echo "# ONNX op mappers on newer opsets and expansions, against NumPy/PyTorch"
"${cpu_env[@]}" "$PYTHON" "$here"/onnx/op_mappers.py 2>&1 | tee -a "$log" || status=1
"${cpu_env[@]}" "$PYTHON" "$here"/onnx/op_mappers_ml.py 2>&1 | tee -a "$log" || status=1
echo "# ONNX load-time folding against NumPy"
"${cpu_env[@]}" "$PYTHON" "$here"/onnx/fold_cases.py 2>&1 | tee -a "$log" || status=1
echo "# models exported from PyTorch/torchvision, against PyTorch"
"${cpu_env[@]}" "$here"/onnx/torch_models.sh 2>&1 | tee -a "$log" || status=1

# The CUDA tier: the numeric tests again on cuda:0 (against NumPy) and the
# backend parity suite (cuda against the cpu reference). It needs a usable
# CUDA device; without one it is one skipped test that says why.
if [ "${FTRUN_SKIP_CUDA:-}" = 1 ]; then
    echo "# CUDA tier: not run here (FTRUN_SKIP_CUDA=1)"
elif "$FTRUN" devices 2>/dev/null | grep -q '^cuda:' &&
     "$FTRUN" devices 2>/dev/null | grep -q 'CUDA backend: .*(loaded)'; then
    "$here"/cuda/run.sh 2>&1 | tee -a "$log" || status=1
else
    why=$("$FTRUN" devices 2>/dev/null | sed -n 's/^cuda  *none: //p; s/^ *CUDA backend: \(.*[^)]\)$/\1/p' | head -1)
    echo "# CUDA tier SKIPPED: no usable CUDA device (${why:-unknown reason})"
    echo "ok 1 - CUDA parity suite # skip no usable CUDA device: ${why:-unknown reason}" | tee -a "$log"
fi

passed=$(grep -E '^ok ' "$log" | grep -vc '# skip' || true)
skipped=$(grep -E '^ok .*# skip' -c "$log" || true)
failed=$(grep -Ec '^not ok ' "$log" || true)
if [ "$failed" -gt 0 ]; then
    status=1
    # the failures again, last, where a log's tail shows them
    echo "# failed tests (the first 20 of $failed):"
    grep -E '^not ok ' "$log" | head -20 | cut -c1-400 | sed 's/^/#   /'
fi
if [ "$passed" -eq 0 ]; then echo "# no test ran"; status=1; fi
if [ "$skipped" -gt 0 ]; then
    echo "$passed passed, $failed failed, $skipped skipped"
else
    echo "$passed passed, $failed failed"
fi
exit $status
