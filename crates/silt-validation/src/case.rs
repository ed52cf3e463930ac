//! The files of a validation case, `validation/<case>/`: its scenes (`*.toml`, read as a user's scene
//! is) and `reference.toml` (source, reference numbers, tolerances, the parameters of the full and the
//! quick version). The files are compiled into the binary, so `silt validate` runs from anywhere and
//! the test suite reads the same files.
//!
//! `reference.toml` holds:
//! - `[tolerance]`: every tolerance of the case, read by the case's report (nowhere else);
//! - `[full]`: the parameters of the full case (sweeps, grids, lengths of runs), and `[quick]`: the
//!   values that differ in the scaled-down version of the test suite and `silt validate --quick`;
//! - `[quick.set]`: scene keys changed in the quick version (`"fluid.cells" = [16, 16, 2]`), for every
//!   scene of the case, or in a table named after one scene file (`[quick.set."wall.toml"]`).
//!
//! Each run of a case is one scene file plus key changes (`silt_io::scenes::overrides`), listed in the
//! report so that any run can be repeated with `silt run validation/<case>/<file> --set key=value`.

use serde::de::DeserializeOwned;
use serde::Deserialize;
use silt_core::model::{Clock, Horizon, Model};
use silt_io::scenes::{overrides, Override, SceneError};
use std::cell::RefCell;
use std::path::{Path, PathBuf};

/// The case files compiled in: (case, file, text).
macro_rules! case_files {
    ($($case:literal: [$($file:literal),* $(,)?]),* $(,)?) => {
        &[$($((
            $case,
            $file,
            include_str!(concat!(env!("CARGO_MANIFEST_DIR"), "/../../validation/", $case, "/", $file)),
        ),)*)*]
    };
}

const FILES: &[(&str, &str, &str)] = case_files! {
    "normal-collisions": ["reference.toml", "wall.toml", "spheres.toml"],
    "oblique-collisions": ["reference.toml", "wall.toml", "pair.toml"],
    "taylor-green": ["reference.toml", "vortex-2d.toml", "vortex-3d.toml"],
    "channel-flows": ["reference.toml", "poiseuille.toml", "couette.toml", "flow-rate.toml"],
    "lid-driven-cavity": ["reference.toml", "cavity.toml"],
    "fiber-cantilever": ["reference.toml", "gears.toml", "joint.toml"],
    "jeffery-orbit": ["reference.toml", "chain.toml"],
    "active-filament": ["reference.toml", "swimmer.toml"],
    "sedimenting-fiber": ["reference.toml", "fiber.toml"],
    "fiber-viscosity": ["reference.toml", "fiber.toml"],
    "rod-statics": ["reference.toml", "stretch.toml", "timoshenko.toml"],
    "rod-elastica": ["reference.toml", "elastica.toml"],
    "rod-cantilever-dynamics": ["reference.toml", "cantilever.toml"],
    "rod-conservation": ["reference.toml", "free-rod.toml"],
    "rod-steel-pendulum": ["reference.toml", "pendulum.toml"],
    "rod-helical-buckling": ["reference.toml", "buckling.toml", "static.toml"],
    "ten-cate": ["reference.toml", "settling.toml"],
    "couette-sphere": ["reference.toml", "sphere.toml"],
    "stokes-array": ["reference.toml", "array.toml", "settling.toml"],
    "gondret": ["reference.toml", "st27.toml", "st152.toml"],
    "wall-collisions": ["reference.toml", "impact.toml"],
    "settled-bed": ["reference.toml", "bed.toml"],
    "sheared-bed": ["reference.toml", "a1.toml", "a2.toml", "a9.toml", "a10.toml", "a10m.toml"],
};

/// One case's files and the version (full or quick) being run.
pub struct CaseFiles {
    pub name: &'static str,
    pub quick: bool,
    reference: toml::Table,
    /// The scenes run so far, with their changes, for the report.
    runs: RefCell<Vec<String>>,
}

impl CaseFiles {
    /// The files of `case`; `quick` for the scaled-down version.
    pub fn open(case: &'static str, quick: bool) -> Result<Self, String> {
        let text = file_text(case, "reference.toml")?;
        let reference =
            toml::from_str(text).map_err(|e| format!("validation/{case}/reference.toml: {e}"))?;
        Ok(CaseFiles {
            name: case,
            quick,
            reference,
            runs: RefCell::new(Vec::new()),
        })
    }

