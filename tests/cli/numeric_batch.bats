#!/usr/bin/env bats
# The numeric harness's batch mode (tests/numeric/batch.py: one `ftrun test` over
# test folders, the harness's own per-element checks on the saved outputs) gives
# the verdicts of run mode (an `ftrun run` per case): on cases whose right verdict
# is known (tests/numeric/harness_selftest.py; their expected values are NumPy's),
# on a case that times out or crashes, and on a subset of the tier
# (tests/cuda/batch_same.sh numeric).

bats_require_minimum_version 1.5.0
load helpers

selftest() {
    "$PYTHON" "$ROOT/tests/numeric/harness_selftest.py" "$@"
}

@test "numeric harness: batch and run modes give the known verdicts" {
    for mode in batch run; do
        FTNUM_MODE=$mode run selftest verdicts
        echo "$output"
        [ "$status" -eq 1 ]
        grep -qx "ok 1 - right: add" <<< "$output"
        grep -qx "not ok 2 - wrong: one element off" <<< "$output"
        grep -q "^# output 'y': 1 of 64 values differ (exact); worst at \[17\]" <<< "$output"
        grep -qx "ok 3 - right: looser bound than ftrun test's" <<< "$output"
        grep -qx "not ok 4 - wrong: tighter bound than ftrun test's" <<< "$output"
        grep -q "^# output 'y': 64 of 64 values differ (rtol=2.38e-07" <<< "$output"
        grep -qx "not ok 5 - wrong: dtype" <<< "$output"
        grep -qx "ok 6 - right: inputs with --input" <<< "$output"
        grep -qx "ok 7 - right: expected error" <<< "$output"
        grep -qx "not ok 8 - wrong: an error that does not come" <<< "$output"
        grep -qx "# 4 of 8 numeric cases failed" <<< "$output"
    done
    # in batch mode the six cases without an expected error went through one ftrun test
    FTNUM_MODE=batch run selftest verdicts
    grep -q "^# batch mode: 6 cases batched in 1 ftrun test runs (-j 2), 2 in run mode" <<< "$output"
    grep -q "^# batch of 6 cases: .* test .* --save-outputs " <<< "$output"
}

@test "numeric harness: FTNUM_MODE takes batch or run" {
    FTNUM_MODE=single run selftest verdicts
    [ "$status" -eq 2 ]
    [[ "$output" == *"FTNUM_MODE=single: not batch or run"* ]]
}

@test "numeric harness, batch mode: a case that times out fails alone" {
    for mode in batch run; do
        FTNUM_MODE=$mode FTNUM_TIMEOUT=2 FTNUM_JOBS=1 run selftest slow
        echo "$output"
        [ "$status" -eq 1 ]
        grep -qx "ok 1 - quick 1" <<< "$output"
        grep -qx "not ok 2 - slow" <<< "$output"
        grep -qx "ok 3 - quick 2" <<< "$output"
    done
    FTNUM_MODE=batch FTNUM_TIMEOUT=2 FTNUM_JOBS=1 run selftest slow
    grep -qx "# ftrun test: FAIL: timed out after 2 s (--timeout); the case was killed" <<< "$output"
}

@test "numeric harness, batch mode: a case whose ftrun test worker crashes fails alone" {
    # exec: $! is the harness, its child ftrun test, whose child the worker
    (
        export FTNUM_MODE=batch FTNUM_TIMEOUT=120 FTNUM_JOBS=1
        exec "$PYTHON" "$ROOT/tests/numeric/harness_selftest.py" slow > out.txt 2> err.txt
    ) &
    pid=$!
    # "ok 1" is printed once quick 1 is checked: the one worker then runs slow
    for _ in $(seq 300); do
        grep -q "^ok 1 - quick 1" out.txt && break
        sleep 0.1
    done
    grep -q "^ok 1 - quick 1" out.txt
    test_pid=$(pgrep -P "$pid" -x ftrun | head -1)
    [ -n "$test_pid" ]
    worker=$(pgrep -P "$test_pid" | head -1)
    [ -n "$worker" ]
    sleep 0.3
    kill -SEGV "$worker"
    wait "$pid" || st=$?
    cat out.txt err.txt
    [ "${st:-0}" -eq 1 ]
    grep -qx "not ok 2 - slow" out.txt
    # under AddressSanitizer its handler reports the signal and exits
    grep -Eq "^# ftrun test: FAIL: crashed: (killed by signal 11 \(Segmentation fault\)|exited with status [0-9]+ before a verdict)" out.txt
    grep -qx "ok 3 - quick 2" out.txt
}

@test "numeric tier on the cpu: batch mode and run mode give the same verdicts" {
    # elementwise, reductions, matrix products, casts, --threads variants (a batch
    # of their own), --seed and expected errors (run mode in both)
    FTNUM_ONLY='^(add|exp|sigmoid|reduce_sum|matmul|gemm|cast|softmax|layer_norm|init|gather|concat) ' \
        run "$ROOT/tests/cuda/batch_same.sh" numeric
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *"ok 1 - numeric tier on the cpu: batch mode ("*" cases batched) and run mode agree on all "*" verdicts"* ]]
    [[ "$output" == *"# batch of "*" test "*" -d cpu"* ]]
    [[ "$output" == *"--threads 3"* ]]
}
