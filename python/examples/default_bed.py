#!/usr/bin/env python3
"""The built-in default scene from Python: 800 polydisperse glass beads poured onto a floor, with the bed's
height plotted against time (the height below which 95 % of the beads' tops lie).

    python3 python/examples/default_bed.py [--quick] [--plot bed-height.png]

Needs the `silt` package (`pip install ./python`); the plot needs matplotlib.
"""

import argparse
import pathlib

import numpy as np

import silt

ROOT = pathlib.Path(__file__).resolve().parents[2]


def bed_height(sim):
    """The height below which 95 % of the beads' tops lie."""
    tops = sim.positions()[:, 2] + sim.radii()
    return float(np.percentile(tops, 95))


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="100 beads, to t = 0.05")
    parser.add_argument("--plot", help="write the plot to this PNG (needs matplotlib)")
    args = parser.parse_args()
    scene = silt.Scene.from_file(ROOT / "examples" / "default-bed.toml")
    if args.quick:
        import tomllib

        table = tomllib.loads(scene.to_toml())
        table["particles"][0]["count"] = 100
        table["simulation"]["end_time"] = 0.05
        scene = silt.Scene.from_dict(table)
    sim = silt.Simulation(scene)
    times, heights = [], []

    def record(s):
        times.append(s.time)
        heights.append(bed_height(s))
        print(f"t = {s.time:.3f} s: bed height {1e3 * heights[-1]:.2f} mm, "
              f"kinetic energy {s.diagnostics()['kinetic_energy']:.3e} J")

    record(sim)
    sim.run(every=sim.end_time / 20, callback=record)
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5, 3.5))
        ax.plot(times, 1e3 * np.array(heights))
        ax.set_xlabel("t (s)")
        ax.set_ylabel("bed height (mm)")
        ax.set_title("800 glass beads poured onto a floor")
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
