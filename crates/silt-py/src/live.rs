//! Live arrays: one numpy array per quantity of a simulation's state, handed out by every call that
//! asks for the quantity and refreshed in place when a call that advances the simulation returns.
//!
//! Why not views of the model's own buffers: those move (a fiber step replaces its positions, the
//! implicit rod integrator keeps its state in its own vector, fields carry ghost layers) and are
//! written while the GIL is released, so a view of them could dangle or be read half written. An
//! array owned by numpy and written only while the GIL is held is read by Python without a copy or
//! an allocation, always whole and always of one state; the copy into it costs one pass over the
//! quantity per advancing call, and only for the quantities asked for.

use crate::AnyModel;
use numpy::{PyArrayDyn, PyArrayMethods, PyUntypedArrayMethods};
use pyo3::prelude::*;
use silt_core::Vec3;
use std::sync::Mutex;

/// A quantity of a simulation's state that Python reads as a live array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Quantity {
    /// Sphere centres, (N, 3).
    Positions,
    /// Sphere velocities, (N, 3).
    Velocities,
    /// Sphere angular velocities, (N, 3).
    AngularVelocities,
    /// Sphere radii, (N,).
    Radii,
    /// Sphere masses, (N,).
    Masses,
    /// Velocity component c of the fluid at its interior points, (n_x, n_y, n_z) in Fortran order.
    FluidVelocity(usize),
    /// The fluid's pressure at the cell centres, (n_x, n_y, n_z) in Fortran order.
    FluidPressure,
    /// Bead centres of a fiber scene, (N, 3).
    BeadPositions,
    /// Node positions of rod k, (N + 1, 3).
    RodNodes(usize),
}

impl Quantity {
    /// Whether the quantity never changes once made (radii, masses): not refreshed.
    fn constant(self) -> bool {
        matches!(self, Quantity::Radii | Quantity::Masses)
    }

    /// The array's shape and whether it is in Fortran order; None where the model has no such
    /// quantity (the caller checks first, with its own message).
    fn layout(self, model: &AnyModel) -> Option<(Vec<usize>, bool)> {
        let vectors = |n: usize| Some((vec![n, 3], false));
        match self {
            Quantity::Positions | Quantity::Velocities | Quantity::AngularVelocities => {
                vectors(model.particles()?.len())
            }
            Quantity::Radii | Quantity::Masses => Some((vec![model.particles()?.len()], false)),
            Quantity::FluidVelocity(_) | Quantity::FluidPressure => {
                Some((model.fluid()?.grid().cells.to_vec(), true))
            }
            Quantity::BeadPositions => match model {
                AnyModel::Fibers(m) => vectors(m.system.fibers.positions.len()),
                _ => None,
            },
            Quantity::RodNodes(k) => match model {
                AnyModel::Rods(m) if k < m.len() => vectors(m.rod_nodes(k).len()),
                _ => None,
            },
        }
    }

    /// Writes the quantity's values now into `out` (in the order of [`Quantity::layout`]).
    fn fill(self, model: &AnyModel, out: &mut [f64]) {
        let spheres = || model.particles().expect("checked by layout");
        let fluid = || model.fluid().expect("checked by layout");
        match self {
            Quantity::Positions => fill_vectors(&spheres().position, out),
            Quantity::Velocities => fill_vectors(&spheres().velocity, out),
            Quantity::AngularVelocities => fill_vectors(&spheres().angular_velocity, out),
            Quantity::Radii => out.copy_from_slice(&spheres().radius),
            Quantity::Masses => out.copy_from_slice(&spheres().mass),
            Quantity::FluidVelocity(c) => {
                let f = fluid();
                fill_interior(&f.state.velocity[c], f.grid().cells, out)
            }
            Quantity::FluidPressure => {
                let f = fluid();
                fill_interior(&f.state.pressure, f.grid().cells, out)
            }
            Quantity::BeadPositions => match model {
                AnyModel::Fibers(m) => fill_vectors(&m.system.fibers.positions, out),
                _ => unreachable!("checked by layout"),
            },
            Quantity::RodNodes(k) => match model {
                AnyModel::Rods(m) => fill_vectors(&m.rod_nodes(k), out),
                _ => unreachable!("checked by layout"),
            },
        }
    }
}

/// Vectors as rows of three.
fn fill_vectors(values: &[Vec3], out: &mut [f64]) {
    for (row, v) in out.chunks_exact_mut(3).zip(values) {
        row.copy_from_slice(&v.to_array());
    }
}

/// The interior points of `field` (ghost layers left out) on a grid of `cells`, x fastest.
fn fill_interior(field: &silt_fluid::grid::Field, cells: [usize; 3], out: &mut [f64]) {
    let [n0, n1, n2] = cells;
    let rows = (1..=n2).flat_map(|k| (1..=n1).map(move |j| (j, k)));
    for ((j, k), row) in rows.zip(out.chunks_exact_mut(n0)) {
        let first = field.index(1, j, k);
        row.copy_from_slice(&field.data[first..first + n0]);
    }
}

/// The live arrays of one simulation.
#[derive(Default)]
pub(crate) struct LiveArrays {
    arrays: Mutex<Vec<(Quantity, Py<PyArrayDyn<f64>>)>>,
}

impl LiveArrays {
    /// The live array of `quantity` (made and filled on the first call; the same array after).
    /// The caller has checked that `model` has the quantity.
    pub(crate) fn get<'py>(
        &self,
        py: Python<'py>,
        model: &AnyModel,
        quantity: Quantity,
    ) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
        let mut arrays = self.arrays.lock().map_err(|_| crate::busy())?;
        if let Some((_, array)) = arrays.iter().find(|(q, _)| *q == quantity) {
            return Ok(array.bind(py).clone());
        }
        let (shape, fortran) = quantity
            .layout(model)
            .expect("the caller checks that the model has the quantity");
        let array = PyArrayDyn::<f64>::zeros(py, shape, fortran);
        write(&array, |out| quantity.fill(model, out));
        // Read-only for Python: the simulation's state is changed through its methods.
        array.getattr("flags")?.setattr("writeable", false)?;
        arrays.push((quantity, array.clone().unbind()));
        Ok(array)
    }

    /// Writes the model's state now into every live array (after a call that advanced it).
    pub(crate) fn refresh(&self, py: Python<'_>, model: &AnyModel) -> PyResult<()> {
        let arrays = self.arrays.lock().map_err(|_| crate::busy())?;
        for (quantity, array) in arrays.iter().filter(|(q, _)| !q.constant()) {
            write(array.bind(py), |out| quantity.fill(model, out));
        }
        Ok(())
    }
}

/// Lets `fill` write the values of `array`, an array this module made (contiguous, aligned, owning
/// its data, its size fixed by the model's).
#[allow(unsafe_code)]
fn write(array: &Bound<'_, PyArrayDyn<f64>>, fill: impl FnOnce(&mut [f64])) {
    debug_assert!(array.is_contiguous());
    // SAFETY: the array owns its memory, which numpy never moves or frees while `array` holds a
    // reference; the GIL is held (the `Bound`), so no Python code (the only other reader, through
    // this array or views of it) runs until `fill` returns, and no Rust reference to the data is
    // kept anywhere (the live arrays are read only through Python). The write flag is ignored on
    // purpose: the arrays are read-only for Python, not for the simulation.
    let values = unsafe { array.as_slice_mut() }.expect("a contiguous array made here");
    fill(values);
}
