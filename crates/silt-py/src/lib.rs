//! The Python module `silt._silt`, which the `silt` package (`python/silt`) re-exports: scenes parsed
//! as `silt run` parses them ([`Scene`]), their models built and stepped as `silt run` steps them but
//! without writing files ([`Simulation`]), and the state read into numpy arrays. docs/python.md.

use live::{LiveArrays, Quantity};
use numpy::PyArrayDyn;
use numpy::{PyArray1, PyArray2, PyArrayMethods, PyReadonlyArray2, PyUntypedArrayMethods};
use pyo3::create_exception;
use pyo3::exceptions::{PyOSError, PyRuntimeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyDict, PyFloat, PyInt, PyList, PyString, PyTuple, PyType};
use silt_core::model::{Clock, Horizon, Model};
use silt_core::Vec3;
use silt_io::scenes::{Scene as AnyScene, SceneKind};
use std::path::PathBuf;
use std::sync::Mutex;

mod contact;
mod live;

/// Forces and torques, (N, 3) arrays.
type ForcesAndTorques<'py> = (Bound<'py, PyArray2<f64>>, Bound<'py, PyArray2<f64>>);

/// An (N, 3) array argument: a numpy array, or anything numpy converts to one (nested lists).
type Rows<'py> = numpy::PyArrayLike2<'py, f64, numpy::AllowTypeChange>;

create_exception!(
    _silt,
    SceneError,
    PyValueError,
    "A scene that cannot run: `key` names the offending key (dotted, e.g. \
     `particles[0].diameter.std`), `file` the scene file, `message` what is wrong and what is allowed."
);
create_exception!(
    _silt,
    StepError,
    PyRuntimeError,
    "A step that failed (the run diverged, a particle left the domain, a solve failed): the message \
     says what, where and when. The simulation keeps the state of its last good step."
);

/// The Python form of a scene error, with its key, file and message as attributes.
fn scene_error(py: Python<'_>, e: silt_io::scenes::SceneError) -> PyErr {
    let err = SceneError::new_err(e.to_string());
    let value = err.value(py);
    for (name, text) in [
        ("key", e.key.clone()),
        ("file", e.file.display().to_string()),
        ("message", e.message.clone()),
    ] {
        if let Err(failed) = value.setattr(name, text) {
            return failed;
        }
    }
    err
}

/// A scene error about `key` of a scene given as a dict.
fn dict_error(py: Python<'_>, key: &str, message: String) -> PyErr {
    scene_error(
        py,
        silt_io::scenes::SceneError {
            file: PathBuf::from("<dict>"),
            key: key.to_string(),
            message,
        },
    )
}

/// `key.name` (or `name` at the top).
fn child_key(key: &str, name: &str) -> String {
    if key.is_empty() {
        name.to_string()
    } else {
        format!("{key}.{name}")
    }
}

/// A Python value of a scene dict as a TOML value: bool, int, float, str, list or tuple (or anything
/// with `tolist()`, such as a numpy array), dict with str keys.
fn toml_value(value: &Bound<'_, PyAny>, key: &str) -> PyResult<toml::Value> {
    let py = value.py();
    if value.is_instance_of::<PyBool>() {
        return Ok(toml::Value::Boolean(value.extract()?));
    }
    if value.is_instance_of::<PyInt>() {
        return match value.extract::<i64>() {
            Ok(i) => Ok(toml::Value::Integer(i)),
            Err(_) => Err(dict_error(
                py,
                key,
                format!("{value} is not allowed; integers must fit in 64 bits"),
            )),
        };
    }
    if value.is_instance_of::<PyFloat>() {
        return Ok(toml::Value::Float(value.extract()?));
    }
    if value.is_instance_of::<PyString>() {
        return Ok(toml::Value::String(value.extract()?));
    }
    if let Ok(dict) = value.cast::<PyDict>() {
        return Ok(toml::Value::Table(toml_table(dict, key)?));
    }
    if value.is_instance_of::<PyList>() || value.is_instance_of::<PyTuple>() {
        let items: Vec<Bound<'_, PyAny>> = value.try_iter()?.collect::<PyResult<_>>()?;
        let array = items
            .iter()
            .enumerate()
            .map(|(i, item)| toml_value(item, &format!("{key}[{i}]")))
            .collect::<PyResult<_>>()?;
        return Ok(toml::Value::Array(array));
    }
    if value.hasattr("tolist")? {
        // A numpy array or scalar: its Python form.
        return toml_value(&value.call_method0("tolist")?, key);
    }
    Err(dict_error(
        py,
        key,
        format!(
            "a value of type {} is not allowed; a scene holds bools, numbers, strings, lists and \
             dicts",
            value.get_type().name()?
        ),
    ))
}

/// A scene dict (or one of its tables, at `key`) as a TOML table.
fn toml_table(dict: &Bound<'_, PyDict>, key: &str) -> PyResult<toml::Table> {
    let mut table = toml::Table::new();
    for (name, value) in dict.iter() {
        let Ok(name) = name.extract::<String>() else {
            return Err(dict_error(
                dict.py(),
                key,
                format!("the key {name} is not allowed; keys are strings"),
            ));
        };
        let entry = toml_value(&value, &child_key(key, &name))?;
        table.insert(name, entry);
    }
    Ok(table)
}

/// A scene: the same schema, defaults and errors as a TOML scene file read by `silt run`.
#[pyclass(frozen, module = "silt")]
struct Scene {
    text: String,
    source: PathBuf,
    scene: AnyScene,
}

impl Scene {
    fn parse(py: Python<'_>, text: String, source: PathBuf) -> PyResult<Self> {
        let scene = AnyScene::parse(&text, &source).map_err(|e| scene_error(py, e))?;
        Ok(Scene {
            text,
            source,
            scene,
        })
    }
}

#[pymethods]
impl Scene {
    /// The scene in the TOML file at `path` (as `silt run path`).
    #[staticmethod]
    fn from_file(py: Python<'_>, path: PathBuf) -> PyResult<Self> {
        let text = silt_io::scenes::read_scene(&path).map_err(|e| scene_error(py, e))?;
        Self::parse(py, text, path)
    }

