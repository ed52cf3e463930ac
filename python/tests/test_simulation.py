"""The package against the command-line program: the same scenes, errors and numbers."""

import threading
import time

import numpy as np
import pytest

import silt
from conftest import ROOT, read_diagnostics

DEFAULT_BED = ROOT / "examples" / "default-bed.toml"


def test_a_particle_run_gives_the_cli_diagnostics_bit_for_bit(cli_run):
    # 100 spheres dropped just above the floor: they reach it and each other within the run.
    out = cli_run(
        DEFAULT_BED,
        "simulation.end_time=0.015",
        "particles.0.count=100",
        "particles.0.region.max=[0.008, 0.008, 0.004]",
    )
    expected = read_diagnostics(out / "diagnostics.csv")
    # Spin comes only from collisions.
    assert len(expected) == 4 and expected[-1]["rotational_energy"] > 0
    # The scene the CLI ran (with the change), as written to its output folder.
    sim = silt.Simulation(silt.Scene.from_file(out / "scene.toml"))
    for row in expected:
        sim.advance_to(row["time"])
        assert sim.diagnostics() == row


def test_a_fluid_run_gives_the_cli_diagnostics_bit_for_bit(cli_run):
    out = cli_run(
        ROOT / "examples" / "taylor-green-2d.toml", "fluid.end_time=0.2", "fluid.output.interval=0.05"
    )
    expected = read_diagnostics(out / "diagnostics.csv")
    sim = silt.Simulation(silt.Scene.from_file(out / "scene.toml"))
    assert sim.kind == "fluid"
    for row in expected:
        sim.advance_to(row["time"])
        got = sim.diagnostics()
        assert got == row, {k: (got[k], row[k]) for k in row if got[k] != row[k]}


def test_steps_and_times_add_up():
    sim = silt.Simulation(silt.Scene.from_file(DEFAULT_BED))
    assert (sim.time, sim.steps, sim.kind) == (0.0, 0, "particles")
    dt = sim.dt
    sim.step()
    sim.step(9)
    assert sim.steps == 10 and sim.time == pytest.approx(10 * dt, rel=1e-12)
    # advance_to stops at the first step at or past the time, as `silt run --until` does.
    sim.advance_to(25.5 * dt)
    assert sim.steps == 26
    sim.advance_to(0.0)
    assert sim.steps == 26


def test_sphere_arrays_have_their_shapes_and_are_live_read_only_arrays():
    sim = silt.Simulation(silt.Scene.from_file(DEFAULT_BED))
    sim.step(100)
    x, v, w, r = sim.positions(), sim.velocities(), sim.angular_velocities(), sim.radii()
    n = len(r)
    assert n > 0
    for a in (x, v, w):
        assert a.shape == (n, 3) and a.dtype == np.float64 and a.flags["C_CONTIGUOUS"]
    assert r.shape == (n,) and r.dtype == np.float64 and np.all(r > 0)
    # Falling under gravity along -z.
    assert np.all(v[:, 2] <= 0) and np.any(v[:, 2] < 0)
    # The same array on every call (no copy, no allocation), read-only for Python,
    assert sim.positions() is x and sim.velocities() is v
    with pytest.raises(ValueError, match="read-only"):
        x[:] = 0.0
    # and refreshed in place by the calls that advance: an array taken earlier shows the new state.
    kept = x.copy()
    sim.step(10)
    assert np.all(x[:, 2] < kept[:, 2])
    assert sim.positions() is x
    # Views of it follow it too.
    heights = x[:, 2]
    sim.advance_to(sim.time + 10 * sim.dt)
    np.testing.assert_array_equal(heights, sim.positions()[:, 2])
    assert np.shares_memory(heights, x)


