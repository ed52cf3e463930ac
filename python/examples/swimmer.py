#!/usr/bin/env python3
"""A swimming filament from Python (examples/fiber-swimmer.toml: 24 beads, a travelling bending wave): the
trajectory of its centre of mass and its mean swimming speed.

    python3 python/examples/swimmer.py [--quick] [--plot swimmer.png]
"""

import argparse
import pathlib

import numpy as np

import silt

ROOT = pathlib.Path(__file__).resolve().parents[2]


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="two wave periods instead of the scene's end time")
    parser.add_argument("--plot", help="write the trajectory to this PNG (needs matplotlib)")
    args = parser.parse_args()
    sim = silt.Simulation(silt.Scene.from_file(ROOT / "examples" / "fiber-swimmer.toml"))
    period = 2 * np.pi
    until = 2 * period if args.quick else sim.end_time
    times, centres = [], []

    def record(s):
        times.append(s.time)
        centres.append(s.bead_positions().mean(axis=0))

    record(sim)
    sim.run(until=until, every=period / 16, callback=record)
    centres = np.array(centres)
    # The mean speed over whole periods (the wave makes the centre oscillate within a period).
    whole = int(times[-1] // period)
    start, end = centres[0], centres[16 * whole]
    speed = np.linalg.norm(end - start) / (whole * period)
    print(f"{whole} period(s): the centre moved {np.round(end - start, 4)}, mean speed {speed:.4g} "
          f"(bead radius 1/2, wave period 2 pi)")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5, 3.5))
        ax.plot(centres[:, 0], centres[:, 1], ".-")
        ax.set_xlabel("x")
        ax.set_ylabel("y")
        ax.set_title("centre of mass of a swimming filament")
        ax.set_aspect("equal", adjustable="datalim")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
