#!/usr/bin/env python3
"""Peer benchmark: the periodic Rotne-Prager-Yamakawa translational product of pystokes 2.3.2.

Usage:
    python3 pystokes_periodic.py POSITIONS_CSV BOX [--radius 1.0] [--viscosity 1.0] [--images NB]
        [--modes NM] [--repeats K] [--seed S] [--velocities OUT_CSV]

POSITIONS_CSV: a header line `x,y,z`, then one bead centre per line, inside the cubic box [0, BOX)^3.

Times v = mu_TT . F (pystokes.periodic.Rbm.mobilityTT: Beenakker's Ewald sum with Hasimoto's
splitting, xi = sqrt(pi) / BOX, every real-space image n in [-NB, NB]^3 without a cutoff and the
Fourier modes n in [-NM/2 + 1, NM/2]^3, every pair summed: O(N^2)). Only the translational block:
in 2.3.2 mobilityTR depends on xi and mobilityRR returns NaN (docs/theory/periodic-rpy.md). The
forces are random (seeded numpy RNG, components uniform in [-0.5, 0.5]). One timed product per
repeat (no warm-up: one product of N = 1,000 takes seconds); prints one JSON line
    {"peer": "pystokes.periodic", "version": ..., "n": N, "threads": ..., "best_ms": ..., ...}
and with --velocities writes F and v (x,y,z per bead) for Silt to compare with its own product.
NB = 2, NM = 6 (the defaults here) agree with NB = 3, NM = 10 to ~4e-6 relative at 5 % volume
fraction. pystokes has no overlap correction; compare it with Silt's product without one. Threads:
OMP_NUM_THREADS, read when pystokes is imported.
"""
import argparse
import json
import os
import sys
import time

import numpy as np
import pystokes
import pystokes.periodic


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("positions_csv")
    parser.add_argument("box", type=float)
    parser.add_argument("--radius", type=float, default=1.0)
    parser.add_argument("--viscosity", type=float, default=1.0)
    parser.add_argument("--images", type=int, default=2)
    parser.add_argument("--modes", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=1)
    parser.add_argument("--seed", type=int, default=2)
    parser.add_argument("--velocities", default=None)
    args = parser.parse_args()

    pos = np.loadtxt(args.positions_csv, delimiter=",", skiprows=1, ndmin=2)
    n = pos.shape[0]
    r = np.ascontiguousarray(pos.T.reshape(-1))
    rng = np.random.default_rng(args.seed)
    forces = rng.uniform(-0.5, 0.5, size=(n, 3))
    F = np.ascontiguousarray(forces.T.reshape(-1))
    v = np.zeros(3 * n)
    rbm = pystokes.periodic.Rbm(radius=args.radius, particles=n, viscosity=args.viscosity,
                                boxSize=args.box)
    times = []
    for _ in range(max(1, args.repeats)):
        v.fill(0.0)
        t0 = time.perf_counter()
        rbm.mobilityTT(v, r, F, args.images, args.modes)
        times.append(time.perf_counter() - t0)
    if not np.all(np.isfinite(v)):
        sys.exit("non-finite velocities")
    if args.velocities:
        out = np.hstack([forces, v.reshape(3, n).T])
        np.savetxt(args.velocities, out, delimiter=",", header="fx,fy,fz,vx,vy,vz", comments="",
                   fmt="%.17e")
    print(json.dumps({
        "peer": "pystokes.periodic",
        "version": getattr(pystokes, "__version__", "2.3.2"),
        "n": n,
        "threads": os.environ.get("OMP_NUM_THREADS", str(os.cpu_count())),
        "images": args.images,
        "modes": args.modes,
        "best_ms": min(times) * 1e3,
    }))


if __name__ == "__main__":
    main()