def test_every_live_array_matches_a_fresh_simulation_at_the_same_step(tmp_path):
    # Asked for at the start and read after stepping, against arrays first asked for at the end.
    scenes = {
        "fluid": ROOT / "examples" / "taylor-green-2d.toml",
        "fibers": ROOT / "examples" / "fiber-sedimenting.toml",
        "rods": ROOT / "examples" / "rod-steel-pendulum.toml",
    }
    readers = {
        "fluid": lambda s: [s.fluid_velocity(0), s.fluid_velocity(1), s.fluid_velocity(2), s.fluid_pressure()],
        "fibers": lambda s: [s.bead_positions()],
        "rods": lambda s: [s.rod_nodes(0)],
    }
    for kind, path in scenes.items():
        scene = silt.Scene.from_file(path)
        early, late = silt.Simulation(scene), silt.Simulation(scene)
        held = readers[kind](early)
        before = [a.copy() for a in held]
        for s in (early, late):
            # Three steps (the rod chooses its own: a time).
            s.advance_to(0.01) if kind == "rods" else s.step(3)
        for a, b, old in zip(held, readers[kind](late), before):
            np.testing.assert_array_equal(a, b)
            assert not np.array_equal(a, old), kind
            assert not a.flags["WRITEABLE"]
        if kind == "fluid":
            assert all(a.flags["F_CONTIGUOUS"] for a in held)


def test_scene_errors_name_the_key():
    with pytest.raises(silt.SceneError) as error:
        silt.Scene.from_dict({"simulation": {"dt": -1.0, "end_time": 1.0}})
    assert isinstance(error.value, ValueError)
    assert error.value.key == "simulation.dt", str(error.value)
    assert "simulation.dt" in str(error.value)
    with pytest.raises(silt.SceneError) as error:
        silt.Scene.from_dict({"simulation": {"dt": object()}})
    assert error.value.key == "simulation.dt"
    with pytest.raises(silt.SceneError) as error:
        silt.Scene.from_file(ROOT / "no-such-scene.toml")
    assert "no-such-scene.toml" in str(error.value)


def test_a_scene_from_a_dict_runs_as_its_toml():
    tomllib = pytest.importorskip("tomllib")
    text = DEFAULT_BED.read_text()
    table = tomllib.loads(text)
    table["simulation"]["end_time"] = 0.01
    # numpy arrays stand for lists.
    table["domain"]["max"] = np.array(table["domain"]["max"])
    from_dict = silt.Simulation(silt.Scene.from_dict(table))
    from_toml = silt.Simulation(silt.Scene.from_toml(text.replace("end_time = 0.2 ", "end_time = 0.01")))
    assert from_dict.end_time == from_toml.end_time == 0.01
    for sim in (from_dict, from_toml):
        sim.step(100)
    assert from_dict.diagnostics() == from_toml.diagnostics()
    np.testing.assert_array_equal(from_dict.positions(), from_toml.positions())


def test_stepping_releases_the_gil():
    sim = silt.Simulation(silt.Scene.from_file(DEFAULT_BED))
    ticks = [0]
    running = [True]

    def count():
        while running[0]:
            ticks[0] += 1

    counter = threading.Thread(target=count)
    counter.start()
    try:
        time.sleep(0.05)
        before = ticks[0]
        sim.step(600)
        during = ticks[0] - before
    finally:
        running[0] = False
        counter.join()
    # Held, the GIL would have frozen the counter for the whole call (a second or more).
    assert during > 10_000, during


def test_ctrl_c_stops_between_advances_and_leaves_a_usable_simulation():
    import _thread

    sim = silt.Simulation(silt.Scene.from_file(DEFAULT_BED))
    timer = threading.Timer(0.3, _thread.interrupt_main)
    timer.start()
    with pytest.raises(KeyboardInterrupt):
        sim.step(10**8)
    timer.join()
    stopped = sim.steps
    assert 0 < stopped < 10**8
    sim.step()
    assert sim.steps == stopped + 1


def test_run_calls_back_at_its_interval_and_stops_when_told():
    sim = silt.Simulation(silt.Scene.from_file(DEFAULT_BED))
    times = []
    sim.run(until=0.0004, every=0.0001, callback=lambda s: times.append(s.time))
    assert times == pytest.approx([0.0001, 0.0002, 0.0003, 0.0004], rel=1e-9)
    sim.run(until=0.01, every=0.0001, callback=lambda s: False)
    assert sim.time == pytest.approx(0.0005, rel=1e-9)
    with pytest.raises(ValueError):
        sim.run(every=0.0)


def test_a_fluid_scene_has_no_spheres():
    sim = silt.Simulation(silt.Scene.from_file(ROOT / "examples" / "taylor-green-2d.toml"))
    with pytest.raises(ValueError, match="no spheres"):
        sim.positions()