    /// The scene written in TOML in `text`; `source` names it in errors.
    #[staticmethod]
    #[pyo3(signature = (text, source = None))]
    fn from_toml(py: Python<'_>, text: String, source: Option<PathBuf>) -> PyResult<Self> {
        Self::parse(py, text, source.unwrap_or_else(|| PathBuf::from("<text>")))
    }

    /// The scene given as a dict of tables, as a TOML file would hold them (`{"simulation": {"dt":
    /// 1e-4, ...}, "particles": [{...}], ...}`); numpy arrays may stand for lists.
    #[staticmethod]
    fn from_dict(py: Python<'_>, scene: &Bound<'_, PyDict>) -> PyResult<Self> {
        let table = toml_table(scene, "")?;
        let text = toml::to_string(&table).map_err(|e| dict_error(py, "", e.to_string()))?;
        Self::parse(py, text, PathBuf::from("<dict>"))
    }

    /// "particles", "fluid", "coupled", "fibers" or "rods".
    #[getter]
    fn kind(&self) -> &'static str {
        self.scene.kind()
    }

    /// The scene's text (TOML), as `silt run` writes it to its output folder.
    fn to_toml(&self) -> String {
        self.text.clone()
    }

    fn __repr__(&self) -> String {
        format!(
            "silt.Scene({} scene from {})",
            self.scene.kind(),
            self.source.display()
        )
    }
}

/// A model of any kind, as `silt run` builds it (one per simulation: the variants' sizes do not
/// matter).
#[allow(clippy::large_enum_variant)]
enum AnyModel {
    Particles(silt_dem::model::DemModel),
    Fluid(silt_fluid::model::FluidModel),
    Coupled(silt_ibm::model::CoupledModel),
    Fibers(silt_fibers::model::FiberModel),
    Rods(silt_rods::model::Rods),
}

/// `$body` with `$m` bound to the model inside `$model`, whatever its kind.
macro_rules! on_model {
    ($model:expr, $m:ident => $body:expr) => {
        match $model {
            AnyModel::Particles($m) => $body,
            AnyModel::Fluid($m) => $body,
            AnyModel::Coupled($m) => $body,
            AnyModel::Fibers($m) => $body,
            AnyModel::Rods($m) => $body,
        }
    };
}

impl AnyModel {
    fn build(scene: &AnyScene) -> Result<Self, silt_io::scenes::SceneError> {
        Ok(match scene {
            AnyScene::Particles(s) => AnyModel::Particles(s.build()?),
            AnyScene::Fluid(s) => AnyModel::Fluid(s.build()?),
            AnyScene::Coupled(s) => AnyModel::Coupled(s.build()?),
            AnyScene::Fibers(s) => AnyModel::Fibers(s.build()?),
            AnyScene::Rods(s) => AnyModel::Rods(s.build()?),
        })
    }

    /// One advance (a step or more) of the model; a particle model with `external` loads takes one
    /// step with them added to every evaluation.
    fn advance(
        &mut self,
        horizon: Horizon,
        external: Option<&silt_dem::forces::Loads>,
    ) -> Result<(), silt_core::model::StepFailure> {
        match (self, external) {
            (AnyModel::Particles(m), Some(loads)) => m
                .system
                .step_with_loads(loads)
                .map_err(|e| silt_core::model::StepFailure::new(e.to_string())),
            (model, _) => on_model!(model, m => m.advance(horizon)),
        }
    }

    fn time(&self) -> f64 {
        on_model!(self, m => m.time())
    }

    fn steps(&self) -> u64 {
        on_model!(self, m => m.steps())
    }

    fn clock(&self) -> Clock {
        on_model!(self, m => m.clock())
    }

    /// The fluid of a fluid or coupled model.
    fn fluid(&self) -> Option<&silt_fluid::FluidSolver> {
        match self {
            AnyModel::Fluid(m) => Some(&m.solver),
            AnyModel::Coupled(m) => Some(&m.fluid),
            _ => None,
        }
    }

    /// The sphere system of a particle or coupled model, to change.
    fn dem_mut(&mut self) -> Option<&mut silt_dem::system::DemSystem> {
        match self {
            AnyModel::Particles(m) => Some(&mut m.system),
            AnyModel::Coupled(m) => Some(&mut m.particles.dem),
            _ => None,
        }
    }

    /// The spheres of a particle or coupled model.
    fn particles(&self) -> Option<&silt_dem::particles::Particles> {
        match self {
            AnyModel::Particles(m) => Some(&m.system.particles),
            AnyModel::Coupled(m) => Some(&m.particles.dem.particles),
            _ => None,
        }
    }
}

/// A simulation of a scene: its model built as `silt run` builds it, stepped as `silt run` steps it
/// (one step or more per advance, the same numbers bit for bit), without writing any file. Stepping
/// releases the GIL; Ctrl-C stops between advances, leaving the last finished state.
#[pyclass(frozen, subclass, module = "silt")]
struct Simulation {
    model: Mutex<AnyModel>,
    kind: &'static str,
    end_time: f64,
    /// The scene's text (written beside a checkpoint).
    text: String,
    /// Forces and torques on the spheres of a particle scene added at every evaluation, as set from
    /// Python (none: the scene's loads only).
    external: Mutex<Option<silt_dem::forces::Loads>>,
    /// The point loads of a fiber scene's beads as the scene gives them (loads set from Python are
    /// added to these).
    scene_point_loads: Vec<silt_fibers::dynamics::PointLoad>,
    /// The dead node forces of each rod of a rod scene as the scene gives them (forces set from
    /// Python are added to these).
    scene_node_forces: Vec<Vec<(usize, Vec3)>>,
    /// The arrays of the state handed to Python, refreshed after every call that advances.
    live: LiveArrays,
}

/// The error of a call into a simulation that another thread is stepping.
pub(crate) fn busy() -> PyErr {
    PyRuntimeError::new_err(
        "the simulation is busy: another thread is stepping it (wait for that call to return)",
    )
}

