#!/bin/bash
# Line coverage of the CPU kernels reached by fuzz_run (see fuzz/README.md),
# called by `make fuzz-coverage` once the coverage build exists:
#   FUZZ_COV_BUILD=build/fuzz-cov fuzz/coverage.sh [CORPUS_DIR...]
# Runs FUZZ_COV_BUILD/fuzz_run once over every file of the corpus folders
# (default: build/fuzz/work/run/corpus when a campaign left one, else
# fuzz/corpus/run and fuzz/regress/run), merges the profile and prints
# llvm-cov's report of src/cpu (per file and the total); the whole report
# (every source file) is left in FUZZ_COV_BUILD/report.txt. LLVM_VERSION
# picks llvm-profdata-N and llvm-cov-N (default 14, the clang of Debian 12).
set -eu
cd "$(dirname "$0")/.."
build=${FUZZ_COV_BUILD:-build/fuzz-cov}
v=${LLVM_VERSION:-14}
profdata=$(command -v "llvm-profdata-$v" || command -v llvm-profdata || true)
cov=$(command -v "llvm-cov-$v" || command -v llvm-cov || true)
if [ -z "$profdata" ] || [ -z "$cov" ]; then
    echo "fuzz-coverage: llvm-profdata-$v or llvm-cov-$v not found (apt-get install llvm-$v)" >&2
    exit 2
fi
dirs=("$@")
if [ ${#dirs[@]} -eq 0 ]; then
    if [ -d build/fuzz/work/run/corpus ]; then
        dirs=(build/fuzz/work/run/corpus)
    else
        dirs=(fuzz/corpus/run fuzz/regress/run)
    fi
fi
rm -f "$build"/run-*.profraw "$build/run.profdata"
echo "fuzz-coverage: running $build/fuzz_run over ${dirs[*]}"
# -runs=0: every file once, no fuzzing. No sanitizer makes large allocations
# fail here (fuzz_common.h): a 2 GiB address space does, so that a graph
# declaring gigabytes meets "out of memory" instead of filling the machine
# (OpenBLAS, which reserves buffers per thread when it loads, gets the 3
# threads a run may use at most).
ulimit -v 2097152
OPENBLAS_NUM_THREADS=3 OMP_NUM_THREADS=1 LLVM_PROFILE_FILE="$build/run-%p.profraw" "$build/fuzz_run" -runs=0 -timeout=30 -rss_limit_mb=4096 \
    "${dirs[@]}" >"$build/run.log" 2>&1 || { tail -20 "$build/run.log" >&2; exit 1; }
grep -E "^#[0-9]+[[:space:]]+(INITED|DONE)" "$build/run.log" | tail -1
"$profdata" merge -sparse "$build"/run-*.profraw -o "$build/run.profdata"
"$cov" report "$build/fuzz_run" -instr-profile="$build/run.profdata" >"$build/report.txt"
"$cov" report "$build/fuzz_run" -instr-profile="$build/run.profdata" src/cpu
