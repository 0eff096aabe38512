"""Reference values of ftrun's "init" generator (Philox-4x32-10), written from the
documented algorithm so the command-line tests can check --seed independently.
Usage: philox.py uniform|normal SEED N A B DTYPE OUT.npy
  uniform: low=A high=B; normal: mean=A std=B; values for flat indices 0..N-1."""
import math
import sys

import numpy as np

M0, M1 = 0xD2511F53, 0xCD9E8D57
W0, W1 = 0x9E3779B9, 0xBB67AE85
MASK = 0xFFFFFFFF


def philox4x32_10(ctr, key):
    c0, c1, c2, c3 = ctr
    k0, k1 = key
    for r in range(10):
        if r:
            k0, k1 = (k0 + W0) & MASK, (k1 + W1) & MASK
        p0, p1 = M0 * c0, M1 * c2
        c0, c1, c2, c3 = ((p1 >> 32) ^ c1 ^ k0) & MASK, p1 & MASK, ((p0 >> 32) ^ c3 ^ k1) & MASK, p0 & MASK
    return c0, c1, c2, c3


def unit_pair(i, seed):
    x0, x1, x2, x3 = philox4x32_10((i & MASK, (i >> 32) & MASK, 0, 0), (seed & MASK, (seed >> 32) & MASK))
    u1 = ((x0 >> 5) * 2.0 ** 26 + (x1 >> 6)) / 2.0 ** 53
    u2 = ((x2 >> 5) * 2.0 ** 26 + (x3 >> 6)) / 2.0 ** 53
    return u1, u2


def values(kind, seed, n, a, b):
    out = []
    for i in range(n):
        u1, u2 = unit_pair(i, seed)
        if kind == "uniform":
            out.append(a + (b - a) * u1)
        else:
            out.append(a + b * math.sqrt(-2.0 * math.log(1.0 - u1)) * math.cos(2.0 * math.pi * u2))
    return np.array(out, dtype=np.float64)


def _self_test():
    # Known-answer vectors of Random123 (kat_vectors, philox4x32 10 rounds).
    assert philox4x32_10((0, 0, 0, 0), (0, 0)) == (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)
    assert philox4x32_10((MASK,) * 4, (MASK, MASK)) == (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)
    assert philox4x32_10((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0)) == \
        (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1)


if __name__ == "__main__":
    _self_test()
    kind, seed, n, a, b, dtype, path = sys.argv[1:8]
    v = values(kind, int(seed), int(n), float(a), float(b))
    np.save(path, v.astype(dtype))