def test_fluid_fields_sit_at_their_staggered_points():
    sim = silt.Simulation(silt.Scene.from_file(ROOT / "examples" / "taylor-green-2d.toml"))
    u, v, p = sim.fluid_velocity(0), sim.fluid_velocity(1), sim.fluid_pressure()
    assert u.shape == v.shape == p.shape == (64, 64, 2) and u.dtype == np.float64
    assert u.flags["F_CONTIGUOUS"]
    # The initial vortex, u = -cos x sin y, v = sin x cos y, at each component's own points.
    x, y, _ = sim.fluid_coordinates("u")
    np.testing.assert_allclose(u[:, :, 0], -np.cos(x)[:, None] * np.sin(y)[None, :], atol=1e-12)
    x, y, _ = sim.fluid_coordinates("v")
    np.testing.assert_allclose(v[:, :, 0], np.sin(x)[:, None] * np.cos(y)[None, :], atol=1e-12)
    # u on the faces normal to x (x = i h), v on those normal to y, p at the centres.
    h = 2 * np.pi / 64
    xu, yu, _ = sim.fluid_coordinates("u")
    xp, yp, zp = sim.fluid_coordinates("p")
    np.testing.assert_allclose(xu, h * np.arange(1, 65), rtol=1e-14)
    np.testing.assert_allclose(yu, h * (np.arange(64) + 0.5), rtol=1e-14)
    np.testing.assert_allclose(xp, yu, rtol=1e-14)
    sim.step(5)
    # Decaying: the kinetic energy falls, the mean stays zero.
    assert abs(sim.fluid_velocity(0).mean()) < 1e-12
    with pytest.raises(ValueError):
        sim.fluid_velocity(3)
    with pytest.raises(ValueError):
        sim.fluid_coordinates("q")
    with pytest.raises(ValueError, match="no fluid"):
        silt.Simulation(silt.Scene.from_file(DEFAULT_BED)).fluid_pressure()


def test_a_fiber_run_gives_the_cli_diagnostics_bit_for_bit(cli_run):
    out = cli_run(ROOT / "examples" / "fiber-sedimenting.toml", "fibers.end_time=4.0", "fibers.output.interval=1.0")
    expected = read_diagnostics(out / "diagnostics.csv")
    sim = silt.Simulation(silt.Scene.from_file(out / "scene.toml"))
    # A row per step (the fibers' diagnostics interval).
    assert sim.kind == "fibers" and len(expected) == 65
    for row in expected:
        sim.advance_to(row["time"])
        assert sim.diagnostics() == row
    x = sim.bead_positions()
    assert x.shape == (20, 3) and sim.fiber_ranges() == [(0, 20)]
    # Settling along -y under its weight.
    assert np.all(x[:, 1] < 0)


def test_an_implicit_rod_run_gives_the_cli_diagnostics_at_its_frames(cli_run):
    out = cli_run(ROOT / "examples" / "rod-steel-pendulum.toml", "rods.end_time=0.06")
    expected = read_diagnostics(out / "diagnostics.csv")
    sim = silt.Simulation(silt.Scene.from_file(out / "scene.toml"))
    assert sim.kind == "rods" and sim.dt is None and sim.rod_count() == 1
    for row in expected:
        # A model choosing its steps lands on the frame times, as the CLI does.
        sim.advance_to(row["time"])
        assert sim.diagnostics() == row
    nodes = sim.rod_nodes(0)
    assert nodes.shape == (51, 3)
    assert nodes[-1, 0] == expected[-1]["tip_x"] and nodes[-1, 2] == expected[-1]["tip_z"]
    with pytest.raises(ValueError, match="rod 1"):
        sim.rod_nodes(1)


def rpy_translation(x, f, a, eta):
    """The RPY translational mobility product for beads at least 2a apart (the reference)."""
    v = f / (6 * np.pi * eta * a)
    for i in range(len(x)):
        for j in range(len(x)):
            if i == j:
                continue
            r = x[i] - x[j]
            d = np.linalg.norm(r)
            e = r / d
            m = ((1 + 2 * a**2 / (3 * d**2)) * np.eye(3) + (1 - 2 * a**2 / d**2) * np.outer(e, e)) / (8 * np.pi * eta * d)
            v[i] += m @ f[j]
    return v