impl Simulation {
    /// The model, unless another thread is stepping it.
    fn model(&self) -> PyResult<std::sync::MutexGuard<'_, AnyModel>> {
        self.model.try_lock().map_err(|_| busy())
    }

    /// Advances `model` by `horizon` until `done` says it has gone far enough: each advance without
    /// the GIL, signals (Ctrl-C) checked between advances.
    fn advance_until(
        &self,
        py: Python<'_>,
        model: &mut AnyModel,
        horizon: impl Fn(&AnyModel) -> Option<Horizon>,
    ) -> PyResult<()> {
        let external = self.external.lock().map_err(|_| busy())?;
        let external = external.as_ref();
        let mut advance = || -> PyResult<()> {
            while let Some(h) = horizon(model) {
                let stepped = py.detach(|| model.advance(h, external));
                stepped.map_err(|e| StepError::new_err(e.message))?;
                py.check_signals()?;
            }
            Ok(())
        };
        let advanced = advance();
        // The live arrays show the last state reached, also after a failed step or Ctrl-C.
        self.live.refresh(py, model)?;
        advanced
    }
}

#[pymethods]
impl Simulation {
    /// The simulation of `scene` at its initial state.
    #[new]
    fn new(py: Python<'_>, scene: &Scene) -> PyResult<Self> {
        let model = AnyModel::build(&scene.scene).map_err(|e| scene_error(py, e))?;
        let end_time = match &scene.scene {
            AnyScene::Particles(s) => s.settings().end_time,
            AnyScene::Fluid(s) => s.settings().end_time,
            AnyScene::Coupled(s) => s.settings().end_time,
            AnyScene::Fibers(s) => s.settings().end_time,
            AnyScene::Rods(s) => s.settings().end_time,
        };
        let scene_point_loads = match &model {
            AnyModel::Fibers(m) => m.system.point_loads.clone(),
            _ => Vec::new(),
        };
        let scene_node_forces = match &model {
            AnyModel::Rods(m) => (0..m.len())
                .map(|k| m.rod_model(k).loads.node_forces.clone())
                .collect(),
            _ => Vec::new(),
        };
        Ok(Simulation {
            scene_point_loads,
            model: Mutex::new(model),
            kind: scene.scene.kind(),
            end_time,
            text: scene.text.clone(),
            external: Mutex::new(None),
            scene_node_forces,
            live: LiveArrays::default(),
        })
    }

    /// Writes the simulation's state to the folder `path` (created if needed): its scene as
    /// `scene.toml` and its checkpoint as `checkpoint.bin`, in the format of `silt run`'s output
    /// folder, each file whole or not at all. [`Simulation.restore`] reads it back.
    fn checkpoint(&self, py: Python<'_>, path: PathBuf) -> PyResult<()> {
        let mut model = self.model()?;
        let io = |e: std::io::Error, file: &std::path::Path| {
            PyOSError::new_err(format!("{}: {e}", file.display()))
        };
        std::fs::create_dir_all(&path).map_err(|e| io(e, &path))?;
        let scene = path.join("scene.toml");
        silt_io::atomic::write_atomic(&scene, self.text.as_bytes()).map_err(|e| io(e, &scene))?;
        let fingerprint = silt_io::scenes::fingerprint(&self.text);
        let file = path.join("checkpoint.bin");
        let model: &mut AnyModel = &mut model;
        let written = py.detach(
            || on_model!(model, m => silt_io::run::write_checkpoint(&file, m, fingerprint, 0)),
        );
        written.map_err(|e| PyOSError::new_err(e.to_string()))
    }