    /// The `[tolerance]` table.
    pub fn tolerances<T: DeserializeOwned>(&self) -> Result<T, String> {
        self.table("tolerance")
    }

    /// The parameters of the version run: `[full]`, with `[quick]`'s values in the quick version.
    pub fn parameters<T: DeserializeOwned>(&self) -> Result<T, String> {
        let mut merged = self.section("full")?;
        if self.quick {
            for (key, value) in self.section("quick")? {
                if key != "set" {
                    merged.insert(key, value);
                }
            }
        }
        self.deserialize(merged, "[full] and [quick]")
    }

    /// A top-level table of `reference.toml` as `T` (reference numbers).
    pub fn table<T: DeserializeOwned>(&self, name: &str) -> Result<T, String> {
        let section = self.section(name)?;
        self.deserialize(section, &format!("[{name}]"))
    }

    /// The text of scene `file` with the quick version's changes (in the quick version) and then
    /// `changes`, and the path that names it in messages.
    pub fn scene_text(
        &self,
        file: &str,
        changes: &[Override],
    ) -> Result<(String, PathBuf), String> {
        let text = file_text(self.name, file)?;
        let path = PathBuf::from(format!("validation/{}/{file}", self.name));
        let mut all = Vec::new();
        if self.quick {
            let set = self
                .section("quick")?
                .remove("set")
                .and_then(|v| v.as_table().cloned())
                .unwrap_or_default();
            for (key, value) in set {
                match value {
                    toml::Value::Table(own) if key == file => {
                        all.extend(own.into_iter().map(|(k, v)| Override::new(k, v)))
                    }
                    toml::Value::Table(_) if key.ends_with(".toml") => {}
                    value => all.push(Override::new(key, value)),
                }
            }
        }
        all.extend_from_slice(changes);
        let text = overrides::apply(text, &path, &all).map_err(|e| e.to_string())?;
        let described: Vec<String> = all.iter().map(command_line).collect();
        self.runs
            .borrow_mut()
            .push(format!("{} {}", path.display(), described.join(" ")));
        Ok((text, path))
    }

    /// Scene `file` with its changes (as [`Self::scene_text`]), parsed by a scene kind's `parse`
    /// (e.g. `ParticleScene::parse`) as `silt run` parses a user's scene.
    pub fn scene<K>(
        &self,
        file: &str,
        changes: &[Override],
        parse: fn(&str, &Path) -> Result<K, SceneError>,
    ) -> Result<K, String> {
        let (text, path) = self.scene_text(file, changes)?;
        parse(&text, &path).map_err(|e| e.to_string())
    }

    /// A value of scene `file` as written (before any change): `key` in the dotted form of `--set`,
    /// with array indices as numbers (`particles.0.diameters.0`). For the figures a case derives its
    /// set-up from (a sphere's diameter, a box), so that the scene stays their one source.
    pub fn scene_value(&self, file: &str, key: &str) -> Result<toml::Value, String> {
        let text = file_text(self.name, file)?;
        let table: toml::Table =
            toml::from_str(text).map_err(|e| format!("validation/{}/{file}: {e}", self.name))?;
        let mut value = toml::Value::Table(table);
        for part in key.split('.') {
            let next = match (&value, part.parse::<usize>()) {
                (toml::Value::Array(items), Ok(i)) => items.get(i).cloned(),
                (toml::Value::Table(t), _) => t.get(part).cloned(),
                _ => None,
            };
            value =
                next.ok_or_else(|| format!("validation/{}/{file}: no key `{key}`", self.name))?;
        }
        Ok(value)
    }

    /// A number of scene `file` as written (see [`Self::scene_value`]).
    pub fn scene_number(&self, file: &str, key: &str) -> Result<f64, String> {
        let value = self.scene_value(file, key)?;
        value
            .as_float()
            .or_else(|| value.as_integer().map(|i| i as f64))
            .ok_or_else(|| format!("validation/{}/{file}: `{key}` is not a number", self.name))
    }

    /// `fluid.spacing = h` and `fluid.cells` for the box of scene `file` (cells times spacing, as
    /// written) at that spacing: a change of resolution that keeps the box.
    pub fn grid_at(&self, file: &str, h: f64) -> Result<[Override; 2], String> {
        let written = self.scene_number(file, "fluid.spacing")?;
        let cells = (0..3)
            .map(|a| {
                let n = self.scene_number(file, &format!("fluid.cells.{a}"))?;
                Ok((n * written / h).round() as i64)
            })
            .collect::<Result<Vec<i64>, String>>()?;
        Ok([
            Override::new("fluid.spacing", h),
            Override::new("fluid.cells", cells),
        ])
    }