def test_the_rpy_product_is_the_rpy_tensor():
    rng = np.random.default_rng(4)
    a, eta = 0.7, 1.3
    # One bead: Stokes drag and rotation.
    v, w = silt.hydro.rpy_product(np.zeros((1, 3)), np.array([[1.0, 2.0, 3.0]]), np.array([[0.0, 0.0, 1.0]]), a=a, eta=eta)
    np.testing.assert_allclose(v, [[1.0, 2.0, 3.0]] / np.array(6 * np.pi * eta * a), rtol=1e-14)
    np.testing.assert_allclose(w, [[0.0, 0.0, 1.0 / (8 * np.pi * eta * a**3)]], rtol=1e-14)
    # Beads on a loose lattice (all farther apart than 2a) under random forces.
    x = np.array([[i, j, k] for i in range(4) for j in range(3) for k in range(2)], dtype=float) * 2.5 * a
    x += rng.uniform(-0.2 * a, 0.2 * a, x.shape)
    f = rng.normal(size=x.shape)
    v, w = silt.hydro.rpy_product(x, f, a=a, eta=eta)
    assert v.shape == w.shape == x.shape
    np.testing.assert_allclose(v, rpy_translation(x, f, a, eta), rtol=1e-12, atol=1e-15)
    with pytest.raises(ValueError, match="one row per bead"):
        silt.hydro.rpy_product(x, f[:-1], a=a, eta=eta)
    with pytest.raises(ValueError, match="radius"):
        silt.hydro.rpy_product(x, f, a=-1.0, eta=eta)


def test_a_checkpoint_restores_the_state_and_the_run_continues_bit_for_bit(tmp_path):
    sim = silt.Simulation(silt.Scene.from_file(DEFAULT_BED))
    sim.step(50)
    sim.checkpoint(tmp_path / "saved")
    assert sorted(p.name for p in (tmp_path / "saved").iterdir()) == ["checkpoint.bin", "scene.toml"]
    back = silt.Simulation.restore(tmp_path / "saved")
    assert isinstance(back, silt.Simulation)
    assert (back.time, back.steps) == (sim.time, sim.steps)
    np.testing.assert_array_equal(back.positions(), sim.positions())
    for s in (sim, back):
        s.step(50)
    assert back.diagnostics() == sim.diagnostics()
    np.testing.assert_array_equal(back.velocities(), sim.velocities())


def test_a_cli_run_opens_at_its_last_checkpoint(cli_run, tmp_path):
    out = cli_run(ROOT / "examples" / "taylor-green-2d.toml", "fluid.end_time=0.1", "fluid.output.interval=0.05")
    last = read_diagnostics(out / "diagnostics.csv")[-1]
    sim = silt.Simulation.restore(out)
    assert sim.time == last["time"] == 0.1
    assert sim.diagnostics() == last
    # A damaged checkpoint is refused with the file named.
    (tmp_path / "bad").mkdir()
    (tmp_path / "bad" / "scene.toml").write_text((out / "scene.toml").read_text())
    (tmp_path / "bad" / "checkpoint.bin").write_bytes(b"not a checkpoint")
    with pytest.raises(ValueError, match="checkpoint.bin"):
        silt.Simulation.restore(tmp_path / "bad")
    with pytest.raises(OSError, match="no checkpoint"):
        (tmp_path / "bad" / "checkpoint.bin").unlink()
        silt.Simulation.restore(tmp_path / "bad")


def test_external_loads_act_on_the_spheres_until_cleared():
    sim = silt.Simulation(silt.Scene.from_file(DEFAULT_BED))
    m = sim.masses()
    x0 = sim.positions().copy()
    # Each sphere's weight held up: nothing moves (none touches another or the floor yet).
    up = np.zeros((len(m), 3))
    up[:, 2] = m * 9.81
    sim.set_external_loads(up)
    sim.step(50)
    assert np.all(sim.velocities() == 0.0)
    np.testing.assert_array_equal(sim.positions(), x0)
    # Cleared: they fall.
    sim.set_external_loads(None)
    sim.step(10)
    assert np.all(sim.velocities()[:, 2] < 0)
    with pytest.raises(ValueError, match="one row per sphere"):
        sim.set_external_loads(up[:-1])
    with pytest.raises(ValueError, match="finite"):
        sim.set_external_loads(np.full_like(up, np.inf))