    /// The simulation whose state the folder `path` holds: one written by
    /// [`Simulation.checkpoint`], or the output folder of a (serial) `silt run`, at its last
    /// checkpoint. The scene is the folder's `scene.toml`.
    #[classmethod]
    fn restore<'py>(cls: &Bound<'py, PyType>, path: PathBuf) -> PyResult<Bound<'py, PyAny>> {
        let py = cls.py();
        let scene = Scene::from_file(py, path.join("scene.toml"))?;
        let fingerprint = silt_io::scenes::fingerprint(&scene.text);
        // An instance of the class asked for (the package's subclass).
        let instance = cls.call1((Bound::new(py, scene)?,))?;
        let simulation = instance.cast::<Simulation>()?.get();
        let file = path.join("checkpoint.bin");
        if !file.exists() {
            return Err(PyOSError::new_err(format!(
                "{}: no checkpoint here (a run on several ranks writes one per rank: resume it with \
                 `silt run --resume` on one rank first)",
                file.display()
            )));
        }
        let mut model = simulation.model()?;
        let kind = simulation.kind;
        macro_rules! restore {
            ($m:expr, $t:ty) => {{
                let (_, state) = silt_io::run::read_checkpoint::<$t>(&file, kind, fingerprint)
                    .map_err(|e| PyValueError::new_err(e.to_string()))?;
                $m.restore(state)
                    .map_err(|e| PyValueError::new_err(format!("{}: {e}", file.display())))?
            }};
        }
        match &mut *model {
            AnyModel::Particles(m) => restore!(m, silt_dem::model::DemModel),
            AnyModel::Fluid(m) => restore!(m, silt_fluid::model::FluidModel),
            AnyModel::Coupled(m) => restore!(m, silt_ibm::model::CoupledModel),
            AnyModel::Fibers(m) => restore!(m, silt_fibers::model::FiberModel),
            AnyModel::Rods(m) => restore!(m, silt_rods::model::Rods),
        }
        simulation.live.refresh(py, &model)?;
        drop(model);
        Ok(instance)
    }

    /// "particles", "fluid", "coupled", "fibers" or "rods".
    #[getter]
    fn kind(&self) -> &'static str {
        self.kind
    }

    /// Simulated time.
    #[getter]
    fn time(&self) -> PyResult<f64> {
        Ok(self.model()?.time())
    }

    /// Steps taken.
    #[getter]
    fn steps(&self) -> PyResult<u64> {
        Ok(self.model()?.steps())
    }

    /// The scene's end time (`simulation.end_time`), where `run()` stops by default.
    #[getter]
    fn end_time(&self) -> f64 {
        self.end_time
    }

    /// The step length of a fixed-step model; None where the model chooses its steps.
    #[getter]
    fn dt(&self) -> PyResult<Option<f64>> {
        Ok(match self.model()?.clock() {
            Clock::Fixed(dt) => Some(dt),
            Clock::Adaptive => None,
        })
    }

    /// Takes `n` steps.
    #[pyo3(signature = (n = 1))]
    fn step(&self, py: Python<'_>, n: u64) -> PyResult<()> {
        let mut model = self.model()?;
        let target = model.steps() + n;
        self.advance_until(py, &mut model, |m| {
            (m.steps() < target).then(|| Horizon::Steps(target - m.steps()))
        })
    }

    /// Advances to simulated time `t`: a fixed-step model to the first step at or past it (the
    /// step `silt run --until t` stops at), a model choosing its steps exactly onto it.
    fn advance_to(&self, py: Python<'_>, t: f64) -> PyResult<()> {
        if !t.is_finite() {
            return Err(PyValueError::new_err(format!(
                "t = {t} is not allowed; a finite time"
            )));
        }
        let mut model = self.model()?;
        match model.clock() {
            Clock::Fixed(dt) => {
                let target = (t / dt - 1e-9).ceil().max(0.0) as u64;
                self.advance_until(py, &mut model, |m| {
                    (m.steps() < target).then(|| Horizon::Steps(target - m.steps()))
                })
            }
            Clock::Adaptive => self.advance_until(py, &mut model, |m| {
                (m.time() < t).then_some(Horizon::Time(t))
            }),
        }
    }

    /// The model's diagnostics now, one dict of column to value per row (the rows `silt run`
    /// writes to diagnostics.csv: one for most models, one per rod for rods).
    fn diagnostics_rows<'py>(&self, py: Python<'py>) -> PyResult<Vec<Bound<'py, PyDict>>> {
        let mut model = self.model()?;
        let (columns, rows) = on_model!(&mut *model, m => {
            let columns = m.diagnostic_columns();
            let rows = m.diagnostics().map_err(|e| StepError::new_err(e.message))?;
            (columns, rows)
        });
        rows.iter()
            .map(|row| {
                let dict = PyDict::new(py);
                for (name, value) in columns.iter().zip(row) {
                    dict.set_item(name, value)?;
                }
                Ok(dict)
            })
            .collect()
    }

    /// Positions of the spheres (particle and coupled scenes), an (N, 3) array (a live array: the
    /// same read-only array on every call, refreshed in place when a call that advances the
    /// simulation returns; `.copy()` keeps a state).
    fn positions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
        self.sphere_array(py, Quantity::Positions)
    }

    /// Velocities of the spheres, an (N, 3) live array.
    fn velocities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
        self.sphere_array(py, Quantity::Velocities)
    }

    /// Angular velocities of the spheres, an (N, 3) live array.
    fn angular_velocities<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
        self.sphere_array(py, Quantity::AngularVelocities)
    }

    /// Masses of the spheres, an (N,) live array.
    fn masses<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
        self.sphere_array(py, Quantity::Masses)
    }

    /// Adds forces `F` (and torques `T`), (N, 3) arrays, to the spheres of a particle or coupled
    /// scene at every evaluation of every following step (beside contacts, lubrication and gravity;
    /// in a coupled scene beside the fluid's loads of each stage), until set again; None clears them.
    /// They are not part of the scene or of a checkpoint.
    #[pyo3(signature = (forces, torques = None))]
    fn set_external_loads(
        &self,
        forces: Option<Rows<'_>>,
        torques: Option<Rows<'_>>,
    ) -> PyResult<()> {
        let mut model = self.model()?;
        let n = self.spheres_of(&model)?.len();
        let loads = match forces {
            None => None,
            Some(forces) => {
                let (force, torque) = read_loads(&forces, torques.as_ref(), n, "sphere")?;
                Some(silt_dem::forces::Loads { force, torque })
            }
        };
        match &mut *model {
            AnyModel::Coupled(m) => m.particles.external = loads,
            _ => *self.external.lock().map_err(|_| busy())? = loads,
        }
        Ok(())
    }

    /// Moves spheres `indices` of a particle or coupled scene at the prescribed `velocity` (and
    /// `angular_velocity`, zero if not given), each a 3-vector or an (len(indices), 3) array, from
    /// the next step on, whatever acts on them: they become fixed spheres with that motion (as a
    /// scene's `fixed` spheres with a `velocity`), part of the state and of a checkpoint, until
    /// `release`d. A scene's own prescribed velocity (`prescribed`) still sets its spheres'.
    #[pyo3(signature = (indices, velocity, angular_velocity = None))]
    fn prescribe_motion(
        &self,
        py: Python<'_>,
        indices: Vec<usize>,
        velocity: &Bound<'_, PyAny>,
        angular_velocity: Option<&Bound<'_, PyAny>>,
    ) -> PyResult<()> {
        let mut model = self.model()?;
        let n = self.spheres_of(&model)?.len();
        check_indices(&indices, n, "sphere")?;
        let velocity = per_index(velocity, indices.len(), "velocity")?;
        let angular_velocity = match angular_velocity {
            Some(w) => per_index(w, indices.len(), "angular_velocity")?,
            None => vec![Vec3::ZERO; indices.len()],
        };
        let dem = model.dem_mut().expect("checked above");
        for (k, &i) in indices.iter().enumerate() {
            dem.set_fixed(i, true);
            dem.particles.velocity[i] = velocity[k];
            dem.particles.angular_velocity[i] = angular_velocity[k];
        }
        self.live.refresh(py, &model)
    }

    /// Frees spheres `indices` of a particle or coupled scene: from the next step on they move
    /// under the loads on them, starting from their current velocity.
    fn release(&self, indices: Vec<usize>) -> PyResult<()> {
        let mut model = self.model()?;
        let n = self.spheres_of(&model)?.len();
        check_indices(&indices, n, "sphere")?;
        let dem = model.dem_mut().expect("checked above");
        for &i in &indices {
            dem.set_fixed(i, false);
        }
        Ok(())
    }

    /// Whether each sphere is fixed (held or moving at a prescribed velocity), an (N,) bool array
    /// (a copy).
    fn fixed<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArray1<bool>>> {
        let model = self.model()?;
        Ok(PyArray1::from_slice(py, &self.spheres_of(&model)?.fixed))
    }

    /// The loads on each sphere of a particle or coupled scene in the current state from contacts,
    /// lubrication and gravity (seed eq. 7-8) plus the loads of `set_external_loads`, as the next
    /// step's first evaluation sees them: `(F, T)`, (N, 3) arrays (copies,
    /// evaluated on request; the simulation is unchanged). A coupled scene's fluid loads are
    /// `immersed_boundary_loads()`.
    fn contact_loads<'py>(&self, py: Python<'py>) -> PyResult<ForcesAndTorques<'py>> {
        let model = self.model()?;
        let external = self.external.lock().map_err(|_| busy())?;
        let dem = match &*model {
            AnyModel::Particles(m) => &m.system,
            AnyModel::Coupled(m) => &m.particles.dem,
            _ => return Err(self.missing("spheres", "particle and coupled")),
        };
        let none = silt_dem::forces::Loads::zeros(dem.particles.len());
        let external = match &*model {
            AnyModel::Coupled(m) => m.particles.external.as_ref(),
            _ => external.as_ref(),
        };
        let external = external.unwrap_or(&none);
        let loads = py.detach(|| dem.loads_now(external));
        Ok((vectors(py, &loads.force)?, vectors(py, &loads.torque)?))
    }

    /// The immersed boundary's force and torque on each sphere of a coupled scene over the last
    /// step, rho_f times the sum of the forcing over the sphere's markers (seed eq. 3-4, first
    /// terms), averaged over the step's stages: `(F, T)`, (N, 3) arrays (copies; zero before the
    /// first step). The rate of change of the fluid's momentum inside the sphere, the buoyancy and
    /// the contacts are not included.
    fn immersed_boundary_loads<'py>(&self, py: Python<'py>) -> PyResult<ForcesAndTorques<'py>> {
        let model = self.model()?;
        let AnyModel::Coupled(m) = &*model else {
            return Err(self.missing("immersed spheres", "coupled"));
        };
        let rho = m.particles.fluid_density;
        let scaled = |v: &[Vec3]| v.iter().map(|&x| rho * x).collect::<Vec<_>>();
        let forcing = &m.particles.forcing;
        Ok((
            vectors(py, &scaled(&forcing.step_force))?,
            vectors(py, &scaled(&forcing.step_torque))?,
        ))
    }

    /// Adds dead forces `F`, an (N + 1, 3) array (one row per node), to the nodes of rod `k` of a
    /// rod scene from the next step on, beside the scene's own loads, until set again; None clears
    /// them. They are not part of the scene or of a checkpoint.
    #[pyo3(signature = (forces, k = 0))]
    fn set_node_forces(&self, forces: Option<Rows<'_>>, k: usize) -> PyResult<()> {
        let mut model = self.model()?;
        let AnyModel::Rods(m) = &mut *model else {
            return Err(self.missing("rods", "rod"));
        };
        if k >= m.len() {
            return Err(PyValueError::new_err(format!(
                "rod {k} is not allowed; the scene has {} rod(s)",
                m.len()
            )));
        }
        let nodes = m.rod_nodes(k).len();
        let mut node_forces = self.scene_node_forces[k].clone();
        if let Some(forces) = forces {
            let (force, _) = read_loads(&forces, None, nodes, "node")?;
            node_forces.extend(force.into_iter().enumerate());
        }
        m.rod_model_mut(k).loads.node_forces = node_forces;
        Ok(())
    }

    /// Adds forces `F` (and torques `T`), (N, 3) arrays, to the beads of a fiber scene from the next
    /// step on, beside the scene's own loads (its weight, its point loads), until set again; None
    /// clears them. They are not part of the scene or of a checkpoint.
    #[pyo3(signature = (forces, torques = None))]
    fn set_bead_loads(&self, forces: Option<Rows<'_>>, torques: Option<Rows<'_>>) -> PyResult<()> {
        let mut model = self.model()?;
        let AnyModel::Fibers(m) = &mut *model else {
            return Err(self.missing("beads", "fiber"));
        };
        let n = m.system.fibers.positions.len();
        let mut loads = self.scene_point_loads.clone();
        if let Some(forces) = forces {
            let (force, torque) = read_loads(&forces, torques.as_ref(), n, "bead")?;
            loads.extend(force.into_iter().zip(torque).enumerate().map(
                |(bead, (force, torque))| silt_fibers::dynamics::PointLoad {
                    bead,
                    force,
                    torque,
                },
            ));
        }
        m.set_point_loads(loads);
        Ok(())
    }

    /// Replaces the fluid's body force (per unit mass, along x, y, z) of a fluid or coupled scene by
    /// the constant `force` from the next stage on (in a coupled scene this replaces the force that
    /// holds up a periodic suspension's weight too).
    fn set_fluid_body_force(&self, force: [f64; 3]) -> PyResult<()> {
        if let Some(c) = force.iter().position(|f| !f.is_finite()) {
            return Err(PyValueError::new_err(format!(
                "force[{c}] = {} is not allowed; finite values",
                force[c]
            )));
        }
        let mut model = self.model()?;
        let config = match &mut *model {
            AnyModel::Fluid(m) => &mut m.solver.config,
            AnyModel::Coupled(m) => &mut m.fluid.config,
            _ => return Err(self.missing("fluid", "fluid and coupled")),
        };
        config.body_force = force.map(silt_core::signal::Signal::Constant);
        Ok(())
    }

    /// Radii of the spheres, an (N,) live array.
    fn radii<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
        self.sphere_array(py, Quantity::Radii)
    }

    /// Velocity component `component` (0, 1, 2 for x, y, z) of the fluid (fluid and coupled scenes)
    /// at its points, an (n_x, n_y, n_z) live array (Fortran order: x fastest in memory, as Silt
    /// holds it): the value on the high face normal to the component of every cell
    /// (`fluid_coordinates("uvw"[component])`).
    fn fluid_velocity<'py>(
        &self,
        py: Python<'py>,
        component: usize,
    ) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
        if component > 2 {
            return Err(PyValueError::new_err(format!(
                "component {component} is not allowed; 0, 1 or 2 (x, y, z)"
            )));
        }
        let model = self.model()?;
        self.fluid_of(&model)?;
        self.live
            .get(py, &model, Quantity::FluidVelocity(component))
    }

    /// The fluid's pressure at the cell centres, an (n_x, n_y, n_z) live array (Fortran order).
    fn fluid_pressure<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
        let model = self.model()?;
        self.fluid_of(&model)?;
        self.live.get(py, &model, Quantity::FluidPressure)
    }

    /// The coordinates along x, y and z of the points of the fluid's field `name` ("u", "v", "w"
    /// on the faces normal to x, y, z; "p" at the cell centres): three 1-D arrays, so that value
    /// `[i, j, k]` of the field sits at `(x[i], y[j], z[k])`.
    #[allow(clippy::type_complexity)]
    fn fluid_coordinates<'py>(
        &self,
        py: Python<'py>,
        name: &str,
    ) -> PyResult<(
        Bound<'py, PyArray1<f64>>,
        Bound<'py, PyArray1<f64>>,
        Bound<'py, PyArray1<f64>>,
    )> {
        let location = match name {
            "u" => silt_fluid::grid::Location::Face(0),
            "v" => silt_fluid::grid::Location::Face(1),
            "w" => silt_fluid::grid::Location::Face(2),
            "p" => silt_fluid::grid::Location::Centre,
            _ => {
                return Err(PyValueError::new_err(format!(
                    "{name:?} is not allowed; \"u\", \"v\", \"w\" or \"p\""
                )))
            }
        };
        let model = self.model()?;
        let grid = *self.fluid_of(&model)?.grid();
        // Field index i (ghosts counted) along an axis: the interior points are 1..=n.
        let along = |axis: usize| -> Vec<f64> {
            (1..=grid.cells[axis])
                .map(|i| {
                    let mut index = [1; 3];
                    index[axis] = i;
                    grid.point(location, index)[axis]
                })
                .collect()
        };
        Ok((
            PyArray1::from_vec(py, along(0)),
            PyArray1::from_vec(py, along(1)),
            PyArray1::from_vec(py, along(2)),
        ))
    }

    /// The bead centres of a fiber scene, an (N, 3) live array, fiber by fiber.
    fn bead_positions<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
        let model = self.model()?;
        match &*model {
            AnyModel::Fibers(_) => self.live.get(py, &model, Quantity::BeadPositions),
            _ => Err(self.missing("beads", "fiber")),
        }
    }

    /// The beads of each fiber of a fiber scene: `(first, end)` indices into `bead_positions()`.
    fn fiber_ranges(&self) -> PyResult<Vec<(usize, usize)>> {
        let model = self.model()?;
        match &*model {
            AnyModel::Fibers(m) => Ok(m
                .system
                .fibers
                .fibers()
                .iter()
                .map(|r| (r.start, r.end))
                .collect()),
            _ => Err(self.missing("fibers", "fiber")),
        }
    }

    /// The beads' motion in the current state of a fiber scene, as a dict of (N, 3) arrays (copies):
    /// "velocities", "angular_velocities", the constraint forces and torques J^T lambda
    /// ("constraint_forces", "constraint_torques") and the totals with the elastic and external loads
    /// ("forces", "torques"). Solved once per state (the next step uses the same solve).
    fn bead_motion<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let mut model = self.model()?;
        let AnyModel::Fibers(m) = &mut *model else {
            return Err(self.missing("beads", "fiber"));
        };
        let motion = py
            .detach(|| m.motion().cloned())
            .map_err(|e| StepError::new_err(e.message))?;
        let fields = PyDict::new(py);
        for (name, values) in [
            ("velocities", &motion.velocities),
            ("angular_velocities", &motion.angular_velocities),
            ("constraint_forces", &motion.constraint_forces),
            ("constraint_torques", &motion.constraint_torques),
            ("forces", &motion.forces),
            ("torques", &motion.torques),
        ] {
            fields.set_item(name, vectors(py, values)?)?;
        }
        Ok(fields)
    }

    /// The number of rods of a rod scene.
    fn rod_count(&self) -> PyResult<usize> {
        let model = self.model()?;
        match &*model {
            AnyModel::Rods(m) => Ok(m.len()),
            _ => Err(self.missing("rods", "rod")),
        }
    }

    /// The node positions of rod `k` of a rod scene, an (N + 1, 3) live array.
    #[pyo3(signature = (k = 0))]
    fn rod_nodes<'py>(&self, py: Python<'py>, k: usize) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
        let model = self.model()?;
        match &*model {
            AnyModel::Rods(m) if k < m.len() => self.live.get(py, &model, Quantity::RodNodes(k)),
            AnyModel::Rods(m) => Err(PyValueError::new_err(format!(
                "rod {k} is not allowed; the scene has {} rod(s)",
                m.len()
            ))),
            _ => Err(self.missing("rods", "rod")),
        }
    }

    /// The fields of rod `k` of a rod scene (copies), as a dict: "nodes" (N + 1, 3) positions;
    /// per segment "directors" (N, 3, 3) (row m the director d_m in the world frame), "shear_strain"
    /// (N, 3) Gamma in the body frame, "internal_force" (N, 3) n = p (C_G Gamma) p-bar in the world
    /// frame; per node "curvature" (N + 1, 3) K in the body frame and "internal_moment" (N + 1, 3)
    /// C_K (K - K0) in the world frame (zero at a free or hinged end).
    #[pyo3(signature = (k = 0))]
    fn rod_fields<'py>(&self, py: Python<'py>, k: usize) -> PyResult<Bound<'py, PyDict>> {
        let model = self.model()?;
        let rod = match &*model {
            AnyModel::Rods(m) if k < m.len() => m.states().swap_remove(k).0,
            AnyModel::Rods(m) => {
                return Err(PyValueError::new_err(format!(
                    "rod {k} is not allowed; the scene has {} rod(s)",
                    m.len()
                )))
            }
            _ => return Err(self.missing("rods", "rod")),
        };
        let segments = silt_rods::fields::segment_fields(&rod);
        let nodes = silt_rods::fields::node_fields(&rod);
        let fields = PyDict::new(py);
        fields.set_item("nodes", vectors(py, &rod.nodes)?)?;
        let directors: Vec<f64> = segments
            .iter()
            .flat_map(|s| s.directors.iter().flat_map(|d| d.to_array()))
            .collect();
        fields.set_item(
            "directors",
            PyArray1::from_vec(py, directors).reshape([segments.len(), 3, 3])?,
        )?;
        let per_segment = |f: fn(&silt_rods::fields::SegmentFields) -> Vec3| -> Vec<Vec3> {
            segments.iter().map(f).collect()
        };
        fields.set_item(
            "shear_strain",
            vectors(py, &per_segment(|s| s.shear_strain))?,
        )?;
        fields.set_item(
            "internal_force",
            vectors(py, &per_segment(|s| s.internal_force))?,
        )?;
        let per_node = |f: fn(&silt_rods::fields::NodeFields) -> Vec3| -> Vec<Vec3> {
            nodes.iter().map(f).collect()
        };
        fields.set_item("curvature", vectors(py, &per_node(|n| n.curvature))?)?;
        fields.set_item(
            "internal_moment",
            vectors(py, &per_node(|n| n.internal_moment))?,
        )?;
        Ok(fields)
    }

    fn __repr__(&self) -> PyResult<String> {
        let model = self.model()?;
        Ok(format!(
            "silt.Simulation({} scene at t = {} after {} steps)",
            self.kind,
            model.time(),
            model.steps()
        ))
    }
}

