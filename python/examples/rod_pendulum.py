#!/usr/bin/env python3
"""A rod's tip history against its analytic period (examples/rod-steel-pendulum.toml): a stiff steel rod hinged at
one end and released horizontal swings as a rigid compound pendulum, whose period for a release at 90 degrees is

    T = 4 sqrt(2 L / (3 g)) K(sin 45 deg),   K the complete elliptic integral of the first kind,

1.9332 s for L = 1 m. The script follows the tip to its return to the horizontal and compares.

    python3 python/examples/rod_pendulum.py [--plot pendulum.png]
"""

import argparse
import math
import pathlib

import numpy as np

import silt

ROOT = pathlib.Path(__file__).resolve().parents[2]


def elliptic_k(k):
    """K(k) by the arithmetic-geometric mean: pi / (2 AGM(1, sqrt(1 - k^2)))."""
    a, b = 1.0, math.sqrt(1.0 - k * k)
    while abs(a - b) > 1e-15 * a:
        a, b = (a + b) / 2, math.sqrt(a * b)
    return math.pi / (2 * a)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--plot", help="write the tip history to this PNG (needs matplotlib)")
    args = parser.parse_args()
    length, g = 1.0, 9.81
    period = 4 * math.sqrt(2 * length / (3 * g)) * elliptic_k(math.sin(math.pi / 4))
    sim = silt.Simulation(silt.Scene.from_file(ROOT / "examples" / "rod-steel-pendulum.toml"))
    times, tips = [], []

    def record(s):
        times.append(s.time)
        tips.append(s.rod_nodes(0)[-1].copy())

    record(sim)
    sim.run(until=sim.end_time, every=0.005, callback=record)
    times, tips = np.array(times), np.array(tips)
    # The angle below the horizontal; the swing's far end is where it is largest (the tip at the other
    # side, angle 180 degrees), the return where it comes back to 0 after that.
    angle = np.degrees(np.unwrap(np.arctan2(-tips[:, 2], tips[:, 0])))
    far = int(np.argmax(angle))
    back = far + int(np.argmin(angle[far:]))
    # The return time, refined by a parabola through the three samples around the smallest angle.
    if 0 < back < len(angle) - 1:
        y0, y1, y2 = angle[back - 1 : back + 2]
        shift = 0.5 * (y0 - y2) / (y0 - 2 * y1 + y2)
        returned = times[back] + shift * (times[1] - times[0])
    else:
        returned = times[back]
    print(f"far end at t = {times[far]:.4f} s (angle {angle[far]:.2f} deg); back to horizontal at "
          f"t = {returned:.4f} s; analytic period {period:.4f} s "
          f"(difference {100 * (returned / period - 1):+.2f} %)")
    if args.plot:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, ax = plt.subplots(figsize=(5, 3.5))
        ax.plot(times, angle)
        ax.axvline(period, color="k", ls="--", label=f"analytic period {period:.4f} s")
        ax.set_xlabel("t (s)")
        ax.set_ylabel("tip angle below the horizontal (deg)")
        ax.legend()
        fig.tight_layout()
        fig.savefig(args.plot, dpi=120)
        print(f"wrote {args.plot}")


if __name__ == "__main__":
    main()
