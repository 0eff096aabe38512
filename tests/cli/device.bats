#!/usr/bin/env bats
# Everything ftrun does around a device, on machines with or without a GPU:
# a stand-in driver (tests/device/fake_driver.c) and a stand-in backend whose
# kernels are the CPU reference's (tests/device/fake_backend.c) exercise device
# selection, transfers, device timers, graph capture and replay, --check,
# --check-nodes and --fallback. The real CUDA backend's numbers are checked by
# `make test-cuda` on a GPU.

bats_require_minimum_version 1.5.0
load helpers

setup_file() { fake_device_build; }

@test "devices: no driver says so and names the library; -d cuda is exit 4 with the reason; auto runs on the cpu" {
    FTRUN_CUDA_DRIVER=/nonexistent/libcuda.so.1 run --separate-stderr "$FTRUN" devices
    [ "$status" -eq 0 ]
    [[ "$output" == *"cuda     none: no CUDA driver: /nonexistent/libcuda.so.1"* ]]
    FTRUN_CUDA_DRIVER=/nonexistent/libcuda.so.1 run --separate-stderr "$FTRUN" "$GRAPHS/mlp.json" -d cuda -o "$T/o"
    [ "$status" -eq 4 ]
    [[ "$stderr" == *"error: device 'cuda:0' is not available: no CUDA driver"* ]]
    [ ! -e "$T/o" ]
    FTRUN_CUDA_DRIVER=/nonexistent/libcuda.so.1 run --separate-stderr "$FTRUN" "$GRAPHS/mlp.json" -o "$T/a"
    [ "$status" -eq 0 ]
    [ "$(jget "$T/a/timing.json" 'd["device"]["name"]')" = cpu ]
}

@test "devices: a driver that does not start is named with its error" {
    FAKE_CUDA_INIT=100 fake run --separate-stderr "$FTRUN" devices
    [[ "$output" == *"cuda     none: the CUDA driver (version 13.0) did not start: cuInit: CUDA_ERROR_NO_DEVICE (100)"* ]]
    FAKE_CUDA_INIT=100 fake run --separate-stderr "$FTRUN" "$GRAPHS/mlp.json" -d cuda:0 -o "$T/o"
    [ "$status" -eq 4 ]
    [[ "$stderr" == *"cuInit: CUDA_ERROR_NO_DEVICE"* ]]
}

@test "devices lists each device with memory and compute capability, and the backend that was loaded" {
    FAKE_CUDA_DEVICES=2 fake run --separate-stderr "$FTRUN" devices
    [ "$status" -eq 0 ]
    [[ "$output" == *"cuda:0   Fake CUDA device 0, 80.0 GiB, compute capability 9.0, 132 SMs"* ]]
    [[ "$output" == *"cuda:1   Fake CUDA device 1, 80.0 GiB, compute capability 9.0, 132 SMs"* ]]
    [[ "$output" == *"CUDA backend: $BATS_FILE_TMPDIR/fake_backend.so (loaded)"* ]]
}

@test "-d cuda:N beyond the devices present: exit 4 naming how many there are" {
    FAKE_CUDA_DEVICES=2 fake run --separate-stderr "$FTRUN" "$GRAPHS/mlp.json" -d cuda:5 -o "$T/o"
    [ "$status" -eq 4 ]
    [[ "$stderr" == *"device 'cuda:5' is not available: this machine has 2 CUDA devices (cuda:0 to cuda:1)"* ]]
    [ ! -e "$T/o" ]
}

@test "a missing or mismatched backend object: exit 4 naming the file" {
    FTRUN_CUDA_DRIVER=$BATS_FILE_TMPDIR/fake_driver.so FTRUN_CUDA_BACKEND=$T/none.so \
        run --separate-stderr "$FTRUN" "$GRAPHS/mlp.json" -d cuda -o "$T/o"
    [ "$status" -eq 4 ]
    [[ "$stderr" == *"the CUDA backend is not installed (no $T/none.so"* ]]
    # auto with a device but no backend: a warning, then the cpu
    FTRUN_CUDA_DRIVER=$BATS_FILE_TMPDIR/fake_driver.so FTRUN_CUDA_BACKEND=$T/none.so \
        run --separate-stderr "$FTRUN" "$GRAPHS/mlp.json" -o "$T/a"
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"warning: a CUDA device is present but the CUDA backend is not installed"* ]]
    [ "$(jget "$T/a/timing.json" 'd["device"]["name"]')" = cpu ]
    echo "not an elf" > "$T/bad.so"
    FTRUN_CUDA_DRIVER=$BATS_FILE_TMPDIR/fake_driver.so FTRUN_CUDA_BACKEND=$T/bad.so \
        run --separate-stderr "$FTRUN" "$GRAPHS/mlp.json" -d cuda -o "$T/o"
    [ "$status" -eq 4 ]
    [[ "$stderr" == *"the CUDA backend $T/bad.so cannot be loaded:"* ]]
    # an object built against another op table (one op more) is refused, not indexed with this one's ops
    FAKE_OTHER_OPS=1 fake run --separate-stderr "$FTRUN" "$GRAPHS/mlp.json" -d cuda -o "$T/o"
    [ "$status" -eq 4 ]
    [[ "$stderr" == *"the CUDA backend $BATS_FILE_TMPDIR/fake_backend.so does not match this ftrun (interface version"*"rebuild it"* ]]
    [ ! -e "$T/o" ]
}

