#!/usr/bin/env bats
# The sources keep their promises to readers: the usage example in every
# header's leading comment compiles against that header
# (tests/source/header_examples.py), and every file a comment under src/
# cites exists (tests/source/cited_paths.py), and no file under src/ imports
# itself through others, nor any folder (tests/source/import_cycles.py). Each
# checker is also run on a small tree with one broken example, citation or
# import, which it must reject.

bats_require_minimum_version 1.5.0
load helpers

# The folder of the generated onnx.pb-c.h beside the binary under test.
gen_dir() {
    local b
    b=$(cd "$(dirname "$FTRUN")" && pwd)
    if [ -f "$b/gen/onnx.pb-c.h" ]; then echo "$b/gen"; else echo "$ROOT/build/gen"; fi
}

@test "sources: the usage example of every header under src/ compiles" {
    run "$PYTHON" "$TESTS_DIR/source/header_examples.py" "$ROOT" "$(gen_dir)"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *", 0 failing"* ]]
}

@test "sources: a header whose example calls an undeclared project function, or has a syntax error, is rejected" {
    mkdir -p "$T/tree/src"
    cat > "$T/tree/src/good.h" <<'H'
/* A header.
 *
 *   int v = ft_good(x);   // x: given
 */
int ft_good(int x);
H
    cat > "$T/tree/src/stale.h" <<'H'
/* A header whose example names a function it no longer declares.
 *
 *   int v = ft_renamed(x, &err);
 */
int ft_current(int x);
H
    cat > "$T/tree/src/prose.h" <<'H'
/* A header whose example is prose.
 *
 *   ft_good(1) -> the answer
 */
int ft_good(int x);
H
    run "$PYTHON" "$TESTS_DIR/source/header_examples.py" "$T/tree" "$(gen_dir)"
    echo "$output"
    [ "$status" -eq 1 ]
    [[ "$output" == *"src/stale.h:   example uses ft_renamed, which the header does not declare"* ]]
    [[ "$output" == *"src/prose.h:"*"error:"* ]]
    [[ "$output" != *"src/good.h"* ]]
    [[ "$output" == *"3 headers, 2 failing"* ]]
}

@test "sources: every file a comment under src/ cites exists" {
    run "$PYTHON" "$TESTS_DIR/source/cited_paths.py" "$ROOT"
    echo "$output"
    [ "$status" -eq 0 ]
    [ -z "$output" ]
}

@test "sources: a comment citing a missing file is reported with the citing file" {
    mkdir -p "$T/tree/src/cpu"
    printf '/* as in cpu/here.c and src/cpu/gone.c */\nint x;\n' > "$T/tree/src/cpu/here.c"
    run "$PYTHON" "$TESTS_DIR/source/cited_paths.py" "$T/tree"
    echo "$output"
    [ "$status" -eq 1 ]
    [ "$output" = "src/cpu/here.c: cites src/cpu/gone.c, which does not exist" ]
}

@test "sources: no import circle among the files or the folders of src/" {
    run "$PYTHON" "$TESTS_DIR/source/import_cycles.py" "$ROOT"
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" == *" 0 circles" ]]
}

@test "sources: an import circle made in a copy of src/ is reported, among files and among folders" {
    mkdir -p "$T/tree"
    cp -r "$ROOT/src" "$T/tree/src"
    # a unit circle inside graph/: lowp -> elem -> dtype_load -> lowp
    printf '#include "elem.h"\n' >> "$T/tree/src/graph/lowp.h"
    # a folder circle: graph -> onnx -> graph
    printf '#include "../onnx/onnx.h"\n' >> "$T/tree/src/graph/infer_misc.c"
    run "$PYTHON" "$TESTS_DIR/source/import_cycles.py" "$T/tree"
    echo "$output"
    [ "$status" -eq 1 ]
    [[ "$output" == *"unit circle: graph/dtype_load, graph/elem, graph/lowp ("* ]]
    [[ "$output" == *"  graph/lowp imports graph/elem"* ]]
    [[ "$output" == *"folder circle: graph, io, onnx (graph -> onnx -> graph)"* ]]
    [[ "$output" == *"  graph/infer_misc imports onnx/onnx"* ]]
    [[ "$output" == *" 2 circles" ]]
}
