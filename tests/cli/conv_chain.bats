#!/usr/bin/env bats
# Chains of f32 convolutions on the CPU (src/cpu/conv_dnnl.c; ftrun(1),
# FTRUN_CONV_IMPL and FTRUN_CONV_LOG): a tensor between two convs may stay in
# oneDNN's blocked layout. Every graph here is checked against PyTorch
# (tests/cli/conv_chain.py, float64) in every conv form, at 1 and 2 threads,
# optimized (-O2: activations and residual adds fused into the convs) and
# not (-O0); and the log shows which tensors stayed blocked.

load helpers

# gen KIND [--nan]: $T/KIND.onnx, $T/x.npy, $T/want/
gen() {
    local k=$1
    shift
    "$PYTHON" "$TESTS_DIR/cli/conv_chain.py" "$k" "$T" "$@"
}

# check_all KIND [ARGS]: every form x threads x level agrees with want/.
check_all() {
    local k=$1 impl t O
    shift
    for impl in auto native plain blocked blocked-add; do
        for t in 1 2; do
            for O in -O2 -O0; do
                FTRUN_CONV_IMPL=$impl run "$FTRUN" "$T/$k.onnx" -i x=x.npy -o o -q --threads $t $O \
                    --expect want --rtol 1e-4 --atol 1e-4 "$@"
                if [ "$status" -ne 0 ]; then
                    echo "$k FTRUN_CONV_IMPL=$impl --threads $t $O: exit $status: $output"
                    return 1
                fi
            done
        done
    done
}

# log KIND [ARGS]: FTRUN_CONV_LOG's lines of two runs on one thread (-O2; a node's
# second run at a thread count picks its form).
log() {
    local k=$1
    shift
    FTRUN_CONV_LOG=1 "$FTRUN" "$T/$k.onnx" -i x=x.npy -o o --threads 1 -w 1 -n 1 "$@" 2>&1 | grep "^ftrun: conv '"
}

# layouts KIND [ARGS]: as log, with the lines of the blocked copies and of the
# other nodes that read a blocked tensor.
layouts() {
    local k=$1
    shift
    FTRUN_CONV_LOG=1 "$FTRUN" "$T/$k.onnx" -i x=x.npy -o o --threads 1 -w 1 -n 1 "$@" 2>&1 |
        grep "^ftrun: \(conv\|tensor\|max_pool\|global_average_pool\|global_max_pool\|mul\) '"
}

# oneDNN has blocked f32 convolutions on x86-64 with AVX2 or more.
simd() {
    grep -qw avx2 /proc/cpuinfo
}

@test "conv chain: conv, depthwise, 1x1, residual add and 1x1 agree with PyTorch in every form" {
    for k in mbv2 c24; do
        gen $k
        check_all $k
    done
}

