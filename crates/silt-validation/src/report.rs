//! Reports of `silt validate`: each case writes `<out>/<case>/report.md` with its table and PNG plots,
//! and says whether every figure met its tolerance.

use silt_report::{write_png, Plot, Table};
use std::path::{Path, PathBuf};

/// One validation case.
pub struct Case {
    pub name: &'static str,
    pub description: &'static str,
    /// Runs the case, writing its report under the given directory; `true` for the scaled-down version.
    pub run: fn(&Path, bool) -> Result<CaseReport, String>,
}

/// Outcome of a case.
pub struct CaseReport {
    pub name: String,
    pub passed: bool,
    pub tables: Vec<(String, Table)>,
    pub figures: Vec<PathBuf>,
    pub notes: Vec<String>,
    /// The scenes run (file and `--set` changes), to repeat any of them with `silt run`.
    pub runs: Vec<String>,
}

impl CaseReport {
    /// Markdown summary (also written as report.md).
    pub fn summary(&self) -> String {
        let mut s = format!(
            "## {} — {}\n\n",
            self.name,
            if self.passed { "PASSED" } else { "FAILED" }
        );
        for note in &self.notes {
            s.push_str(&format!("{note}\n\n"));
        }
        for (title, table) in &self.tables {
            s.push_str(&format!("### {title}\n\n{}\n", table.to_markdown()));
        }
        if !self.runs.is_empty() {
            s.push_str("### Scenes run\n\n");
            for run in &self.runs {
                s.push_str(&format!("- `silt run {run}`\n"));
            }
            s.push('\n');
        }
        for f in &self.figures {
            let name = f
                .file_name()
                .map(|n| n.to_string_lossy())
                .unwrap_or_default();
            s.push_str(&format!("![{name}]({name})\n"));
        }
        s
    }

    pub(crate) fn write(&self, dir: &Path) -> Result<(), String> {
        let path = dir.join("report.md");
        silt_io::atomic::write_atomic(&path, self.summary().as_bytes())
            .map_err(|e| format!("{}: {e}", path.display()))
    }
}

