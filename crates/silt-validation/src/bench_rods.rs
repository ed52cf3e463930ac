//! `silt bench rods`: the issue-6 benchmark of Cosserat rods beside PyElastica (docs/performance.md).
//!
//! (a) PyElastica's Timoshenko cantilever (100 segments) with position Verlet at dt = 0.07 h:
//!     microseconds per step (the median of three runs of `steps` steps each).
//! (b) Time to the static tip deflection (within 1 %): the static solver, Radau IIA with a critical
//!     drag, position Verlet with the same drag; PyElastica's own damped run (its example's damper
//!     and force ramp, to t = 5000) is run through `benches/peers/pyelastica_cantilever.py` when
//!     `elastica` can be imported (`pip install pyelastica==1.0.0`), twice, quoting the second
//!     (numba compiles on the first).
//! (c) The stiff steel rod swinging for 2 s of physical time with Radau IIA (rtol = atol = 1e-4):
//!     wall time.

use crate::case::CaseFiles;
use crate::rod_cases::*;
use silt_core::model::{Horizon, Model};
use silt_io::scenes::rods::RodScene;
use silt_io::scenes::{Override, SceneKind};
use std::path::{Path, PathBuf};
use std::time::Instant;

/// What to run.
#[derive(Clone, Debug)]
pub struct RodBenchOptions {
    pub verlet_steps: usize,
    /// The peer's final time (5000 in the figure).
    pub peer_final_time: f64,
    pub run_peer: bool,
    pub pendulum_time: f64,
}

impl Default for RodBenchOptions {
    fn default() -> Self {
        RodBenchOptions {
            verlet_steps: 500_000,
            peer_final_time: 5000.0,
            run_peer: true,
            pendulum_time: 2.0,
        }
    }
}

impl RodBenchOptions {
    pub fn quick() -> Self {
        RodBenchOptions {
            verlet_steps: 20_000,
            peer_final_time: 50.0,
            run_peer: false,
            pendulum_time: 0.1,
        }
    }
}

/// PyElastica's figures from its own run.
#[derive(Clone, Debug)]
pub struct PeerRun {
    pub us_per_step: f64,
    pub wall_seconds: f64,
    pub steps: f64,
    pub tip: f64,
}

#[derive(Clone, Debug)]
pub struct RodBenchReport {
    pub machine: String,
    pub verlet_us_per_step: f64,
    pub static_seconds: f64,
    pub static_tip: f64,
    pub radau_settle_seconds: Option<f64>,
    pub radau_tip: f64,
    pub verlet_settle_seconds: Option<f64>,
    pub pendulum_seconds: f64,
    pub pendulum_time: f64,
    pub pendulum_steps: usize,
    pub peer: Result<PeerRun, String>,
}

