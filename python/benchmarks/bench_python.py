#!/usr/bin/env python3
"""The Python package's benchmark (issue 24): the cost of stepping from Python against the `silt`
program, and `silt.hydro.rpy_product` beside pystokes on the same positions.

Usage (a release build of the package, e.g. `pip install ./python`, and of the program):
    python3 python/benchmarks/bench_python.py --silt target/release/silt [--threads 1]

Prints a Markdown table. Run once per thread count (`silt.set_threads` holds for the process; pystokes
reads OMP_NUM_THREADS at import, so the script sets it before importing pystokes).

1. Overhead per step: for each scene (100 spheres; a 24-bead fiber; a 100-segment rod with velocity
   Verlet) the wall time of N calls of `sim.step()` minus one call of `sim.step(N)` on the same state,
   over N: what crossing into Python costs per step (the method call, releasing and taking the GIL,
   the check for Ctrl-C). Beside it the step itself (`sim.step(N)` / N) and the CLI's step on the same
   scene: (wall time of a run of 2N steps - one of N) / N, output written only at the ends. And the
   overhead when each step() is followed by reading the positions (`positions()`, `bead_positions()`,
   `rod_nodes(0)`: a live array, refreshed in place by every step() once asked for).
2. The RPY product (6N: forces and torques) at N = 1,000 and 4,000 beads on a random cloud
   (5 % volume fraction): the best of K products against pystokes 2.3.2's four calls
   (`Rbm.mobilityTT/TR/RT/RR`, which the peer script benches/peers/pystokes_rpy.py describes).
"""

import argparse
import os
import pathlib
import subprocess
import sys
import tempfile
import time

ROOT = pathlib.Path(__file__).resolve().parents[2]

# Each scene with the `silt run` options that change it, and the steps N of a measurement.
SCENES = {
    "100 spheres (default bed, dt 5e-6)": (
        20_000,
        ROOT / "examples" / "default-bed.toml",
        ["--set", "particles.0.count=100", "--set", "particles.0.region.max=[0.008, 0.008, 0.004]",
         "--set", "simulation.end_time=1.0", "--set", "output.interval=1.0",
         "--set", "output.checkpoint_interval=1.0"],
    ),
    "a 24-bead fiber (RPY, Adams-Bashforth)": (
        2_000,
        ROOT / "examples" / "fiber-sedimenting.toml",
        ["--set", "fibers.fiber.0.beads=24", "--set", "fibers.end_time=1e6",
         "--set", "fibers.output.interval=1e5"],
    ),
    "a 100-segment rod (position Verlet)": (
        100_000,
        ROOT / "examples" / "rod-steel-pendulum.toml",
        ["--set", "rods.integrator=verlet", "--unset", "rods.relative_tolerance",
         "--unset", "rods.absolute_tolerance", "--set", "rods.rod.0.segments=100",
         "--set", "rods.end_time=100.0", "--set", "rods.output.interval=100.0"],
    ),
}


def scene_file(tmp, path, changes, silt_bin):
    """The scene with `changes`, as the CLI writes it (`silt run --until 0` writes scene.toml)."""
    out = pathlib.Path(tmp) / ("scene-" + path.stem)
    command = [str(silt_bin), "run", str(path), "-o", str(out), "-q", "--until", "0", *changes]
    subprocess.run(command, check=True, capture_output=True, text=True)
    return out / "scene.toml", command


def cli_seconds_per_step(silt_bin, scene, dt, steps, threads, tmp):
    """(a run of 2N steps - a run of N) / N, output only at the ends."""
    def run(n):
        out = pathlib.Path(tmp) / "cli"
        command = [str(silt_bin), "--threads", str(threads), "run", str(scene), "-o", str(out), "-q",
                   "--until", repr(n * dt * (1 - 1e-9))]
        start = time.perf_counter()
        subprocess.run(command, check=True, capture_output=True)
        return time.perf_counter() - start
    best = min(run(2 * steps) - run(steps) for _ in range(3))
    return best / steps


def positions_of(sim):
    """The live array of the positions of the scene's bodies."""
    return {"particles": sim.positions, "fibers": sim.bead_positions, "rods": lambda: sim.rod_nodes(0)}[sim.kind]