def test_a_fluid_body_force_accelerates_the_mean_flow():
    sim = silt.Simulation(silt.Scene.from_file(ROOT / "examples" / "taylor-green-2d.toml"))
    sim.set_fluid_body_force([0.3, 0.0, 0.0])
    sim.step(4)
    # A periodic box: the mean velocity gains f t; the vortex keeps its zero mean.
    assert sim.fluid_velocity(0).mean() == pytest.approx(0.3 * sim.time, rel=1e-10)
    assert abs(sim.fluid_velocity(1).mean()) < 1e-12
    with pytest.raises(ValueError, match="no fluid"):
        silt.Simulation(silt.Scene.from_file(DEFAULT_BED)).set_fluid_body_force([1.0, 0.0, 0.0])


def test_the_fields_of_a_static_cantilever_carry_its_tip_force():
    # Timoshenko's cantilever (validation-data.md): clamped, a tip force of 15 across it, solved statically.
    sim = silt.Simulation(silt.Scene.from_file(ROOT / "examples" / "rod-timoshenko-static.toml"))
    sim.advance_to(1.0)
    f = sim.rod_fields()
    shapes = {name: a.shape for name, a in f.items()}
    assert shapes == {
        "nodes": (101, 3),
        "directors": (100, 3, 3),
        "shear_strain": (100, 3),
        "internal_force": (100, 3),
        "curvature": (101, 3),
        "internal_moment": (101, 3),
    }
    # Without distributed loads every segment carries the tip force,
    np.testing.assert_allclose(f["internal_force"], np.tile([-15.0, 0.0, 0.0], (100, 1)), atol=1e-8)
    # and the moment at a node is the tip force times its lever arm.
    x = f["nodes"]
    np.testing.assert_allclose(f["internal_moment"][:-1, 1], -15.0 * (x[-1, 2] - x[:-1, 2]), rtol=1e-6)
    # The tip deflection of the reference, 0.067770 (bending + shear).
    assert -x[-1, 0] == pytest.approx(0.067770, rel=1e-3)
    d = f["directors"]
    np.testing.assert_allclose(np.einsum("nij,nkj->nik", d, d), np.tile(np.eye(3), (100, 1, 1)), atol=1e-12)


def test_the_beads_motion_balances_and_asking_for_it_changes_nothing():
    scene = silt.Scene.from_file(ROOT / "examples" / "fiber-sedimenting.toml")
    asked, plain = silt.Simulation(scene), silt.Simulation(scene)
    for sim in (asked, plain):
        sim.step(3)
    motion = asked.bead_motion()
    assert {name: a.shape for name, a in motion.items()} == {
        name: (20, 3)
        for name in ("velocities", "angular_velocities", "constraint_forces", "constraint_torques", "forces", "torques")
    }
    # The constraints are internal (they sum to nothing over the fiber); with the elastic forces, the
    # beads carry the fiber's weight, 20 beads of bead_force (0, -1, 0).
    np.testing.assert_allclose(motion["constraint_forces"].sum(axis=0), 0.0, atol=1e-10)
    np.testing.assert_allclose(motion["forces"].sum(axis=0), [0.0, -20.0, 0.0], atol=1e-10)
    assert np.all(motion["velocities"][:, 1] < 0)
    for sim in (asked, plain):
        sim.step(3)
    np.testing.assert_array_equal(asked.bead_positions(), plain.bead_positions())
    with pytest.raises(ValueError, match="no beads"):
        silt.Simulation(silt.Scene.from_file(DEFAULT_BED)).bead_motion()


def test_without_the_overlap_correction_overlapping_beads_take_the_far_field_form():
    rng = np.random.default_rng(5)
    a, eta = 1.0, 0.8
    # Beads within 2a of one another.
    x = rng.uniform(0, 3.0, (12, 3))
    f = rng.normal(size=x.shape)
    far, _ = silt.hydro.rpy_product(x, f, a=a, eta=eta, overlap=False)
    np.testing.assert_allclose(far, rpy_translation(x, f, a, eta), rtol=1e-12, atol=1e-15)
    corrected, _ = silt.hydro.rpy_product(x, f, a=a, eta=eta)
    assert np.abs(corrected - far).max() > 1e-3


