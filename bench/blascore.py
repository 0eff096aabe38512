"""OpenBLAS's kernel choice for the peers of the benchmarks, made as ftrun
makes it for itself; shared by bench/run.py and bench/examples.py, which call
it before NumPy or PyTorch load OpenBLAS."""
import os
import subprocess
import sys


def openblas_core():
    """OpenBLAS's kernel choice, made the way ftrun makes it for itself
    (src/cli/blas_tune.c): Debian's OpenBLAS 0.3.21 takes some recent Intel
    CPUs for a Prescott and runs SSE3 kernels, 3-5x slower than the AVX-512
    ones; ftrun then sets OPENBLAS_CORETYPE and restarts. NumPy and PyTorch
    load the same OpenBLAS, so they get the same OPENBLAS_CORETYPE here,
    before they load, or the table would compare kernels rather than
    runtimes. A value already in the environment is kept (ftrun keeps it too).
    Returns a line for the results."""
    if os.environ.get("OPENBLAS_CORETYPE"):
        return "OPENBLAS_CORETYPE=%s (given)" % os.environ["OPENBLAS_CORETYPE"]
    probe = ("import ctypes; l = ctypes.CDLL('libopenblas.so.0'); "
             "l.openblas_get_corename.restype = ctypes.c_char_p; print(l.openblas_get_corename().decode())")
    try:
        core = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        core = ""
    if not core:
        return "OpenBLAS core: unknown"
    if core.lower() not in ("prescott", "core2", "nehalem"):
        return "OpenBLAS core: %s (its own choice)" % core
    flags = set()
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("flags"):
                    flags = set(line.split(":", 1)[1].split())
                    break
    except OSError:
        pass
    want = ("SkylakeX" if {"avx512f", "avx512bw", "avx512dq", "avx512vl"} <= flags
            else "Haswell" if {"avx2", "fma"} <= flags else None)
    if not want:
        return "OpenBLAS core: %s (its own choice)" % core
    os.environ["OPENBLAS_CORETYPE"] = want
    return "OPENBLAS_CORETYPE=%s for every runtime (OpenBLAS alone would take %s, as ftrun corrects)" % (want, core)