@test "conv chain: the tensors between convs stay blocked; the graph's input and output do not" {
    simd || skip "no AVX2: oneDNN keeps the plain layout"
    gen mbv2
    run log mbv2
    echo "$output"
    [ "${#lines[@]}" -eq 4 ]
    # the graph's input x stays plain; the first conv and the 1x1 conv that
    # adds it (the residual add fused) read one blocked copy of it
    [[ "${lines[0]}" =~ "input blocked (copy), output blocked" ]]
    [[ "${lines[1]}" =~ "input blocked, output blocked" ]]
    [[ "${lines[2]}" =~ "input blocked, sum blocked (copy), output blocked" ]]
    [[ "${lines[3]}" =~ "input blocked, output plain" ]]
    # each line names the candidates' times and the pick
    [[ "${lines[1]}" =~ ^ftrun:\ conv\ \'Conv_[0-9]+\+clip\':\ (plain|blocked|native)\ \(.*blocked\ [0-9.]+\ ms.*native\ [0-9.]+\ ms\) ]]
    run log mbv2 -O0
    # -O0: the activations and the add are nodes of their own, so every
    # conv's output has a reader that is not a conv
    [ "${#lines[@]}" -eq 4 ]
    [ "$(printf '%s\n' "${lines[@]}" | grep -c 'input blocked\|output blocked')" -eq 0 ]
    FTRUN_CONV_IMPL=native run log mbv2
    [ "$(printf '%s\n' "${lines[@]}" | grep -c 'input blocked\|output blocked')" -eq 0 ]
    [[ "${lines[0]}" =~ "native (forced by FTRUN_CONV_IMPL)" ]]
    FTRUN_CONV_IMPL=blocked run log mbv2
    [[ "${lines[1]}" =~ "blocked (forced by FTRUN_CONV_IMPL); input blocked, output blocked" ]]
}

@test "conv chain: squeeze-excitation and max pool: the pools and the per-channel mul read the blocked tensor" {
    simd || skip "no AVX2: oneDNN keeps the plain layout"
    gen se
    run log se
    echo "$output"
    # conv1x1+silu, depthwise+silu (read by the pool and the mul), the two
    # 1x1 convs of the excitation (plain [1,C,1,1] tensors), the projection
    # (reads the mul's blocked product)
    [ "${#lines[@]}" -eq 5 ]
    [[ "${lines[0]}" =~ "input plain, output blocked" ]]
    [[ "${lines[1]}" =~ "input blocked, output blocked" ]]
    [[ "${lines[4]}" =~ "input blocked, output plain" ]]
    gen pool
    run log pool
    echo "$output"
    # conv -> max_pool -> conv with the pool's output as residual sum: the
    # pool reads and writes the blocked layout
    [ "${#lines[@]}" -eq 2 ]
    [[ "${lines[0]}" =~ "input plain, output blocked" ]]
    [[ "${lines[1]}" =~ "input blocked, sum blocked, output plain" ]]
    gen se_max
    run log se_max
    [[ "${lines[1]}" =~ "input blocked, output blocked" ]]
    [[ "${lines[4]}" =~ "input blocked, output plain" ]]
}

@test "conv chain: a NaN in the input passes the relu and clip convs and the pools as it does in PyTorch, blocked or not" {
    gen mbv2 --nan
    py 'assert np.isnan(np.load("want/y.npy")).any() and not np.isnan(np.load("want/y.npy")).all()'
    check_all mbv2
    gen pool --nan
    check_all pool
    # no NaN in the input: a product past FLT_MAX makes inf, and the next
    # conv's sum of inf and -inf a NaN that its relu must pass
    gen overflow
    py 'y = np.load("want/y.npy"); assert np.isnan(y).any() and np.isfinite(y).any()'
    check_all overflow
    for k in se se_max; do
        gen $k --nan
        # the NaN reaches one image's gate and so that whole image, not the other
        py 'y = np.load("want/y.npy"); assert np.isnan(y[0]).all() != np.isnan(y[1]).all()'
        check_all $k
    done
}

@test "conv chain: squeeze-excitation, max pool, 1-D, 3-D and grouped / strided / dilated chains agree with PyTorch" {
    for k in se se_max pool d1 d3 grouped; do
        gen $k
        check_all $k
    done
}

@test "conv chain: a conv output that is also a graph output, or read by another op, is written plain" {
    gen mixed
    check_all mixed
    simd || skip "no AVX2: oneDNN keeps the plain layout"
    run log mixed
    echo "$output"
    [[ "${lines[0]}" =~ "input plain, output blocked" ]]
    [[ "${lines[1]}" =~ "input blocked, output plain" ]]
    [[ "${lines[2]}" =~ "input plain, output plain" ]]
}

@test "conv chain: --check-nodes (every tensor read back) and ftrun test (many graphs in one process) agree" {
    gen mbv2
    "$FTRUN" "$T/mbv2.onnx" -i x=x.npy -o o -q -d cpu --check=cpu --check-nodes
    "$FTRUN" "$T/mbv2.onnx" -i x=x.npy -o o -q --check-nodes --check=cpu --expect want --rtol 1e-4 --atol 1e-4
    # one worker runs graph after graph with one backend: what a conv node
    # cached for one graph must not serve the next
    for k in mbv2 grouped c24 mixed; do
        mkdir -p case_$k/test_data_set_0
        gen $k
        cp "$T/$k.onnx" case_$k/model.onnx
        py 'from onnx import numpy_helper as nh
import os
open("case_%s/test_data_set_0/input_0.pb" % sys.argv[1], "wb").write(nh.from_array(np.load("x.npy"), "x").SerializeToString())
for i, o in enumerate(["y", "z"]):
    if os.path.exists("want/%s.npy" % o):
        open("case_%s/test_data_set_0/output_%d.pb" % (sys.argv[1], i), "wb").write(nh.from_array(np.load("want/%s.npy" % o), o).SerializeToString())' $k
    done
    run "$FTRUN" test -d cpu -j 1 --rtol 1e-4 --atol 1e-4 case_mbv2 case_grouped case_c24 case_mixed case_mbv2 case_grouped
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" =~ "6 passed, 0 failed" ]]
}

@test "conv chain: with oneDNN held to AVX2 (8-channel blocks, nChw8c) and SSE4.1 every chain agrees with PyTorch" {
    simd || skip "no AVX2"
    for isa in AVX2 SSE41; do
        for k in mbv2 c24 se se_max pool grouped; do
            gen $k
            ONEDNN_MAX_CPU_ISA=$isa check_all $k
        done
        gen se --nan
        ONEDNN_MAX_CPU_ISA=$isa check_all se
    done
    # under AVX2 the blocked layout is nChw8c (aBcd8b), the one the pools,
    # the mul and the convs then share
    gen se
    run env ONEDNN_MAX_CPU_ISA=AVX2 ONEDNN_VERBOSE=1 FTRUN_CONV_IMPL=blocked "$FTRUN" "$T/se.onnx" -i x=x.npy -o o -n 1 -q
    [[ "$output" =~ src_f32::blocked:aBcd8b ]]
}

@test "conv chain: a graph input read by two convs (input and residual sum) has one blocked copy, made on every run" {
    simd || skip "no AVX2: oneDNN keeps the plain layout"
    gen res
    run layouts res
    echo "$output"
    [ "${#lines[@]}" -eq 4 ]
    [[ "${lines[0]}" == "ftrun: tensor 'x': blocked (copy) for 2 convs, made once a run of the graph" ]]
    # the pool reads the second conv's blocked output and writes the graph's output plain
    [[ "${lines[1]}" =~ ^ftrun:\ max_pool\ \'.*\':\ input\ blocked,\ output\ plain$ ]]
    [[ "${lines[2]}" =~ "input blocked (copy), output blocked" ]]
    [[ "${lines[3]}" =~ "input blocked, sum blocked (copy), output blocked" ]]
    # oneDNN's own log: held to AVX2 (nChw8c), x (2x32x12x12, plain abcd)
    # is reordered once a run, on each of the 3 runs; nothing of that shape
    # goes back to plain
    run env ONEDNN_MAX_CPU_ISA=AVX2 ONEDNN_VERBOSE=1 FTRUN_CONV_IMPL=blocked "$FTRUN" "$T/res.onnx" -i x=x.npy -o o --threads 1 -w 0 -n 3 -q
    [ "$status" -eq 0 ]
    [ "$(grep -c '^onednn_verbose,exec,cpu,reorder.*src_f32::blocked:abcd:.*,2x32x12x12,' <<< "$output")" -eq 3 ]
    [ "$(grep -c '^onednn_verbose,exec,cpu,reorder.*dst_f32::blocked:abcd:.*,2x32x12x12,' <<< "$output")" -eq 0 ]
    # with AVX-512 (channels-last, 32 channels) ftrun's own transpose makes
    # the copy (src/cpu/blocked.c, cpu_to_blocked): oneDNN reorders nothing
    # of that shape
    if grep -qw avx512f /proc/cpuinfo; then
        run env ONEDNN_VERBOSE=1 FTRUN_CONV_IMPL=blocked "$FTRUN" "$T/res.onnx" -i x=x.npy -o o --threads 1 -w 0 -n 3 -q
        [ "$status" -eq 0 ]
        [ "$(grep -c '^onednn_verbose,exec,cpu,reorder.*,2x32x12x12,' <<< "$output")" -eq 0 ]
    fi
    # the values, in every form, and after several runs in one process
    check_all res
    check_all res -w 2 -n 5
    gen res --nan
    check_all res
}

@test "conv chain: the blocked copy with the NaN rule's read, and the pool's transposed write, on wider rows, depthwise convs, NaN and -inf" {
    # x's copy is made by blocked.c's transpose (with AVX-512), which also
    # reads max |x| for the NaN rule: a NaN or an infinity in x must send the
    # relu convs to conv.c's loops; the pool's plain output (19 columns: 16
    # and 3) goes out 16 channel rows at a time
    for k in res_wide res_dw; do
        gen $k
        check_all $k
        check_all $k -w 2 -n 5
        for bad in --nan --inf; do
            gen $k $bad
            py 'y = np.load("want/y.npy"); assert np.isnan(y).any() and np.isfinite(y).any()'
            check_all $k
        done
    done
    simd || skip "no AVX2: oneDNN keeps the plain layout"
    gen res_wide
    run layouts res_wide
    echo "$output"
    [ "${#lines[@]}" -eq 4 ]
    [[ "${lines[0]}" == "ftrun: tensor 'x': blocked (copy) for 2 convs, made once a run of the graph" ]]
    [[ "${lines[1]}" =~ ^ftrun:\ max_pool\ \'.*\':\ input\ blocked,\ output\ plain$ ]]
    # a NaN read with the copy on a run after the picks: the relu conv then runs conv.c's loops
    gen res_wide --nan
    run env FTRUN_CONV_LOG=1 "$FTRUN" "$T/res_wide.onnx" -i x=x.npy -o o --threads 1 -w 2 -n 3 --expect want --rtol 1e-4 --atol 1e-4
    echo "$output"
    [ "$status" -eq 0 ]
}

@test "conv chain: blocked-add: the residual sum as oneDNN's binary add post-op, read where it is, agrees with PyTorch; a node without a sum runs blocked" {
    simd || skip "no AVX2: oneDNN keeps the plain layout"
    gen res
    # the second conv's sum (x's blocked copy) is src1 of a binary add in the
    # dst layout, and no sum post-op; the first conv, without a sum, runs the
    # blocked form
    run env ONEDNN_VERBOSE=1 FTRUN_CONV_LOG=1 FTRUN_CONV_IMPL=blocked-add "$FTRUN" "$T/res.onnx" -i x=x.npy -o o --threads 1 -w 0 -n 2 --expect want --rtol 1e-4 --atol 1e-4
    echo "$output"
    [ "$status" -eq 0 ]
    # (src1's tag is the dst layout oneDNN picked for this ISA: acdb with
    # AVX-512, aBcd8b with AVX2)
    [ "$(grep -Ec '^onednn_verbose,exec,cpu,convolution.*attr-post-ops:binary_add:f32:[0-9]*:(acdb|aBcd8b|aBcd16b)\+eltwise_relu' <<< "$output")" -eq 2 ]
    [ "$(grep -c '^onednn_verbose,exec,cpu,convolution.*attr-post-ops:eltwise_relu' <<< "$output")" -eq 2 ]
    [ "$(grep -c 'sum' <<< "$(grep '^onednn_verbose,exec,cpu,convolution' <<< "$output")")" -eq 0 ]
    [[ "$output" =~ "conv 'Conv_0+relu': blocked (forced by FTRUN_CONV_IMPL)" ]]
    [[ "$output" =~ "conv 'Conv_2+add+relu': blocked-add (forced by FTRUN_CONV_IMPL)" ]]
    # without it, the sum post-op reads what was copied into dst
    run env ONEDNN_VERBOSE=1 FTRUN_CONV_IMPL=blocked "$FTRUN" "$T/res.onnx" -i x=x.npy -o o --threads 1 -w 0 -n 2 -q
    [ "$(grep -c '^onednn_verbose,exec,cpu,convolution.*attr-post-ops:sum+eltwise_relu' <<< "$output")" -eq 2 ]
    # the pick times it beside the others on a residual conv
    run log res
    echo "$output"
    [[ "${lines[1]}" =~ blocked\ [0-9.]+\ ms,\ blocked-add\ [0-9.]+\ ms ]]
    [[ ! "${lines[0]}" =~ blocked-add ]]
    # NaN and -inf through it (conv.c's loops for those runs), and AVX2's nChw8c
    for bad in --nan --inf; do
        gen res $bad
        check_all res
    done
    gen res
    ONEDNN_MAX_CPU_ISA=AVX2 check_all res -w 1 -n 3
}

@test "conv chain: a conv read only by a max pool whose result is the graph's output writes blocked; the pool writes plain" {
    gen pool_out
    check_all pool_out
    check_all pool_out -w 1 -n 4
    gen pool_out --nan
    py 'y = np.load("want/y.npy"); assert np.isnan(y).any() and np.isfinite(y).any()'
    check_all pool_out
    simd || skip "no AVX2: oneDNN keeps the plain layout"
    gen pool_out
    run layouts pool_out
    echo "$output"
    [ "${#lines[@]}" -eq 3 ]
    [[ "${lines[0]}" =~ ^ftrun:\ max_pool\ \'.*\':\ input\ blocked,\ output\ plain$ ]]
    [[ "${lines[1]}" =~ "input plain, output blocked" ]]
    [[ "${lines[2]}" =~ "input blocked, output blocked" ]]
    for isa in AVX2 SSE41; do
        ONEDNN_MAX_CPU_ISA=$isa check_all pool_out
        gen res
        ONEDNN_MAX_CPU_ISA=$isa check_all res
        gen pool_out
    done
}

@test "conv chain: no copy and no blocked pool under --check-nodes or FTRUN_CONV_IMPL plain or native" {
    for k in res pool_out; do
        gen $k
        # the picks are made on the run that keeps every tensor (the single
        # run of the reference --check makes none)
        run log $k --check-nodes --check=cpu --expect want --rtol 1e-4 --atol 1e-4
        echo "$output"
        [ "${#lines[@]}" -eq 2 ]
        [ "$(grep -c "^ftrun: conv '.*; input plain, \(sum plain, \)\?output plain$" <<< "$output")" -eq 2 ]
        for impl in plain native; do
            FTRUN_CONV_IMPL=$impl run layouts $k
            echo "$output"
            [ "${#lines[@]}" -eq 2 ]
            [ "$(grep -c 'blocked' <<< "$output")" -eq 0 ]
            [[ "${lines[0]}" =~ "$impl (forced by FTRUN_CONV_IMPL); input plain" ]]
        done
        "$FTRUN" "$T/$k.onnx" -i x=x.npy -o o -q --check-nodes --check=cpu --expect want --rtol 1e-4 --atol 1e-4
    done
    # ftrun test: one process, one backend, the same graph with other inputs
    # (a copy or a bound from one graph's run must not serve the next)
    gen res
    for c in a b; do
        mkdir -p case_$c/test_data_set_0
        cp "$T/res.onnx" case_$c/model.onnx
    done
    py 'from onnx import numpy_helper as nh
x = np.load("x.npy")
for c, xx in (("a", x), ("b", -0.5 * x[::-1].copy())):
    open("case_%s/test_data_set_0/input_0.pb" % c, "wb").write(nh.from_array(xx, "x").SerializeToString())'
    py 'from onnx import numpy_helper as nh
import onnx, torch, torch.nn.functional as F
m = onnx.load("res.onnx")
W = {i.name: torch.from_numpy(nh.to_array(i).astype(np.float64)) for i in m.graph.initializer}
for c in "ab":
    t = onnx.TensorProto(); t.ParseFromString(open("case_%s/test_data_set_0/input_0.pb" % c, "rb").read())
    x = torch.from_numpy(nh.to_array(t).astype(np.float64))
    a = torch.relu(F.conv2d(x, W["w1"], W["b1"], padding=1))
    y = F.max_pool2d(torch.relu(F.conv2d(a, W["w2"], W["b2"], padding=1) + x), 2, 2)
    open("case_%s/test_data_set_0/output_0.pb" % c, "wb").write(nh.from_array(y.numpy().astype(np.float32), "y").SerializeToString())'
    run "$FTRUN" test -d cpu -j 1 --rtol 1e-4 --atol 1e-4 case_a case_b case_a case_b
    echo "$output"
    [ "$status" -eq 0 ]
    [[ "$output" =~ "4 passed, 0 failed" ]]
}