def test_the_static_solve_is_the_static_integrators():
    scene = silt.Scene.from_file(ROOT / "examples" / "rod-timoshenko-static.toml")
    (solved,) = silt.rods.solve_static(scene)
    assert solved["residual"] < 1e-8 and solved["newton_steps"] >= 1 and solved["load_steps"] >= 1
    sim = silt.Simulation(scene)
    sim.advance_to(1.0)
    np.testing.assert_array_equal(solved["nodes"], sim.rod_nodes(0))
    assert -solved["nodes"][-1, 0] == pytest.approx(0.067770, rel=1e-3)
    # A dynamic rod scene solved statically: the pendulum hangs straight down.
    (hanging,) = silt.rods.solve_static(silt.Scene.from_file(ROOT / "examples" / "rod-steel-pendulum.toml"), load_steps=4)
    tip = hanging["nodes"][-1]
    assert tip[2] == pytest.approx(-1.0, rel=1e-3) and abs(tip[0]) < 1e-3
    with pytest.raises(ValueError, match="no rods"):
        silt.rods.solve_static(silt.Scene.from_file(DEFAULT_BED))


def test_bead_loads_add_to_the_scenes_loads_until_cleared():
    sim = silt.Simulation(silt.Scene.from_file(ROOT / "examples" / "fiber-sedimenting.toml"))
    x0 = sim.bead_positions().copy()
    # Each bead's weight (bead_force (0, -1, 0)) held up: the straight fiber stays where it is.
    up = np.tile([0.0, 1.0, 0.0], (20, 1))
    sim.set_bead_loads(up)
    sim.step(5)
    np.testing.assert_allclose(sim.bead_positions(), x0, atol=1e-12)
    assert np.abs(sim.bead_motion()["velocities"]).max() < 1e-12
    sim.set_bead_loads(None)
    sim.step(2)
    assert np.all(sim.bead_positions()[:, 1] < x0[:, 1])
    with pytest.raises(ValueError, match="one row per bead"):
        sim.set_bead_loads(up[:3])


def test_a_failing_step_raises_step_error_naming_what_failed():
    sim = silt.Simulation(silt.Scene.from_file(DEFAULT_BED))
    m = sim.masses()
    # A thousand times their weight upward: the spheres leave through the box's top (z is bounded).
    up = np.zeros((len(m), 3))
    up[:, 2] = 1000 * m * 9.81
    sim.set_external_loads(up)
    with pytest.raises(silt.StepError) as error:
        sim.step(20_000)
    assert isinstance(error.value, RuntimeError)
    assert "particle" in str(error.value), str(error.value)
    assert 0 < sim.steps < 20_000


def small_settling_sphere():
    """The settling-sphere example on a coarse grid (D/h = 4): a coupled scene that steps in milliseconds."""
    import tomllib

    scene = tomllib.loads((ROOT / "examples" / "settling-sphere.toml").read_text())
    scene["fluid"]["cells"] = [26, 26, 40]
    scene["fluid"]["spacing"] = 3.75e-3
    scene["particles"][0]["positions"] = [[0.05, 0.05, 0.1]]
    return silt.Scene.from_dict(scene)


def test_external_loads_on_a_coupled_sphere_add_to_the_fluids():
    scene = small_settling_sphere()
    free, held = silt.Simulation(scene), silt.Simulation(scene)
    m, r = held.masses()[0], held.radii()[0]
    # Upward, its weight less its buoyancy (rho_f = 962): in still fluid nothing else acts on it.
    lift = (m - 962.0 * 4.0 / 3.0 * np.pi * r**3) * 9.81
    held.set_external_loads(np.array([[0.0, 0.0, lift]]))
    ib_before, _ = free.immersed_boundary_loads()
    np.testing.assert_array_equal(ib_before, np.zeros((1, 3)))
    z0 = free.positions()[0, 2]
    for s in (free, held):
        s.step(20)
    # (At D/h = 4 the free sphere's velocity oscillates; its drop does not.)
    fallen = free.positions()[0, 2] - z0
    assert fallen < -1e-4
    assert abs(held.positions()[0, 2] - z0) < 1e-6 * abs(fallen)
    # The fluid resists the falling sphere: an upward force from the immersed boundary.
    ib, _ = free.immersed_boundary_loads()
    assert ib.shape == (1, 3) and ib[0, 2] > 0
    # The contact loads of a sphere touching nothing: its weight.
    force, torque = free.contact_loads()
    np.testing.assert_array_equal(force, [[0.0, 0.0, -9.81 * m]])
    np.testing.assert_array_equal(torque, np.zeros((1, 3)))
    # The loads set from Python are among a sphere's loads.
    force, _ = held.contact_loads()
    np.testing.assert_allclose(force, [[0.0, 0.0, lift - 9.81 * m]], rtol=1e-14)
    held.set_external_loads(None)
    held.step(10)
    assert held.positions()[0, 2] < z0
    with pytest.raises(ValueError, match="no immersed spheres"):
        silt.Simulation(silt.Scene.from_file(DEFAULT_BED)).immersed_boundary_loads()


