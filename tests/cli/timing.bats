#!/usr/bin/env bats
# Timing defaults worth quoting: without -n, -w or --duration a run warms up
# and times runs for a documented duration (FTRUN_DEFAULT_DURATION, default
# 1 s); the summary line gives min, median, mean, p90, p99 and runs per
# second; warnings only where they carry information.

bats_require_minimum_version 1.5.0
load helpers

@test "default timing: a warm-up, then timed runs for about a second; timing.json counts both" {
    unset FTRUN_DEFAULT_DURATION
    start=$(date +%s.%N)
    run --separate-stderr "$FTRUN" "$DATA/small.json" -o "$T/o"
    end=$(date +%s.%N)
    status_is 0
    py '
t = json.load(open(sys.argv[1]))
assert t["warmup"] >= 1, t
assert t["iterations"] >= 10, t
wall = float(sys.argv[3]) - float(sys.argv[2])
assert 1.0 <= wall < 10, wall' "$T/o/timing.json" "$start" "$end"
}

@test "default timing: FTRUN_DEFAULT_DURATION sets the duration, 0 means one cold run" {
    FTRUN_DEFAULT_DURATION=0.25 run --separate-stderr "$FTRUN" "$DATA/small.json" -o "$T/a"
    status_is 0
    py 't = json.load(open(sys.argv[1])); assert t["warmup"] >= 1 and t["iterations"] >= 2, t' "$T/a/timing.json"
    FTRUN_DEFAULT_DURATION=0 run --separate-stderr "$FTRUN" "$DATA/small.json" -o "$T/b"
    py 't = json.load(open(sys.argv[1])); assert t["warmup"] == 0 and t["iterations"] == 1, t' "$T/b/timing.json"
    FTRUN_DEFAULT_DURATION=soon run --separate-stderr "$FTRUN" "$DATA/small.json" -o "$T/c"
    status_is 2
    [[ "$stderr" == *"FTRUN_DEFAULT_DURATION"*"soon"* ]]
}

@test "-n 1 is one timed run after the 2 default warm-up runs (-w 0: the cold run); -w alone means no extra timed runs" {
    unset FTRUN_DEFAULT_DURATION
    run --separate-stderr "$FTRUN" "$DATA/small.json" -n 1 -o "$T/a"
    status_is 0
    py 't = json.load(open(sys.argv[1])); assert t["warmup"] == 2 and t["iterations"] == 1, t' "$T/a/timing.json"
    run --separate-stderr "$FTRUN" "$DATA/small.json" -w 0 -n 1 -o "$T/a0"
    py 't = json.load(open(sys.argv[1])); assert t["warmup"] == 0 and t["iterations"] == 1, t' "$T/a0/timing.json"
    run --separate-stderr "$FTRUN" "$DATA/small.json" -w 2 -o "$T/b"
    py 't = json.load(open(sys.argv[1])); assert t["warmup"] == 2 and t["iterations"] == 1, t' "$T/b/timing.json"
    run --separate-stderr "$FTRUN" "$DATA/small.json" --duration 0.2 -o "$T/c"
    py 't = json.load(open(sys.argv[1])); assert t["warmup"] == 2 and t["iterations"] >= 2, t' "$T/c/timing.json"
}

@test "summary line: min, median, mean, p90, p99 and runs per second, equal to timing.json" {
    run --separate-stderr "$FTRUN" "$GRAPHS/mlp.json" -w 2 -n 150 -o "$T/o"
    status_is 0
    line=$(printf '%s\n' "$stderr" | grep '^ftrun: mlp:')
    [[ "$line" =~ "3 nodes on cpu: 150 runs ("([0-9.]+)"/s): min "([0-9.]+)", median "([0-9.]+)", mean "([0-9.]+)", p90 "([0-9.]+)", p99 "([0-9.]+)" ms; results in " ]]
    py '
t = json.load(open(sys.argv[1]))["run_ms"]
rate, mn, med, mean, p90, p99 = map(float, sys.argv[2:])
for k, v in (("min", mn), ("median", med), ("mean", mean), ("p90", p90), ("p99", p99)):
    assert abs(t[k] - v) <= 0.0005 + 1e-9, (k, t[k], v)
# runs per second at the median run, the figure the line quotes
assert abs(rate - 1000.0 / t["median"]) <= (0.002 + 1e-6 / t["median"]) * rate + 0.05, (rate, t["median"])
' "$T/o/timing.json" "${BASH_REMATCH[@]:1}"
}

@test "summary line: p90 and p99 only with the runs to mean something" {
    run --separate-stderr "$FTRUN" "$DATA/small.json" -n 5 -o "$T/o"
    line=$(printf '%s\n' "$stderr" | grep '^ftrun: small:')
    [[ "$line" == *"5 runs ("*"/s): min "*", median "*", mean "*" ms; results in"* ]]
    [[ "$line" != *"p90"* ]]
    run --separate-stderr "$FTRUN" "$DATA/small.json" -n 20 -o "$T/o"
    line=$(printf '%s\n' "$stderr" | grep '^ftrun: small:')
    [[ "$line" == *", p90 "*" ms; results"* ]]
    [[ "$line" != *"p99"* ]]
}

@test "--format none: the summary points at timing.json, not at results" {
    run --separate-stderr "$FTRUN" "$DATA/small.json" --format none -o "$T/o"
    status_is 0
    [[ "$stderr" == *"; timings in $T/o/timing.json"* ]]
    [[ "$stderr" != *"results in"* ]]
}

@test "the README's and man page's timing examples and make demo's command print no warning about runs or transfers" {
    unset FTRUN_DEFAULT_DURATION
    run --separate-stderr "$FTRUN" "$GRAPHS/mlp.json" -o "$T/a"
    status_is 0
    [[ "$stderr" != *"transfers take longer"* ]]
    [[ "$stderr" != *"runs: p99 needs"* ]]
    run --separate-stderr "$FTRUN" "$GRAPHS/stats.json" -w 3 -n 100 --format none -o "$T/b"
    [[ "$stderr" != *"transfers take longer"* ]]
    [[ "$stderr" != *"runs: p99 needs"* ]]
}
