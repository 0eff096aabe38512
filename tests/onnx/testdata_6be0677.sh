#!/bin/bash
# ONNX's test data at commit 6be0677 (tests/data/onnx-testdata-6be0677), run by
# tests/onnx/testdata.py with its own lists: tests/onnx/unsupported_6be0677.txt
# and tests/onnx/reference_differs_6be0677.txt. The archive is unpacked once
# beside the binary under test ($FTRUN's folder/onnx-testdata-6be0677) and again
# when it is newer than the unpacked copy. Arguments go to testdata.py
# (--write-list regenerates the unsupported list).
set -eu
here=$(cd "$(dirname "$0")" && pwd)
: "${FTRUN:=$here/../../build/ftrun}"
: "${PYTHON:=/usr/bin/python3}"
archive=$here/../data/onnx-testdata-6be0677/onnx-backend-test-data-6be0677.tar.xz
dest=$(cd "$(dirname "$FTRUN")" && pwd)/onnx-testdata-6be0677
if [ ! -f "$dest/.unpacked" ] || [ "$dest/.unpacked" -ot "$archive" ]; then
    rm -rf "$dest.tmp" && mkdir -p "$dest.tmp"
    tar -xJf "$archive" -C "$dest.tmp"
    touch "$dest.tmp/.unpacked"
    rm -rf "$dest" && mv "$dest.tmp" "$dest"
fi
export FTRUN ONNX_TESTDATA=$dest/onnx/backend/test/data FTRUN_ONNX_TAG=6be0677
export FTRUN_ONNX_LIST=$here/unsupported_6be0677.txt FTRUN_ONNX_DIFFERS=$here/reference_differs_6be0677.txt
exec "$PYTHON" "$here/testdata.py" "$@"
