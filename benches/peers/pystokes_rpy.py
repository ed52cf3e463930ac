#!/usr/bin/env python3
"""Peer benchmark: the unbounded Rotne-Prager-Yamakawa mobility product of pystokes 2.3.2.

Usage:
    python3 pystokes_rpy.py POSITIONS_CSV [--radius 1.0] [--viscosity 1.0] [--repeats K] [--seed S]

POSITIONS_CSV: a header line `x,y,z`, then one bead centre per line.

Times the full 6N product with random forces F and torques T (seeded numpy RNG, components
uniform in [-0.5, 0.5]):
    v = mu_TT . F + mu_TR . T        (Rbm.mobilityTT + Rbm.mobilityTR)
    o = mu_RT . F + mu_RR . T        (Rbm.mobilityRT + Rbm.mobilityRR)
all four calls per product, as a simulation would make them. One warm-up product, then K timed
ones (wall clock, time.perf_counter); prints one JSON line:
    {"peer": "pystokes", "version": ..., "n": N, "threads": ..., "best_ms": ..., "median_ms": ..., "repeats": K}
Default K = max(3, 4_000_000 // N**2).

THREADS: pystokes.unbounded is Cython compiled with -fopenmp; every Rbm.mobility* method is one
`prange(N, nogil=True)` loop over the target beads (default schedule, no num_threads argument).
So the thread count is set ONLY by the environment variable OMP_NUM_THREADS (read by libgomp when
the extension is loaded, i.e. at `import pystokes`; default: every CPU the process may use).
Set it in the environment before starting this script, e.g.
    OMP_NUM_THREADS=2 python3 pystokes_rpy.py positions.csv
The four calls are four separate parallel regions, run one after another.
The "threads" reported is libgomp's omp_get_max_threads() when it can be queried, else
OMP_NUM_THREADS, else os.cpu_count().

Array layout (from pystokes/unbounded.pyx): r, v, o, F, T are flat float64 arrays of length 3N,
component-major: [x_0..x_{N-1}, y_0..y_{N-1}, z_0..z_{N-1}]. The methods ADD into v / o (+=),
so the outputs are zeroed before each product. pystokes has no overlap correction (pairs closer
than 2a use the far-field RPY form), so its values differ from an overlap-corrected RPY for
overlapping pairs; the cost per pair is what is compared here.
"""
import argparse
import ctypes
import ctypes.util
import json
import os
import statistics
import sys
import time

import numpy as np
import pystokes
import pystokes.unbounded


def read_positions(path):
    """Bead centres from a CSV with a header line `x,y,z`; an (N, 3) float64 array."""
    with open(path) as f:
        header = f.readline().strip().replace(" ", "").lower()
        if header != "x,y,z":
            sys.exit(f"{path}: expected the header line 'x,y,z', found {header!r}")
        rows = [line.split(",") for line in f if line.strip()]
    pos = np.array([[float(c) for c in row] for row in rows], dtype=np.float64)
    if pos.ndim != 2 or pos.shape[1] != 3 or pos.shape[0] < 2:
        sys.exit(f"{path}: need at least two rows of three numbers")
    return pos


def threads_in_effect():
    """OpenMP's thread count for a parallel region (libgomp is already loaded by pystokes)."""
    for name in ("libgomp.so.1", ctypes.util.find_library("gomp")):
        if not name:
            continue
        try:
            lib = ctypes.CDLL(name)
            lib.omp_get_max_threads.restype = ctypes.c_int
            return int(lib.omp_get_max_threads())
        except (OSError, AttributeError):
            pass
    env = os.environ.get("OMP_NUM_THREADS", "").split(",")[0].strip()
    if env.isdigit() and int(env) > 0:
        return int(env)
    return os.cpu_count()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("positions_csv")
    parser.add_argument("--radius", type=float, default=1.0)
    parser.add_argument("--viscosity", type=float, default=1.0)
    parser.add_argument("--repeats", type=int, default=None)
    parser.add_argument("--seed", type=int, default=2)
    args = parser.parse_args()

    pos = read_positions(args.positions_csv)
    n = pos.shape[0]
    repeats = args.repeats if args.repeats is not None else max(3, 4_000_000 // n**2)
    if repeats < 1:
        sys.exit("--repeats must be at least 1")

    # Component-major flat layout: [x0..xN-1, y0..yN-1, z0..zN-1].
    r = np.ascontiguousarray(pos.T.reshape(-1))
    rng = np.random.default_rng(args.seed)
    F = np.ascontiguousarray(rng.uniform(-0.5, 0.5, size=(n, 3)).T.reshape(-1))
    T = np.ascontiguousarray(rng.uniform(-0.5, 0.5, size=(n, 3)).T.reshape(-1))
    v = np.zeros(3 * n)
    o = np.zeros(3 * n)

    rbm = pystokes.unbounded.Rbm(radius=args.radius, particles=n, viscosity=args.viscosity)

    def product():
        v.fill(0.0)
        o.fill(0.0)
        rbm.mobilityTT(v, r, F)
        rbm.mobilityTR(v, r, T)
        rbm.mobilityRT(o, r, F)
        rbm.mobilityRR(o, r, T)

    product()  # warm-up (starts the OpenMP thread pool; pystokes is precompiled, no JIT)
    times = []
    for _ in range(repeats):
        t0 = time.perf_counter()
        product()
        times.append(time.perf_counter() - t0)
    if not (np.all(np.isfinite(v)) and np.all(np.isfinite(o))):
        sys.exit("non-finite velocities (coincident beads?)")

    print(json.dumps({
        "peer": "pystokes",
        "version": getattr(pystokes, "__version__", "2.3.2"),
        "n": n,
        "threads": threads_in_effect(),
        "best_ms": min(times) * 1e3,
        "median_ms": statistics.median(times) * 1e3,
        "repeats": repeats,
    }))


if __name__ == "__main__":
    main()
