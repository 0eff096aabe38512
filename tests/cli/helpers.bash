# Shared setup for the command-line tests: every test runs in its own
# temporary directory, so the default output folder (ftrun-out) lands there.
#   FTRUN     the binary under test (absolute path; default build/ftrun)
#   PYTHON    a python3 with NumPy (default /usr/bin/python3)
#   TESTS_DIR the tests/ folder (default: the parent of this file's folder)

TESTS_DIR=${TESTS_DIR:-$(cd "$BATS_TEST_DIRNAME/.." && pwd)}
FTRUN=${FTRUN:-$TESTS_DIR/../build/ftrun}
PYTHON=${PYTHON:-/usr/bin/python3}
ROOT=$(cd "$TESTS_DIR/.." && pwd)
GRAPHS=$ROOT/graphs
DATA=$TESTS_DIR/cli/data
# A run without -n, -w or --duration times runs for a second; tests that do
# not measure want one run, as -n 1 gives (tests of the default unset this).
export FTRUN_DEFAULT_DURATION=${FTRUN_DEFAULT_DURATION:-0}

setup() {
    if [ ! -x "$FTRUN" ]; then
        echo "ftrun binary not found at $FTRUN" >&2
        return 1
    fi
    T=$BATS_TEST_TMPDIR
    cd "$T" || return 1
}

# Writes stdin to $T/NAME and prints the path.
graph() {
    cat > "$T/$1"
    printf '%s\n' "$T/$1"
}

# py 'python code': runs code with numpy imported as np; sys.argv[1:] are the extra args.
py() {
    local code=$1
    shift
    "$PYTHON" -c "import sys, json; import numpy as np
$code" "$@"
}

# npy FILE 'numpy expression': saves the expression's value to FILE.
npy() {
    py "np.save(sys.argv[1], $2, allow_pickle=False)" "$1"
}

# jq-like lookup in a JSON file: jget FILE 'd["run_ms"]["min"]'
jget() {
    py "d = json.load(open(sys.argv[1])); print($2)" "$1"
}

# Asserts that the last `run` had exit status $1, printing the output on failure.
status_is() {
    if [ "$status" -ne "$1" ]; then
        echo "expected exit status $1, got $status; output:" >&2
        printf '%s\n' "$output" >&2
        return 1
    fi
}

# Asserts that the last `run`'s output contains every argument (fixed strings).
has() {
    local s
    for s in "$@"; do
        if [[ "$output" != *"$s"* ]]; then
            echo "output lacks: $s" >&2
            echo "output was:" >&2
            printf '%s\n' "$output" >&2
            return 1
        fi
    done
}

# Asserts that the last `run`'s output contains none of the arguments.
lacks() {
    local s
    for s in "$@"; do
        if [[ "$output" == *"$s"* ]]; then
            echo "output unexpectedly contains: $s" >&2
            printf '%s\n' "$output" >&2
            return 1
        fi
    done
}

# Asserts the last `run` printed an ftrun error line (and not a crash).
is_error() {
    has "ftrun: error:"
    lacks "Segmentation" "Aborted" "AddressSanitizer"
}

# Asserts a folder holds exactly the listed file names (sorted comparison).
dir_has_exactly() {
    local dir=$1
    shift
    local got want
    got=$(cd "$dir" && ls -A | sort | tr '\n' ' ')
    want=$(printf '%s\n' "$@" | sed '/^$/d' | sort | tr '\n' ' ')
    if [ "$got" != "$want" ]; then
        echo "folder $dir holds [$got], expected [$want]" >&2
        return 1
    fi
}

# True when this ftrun can use a CUDA device.
have_cuda() {
    "$FTRUN" devices 2>/dev/null | grep -q '^cuda:'
}

# The stand-in device (tests/device/): fake_device_build (in setup_file)
# compiles its driver and backend into the file's temporary folder; fake CMD
# runs CMD with them as the CUDA driver and backend.
fake_device_build() {
    local d=$BATS_FILE_TMPDIR
    cc -std=gnu11 -Wall -Wextra -Werror -Wno-unused-parameter -O1 -g -fPIC -shared \
        -o "$d/fake_backend.so" "$TESTS_DIR/device/fake_backend.c"
    cc -std=gnu11 -Wall -Wextra -Werror -O1 -fPIC -shared -o "$d/fake_driver.so" "$TESTS_DIR/device/fake_driver.c"
}

fake() {
    FTRUN_CUDA_DRIVER=$BATS_FILE_TMPDIR/fake_driver.so FTRUN_CUDA_BACKEND=$BATS_FILE_TMPDIR/fake_backend.so "$@"
}