def test_prescribed_motion_moves_spheres_at_their_velocity_until_released(tmp_path):
    sim = silt.Simulation(silt.Scene.from_file(DEFAULT_BED))
    x0 = sim.positions().copy()
    sim.prescribe_motion([0, 3], [0.01, 0.0, 0.002])
    assert list(np.flatnonzero(sim.fixed())) == [0, 3]
    assert np.all(sim.velocities()[[0, 3]] == [0.01, 0.0, 0.002])
    sim.step(40)
    # Gravity and contacts do not move them; their velocity does.
    moved = sim.positions()[[0, 3]] - x0[[0, 3]]
    np.testing.assert_allclose(moved, np.tile([0.01, 0.0, 0.002], (2, 1)) * sim.time, rtol=1e-9)
    assert sim.positions()[1, 2] < x0[1, 2]
    # The motion is state: a checkpoint keeps it.
    sim.checkpoint(tmp_path / "saved")
    back = silt.Simulation.restore(tmp_path / "saved")
    assert list(np.flatnonzero(back.fixed())) == [0, 3]
    # Released: they fall from the velocity they had.
    sim.release([0, 3])
    assert not sim.fixed()[[0, 3]].any()
    sim.step(20)
    assert np.all(sim.velocities()[[0, 3], 2] < 0.002)
    # One row per index works too; bad indices and shapes are refused.
    sim.prescribe_motion([1, 2], np.array([[0.0, 0.0, 0.0], [0.0, 0.01, 0.0]]), angular_velocity=[0.0, 0.0, 1.0])
    assert sim.angular_velocities()[2, 2] == 1.0
    n = len(sim.radii())
    with pytest.raises(ValueError, match=f"index {n} is not allowed"):
        sim.prescribe_motion([n], [0.0, 0.0, 0.0])
    with pytest.raises(ValueError, match="one row per index"):
        sim.prescribe_motion([0, 1, 2], np.zeros((2, 3)))
    with pytest.raises(ValueError, match="finite"):
        sim.prescribe_motion([0], [np.nan, 0.0, 0.0])


def test_node_forces_add_to_a_rods_loads():
    scene = silt.Scene.from_file(ROOT / "examples" / "rod-timoshenko-static.toml")
    cancelled, doubled = silt.Simulation(scene), silt.Simulation(scene)
    tip = np.zeros((101, 3))
    tip[-1] = [15.0, 0.0, 0.0]
    # The scene's tip force (-15 across) cancelled by a dead force on the tip node: the rod stays straight
    # (to the static solve's tolerance, as in the cantilever's test above).
    cancelled.set_node_forces(tip)
    cancelled.advance_to(1.0)
    np.testing.assert_allclose(cancelled.rod_fields()["internal_force"], np.zeros((100, 3)), atol=1e-8)
    assert abs(cancelled.rod_nodes(0)[-1, 0]) < 1e-9
    # Doubled: it bends further than under the scene's force alone (0.067770).
    doubled.set_node_forces(-tip)
    doubled.advance_to(1.0)
    np.testing.assert_allclose(doubled.rod_fields()["internal_force"][:, 0], -30.0, rtol=1e-8)
    assert -doubled.rod_nodes(0)[-1, 0] > 0.067770 * 1.5
    with pytest.raises(ValueError, match="one row per node"):
        cancelled.set_node_forces(tip[:-1])
    with pytest.raises(ValueError, match="rod 1 is not allowed"):
        cancelled.set_node_forces(tip, k=1)


