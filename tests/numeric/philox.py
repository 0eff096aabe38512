"""Independent NumPy implementation of ftrun's "init" value sources (Philox-4x32-10 as
specified in the behaviour decisions), used as the oracle by the numeric tests."""
import numpy as np

M0, M1 = np.uint64(0xD2511F53), np.uint64(0xCD9E8D57)
W0, W1 = 0x9E3779B9, 0xBB67AE85
MASK32 = np.uint64(0xFFFFFFFF)


def philox4x32_10(c0, c1, c2, c3, k0, k1):
    """Vectorised Philox-4x32-10 (Salmon et al. 2011, Random123). Counters are uint32
    arrays, the key two Python ints; returns four uint32 arrays."""
    x0, x1, x2, x3 = (np.asarray(v, dtype=np.uint64) & MASK32 for v in (c0, c1, c2, c3))
    k0, k1 = k0 & 0xFFFFFFFF, k1 & 0xFFFFFFFF
    for r in range(10):
        if r:
            k0, k1 = (k0 + W0) & 0xFFFFFFFF, (k1 + W1) & 0xFFFFFFFF
        p0 = M0 * x0  # < 2^64: products of two 32-bit words never overflow uint64
        p1 = M1 * x2
        hi0, lo0 = p0 >> np.uint64(32), p0 & MASK32
        hi1, lo1 = p1 >> np.uint64(32), p1 & MASK32
        x0, x1, x2, x3 = hi1 ^ x1 ^ np.uint64(k0), lo1, hi0 ^ x3 ^ np.uint64(k1), lo0
    return tuple(v.astype(np.uint32) for v in (x0, x1, x2, x3))


def uniform_pairs(n, seed):
    """(u1, u2) doubles in [0, 1) for the flat indices 0..n-1."""
    i = np.arange(n, dtype=np.uint64)
    lo, hi = i & MASK32, i >> np.uint64(32)
    z = np.zeros(n, dtype=np.uint64)
    x0, x1, x2, x3 = (v.astype(np.uint64) for v in philox4x32_10(lo, hi, z, z, seed, seed >> 32))
    two26 = np.uint64(1 << 26)
    a = (x0 >> np.uint64(5)) * two26 + (x1 >> np.uint64(6))
    b = (x2 >> np.uint64(5)) * two26 + (x3 >> np.uint64(6))
    # a, b < 2^53 so the conversion to double is exact; the division by 2^53 too
    return a.astype(np.float64) / 2.0 ** 53, b.astype(np.float64) / 2.0 ** 53


def init_values_f64(spec, n, seed):
    """The double values of an init spec before conversion to the tensor's dtype."""
    if "fill" in spec:
        return np.full(n, float(spec["fill"]), dtype=np.float64)
    if "arange" in spec:
        a = spec["arange"]
        return float(a.get("start", 0)) + np.arange(n, dtype=np.float64) * float(a.get("step", 1))
    u1, u2 = uniform_pairs(n, seed)
    if "uniform" in spec:
        u = spec["uniform"]
        low, high = float(u.get("low", 0)), float(u.get("high", 1))
        return low + (high - low) * u1
    if "normal" in spec:
        g = spec["normal"]
        mean, std = float(g.get("mean", 0)), float(g.get("std", 1))
        return mean + std * np.sqrt(-2.0 * np.log(1.0 - u1)) * np.cos(2.0 * np.pi * u2)
    raise ValueError("unknown init spec %r" % (spec,))


def self_check():
    """Known-answer vectors of Random123's kat_vectors for philox4x32 with 10 rounds."""
    kat = [((0, 0, 0, 0), (0, 0), (0x6627E8D5, 0xE169C58D, 0xBC57AC4C, 0x9B00DBD8)),
           ((0xFFFFFFFF,) * 4, (0xFFFFFFFF,) * 2, (0x408F276D, 0x41C83B0E, 0xA20BC7C6, 0x6D5451FD)),
           ((0x243F6A88, 0x85A308D3, 0x13198A2E, 0x03707344), (0xA4093822, 0x299F31D0),
            (0xD16CFE09, 0x94FDCCEB, 0x5001E420, 0x24126EA1))]
    for ctr, key, want in kat:
        got = philox4x32_10(*([c] for c in ctr), *key)
        if tuple(int(v[0]) for v in got) != want:
            return "philox4x32-10 known-answer mismatch for counter %r key %r" % (ctr, key)
    return None


if __name__ == "__main__":
    print(self_check() or "philox known-answer vectors ok")
