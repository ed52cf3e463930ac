//! `silt.contact`: the collision model of a scene evaluated for one pair of spheres, by the kernel
//! every step of that scene runs for each near pair (seed eq. 7-8, 10-21: lubrication, the normal
//! law, tangential friction with its memory).

use crate::{read_vectors, scene_error, AnyModel, Rows, Scene};
use numpy::PyArray1;
use pyo3::exceptions::PyValueError;
use pyo3::prelude::*;
use pyo3::types::PyDict;
use silt_core::Vec3;
use silt_dem::contact::{ContactState, Update};
use silt_dem::system::DemSystem;

/// The collision model of a particle or coupled scene (its `[contact]` table, its materials and, in
/// a coupled scene, the fluid's viscosity for lubrication), for evaluating one pair of spheres in
/// free space (no walls, no periodic images, no gravity).
#[pyclass(frozen, module = "silt.contact")]
pub(crate) struct ContactLaw {
    /// The scene's system with its spheres, walls and gravity taken out.
    system: DemSystem,
}

#[pymethods]
impl ContactLaw {
    /// The collision model of `scene` (a particle or coupled scene; its model is built once).
    #[new]
    fn new(py: Python<'_>, scene: &Scene) -> PyResult<Self> {
        let model = py
            .detach(|| AnyModel::build(&scene.scene))
            .map_err(|e| scene_error(py, e))?;
        let mut system = match model {
            AnyModel::Particles(m) => m.system,
            AnyModel::Coupled(m) => m.particles.dem,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "a {} scene has no collision model (particle and coupled scenes have)",
                    scene.scene.kind()
                )))
            }
        };
        system.particles = Default::default();
        system.walls.clear();
        system.gravity = Vec3::ZERO;
        system.halo = None;
        system.domain.periodic = [false; 3];
        Ok(ContactLaw { system })
    }

    /// The materials' names, in the order of their indices.
    #[getter]
    fn materials(&self) -> Vec<String> {
        self.system
            .materials
            .iter()
            .map(|m| m.name.clone())
            .collect()
    }

    /// The loads of spheres 0 and 1 on each other: `positions`, `velocities` and
    /// `angular_velocities` (2, 3) arrays (velocities zero if not given), `radii` two radii,
    /// `materials` two material indices or names, `fixed` whether each is held (a fixed sphere
    /// lends the other its whole mass). `state` is the pair's memory from an earlier call (None: a
    /// contact that starts now, its impact speed the current approach speed); `dt` the length of
    /// the (sub-)step (the scene's step by default: the limit of a stiff lubrication);
    /// `advance_spring` advances the tangential spring by `dt` (the corrector of a step does).
    /// Returns a dict: "force" on sphere 0 (sphere 1 gets the opposite), "torque_0", "torque_1",
    /// "touching", "sliding", and "state" (the memory after the evaluation, for the next call).
    #[pyo3(signature = (positions, radii, *, velocities = None, angular_velocities = None,
        materials = None, fixed = (false, false), state = None, dt = None, advance_spring = false))]
    #[allow(clippy::too_many_arguments)]
    fn pair<'py>(
        &self,
        py: Python<'py>,
        positions: Rows<'_>,
        radii: [f64; 2],
        velocities: Option<Rows<'_>>,
        angular_velocities: Option<Rows<'_>>,
        materials: Option<[Bound<'_, PyAny>; 2]>,
        fixed: (bool, bool),
        state: Option<&Bound<'_, PyDict>>,
        dt: Option<f64>,
        advance_spring: bool,
    ) -> PyResult<Bound<'py, PyDict>> {
        let two = |array: Option<Rows<'_>>, name: &str| -> PyResult<Vec<Vec3>> {
            let rows = match array {
                Some(a) => read_vectors(&a, name)?,
                None => vec![Vec3::ZERO; 2],
            };
            if rows.len() != 2 || rows.iter().any(|v| !v.is_finite()) {
                return Err(PyValueError::new_err(format!(
                    "{name} is not allowed; a (2, 3) array of finite values"
                )));
            }
            Ok(rows)
        };
        let x = two(Some(positions), "positions")?;
        let u = two(velocities, "velocities")?;
        let w = two(angular_velocities, "angular_velocities")?;
        if let Some(r) = radii.iter().find(|r| !(r.is_finite() && **r > 0.0)) {
            return Err(PyValueError::new_err(format!(
                "radius {r} is not allowed; positive radii"
            )));
        }
        let material = match materials {
            None => [0, 0],
            Some([a, b]) => [self.material(&a)?, self.material(&b)?],
        };
        let dt = dt.unwrap_or(self.system.dt);
        if !(dt.is_finite() && dt > 0.0) {
            return Err(PyValueError::new_err(format!(
                "dt = {dt} is not allowed; a positive step length"
            )));
        }
        let mut memory = match state {
            Some(s) => read_state(s)?,
            None => ContactState::default(),
        };

        let mut system = self.system.clone();
        for k in 0..2 {
            let density = system.materials[material[k]].density;
            let held = [fixed.0, fixed.1][k];
            system
                .particles
                .push(x[k], u[k], radii[k], density, material[k], held);
            system.particles.angular_velocity[k] = w[k];
        }
        system.dt = dt;
        let update = Update {
            track_contacts: true,
            spring_increment: advance_spring.then_some(dt),
            substep: dt,
        };
        let loads = system.pair_contact((0, 1), &mut memory, update);

        let out = PyDict::new(py);
        let vector = |v: Vec3| PyArray1::from_slice(py, &v.to_array());
        let (force, torque_0, torque_1) = match &loads {
            Some(c) => (c.force_on_p, c.torque_on_p(), c.torque_on_q()),
            None => (Vec3::ZERO, Vec3::ZERO, Vec3::ZERO),
        };
        out.set_item("force", vector(force))?;
        out.set_item("torque_0", vector(torque_0))?;
        out.set_item("torque_1", vector(torque_1))?;
        out.set_item("touching", loads.is_some_and(|c| c.touching))?;
        out.set_item("sliding", loads.is_some_and(|c| c.sliding))?;
        out.set_item("state", write_state(py, &memory)?)?;
        Ok(out)
    }

    fn __repr__(&self) -> String {
        format!(
            "silt.contact.ContactLaw({}, {}, materials {:?})",
            self.system.model.normal.name(),
            self.system.model.tangential.name(),
            self.materials()
        )
    }
}