impl Simulation {
    fn spheres_of<'a>(&self, model: &'a AnyModel) -> PyResult<&'a silt_dem::particles::Particles> {
        model.particles().ok_or_else(|| {
            PyValueError::new_err(format!(
                "a {} scene has no spheres (particle and coupled scenes have)",
                self.kind
            ))
        })
    }

    /// The error for state this kind of scene does not have.
    fn missing(&self, what: &str, kind: &str) -> PyErr {
        PyValueError::new_err(format!(
            "a {} scene has no {what} ({kind} scenes have)",
            self.kind
        ))
    }

    fn fluid_of<'a>(&self, model: &'a AnyModel) -> PyResult<&'a silt_fluid::FluidSolver> {
        model.fluid().ok_or_else(|| {
            PyValueError::new_err(format!(
                "a {} scene has no fluid (fluid and coupled scenes have)",
                self.kind
            ))
        })
    }

    /// The live array of a quantity of the spheres.
    fn sphere_array<'py>(
        &self,
        py: Python<'py>,
        quantity: Quantity,
    ) -> PyResult<Bound<'py, PyArrayDyn<f64>>> {
        let model = self.model()?;
        self.spheres_of(&model)?;
        self.live.get(py, &model, quantity)
    }
}

/// Vectors as an (N, 3) array (a copy).
fn vectors<'py>(py: Python<'py>, values: &[Vec3]) -> PyResult<Bound<'py, PyArray2<f64>>> {
    let flat: Vec<f64> = values.iter().flat_map(|v| v.to_array()).collect();
    PyArray1::from_vec(py, flat).reshape([values.len(), 3])
}