impl RodBenchReport {
    pub fn table(&self) -> String {
        let peer = self.peer.as_ref().ok();
        let ratio = |silt: f64, other: Option<f64>| {
            other.map_or("-".to_string(), |o| format!("{:.0} x", o / silt))
        };
        let mut s = format!("machine: {}\n\n", self.machine);
        s.push_str(
            "| problem | Silt | PyElastica 1.0.0 | PyElastica / Silt |\n|---|--:|--:|--:|\n",
        );
        s.push_str(&format!(
            "| (a) Timoshenko, 100 segments, position Verlet dt = 0.07 h: us per step | {:.2} | {} | {} |\n",
            self.verlet_us_per_step,
            peer.map_or("-".into(), |p| format!("{:.2}", p.us_per_step)),
            ratio(self.verlet_us_per_step, peer.map(|p| p.us_per_step)),
        ));
        let peer_wall = peer.map(|p| p.wall_seconds);
        s.push_str(&format!(
            "| (b) time to the static tip (1 %): static solver, s | {:.4} (tip {:.6}) | {} | {} |\n",
            self.static_seconds,
            self.static_tip,
            peer.map_or("-".into(), |p| format!(
                "{:.1} ({:.0} steps, tip {:.6})",
                p.wall_seconds, p.steps, p.tip
            )),
            ratio(self.static_seconds, peer_wall),
        ));
        if let Some(t) = self.radau_settle_seconds {
            s.push_str(&format!(
                "| (b) time to the static tip (1 %): Radau IIA, critical drag, s | {t:.4} (tip {:.6}) | | {} |\n",
                self.radau_tip,
                ratio(t, peer_wall),
            ));
        }
        if let Some(t) = self.verlet_settle_seconds {
            s.push_str(&format!(
                "| (b) time to the static tip (1 %): position Verlet, critical drag, s | {t:.4} | | {} |\n",
                ratio(t, peer_wall),
            ));
        }
        s.push_str(&format!(
            "| (c) steel rod swinging, {} s of physical time, Radau IIA (rtol = atol = 1e-4): wall s | {:.2} ({} steps; {:.2} x real time) | | |\n",
            self.pendulum_time,
            self.pendulum_seconds,
            self.pendulum_steps,
            self.pendulum_time / self.pendulum_seconds,
        ));
        if let Err(note) = &self.peer {
            s.push_str(&format!("\nPyElastica: {note}\n"));
        }
        s
    }
}

fn machine() -> String {
    let cpu = std::fs::read_to_string("/proc/cpuinfo")
        .ok()
        .and_then(|t| {
            t.lines()
                .find(|l| l.starts_with("model name"))
                .and_then(|l| l.split(':').nth(1))
                .map(|s| s.trim().to_string())
        })
        .unwrap_or_else(|| "unknown CPU".into());
    format!(
        "{cpu}, {} threads available, one used",
        std::thread::available_parallelism().map_or(1, |n| n.get())
    )
}

/// The peer script, next to the sources.
fn peer_script() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../../benches/peers/pyelastica_cantilever.py")
}

fn run_peer(final_time: f64) -> Result<PeerRun, String> {
    if !peer_script().exists() {
        return Err(format!("{} is missing", peer_script().display()));
    }
    let available = std::process::Command::new("python3")
        .args(["-c", "import elastica"])
        .output()
        .map_err(|e| format!("cannot run python3: {e}"))?;
    if !available.status.success() {
        return Err("not installed (pip install pyelastica==1.0.0); Silt's figures only".into());
    }
    let mut last = None;
    // Twice: numba compiles on the first run.
    for _ in 0..2 {
        let output = std::process::Command::new("python3")
            .arg(peer_script())
            .arg("100")
            .arg(format!("{final_time}"))
            .env("NUMBA_NUM_THREADS", "1")
            .env("OMP_NUM_THREADS", "1")
            .output()
            .map_err(|e| format!("cannot run python3: {e}"))?;
        if !output.status.success() {
            return Err(format!(
                "the peer script failed: {}",
                String::from_utf8_lossy(&output.stderr).trim()
            ));
        }
        last = Some(String::from_utf8_lossy(&output.stdout).into_owned());
    }
    let text = last.unwrap_or_default();
    let value = |key: &str| -> Result<f64, String> {
        text.split(key)
            .nth(1)
            .and_then(|rest| rest.split_whitespace().next())
            .and_then(|v| v.trim().parse::<f64>().ok())
            .ok_or_else(|| format!("no {key} in the peer's output: {text}"))
    };
    Ok(PeerRun {
        us_per_step: value("us_per_step=")?,
        wall_seconds: value("wall_s=")?,
        steps: value("steps=")?,
        tip: value("tip deflection=")?,
    })
}

