//! What every kind of scene shares: the `[output]` table, the run's schedule and its limits, and the
//! machine's memory that a scene must fit in.

use super::keys::{num, Keys, Range, SceneError};
use crate::run::RunSettings;
use serde::Deserialize;

/// Largest number of frames a scene may ask for.
pub const MAX_FRAMES: f64 = 1e6;
/// Largest number of time steps a scene may ask for.
pub const MAX_STEPS: f64 = 1e10;

/// An `[output]` table (`[output]`, `[fluid.output]`, `[fibers.output]`, `[rods.output]`): the keys of
/// every kind; each kind refuses those that are not its own.
#[derive(Clone, Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OutputSection {
    /// Simulated time between frames (default: end_time / 100).
    pub interval: Option<f64>,
    /// Simulated time between checkpoints (default: ten frames).
    pub checkpoint_interval: Option<f64>,
    /// Write ParaView files (default true).
    pub vtk: Option<bool>,
    /// Fluid images only every this much time, a whole multiple of the interval.
    pub vtk_interval: Option<f64>,
    /// A diagnostics row also every this many steps.
    pub diagnostics_every: Option<u64>,
    /// Particle indices written as `track_<id>.csv`.
    pub track: Option<Vec<usize>>,
    /// Add the vorticity to the fluid images.
    pub vorticity: Option<bool>,
    /// Axis of the plane-averaged profiles.
    pub profile_axis: Option<String>,
}

impl OutputSection {
    /// Refuses the keys of this table that the scene's kind (`kind`, e.g. "a fluid scene") does not
    /// take: only the schedule and `own` are allowed under `prefix` (`fluid.output`).
    pub fn allow(
        &self,
        keys: &Keys,
        prefix: &str,
        own: &[&str],
        kind: &str,
    ) -> Result<(), SceneError> {
        let present = [
            ("vtk_interval", self.vtk_interval.is_some()),
            ("diagnostics_every", self.diagnostics_every.is_some()),
            ("track", self.track.is_some()),
            ("vorticity", self.vorticity.is_some()),
            ("profile_axis", self.profile_axis.is_some()),
        ];
        for (key, given) in present {
            if given && !own.contains(&key) {
                return Err(keys.error(
                    format!("{prefix}.{key}"),
                    format!(
                        "{kind} has no `{key}`; its output keys are interval, checkpoint_interval, vtk{}",
                        own.iter().map(|k| format!(", {k}")).collect::<String>()
                    ),
                ));
            }
        }
        Ok(())
    }

    /// The run's schedule for `end_time` (checked): frames every `interval` (default end_time / 100),
    /// checkpoints every `checkpoint_interval` (default ten frames), grids every `vtk_interval`.
    pub fn settings(
        &self,
        keys: &Keys,
        prefix: &str,
        end_time: f64,
    ) -> Result<RunSettings, SceneError> {
        let key = |k: &str| format!("{prefix}.{k}");
        let interval = self.interval.unwrap_or(end_time / 100.0);
        keys.number(&key("interval"), interval, Range::Positive)?;
        keys.require(
            end_time / interval <= MAX_FRAMES,
            &key("interval"),
            num(interval),
            &format!(
                "end_time / interval = {} frames is more than {MAX_FRAMES:e}; write fewer frames",
                num(end_time / interval)
            ),
        )?;
        let checkpoint_interval = keys.optional(
            &key("checkpoint_interval"),
            self.checkpoint_interval,
            Range::Positive,
        )?;
        if let Some(t) = checkpoint_interval {
            keys.require(
                end_time / t <= MAX_FRAMES,
                &key("checkpoint_interval"),
                num(t),
                &format!("end_time / checkpoint_interval is more than {MAX_FRAMES:e}"),
            )?;
        }
        let vtk = self.vtk.unwrap_or(true);
        let vtk_every = match self.vtk_interval {
            None => 1,
            Some(t) => {
                keys.number(&key("vtk_interval"), t, Range::Positive)?;
                keys.forbid(
                    !vtk,
                    &key("vtk_interval"),
                    "`vtk = false` turns the VTK images off; remove one of the two",
                )?;
                let ratio = t / interval;
                keys.require(
                    ratio.round() >= 1.0
                        && (ratio - ratio.round()).abs() <= 1e-6 * ratio
                        && ratio <= 1e12,
                    &key("vtk_interval"),
                    num(t),
                    &format!(
                        "it must be a whole multiple of the output interval {} (VTK images are written \
                         with some of the frames)",
                        num(interval)
                    ),
                )?;
                ratio.round() as u64
            }
        };
        let diagnostics_every = match self.diagnostics_every {
            Some(0) => {
                return Err(keys.error(
                    key("diagnostics_every"),
                    "0 is not allowed; a row every n >= 1 steps",
                ))
            }
            every => every,
        };
        keys.forbid(
            self.vorticity == Some(true) && !vtk,
            &key("vorticity"),
            "vorticity is written into the VTK images, and `vtk = false` turns them off; remove one \
             of the two",
        )?;
        Ok(RunSettings {
            end_time,
            interval,
            checkpoint_interval,
            vtk,
            vtk_every,
            diagnostics_every,
        })
    }
}

/// The number of fixed steps of `dt` to `end_time` (both checked positive): at least one, at most
/// [`MAX_STEPS`]; `key` names the time step.
pub fn fixed_steps(keys: &Keys, key: &str, dt: f64, end_time: f64) -> Result<u64, SceneError> {
    keys.require(
        dt <= end_time * (1.0 + 1e-9),
        key,
        num(dt),
        &format!(
            "the time step must not be longer than end_time = {} (a run takes at least one step)",
            num(end_time)
        ),
    )?;
    let steps = (end_time / dt).round();
    keys.require(
        steps <= MAX_STEPS,
        key,
        num(dt),
        &format!(
            "end_time / time step = {steps:e} steps is more than {MAX_STEPS:e}; shorten the run or \
             lengthen the step"
        ),
    )?;
    Ok((steps as u64).max(1))
}

/// The machine's memory in bytes (`MemTotal` of /proc/meminfo), when it can be read.
pub fn machine_memory() -> Option<f64> {
    let text = std::fs::read_to_string("/proc/meminfo").ok()?;
    let line = text.lines().find(|l| l.starts_with("MemTotal:"))?;
    let kib: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kib * 1024.0)
}

/// Refuses a model whose estimated memory (`bytes`) does not fit in the machine's; `key` names what
/// sets its size.
pub fn fits_in_memory(keys: &Keys, key: &str, bytes: f64, what: &str) -> Result<(), SceneError> {
    let gib = |b: f64| format!("{:.1} GiB", b / (1u64 << 30) as f64);
    if !bytes.is_finite() {
        return Err(keys.error(key, format!("{what} is too large to count")));
    }
    match machine_memory() {
        Some(total) if bytes > total => Err(keys.error(
            key,
            format!(
                "{what} needs about {} of memory, more than this machine's {}; make it smaller",
                gib(bytes),
                gib(total)
            ),
        )),
        _ => Ok(()),
    }
}
