#!/bin/bash
# The CUDA tier (needs a usable CUDA device): the numeric tests on cuda:0
# against NumPy, then the parity suite (every op x dtype x shape on cuda
# against the cpu reference). Prints TAP; exits 1 if anything failed.
#   FTRUN, PYTHON          as for tests/run.sh
#   FTCUDA_WRAP=CMD        run every ftrun under CMD (make test-cuda-sanitize
#                          uses compute-sanitizer)
set -u
here=$(cd "$(dirname "$0")" && pwd)
export FTRUN=${FTRUN:-$here/../../build/ftrun}
PYTHON=${PYTHON:-/usr/bin/python3}
# GPU machines have more cores than the kernels of one small case need: run
# a few cases at once. The batch modes of both suites (the default; run mode
# under FTCUDA_WRAP) run their cases in FTNUM_TEST_JOBS / FTPARITY_TEST_JOBS
# `ftrun test` workers, each of which starts CUDA once; the cases they cannot
# batch (expected errors, --seed) are a process each, FTNUM_JOBS / FTPARITY_JOBS
# at once.
jobs=$(( $(nproc) / 4 )); [ "$jobs" -lt 2 ] && jobs=2; [ "$jobs" -gt 8 ] && jobs=8
export FTNUM_JOBS=${FTNUM_JOBS:-$jobs} FTPARITY_JOBS=${FTPARITY_JOBS:-$jobs} FTPARITY_TEST_JOBS=${FTPARITY_TEST_JOBS:-$jobs}
export FTNUM_TEST_JOBS=${FTNUM_TEST_JOBS:-$jobs}
status=0
echo "# CUDA tier: numeric tests on cuda:0 against NumPy (tests/numeric/batch.py: one ftrun test -d cuda)"
FTNUM_ARGS="-d cuda" FTNUM_TAG="cuda: " FTNUM_WRAP="${FTCUDA_WRAP:-}" "$PYTHON" "$here"/../numeric/test_ops.py || status=1
echo "# CUDA tier: parity suite, cuda:0 against the cpu reference"
FTPARITY_WRAP="${FTCUDA_WRAP:-}" "$PYTHON" "$here"/parity.py || status=1
exit $status