pub fn run(options: &RodBenchOptions, log: &mut dyn FnMut(&str)) -> Result<RodBenchReport, String> {
    // The validation scenes: the Timoshenko cantilever and the steel rod.
    let statics_case = CaseFiles::open("rod-statics", false)?;
    let dynamics_case = CaseFiles::open("rod-cantilever-dynamics", false)?;
    let pendulum_case = CaseFiles::open("rod-steel-pendulum", false)?;
    let reference_tip = dynamics_case
        .table::<toml::Table>("reference")?
        .get("timoshenko_tip")
        .and_then(|v| v.as_float())
        .ok_or("validation/rod-cantilever-dynamics/reference.toml: no timoshenko_tip")?;
    // (a) Verlet per step (undamped), median of three.
    let dt = 0.07 * 3.0 / 100.0;
    let mut per_step = Vec::new();
    for _ in 0..3 {
        let changes = [
            Override::new("rods.integrator", "verlet"),
            Override::new("rods.time_step", dt),
            Override::remove("rods.relative_tolerance"),
            Override::remove("rods.absolute_tolerance"),
            Override::new("rods.rod.0.drag", 0.0),
        ];
        let scene = dynamics_case.scene("cantilever.toml", &changes, RodScene::parse)?;
        let mut rods = scene.build().map_err(|e| e.to_string())?;
        let start = Instant::now();
        rods.advance(Horizon::Steps(options.verlet_steps as u64))
            .map_err(|e| format!("the Verlet benchmark failed: {e}"))?;
        per_step.push(start.elapsed().as_secs_f64() * 1e6 / options.verlet_steps as f64);
    }
    per_step.sort_by(f64::total_cmp);
    let verlet_us_per_step = per_step[1];
    log(&format!(
        "(a) position Verlet: {verlet_us_per_step:.3} us per step"
    ));
    // (b) static solver, best of three; damped dynamics checked every 0.5.
    let mut statics = Vec::new();
    for _ in 0..3 {
        statics.push(timoshenko_static(&statics_case, 100, 1.0)?);
    }
    statics.sort_by(|a, b| a.seconds.total_cmp(&b.seconds));
    let best = statics[0];
    log(&format!(
        "(b) static solver: {:.4} s, tip {:.6}",
        best.seconds, best.tip
    ));
    let radau = damped_cantilever(
        &dynamics_case,
        Some(1e-4),
        None,
        40.0,
        0.5,
        reference_tip,
        0.01,
    )?;
    log(&format!(
        "(b) Radau IIA: settled at t = {:?} after {:?} s",
        radau.settled_time, radau.settled_seconds
    ));
    let verlet = damped_cantilever(
        &dynamics_case,
        None,
        Some(dt),
        40.0,
        0.5,
        reference_tip,
        0.01,
    )?;
    log(&format!(
        "(b) Verlet: settled at t = {:?} after {:?} s",
        verlet.settled_time, verlet.settled_seconds
    ));
    // (c) the steel rod.
    let pendulum = steel_pendulum(&pendulum_case, 50, options.pendulum_time, 1, None)?;
    log(&format!(
        "(c) steel rod: {} s of physical time in {:.2} s",
        options.pendulum_time, pendulum.implicit_seconds
    ));
    let peer = if options.run_peer {
        log("PyElastica: running twice (numba compiles on the first) ...");
        run_peer(options.peer_final_time)
    } else {
        Err("not run (quick)".into())
    };
    if let Ok(p) = &peer {
        log(&format!(
            "PyElastica: {:.2} us per step, {:.1} s, tip {:.6}",
            p.us_per_step, p.wall_seconds, p.tip
        ));
    }
    Ok(RodBenchReport {
        machine: machine(),
        verlet_us_per_step,
        static_seconds: best.seconds,
        static_tip: best.tip,
        radau_settle_seconds: radau.settled_seconds,
        radau_tip: radau.tip,
        verlet_settle_seconds: verlet.settled_seconds,
        pendulum_seconds: pendulum.implicit_seconds,
        pendulum_time: options.pendulum_time,
        pendulum_steps: pendulum.implicit_steps.0,
        peer,
    })
}