@test "auto picks cuda:0 when a device and the backend are there; results equal the cpu's" {
    # the threads fixed in both runs: without --threads they follow the load,
    # and a product's rounding depends on how many threads share it
    fake run --separate-stderr "$FTRUN" "$GRAPHS/mlp.json" --threads 2 -o "$T/g"
    [ "$status" -eq 0 ]
    [ "$(jget "$T/g/timing.json" 'd["device"]["name"]')" = cuda:0 ]
    [ "$(jget "$T/g/timing.json" 'd["device"]["description"]')" = "Fake CUDA device 0" ]
    run "$FTRUN" "$GRAPHS/mlp.json" -d cpu --threads 2 -o "$T/c" -q
    [ "$status" -eq 0 ]
    py 'a=np.load(sys.argv[1]); b=np.load(sys.argv[2]); assert a.dtype == b.dtype and np.array_equal(a, b)' \
        "$T/g/probs.npy" "$T/c/probs.npy"
}

@test "--check: outputs agree with the cpu reference: exit 0 and a line saying so" {
    fake run --separate-stderr "$FTRUN" "$GRAPHS/transformer_block.json" -d cuda -o "$T/o" --check
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"check: 1 output on cuda:0 match the cpu reference"* ]]
    fake run --separate-stderr "$FTRUN" "$GRAPHS/transformer_block.json" -d cuda -o "$T/o2" --check=cpu -q
    [ "$status" -eq 0 ]
    [ -z "$stderr" ]
}

@test "--check: a diverging device: exit 1, the output, the error sizes and where; results still written" {
    FAKE_PERTURB_OP=attention fake run --separate-stderr "$FTRUN" "$GRAPHS/transformer_block.json" -d cuda -o "$T/o" --check
    [ "$status" -eq 1 ]
    [[ "$stderr" == *"check: output 'y' on cuda:0 against cpu:"*"values out of tolerance (rtol=0.0001, atol="*"): max abs error"* ]]
    [[ "$stderr" == *"check: 1 of 1 output on cuda:0 differ from the cpu reference"* ]]
    [ -f "$T/o/y.npy" ] && [ -f "$T/o/timing.json" ]
    # looser tolerances than the perturbation (+0.5 on one element) let it pass
    FAKE_PERTURB_OP=attention fake run --separate-stderr "$FTRUN" "$GRAPHS/transformer_block.json" -d cuda -o "$T/o2" \
        --check --atol 10
    [ "$status" -eq 0 ]
}

@test "--check-nodes names the first node that diverges given the same inputs, and only it" {
    FAKE_PERTURB_OP=attention fake run --separate-stderr "$FTRUN" "$GRAPHS/transformer_block.json" -d cuda -o "$T/o" \
        --check-nodes
    [ "$status" -eq 1 ]
    [[ "$stderr" == *"check-nodes: first divergence at node 'attn_mix' (attention) output 'ctx_bhsd' on cuda:0 against cpu: 1 of 131072 values out of tolerance"* ]]
    [[ "$stderr" == *"first at [0,0,0,0]"* ]]
    [[ "$stderr" == *"check-nodes: 1 of 19 nodes on cuda:0 differ"* ]]
    fake run --separate-stderr "$FTRUN" "$GRAPHS/transformer_block.json" -d cuda -o "$T/o2" --check-nodes
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"check-nodes: all 19 nodes on cuda:0 match the cpu reference given the same inputs"* ]]
}

