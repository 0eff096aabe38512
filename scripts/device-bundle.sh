#!/bin/bash
# Packs ftrun for a GPU machine that has the CUDA toolkit and Python (with
# NumPy, PyTorch) but not the Debian libraries ftrun links, nor bats:
#
#   scripts/device-bundle.sh BUILD OUT.tar.xz
#
# The archive holds one folder, ftrun-device/, laid out like a checkout so the
# test and bench scripts find their files where they look for them:
#   build/ftrun, build/libftrun-cuda.so, build/cuda_peer   (from BUILD)
#   lib/           every shared library ftrun links beyond glibc, libgcc and
#                  libstdc++, unpacked from the Debian package that the
#                  installed copy belongs to (apt-get download + dpkg -x, same
#                  version); ftrun finds them through LD_LIBRARY_PATH, which
#                  run.sh sets
#   onnx-testdata/ Debian's libonnx-testdata (ONNX's backend test cases)
#   run.sh         scripts/device-run.sh: every step, logs into one folder
#   the tracked files of the checkout (tests/, bench/, graphs/, ...)
#
# Before it writes OUT it checks the bundle: unpacked into a temporary folder,
# with the system's copies of the bundled libraries hidden (bind-mounted over
# with /dev/null in a private mount namespace), ftrun must start, list its
# devices and run graphs that use OpenBLAS, FFTW, cJSON, zlib and protobuf-c,
# and the dynamic loader must have taken every bundled library from lib/.
# Exit status 0 when OUT was written, 1 otherwise; OUT is written through a
# temporary name and renamed, so a failed run leaves no partial archive.
set -euo pipefail
BUILD=${1:?usage: device-bundle.sh BUILD OUT.tar.xz}
OUT=${2:?usage: device-bundle.sh BUILD OUT.tar.xz}
ROOT=$(cd "$(dirname "$0")/.." && pwd)
LIMIT_MIB=${DEVICE_BUNDLE_LIMIT_MIB:-48}
TESTDATA=${ONNX_TESTDATA:-/usr/share/libonnx-testdata/data}

die() { echo "device-bundle: $*" >&2; exit 1; }
for f in ftrun libftrun-cuda.so cuda_peer; do
    [ -x "$BUILD/$f" ] || [ -f "$BUILD/$f" ] || die "$BUILD/$f is missing (make device-bundle builds it)"
done
[ -d "$TESTDATA/node" ] || die "$TESTDATA has no node/ folder (Debian's libonnx-testdata; make deps installs it)"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
stage=$work/ftrun-device
mkdir -p "$stage/build" "$stage/lib" "$work/debs" "$work/x"
chmod 755 "$work"; chmod 777 "$work/debs"  # apt-get download runs as _apt

# The checkout's tracked files (as they are in the working tree).
(cd "$ROOT" && git ls-files -z | tar --null -T - -cf -) | tar -xf - -C "$stage"
cp -p "$BUILD/ftrun" "$BUILD/libftrun-cuda.so" "$BUILD/cuda_peer" "$stage/build/"
cp -p "$ROOT/scripts/device-run.sh" "$stage/run.sh"
mkdir -p "$stage/onnx-testdata"
cp -rL "$TESTDATA"/. "$stage/onnx-testdata/"