/// An (N, 3) array as vectors; `name` for the error.
fn read_vectors(array: &PyReadonlyArray2<'_, f64>, name: &str) -> PyResult<Vec<Vec3>> {
    let shape = array.shape();
    if shape[1] != 3 {
        return Err(PyValueError::new_err(format!(
            "{name} has shape {shape:?}; (N, 3) is allowed"
        )));
    }
    let view = array.as_array();
    Ok(view
        .rows()
        .into_iter()
        .map(|r| Vec3::new(r[0], r[1], r[2]))
        .collect())
}

/// Checks that every index names one of `n` bodies.
fn check_indices(indices: &[usize], n: usize, body: &str) -> PyResult<()> {
    match indices.iter().find(|&&i| i >= n) {
        Some(i) => Err(PyValueError::new_err(format!(
            "index {i} is not allowed; the scene has {n} {body}s (0 to {})",
            n.saturating_sub(1)
        ))),
        None => Ok(()),
    }
}

/// One finite vector per index from a 3-vector (the same for all) or a (count, 3) array; `name`
/// for the error.
fn per_index(value: &Bound<'_, PyAny>, count: usize, name: &str) -> PyResult<Vec<Vec3>> {
    let rows = match value.extract::<[f64; 3]>() {
        Ok(v) => vec![Vec3::from_array(v); count],
        Err(_) => {
            let array: Rows<'_> = value.extract().map_err(|_| {
                PyValueError::new_err(format!(
                    "{name} is not allowed; a 3-vector or an (N, 3) array of floats"
                ))
            })?;
            let rows = read_vectors(&array, name)?;
            if rows.len() != count {
                return Err(PyValueError::new_err(format!(
                    "{name} has {} rows for {count} indices; one row per index",
                    rows.len()
                )));
            }
            rows
        }
    };
    if let Some(i) = rows.iter().position(|v| !v.is_finite()) {
        return Err(PyValueError::new_err(format!(
            "{name}[{i}] = {:?} is not allowed; finite values",
            rows[i]
        )));
    }
    Ok(rows)
}