    /// The runs made so far (scene and changes), one line each, without repeats.
    pub fn runs(&self) -> Vec<String> {
        let mut runs = self.runs.borrow().clone();
        let mut seen = std::collections::HashSet::new();
        runs.retain(|r| seen.insert(r.clone()));
        runs
    }

    fn section(&self, name: &str) -> Result<toml::Table, String> {
        match self.reference.get(name) {
            Some(toml::Value::Table(t)) => Ok(t.clone()),
            Some(_) => Err(format!(
                "validation/{}/reference.toml: `{name}` must be a table",
                self.name
            )),
            None => Ok(toml::Table::new()),
        }
    }

    fn deserialize<T: DeserializeOwned>(
        &self,
        table: toml::Table,
        what: &str,
    ) -> Result<T, String> {
        toml::Value::Table(table)
            .try_into()
            .map_err(|e| format!("validation/{}/reference.toml {what}: {e}", self.name))
    }
}

/// A check's verdict in a report table: "yes", or "NO" where it failed.
pub fn yes(ok: bool) -> String {
    String::from(if ok { "yes" } else { "NO" })
}

/// Advances `model` to `time` as a run does: whole fixed steps up to the one that reaches it (to
/// round-off), or adaptive steps landing on it.
pub fn advance_to<M: Model>(model: &mut M, time: f64) -> Result<(), String> {
    match model.clock() {
        Clock::Fixed(dt) => {
            let target = (time / dt).round() as u64;
            while model.steps() < target {
                model
                    .advance(Horizon::Steps(1))
                    .map_err(|e| e.to_string())?;
            }
        }
        Clock::Adaptive => {
            while model.time() < time {
                model
                    .advance(Horizon::Time(time))
                    .map_err(|e| e.to_string())?;
            }
        }
    }
    Ok(())
}

/// Advances `model` by `steps` whole steps (a model may take fewer than a [`Horizon::Steps`] asks for
/// in one call).
pub fn advance_steps<M: Model>(model: &mut M, steps: u64) -> Result<(), String> {
    let target = model.steps() + steps;
    while model.steps() < target {
        model
            .advance(Horizon::Steps(target - model.steps()))
            .map_err(|e| e.to_string())?;
    }
    Ok(())
}

/// Evenly spaced values `from, from + step, ..` up to `to` (inclusive, to round-off): a sweep of
/// `reference.toml`, written `{ from = 0.0, to = 8.0, step = 0.25 }`.
#[derive(Clone, Copy, Debug, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Sweep {
    pub from: f64,
    pub to: f64,
    pub step: f64,
}

impl Sweep {
    pub fn values(&self) -> Vec<f64> {
        let count = ((self.to - self.from) / self.step + 1e-9).floor() as usize + 1;
        (0..count)
            .map(|i| self.from + i as f64 * self.step)
            .collect()
    }
}

/// `--set key=value` as a shell takes it: a string value as a bare word where it is one, the whole
/// assignment in single quotes where it holds spaces or quotes.
fn command_line(o: &Override) -> String {
    let Some(value) = &o.value else {
        return format!("--unset {}", o.key);
    };
    let value = match value {
        toml::Value::String(s)
            if Override::parse(&format!("k={s}"))
                .is_ok_and(|p| p.value.as_ref().and_then(|v| v.as_str()) == Some(s)) =>
        {
            s.clone()
        }
        other => other.to_string(),
    };
    let assignment = format!("{}={value}", o.key);
    if assignment
        .chars()
        .all(|c| c.is_alphanumeric() || "-_.=/,[]+".contains(c))
    {
        format!("--set {assignment}")
    } else {
        format!("--set '{assignment}'")
    }
}

/// The text of a compiled-in case file.
fn file_text(case: &str, file: &str) -> Result<&'static str, String> {
    FILES
        .iter()
        .find(|(c, f, _)| *c == case && *f == file)
        .map(|(_, _, text)| *text)
        .ok_or_else(|| format!("validation/{case}/{file} is not among the case files"))
}

/// Every compiled-in file of `case`: (file name, text).
pub fn files(case: &str) -> Vec<(&'static str, &'static str)> {
    FILES
        .iter()
        .filter(|(c, _, _)| *c == case)
        .map(|(_, f, t)| (*f, *t))
        .collect()
}