@test "--check on the cpu compares the reference with itself" {
    run --separate-stderr "$FTRUN" "$GRAPHS/stats.json" -d cpu -o "$T/o" --check-nodes
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"check: "*" on cpu match the cpu reference"* ]]
    [[ "$stderr" == *"check-nodes: all "*" nodes on cpu match"* ]]
}

@test "--check and --fallback take only cpu" {
    run --separate-stderr "$FTRUN" "$GRAPHS/mlp.json" --check=gpu
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"option --check: 'gpu' is not a reference (cpu: the graph run on the CPU; O0: the graph as read, without the optimizer, run on the CPU)"* ]]
    run --separate-stderr "$FTRUN" "$GRAPHS/mlp.json" --fallback gpu
    [ "$status" -eq 2 ]
    [[ "$stderr" == *"option --fallback: 'gpu' is not a fallback backend"* ]]
    run --separate-stderr "$FTRUN" info "$GRAPHS/mlp.json" --check
    [ "$status" -eq 2 ]
}

@test "an op the device lacks: exit 4 before anything runs, with a hint; --fallback cpu runs it there with a warning" {
    FAKE_MISSING_OP=attention fake run --separate-stderr "$FTRUN" "$GRAPHS/transformer_block.json" -d cuda -o "$T/o"
    [ "$status" -eq 4 ]
    [[ "$stderr" == *"node 'attn_mix' (attention): the cuda backend does not implement op 'attention' (--fallback cpu runs it on the cpu)"* ]]
    [ ! -e "$T/o" ]
    FAKE_MISSING_OP=attention fake run --separate-stderr "$FTRUN" "$GRAPHS/transformer_block.json" -d cuda -o "$T/f" \
        --fallback cpu --check -n 2
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"warning: node 'attn_mix' (attention, f32) runs on the cpu: cuda:0 lacks it (--fallback cpu)"* ]]
    [[ "$stderr" == *"check: 1 output on cuda:0 match the cpu reference"* ]]
}

@test "--cuda-graph records one run and replays it for the timed runs; results unchanged" {
    FAKE_REPORT_CAPTURE=1 fake run --separate-stderr "$FTRUN" "$GRAPHS/transformer_block.json" -d cuda -o "$T/o" \
        --cuda-graph -n 4 --check
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"fake: captured 19 kernels"* ]]
    [[ "$stderr" != *"applies to CUDA devices"* ]]
    [[ "$stderr" == *"check: 1 output on cuda:0 match"* ]]
    [ "$(jget "$T/o/timing.json" 'len([1 for _ in range(d["iterations"])])')" = 4 ]
    # with --profile each node needs its own sync: no capture, and a warning says so
    FAKE_REPORT_CAPTURE=1 fake run --separate-stderr "$FTRUN" "$GRAPHS/mlp.json" -d cuda -o "$T/p" --cuda-graph --profile
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"--cuda-graph is not used with --profile"* ]]
    [[ "$stderr" != *"fake: captured"* ]]
}

@test "device timers: --profile on a device gives per-node times that sum to about the run" {
    fake run --separate-stderr "$FTRUN" "$GRAPHS/transformer_block.json" -d cuda -o "$T/o" --profile -n 3
    [ "$status" -eq 0 ]
    py 'd=json.load(open(sys.argv[1])); s=sum(n["mean_ms"] for n in d["nodes"]); m=d["run_ms"]["mean"]
assert len(d["nodes"]) == 19 and abs(s - m) <= 0.1 * m + 0.05, (s, m)' "$T/o/timing.json"
}

@test "ops --device cuda lists the backend's own table" {
    fake run --separate-stderr "$FTRUN" ops --device cuda
    [ "$status" -eq 0 ]
    [[ "$output" == *"softmax"*"cuda: f16 bf16 f32 f64"* ]]
    [[ "$output" != *" cpu: "* ]]
    FAKE_MISSING_OP=erf fake run --separate-stderr "$FTRUN" ops
    echo "$output" | grep -E '^erf +format: f16 bf16 f32 f64 +cpu: f16 bf16 f32 f64 cuda: - \(lacks'
}