/// Forces and torques (torques zero where not given), one finite row per `body` of `n`.
fn read_loads(
    forces: &Rows<'_>,
    torques: Option<&Rows<'_>>,
    n: usize,
    body: &str,
) -> PyResult<(Vec<Vec3>, Vec<Vec3>)> {
    let force = read_vectors(forces, "forces")?;
    let torque = match torques {
        Some(t) => read_vectors(t, "torques")?,
        None => vec![Vec3::ZERO; n],
    };
    for (name, values) in [("forces", &force), ("torques", &torque)] {
        if values.len() != n {
            return Err(PyValueError::new_err(format!(
                "{name} has {} rows and the scene {n} {body}s; one row per {body}",
                values.len()
            )));
        }
        if let Some(i) = values.iter().position(|v| !v.is_finite()) {
            return Err(PyValueError::new_err(format!(
                "{name}[{i}] = {:?} is not allowed; finite values",
                values[i]
            )));
        }
    }
    Ok((force, torque))
}

/// The Rotne–Prager–Yamakawa mobility product of beads of radius `a` in a fluid of viscosity `eta`
/// (seed 002, eq. 2.4; with `overlap`, Wajnryb et al.'s correction for beads closer than 2a, else the
/// far-field form for every pair): the velocities `V` and angular velocities `W` of beads at `x` under
/// forces `F` and torques `T` (all (N, 3) arrays; `T` None for none), without forming the matrix, the
/// GIL released. Returns `(V, W)`.
#[pyfunction]
#[pyo3(signature = (x, forces, torques = None, *, a, eta, overlap = true))]
#[allow(clippy::type_complexity)]
fn rpy_product<'py>(
    py: Python<'py>,
    x: Rows<'py>,
    forces: Rows<'py>,
    torques: Option<Rows<'py>>,
    a: f64,
    eta: f64,
    overlap: bool,
) -> PyResult<(Bound<'py, PyArray2<f64>>, Bound<'py, PyArray2<f64>>)> {
    let mut kernel = silt_fibers::rpy::RpyKernel::new(a, eta).map_err(PyValueError::new_err)?;
    if !overlap {
        kernel = kernel.without_overlap_correction();
    }
    let mobility = silt_fibers::mobility::Mobility {
        kernel,
        hydrodynamics: silt_fibers::mobility::Hydrodynamics::Rpy,
    };
    let positions = read_vectors(&x, "x")?;
    let n = positions.len();
    let forces = read_vectors(&forces, "forces")?;
    let torques = match torques {
        Some(t) => read_vectors(&t, "torques")?,
        None => vec![Vec3::ZERO; n],
    };
    for (name, len) in [("forces", forces.len()), ("torques", torques.len())] {
        if len != n {
            return Err(PyValueError::new_err(format!(
                "{name} has {len} rows and x {n}; one row per bead"
            )));
        }
    }
    if let Some(i) = positions.iter().position(|p| !p.is_finite()) {
        return Err(PyValueError::new_err(format!(
            "bead {i} is at {:?}; finite positions are allowed",
            positions[i]
        )));
    }
    let (mut velocities, mut angular) = (vec![Vec3::ZERO; n], vec![Vec3::ZERO; n]);
    py.detach(|| mobility.apply(&positions, &forces, &torques, &mut velocities, &mut angular));
    Ok((vectors(py, &velocities)?, vectors(py, &angular)?))
}