def test_the_contact_law_of_one_pair_is_the_runs_kernel():
    # Two glass spheres of the default bed overlapping while they approach: the pair loop of a run of
    # just them gives the same loads as the law for one pair.
    bed = silt.Scene.from_file(DEFAULT_BED)
    law = silt.contact.ContactLaw(bed)
    assert law.materials
    d = 1e-3
    x = np.array([[0.004, 0.004, 0.010], [0.004 + 0.99 * d, 0.004, 0.010]])
    v = np.array([[0.02, 0.0, 0.001], [-0.01, 0.003, 0.0]])
    w = np.array([[0.0, 5.0, 0.0], [1.0, 0.0, -2.0]])
    out = law.pair(x, (d / 2, d / 2), velocities=v, angular_velocities=w)
    assert out["touching"] and out["state"]["touching"]
    assert out["force"][0] < 0 and abs(out["force"][0]) > 10 * abs(out["force"][1:]).max()

    import tomllib

    scene = tomllib.loads(bed.to_toml())
    scene["simulation"]["gravity"] = [0.0, 0.0, 0.0]
    material = scene["particles"][0]["material"]
    # Apart at the start (a scene may not start with overlaps), approaching head-on (along the line of
    # centres, no spin: no tangential spring), stepped to the first step that ends with them overlapping.
    # Its sub-steps started apart, so the contact has no memory yet and starts at the next evaluation,
    # with the approach speed then as its impact speed: the law's pair without a state.
    v = np.array([[0.02, 0.0, 0.0], [-0.01, 0.0, 0.0]])
    w = np.zeros((2, 3))
    apart = x + [[0.0, 0.0, 0.0], [0.02 * d, 0.0, 0.0]]
    scene["particles"] = [{"material": material, "positions": apart.tolist(), "diameters": [d, d]}]
    scene.pop("wall", None)
    sim = silt.Simulation(silt.Scene.from_dict(scene))
    sim.prescribe_motion([0, 1], v, angular_velocity=w)
    sim.release([0, 1])
    xs = sim.positions()
    while np.linalg.norm(xs[1] - xs[0]) >= d:
        sim.step()
    out = law.pair(xs, (d / 2, d / 2), velocities=sim.velocities())
    # Slowed by the contact's first (predicted) evaluations within the step.
    assert out["touching"] and 0.029 < out["state"]["impact_speed"] < 0.03
    force, torque = sim.contact_loads()
    np.testing.assert_array_equal(force[0], out["force"])
    np.testing.assert_array_equal(force[1], -out["force"])
    np.testing.assert_array_equal(torque[0], out["torque_0"])
    np.testing.assert_array_equal(torque[1], out["torque_1"])

    # Apart and with no memory: nothing; the memory carried to the next call.
    apart = law.pair(x + [[0, 0, 0], [0.01, 0, 0]], (d / 2, d / 2))
    assert not apart["touching"] and np.all(apart["force"] == 0.0)
    # The tangential spring of an oblique, spinning contact advances when asked, from the memory given.
    oblique = {"velocities": [[0.02, 0.01, 0.0], [-0.01, 0.0, 0.0]], "angular_velocities": [[0.0, 0.0, 5.0], [1.0, 0.0, 0.0]]}
    first = law.pair(x, (d / 2, d / 2), **oblique)
    assert np.all(np.array(first["state"]["spring"]) == 0.0)
    again = law.pair(x, (d / 2, d / 2), **oblique, state=first["state"], advance_spring=True)
    assert again["state"]["impact_speed"] == first["state"]["impact_speed"]
    assert np.any(np.array(again["state"]["spring"]) != 0.0)
    assert np.any(again["force"] != first["force"])
    with pytest.raises(ValueError, match="material"):
        law.pair(x, (d / 2, d / 2), materials=("unobtainium", 0))
    with pytest.raises(ValueError, match="positive radii"):
        law.pair(x, (0.0, d / 2))
    with pytest.raises(ValueError, match="collision model"):
        silt.contact.ContactLaw(silt.Scene.from_file(ROOT / "examples" / "taylor-green-2d.toml"))