impl ContactLaw {
    /// A material's index from its index or its name.
    fn material(&self, value: &Bound<'_, PyAny>) -> PyResult<usize> {
        let names = self.materials();
        if let Ok(i) = value.extract::<usize>() {
            if i < names.len() {
                return Ok(i);
            }
        } else if let Ok(name) = value.extract::<String>() {
            if let Some(i) = names.iter().position(|n| *n == name) {
                return Ok(i);
            }
        }
        Err(PyValueError::new_err(format!(
            "material {value} is not allowed; an index below {} or one of {names:?}",
            names.len()
        )))
    }
}

/// A contact's memory as a dict.
fn write_state<'py>(py: Python<'py>, s: &ContactState) -> PyResult<Bound<'py, PyDict>> {
    let d = PyDict::new(py);
    d.set_item("touching", s.touching)?;
    d.set_item("impact_speed", s.impact_speed)?;
    d.set_item("stiffness", s.stiffness)?;
    d.set_item("damping", s.damping)?;
    d.set_item("spring", s.spring.to_array())?;
    d.set_item("sliding", s.sliding)?;
    Ok(d)
}

/// A contact's memory from a dict written by [`write_state`].
fn read_state(d: &Bound<'_, PyDict>) -> PyResult<ContactState> {
    fn item<'py, T: FromPyObjectOwned<'py>>(d: &Bound<'py, PyDict>, key: &str) -> PyResult<T> {
        let value = d.get_item(key)?.ok_or_else(|| {
            PyValueError::new_err(format!(
                "state[{key:?}] is missing; pass the \"state\" a call returned"
            ))
        })?;
        value.extract::<T>().map_err(|_| {
            PyValueError::new_err(format!(
                "state[{key:?}] = {value} is not allowed; pass the \"state\" a call returned"
            ))
        })
    }
    Ok(ContactState {
        touching: item(d, "touching")?,
        impact_speed: item(d, "impact_speed")?,
        stiffness: item(d, "stiffness")?,
        damping: item(d, "damping")?,
        spring: Vec3::from_array(item(d, "spring")?),
        sliding: item(d, "sliding")?,
    })
}

/// Adds `silt.contact` to the module `m`.
pub(crate) fn register(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<ContactLaw>()
}