pub const CASES: &[Case] = &[
    Case {
        name: "normal-collisions",
        description: "restitution and contact time of the adaptive normal contact; Euler vs predictor-corrector (seed Fig. 4)",
        run: crate::normal_collision::report,
    },
    Case {
        name: "oblique-collisions",
        description: "oblique wall impacts against Walton's model with Foerster's glass (seed sec. 5.1)",
        run: crate::oblique_collision::report,
    },
    Case {
        name: "taylor-green",
        description: "Taylor–Green vortices: second-order convergence (2D exact, 3D Richardson), 2D energy decay e^(-4 nu t)",
        run: crate::taylor_green::report,
    },
    Case {
        name: "channel-flows",
        description: "Poiseuille and Couette flow: steady profiles, start-up from rest (series solution), constant flow rate",
        run: crate::channel::report,
    },
    Case {
        name: "lid-driven-cavity",
        description: "lid-driven cavity at Re = 100 and 1000: centreline velocities against Ghia, Ghia & Shin (1982)",
        run: crate::cavity::report,
    },
    Case {
        name: "stokes-array",
        description: "immersed boundaries: Stokes drag of a simple-cubic array of fixed spheres against Hasimoto/Sangani, D/h = 8-16",
        run: crate::stokes_array::report,
    },
    Case {
        name: "ten-cate",
        description: "a sphere settling onto the floor of a closed box against ten Cate et al. (2002), cases E2-E4: terminal velocity, landing without tunnelling or bouncing",
        run: crate::ten_cate::report,
    },
    Case {
        name: "gondret",
        description: "wet sphere-wall collisions against Gondret et al. (2002) at St = 27 and 152: rebound peaks, resolution and domain study, start-position spread with and without sub-steps (seed Fig. 5-6)",
        run: crate::gondret::report,
    },
    Case {
        name: "wall-collisions",
        description: "immersed wall collisions at impact Stokes numbers 5-150 with the fluid forces on (wet) or off (dry) during contact: effective restitution (seed Fig. 9)",
        run: crate::wall_collisions::report,
    },
    Case {
        name: "couette-sphere",
        description: "a sphere on the bottom wall of a Couette flow: slides at Re_H = 10, rolls without slip at Re_H = 50 (seed Fig. 11)",
        run: crate::couette_sphere::report,
    },
    Case {
        name: "fiber-cantilever",
        description: "a clamped filament (gears and joint models, free drain) under a uniform lateral load: tip deflection against q L^4 / (8 K_b)",
        run: crate::fiber_cantilever::report,
    },
    Case {
        name: "jeffery-orbit",
        description: "rigid and stiff bead chains in simple shear (RPY): tumbling period against Jeffery's with the chain's own aspect ratio",
        run: crate::jeffery_orbit::report,
    },
    Case {
        name: "active-filament",
        description: "a filament driven by a travelling curvature wave swims against the wave; free drain does not; link drift of the Adams–Bashforth steps",
        run: crate::swimmer::report,
    },
    Case {
        name: "sedimenting-fiber",
        description: "a flexible fiber sedimenting broadside for B = 10 to 10^4 (RPY): steady U shapes, deflection and speed vs B",
        run: crate::sedimenting_fiber::report,
    },
    Case {
        name: "fiber-viscosity",
        description: "intrinsic viscosity of an isotropic dilute suspension of rigid fibers (stresslets) against slender-body theory, l/a = 20 to 320; six fibers in a sheared periodic box (periodic RPY, Lees–Edwards)",
        run: crate::fiber_viscosity::report,
    },
    Case {
        name: "rod-statics",
        description: "Cosserat rods, static solver: axial stretch F L/(E A), Timoshenko cantilever and its unshearable limit, second-order convergence in h",
        run: crate::rod_cases::rod_statics_case,
    },
    Case {
        name: "rod-elastica",
        description: "Cosserat rods, static solver: the large-deflection cantilever (F L^2/EI 0.5-10, EA L^2/EI 1e4-1e10) against the elastica, from one load increment",
        run: crate::elastica::report,
    },
    Case {
        name: "rod-cantilever-dynamics",
        description: "Timoshenko cantilever damped to rest by Radau IIA and by position Verlet: final tip and time to settle within 1 %",
        run: crate::rod_cases::rod_cantilever_dynamics_case,
    },
    Case {
        name: "rod-conservation",
        description: "a free, bent, spinning rod without damping: energy and angular momentum under Radau IIA and position Verlet",
        run: crate::rod_cases::rod_conservation_case,
    },
    Case {
        name: "rod-steel-pendulum",
        description: "a stiff steel rod swinging under gravity: Radau IIA far above the explicit limit against a fine position-Verlet run",
        run: crate::rod_cases::rod_steel_pendulum_case,
    },
    Case {
        name: "rod-helical-buckling",
        description: "a twisted, end-shortened rod buckles into a localized helix: envelope against the analytic solution (Gazzola et al. 2018)",
        run: crate::rod_cases::rod_helical_buckling_case,
    },
    Case {
        name: "settled-bed",
        description: "a dry polydisperse bed (2,000 spheres) settles to rest: kinetic energy, overlaps, solid fraction",
        run: crate::settled_bed::report,
    },
    Case {
        name: "sheared-bed",
        description: "the seed's headline case: polydisperse beads sheared by a laminar flow (Aussillous et al. 2013, A1, A2, A9, A10, A10M): particle flux against the experiments, profiles, resolution study, cost",
        run: crate::sheared_bed::report,
    },
];

pub(crate) fn case_dir(out: &Path, name: &str) -> Result<PathBuf, String> {
    let dir = out.join(name);
    std::fs::create_dir_all(&dir).map_err(|e| format!("{}: {e}", dir.display()))?;
    Ok(dir)
}

pub(crate) fn png(dir: &Path, name: &str, plot: &Plot) -> Result<PathBuf, String> {
    let path = dir.join(name);
    write_png(&path, plot).map_err(|e| e.to_string())?;
    Ok(path)
}

pub(crate) fn pct(x: f64) -> String {
    format!("{:+.3}%", 100.0 * x)
}