# Libraries the target machine is assumed to have: glibc's, libgcc_s,
# libstdc++ (the CUDA toolkit needs them too).
base='^(linux-vdso|libc\.so|libm\.so|libmvec\.so|libdl\.so|libpthread\.so|librt\.so|ld-linux|libgcc_s\.so|libstdc\+\+\.so)'
bundled=()
while read -r soname path; do
    [[ $soname =~ $base ]] && continue
    [ -n "$path" ] && [ -e "$path" ] || die "ldd: $soname not found for $BUILD/ftrun"
    real=$(readlink -f "$path")
    owner=$(dpkg -S "$real" 2>/dev/null || dpkg -S "${real#/usr}" 2>/dev/null || true)
    pkg=${owner%%:*}
    [ -n "$pkg" ] || die "$real belongs to no Debian package"
    ver=$(dpkg-query -W -f='${Version}' "$pkg")
    deb=$(ls "$work/debs/${pkg}_"*.deb 2>/dev/null | head -n1 || true)
    if [ -z "$deb" ]; then
        (cd "$work/debs" && apt-get download -qq "$pkg=$ver" >/dev/null) ||
            die "apt-get download $pkg=$ver failed (is the Debian archive reachable? run 'apt-get update')"
        deb=$(ls "$work/debs/${pkg}_"*.deb | head -n1)
        dpkg -x "$deb" "$work/x"
    fi
    src=$work/x$real
    [ -e "$src" ] || src=$work/x${real#/usr}
    [ -e "$src" ] || die "$pkg's package holds no $real"
    cp -L "$src" "$stage/lib/$soname"
    bundled+=("$soname")
    echo "device-bundle: $soname from $pkg $ver"
done < <(ldd "$BUILD/ftrun" | awk '$2 == "=>" { print $1, $3 }')

# Check: the system copies hidden, everything must come from lib/.
check=$work/check
mkdir -p "$check"
cp -a "$stage" "$check/"
cb=$check/ftrun-device
hide=""
for so in "${bundled[@]}"; do
    for d in /lib/x86_64-linux-gnu /usr/lib/x86_64-linux-gnu; do
        [ -e "$d/$so" ] && hide+="mount --bind /dev/null $d/$so; "
    done
    real=$(readlink -f "/lib/x86_64-linux-gnu/$so" 2>/dev/null || true)
    [ -n "$real" ] && [ -e "$real" ] && hide+="mount --bind /dev/null $real; "
done
onnx=$(ls -d "$cb"/onnx-testdata/node/test_conv_with_strides_padding | head -n1)
runs="set -e; export LD_LIBRARY_PATH=$cb/lib FTRUN_CUDA_DRIVER=/nonexistent/libcuda.so.1; cd $cb;
build/ftrun --version; build/ftrun devices;
build/ftrun graphs/transformer_block.json -q -o $check/o1;
build/ftrun bench/graphs/fft_pipeline.json -q -o $check/o2;
build/ftrun test -q $onnx"
if unshare -m true 2>/dev/null; then
    unshare -m sh -c "set -e; $hide $runs" > "$check/log" 2>&1 || { cat "$check/log" >&2; die "the bundle does not run with the system's libraries hidden"; }
    echo "device-bundle: ran with the system's copies of ${#bundled[@]} libraries hidden"
else
    echo "device-bundle: warning: unshare -m is not permitted here; checking with LD_DEBUG only" >&2
    sh -c "$runs" > "$check/log" 2>&1 || { cat "$check/log" >&2; die "the bundle does not run"; }
fi
LD_DEBUG=libs LD_LIBRARY_PATH=$cb/lib FTRUN_CUDA_DRIVER=/nonexistent/libcuda.so.1 "$cb/build/ftrun" --version \
    > /dev/null 2> "$check/ld.log"
for so in "${bundled[@]}"; do
    grep -q "calling init: $cb/lib/$so" "$check/ld.log" ||
        die "$so was not loaded from the bundle's lib/ (see LD_DEBUG=libs)"
done

tmp=$OUT.tmp.$$
tar -C "$work" -cf - ftrun-device | xz -T0 -6 > "$tmp" || { rm -f "$tmp"; die "cannot write $tmp"; }
size=$(stat -c %s "$tmp")
if [ "$size" -gt $((LIMIT_MIB << 20)) ]; then
    rm -f "$tmp"; die "the archive is $((size >> 20)) MiB, over the $LIMIT_MIB MiB limit"
fi
mv -f "$tmp" "$OUT"
echo "device-bundle: $OUT ($((size >> 20)) MiB; unpack with 'tar -xJf', then ftrun-device/run.sh LOGDIR [STEP...])"
