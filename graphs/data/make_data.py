#!/usr/bin/python3
"""Regenerates graphs/data/sensor.npy, the input of graphs/sensor.json.

    /usr/bin/python3 graphs/data/make_data.py

1000 time steps of 8 temperature sensors (raw readings in sensor units, f32,
shape [1000, 8]): a slow daily swing per sensor plus noise, about 1% of the
readings missing (NaN, a dropped sample), and a few short overheating spikes
on sensor 5. The generator is seeded, so the file is the same on every run.
"""
import os

import numpy as np

STEPS, SENSORS = 1000, 8


def make(seed=2024):
    rng = np.random.default_rng(seed)
    t = np.arange(STEPS, dtype=np.float64)[:, None]
    base = 400.0 + 20.0 * np.arange(SENSORS)          # raw offset of each sensor
    swing = 60.0 * np.sin(2 * np.pi * t / 500.0 + np.arange(SENSORS) * 0.4)
    raw = base + swing + rng.normal(0.0, 4.0, size=(STEPS, SENSORS))
    for start in (300, 620, 910):                      # overheating episodes
        raw[start:start + 12, 5] += 700.0
    raw[rng.random((STEPS, SENSORS)) < 0.01] = np.nan  # dropped samples
    return raw.astype(np.float32)


if __name__ == "__main__":
    out = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sensor.npy")
    np.save(out, make())
    print("wrote", out)
