#!/usr/bin/env bats
# `ftrun ops --onnx`: the ONNX importer's operator catalogue (src/onnx/onnx_ops.c).

load helpers

@test "ops --onnx lists every operator with mapped, folded or missing and the counts" {
    run "$FTRUN" ops --onnx
    [ "$status" -eq 0 ]
    [[ "$output" =~ Gemm\ +mapped\ +gemm ]]
    [[ "$output" =~ Shape\ +folded\ +folded\ at\ load\ time ]]
    [[ "$output" =~ NonZero\ +mapped\ +non_zero\ \(run-time\ output\ shape\) ]]
    [[ "$output" =~ MaxRoiPool\ +missing\ +no\ ftrun\ op ]]
    [[ "$output" =~ Bernoulli\ +mapped\ +bernoulli ]]
    [[ "$output" =~ ai\.onnx\.preview\.training\.Adam\ +mapped ]]
    rows=$(printf '%s\n' "$output" | grep -cE '^[A-Za-z0-9.]+ +(mapped|folded|missing) ')
    last=$(printf '%s\n' "$output" | tail -1)
    [[ "$last" =~ ^([0-9]+)\ ONNX\ operators:\ ([0-9]+)\ mapped.*,\ ([0-9]+)\ folded.*,\ ([0-9]+)\ missing$ ]]
    [ "${BASH_REMATCH[1]}" -eq "$rows" ]
    [ $((BASH_REMATCH[2] + BASH_REMATCH[3] + BASH_REMATCH[4])) -eq "$rows" ]
}

@test "ops --onnx names every default-domain operator the onnx package knows" {
    "$FTRUN" ops --onnx | awk 'NF > 1 && $2 ~ /^(mapped|folded|missing)$/ {print $1}' | sort > listed
    "$PYTHON" -c 'import onnx.defs as d; print("\n".join(sorted({s.name for s in d.get_all_schemas_with_history() if s.domain == ""})))' > known
    [ -s known ]
    run comm -13 listed known
    [ "$status" -eq 0 ]
    [ -z "$output" ]
}

@test "ops --onnx is refused with another command" {
    run "$FTRUN" info --onnx x.json
    [ "$status" -eq 2 ]
    [[ "$output" =~ --onnx ]]
}