@test "the CUDA backend built here loads into this ftrun (every symbol resolves) and has every op and dtype the cpu has" {
    lib=$ROOT/build/libftrun-cuda.so
    if [ ! -f "$lib" ]; then skip "the CUDA backend was not built (no nvcc)"; fi
    FTRUN_CUDA_BACKEND=$lib run --separate-stderr "$FTRUN" devices
    [ "$status" -eq 0 ]
    [[ "$output" == *"CUDA backend: $lib (loaded)"* ]]
    FTRUN_CUDA_BACKEND=$lib run --separate-stderr "$FTRUN" ops
    [ "$status" -eq 0 ]
    py '
# every op the cpu has, in every dtype the cpu has, except the gaps ftrun(1) (ops)
# and ftrun-graph(5) (NUMERICS) document: u16/u32/u64 outside the elementwise, cast and
# movement kernels, the low-precision sources of cast and dequantize_linear, strings
# (ftrun-graph(5): on the CPU only, so the ops on strings alone have no CUDA kernel),
# and the text-feature and ai.onnx.ml ops (ftrun-graph(5): CPU only)
low = {"f8e4m3fn", "f8e4m3fnuz", "f8e5m2", "f8e5m2fnuz", "f8e8m0", "f4e2m1", "i4", "u4", "i2", "u2"}
rows = [l.split() for l in sys.argv[1].splitlines()[1:]]
for r in rows:
    if "cpu:" not in r: continue
    i, j = r.index("cpu:"), r.index("cuda:")
    cpu = {x.strip(",()") for x in r[i+1:j]}
    rest = r[j+1:]
    has = {x.strip(",()") for x in (rest[:rest.index("(lacks")] if "(lacks" in rest else rest)} - {"-"}
    if cpu == {"string"} or r[0] in ("tfidf_vectorizer", "label_encoder", "tree_ensemble", "image_decoder"):
        assert not has, (r[0], "a string, ai.onnx.ml or image_decoder op on cuda")  # CPU only: ftrun-graph(5)
        continue
    allowed = {"u16", "u32", "u64", "string"} | (low if r[0] in ("cast", "dequantize_linear") else set())
    assert has, (r[0], "missing on cuda")
    assert has <= cpu and cpu - has <= allowed, (r[0], sorted(cpu - has), sorted(has - cpu))
print(len(rows))' "$output"
}

@test "--cuda-graph with a node on the cpu fallback: not recorded, a warning says why, results right" {
    FAKE_MISSING_OP=attention FAKE_REPORT_CAPTURE=1 fake run --separate-stderr "$FTRUN" "$GRAPHS/transformer_block.json" \
        -d cuda -o "$T/o" --cuda-graph --fallback cpu -n 2 --check
    [ "$status" -eq 0 ]
    [[ "$stderr" == *"warning: --cuda-graph is not used: 1 node run on the cpu (--fallback cpu)"* ]]
    [[ "$stderr" != *"fake: captured"* ]]
    [[ "$stderr" == *"check: 1 output on cuda:0 match"* ]]
}

@test "an installed ftrun finds the backend in ../lib/ftrun/ beside its bin/ folder" {
    mkdir -p "$T/usr/bin" "$T/usr/lib/ftrun"
    cp "$FTRUN" "$T/usr/bin/ftrun"
    cp "$BATS_FILE_TMPDIR/fake_backend.so" "$T/usr/lib/ftrun/libftrun-cuda.so"
    FTRUN_CUDA_DRIVER=$BATS_FILE_TMPDIR/fake_driver.so run --separate-stderr "$T/usr/bin/ftrun" devices
    [ "$status" -eq 0 ]
    [[ "$output" == *"CUDA backend: $T/usr/bin/../lib/ftrun/libftrun-cuda.so (loaded)"* ]]
    FTRUN_CUDA_DRIVER=$BATS_FILE_TMPDIR/fake_driver.so run --separate-stderr "$T/usr/bin/ftrun" "$GRAPHS/mlp.json" -o "$T/o"
    [ "$status" -eq 0 ]
    [ "$(jget "$T/o/timing.json" 'd["device"]["name"]')" = cuda:0 ]
}

@test "warnings: on a device, transfers slower than the compute are named with both times" {
    # 32 MiB of constants uploaded, one element of work
    py '
g = {"ftrun": 1, "tensors": {"x": {"dtype": "f32", "shape": [8388608], "init": {"fill": 2}}},
     "outputs": ["y"], "nodes": [{"op": "slice", "inputs": ["x"], "outputs": ["y"],
                                  "attrs": {"starts": [0], "ends": [1]}}]}
json.dump(g, open(sys.argv[1], "w"))' "$T/big.json"
    fake run --separate-stderr "$FTRUN" "$T/big.json" -d cuda -w 2 -n 5 -o "$T/o"
    [ "$status" -eq 0 ]
    printf '%s\n' "$stderr" | grep -Eq "warning: transfers take longer than the compute: h2d [0-9.]+ ms \+ d2h [0-9.]+ ms vs median run [0-9.]+ ms"
}