def seconds_per_step(sim, steps, after=None):
    """The best of 3 of: one call of step(N) over N, and (N calls of step(), each followed by `after()`
    if given, - that) over N."""
    batches, overheads = [], []
    for _ in range(3):
        start = time.perf_counter()
        sim.step(steps)
        batch = time.perf_counter() - start
        start = time.perf_counter()
        for _ in range(steps):
            sim.step()
            if after is not None:
                after()
        single = time.perf_counter() - start
        batches.append(batch / steps)
        overheads.append((single - batch) / steps)
    return min(batches), min(overheads)


def python_seconds(silt, scene, steps):
    """The step from Python, its overhead per step() call, and that overhead with the positions read after
    every step."""
    sim = silt.Simulation(silt.Scene.from_file(scene))
    sim.step(10)
    batch, overhead = seconds_per_step(sim, steps)
    # Asked for once, the positions are refreshed by every later step (a fresh simulation: the first
    # measurement stays without live arrays).
    read = silt.Simulation(silt.Scene.from_file(scene))
    read.step(10)
    positions = positions_of(read)
    positions()
    _, reading = seconds_per_step(read, steps, after=positions)
    return batch, overhead, reading, sim.dt


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--silt", default=str(ROOT / "target" / "release" / "silt"))
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--scale", type=float, default=1.0, help="scales the steps of each measurement")
    args = parser.parse_args()
    os.environ["OMP_NUM_THREADS"] = str(args.threads)
    import numpy as np
    import silt

    silt.set_threads(args.threads)
    print(f"silt {silt.__version__}, {args.threads} thread(s), {os.cpu_count()} CPUs\n")
    print("| scene | step from Python, us | overhead per step(), us | with positions read, us | CLI step, us |")
    print("|---|---|---|---|---|")
    with tempfile.TemporaryDirectory() as tmp:
        for name, (steps, path, changes) in SCENES.items():
            steps = max(1, int(steps * args.scale))
            scene, _ = scene_file(tmp, path, changes, args.silt)
            step, overhead, reading, dt = python_seconds(silt, scene, steps)
            if dt is None:
                cli = float("nan")
            else:
                cli = cli_seconds_per_step(args.silt, scene, dt, steps, args.threads, tmp)
            print(f"| {name} | {1e6 * step:.2f} | {1e6 * overhead:.2f} | {1e6 * reading:.2f} | {1e6 * cli:.2f} |")

    print("\n| RPY product (6N) | Silt ms | pystokes 2.3.2 ms | pystokes / Silt |")
    print("|---|---|---|---|")
    try:
        import pystokes.unbounded
        peer = True
    except ImportError as e:
        peer = False
        note = f"pystokes not importable: {e}"
    rng = np.random.default_rng(7)
    a, eta = 1.0, 1.0
    for n in (1000, 4000):
        # A random cloud at 5 % volume fraction.
        side = (n * 4 / 3 * np.pi * a**3 / 0.05) ** (1 / 3)
        x = rng.uniform(0, side, (n, 3))
        f = rng.uniform(-0.5, 0.5, (n, 3))
        t = rng.uniform(-0.5, 0.5, (n, 3))
        repeats = max(3, 4_000_000 // n**2)
        silt.hydro.rpy_product(x, f, t, a=a, eta=eta)
        best = min(timed(lambda: silt.hydro.rpy_product(x, f, t, a=a, eta=eta)) for _ in range(repeats))
        if peer:
            rbm = pystokes.unbounded.Rbm(a, n, eta)
            r, F, T = (np.ascontiguousarray(m.T).ravel() for m in (x, f, t))
            v, o = np.zeros(3 * n), np.zeros(3 * n)

            def product():
                v[:] = 0.0
                o[:] = 0.0
                rbm.mobilityTT(v, r, F)
                rbm.mobilityTR(v, r, T)
                rbm.mobilityRT(o, r, F)
                rbm.mobilityRR(o, r, T)

            product()
            theirs = min(timed(product) for _ in range(repeats))
            print(f"| N = {n} | {1e3 * best:.2f} | {1e3 * theirs:.2f} | {theirs / best:.2f} |")
        else:
            print(f"| N = {n} | {1e3 * best:.2f} | ({note}) | |")


def timed(call):
    start = time.perf_counter()
    call()
    return time.perf_counter() - start


if __name__ == "__main__":
    sys.exit(main())