/// The static equilibrium of every rod of the rod scene `scene` under its loads and end conditions
/// (Newton along a load path, the solve of `integrator = "static"`), whatever the scene's integrator:
/// per rod a dict of its `nodes` at equilibrium ((N + 1, 3)) and the solve's `newton_steps`,
/// `load_steps`, `rejected_steps` and final relative `residual`. `load_steps` (default: the scene's,
/// else 1) sets the first increment 1 / load_steps; `tolerance` the residual aimed at; `max_newton_steps`
/// per increment. The GIL is released.
#[pyfunction]
#[pyo3(signature = (scene, *, load_steps = None, tolerance = None, max_newton_steps = None))]
fn solve_static<'py>(
    py: Python<'py>,
    scene: &Scene,
    load_steps: Option<usize>,
    tolerance: Option<f64>,
    max_newton_steps: Option<usize>,
) -> PyResult<Vec<Bound<'py, PyDict>>> {
    let AnyScene::Rods(rods) = &scene.scene else {
        return Err(PyValueError::new_err(format!(
            "a {} scene has no rods (rod scenes have)",
            scene.scene.kind()
        )));
    };
    let defaults = silt_rods::statics::StaticOptions::default();
    let scene_load_steps = match rods.integrator {
        silt_rods::model::Integrator::Static { load_steps } => load_steps,
        _ => defaults.load_steps,
    };
    let options = silt_rods::statics::StaticOptions {
        load_steps: load_steps.unwrap_or(scene_load_steps),
        tolerance: tolerance.unwrap_or(defaults.tolerance),
        max_newton_steps: max_newton_steps.unwrap_or(defaults.max_newton_steps),
        ..defaults
    };
    if options.load_steps == 0 || options.max_newton_steps == 0 {
        return Err(PyValueError::new_err(
            "load_steps and max_newton_steps must be at least 1",
        ));
    }
    if !(options.tolerance.is_finite() && options.tolerance > 0.0) {
        return Err(PyValueError::new_err(format!(
            "tolerance = {} is not allowed; a positive number",
            options.tolerance
        )));
    }
    let solved: Vec<_> = py.detach(|| {
        rods.rods
            .iter()
            .map(|(rod, model, _)| {
                let mut rod = rod.clone();
                silt_rods::statics::solve_static(&mut rod, model, options).map(|r| (rod, r))
            })
            .collect()
    });
    solved
        .into_iter()
        .enumerate()
        .map(|(k, solved)| {
            let (rod, report) = solved.map_err(|e| {
                StepError::new_err(format!("rod {k}: the static solve failed: {e}"))
            })?;
            let out = PyDict::new(py);
            out.set_item("nodes", vectors(py, &rod.nodes)?)?;
            out.set_item("newton_steps", report.newton_steps)?;
            out.set_item("load_steps", report.load_steps)?;
            out.set_item("rejected_steps", report.rejected_steps)?;
            out.set_item("residual", report.residual)?;
            Ok(out)
        })
        .collect()
}

/// Sets the number of worker threads of every simulation in this process (before the first
/// step; by default all cores). Results do not depend on it.
#[pyfunction]
fn set_threads(threads: usize) -> PyResult<()> {
    rayon::ThreadPoolBuilder::new()
        .num_threads(threads)
        .build_global()
        .map_err(|e| PyRuntimeError::new_err(format!("the threads are already set: {e}")))
}

#[pymodule]
fn _silt(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_class::<Scene>()?;
    m.add_class::<Simulation>()?;
    m.add("SceneError", m.py().get_type::<SceneError>())?;
    m.add("StepError", m.py().get_type::<StepError>())?;
    m.add_function(wrap_pyfunction!(set_threads, m)?)?;
    m.add_function(wrap_pyfunction!(rpy_product, m)?)?;
    m.add_function(wrap_pyfunction!(solve_static, m)?)?;
    contact::register(m)?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
