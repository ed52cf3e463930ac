//! A dry granular system and its time step.

use crate::contact::{ContactForce, ContactModel, ContactState, Update};
use crate::distributed::Halo;
use crate::domain::Domain;
use crate::forces::{
    compute_loads, ForceContext, Kinematics, LoadScratch, Loads, NoHooks, ParticleHooks,
};
use crate::integrator::{correct_velocity, predict_velocity, trapezoid, Integrator};
use crate::material::Material;
use crate::neighbor::NeighborList;
use crate::particles::Particles;
use crate::wall::Wall;
use crate::Vec3;
use rayon::prelude::*;
use serde::{Deserialize, Serialize};
use silt_core::rk3::stage_fraction;
use silt_core::signal::Signal;

/// A run that cannot continue.
#[derive(Clone, Debug, PartialEq)]
pub enum StepError {
    /// A position, velocity or angular velocity became NaN or infinite.
    NonFinite {
        particle: usize,
        time: f64,
        quantity: &'static str,
    },
    /// A particle left the domain through a non-periodic side.
    LeftDomain {
        particle: usize,
        time: f64,
        position: Vec3,
    },
    /// A coupled step asked for the stages of an integrator that has none (velocity Verlet).
    NoStages,
    /// The failure of a step of a system split over ranks, as every rank reports it (the first by
    /// sphere index over all ranks: the serial run's message).
    OnRanks(String),
}

impl StepError {
    /// The error naming global sphere indices instead of this rank's local ones.
    fn with_global_index(self, ids: &[u32]) -> Self {
        match self {
            StepError::NonFinite {
                particle,
                time,
                quantity,
            } => StepError::NonFinite {
                particle: ids[particle] as usize,
                time,
                quantity,
            },
            StepError::LeftDomain {
                particle,
                time,
                position,
            } => StepError::LeftDomain {
                particle: ids[particle] as usize,
                time,
                position,
            },
            other => other,
        }
    }

    /// Which of the ranks' failures is reported: the lowest sphere index.
    fn order(&self) -> f64 {
        match self {
            StepError::NonFinite { particle, .. } | StepError::LeftDomain { particle, .. } => {
                *particle as f64
            }
            _ => -1.0,
        }
    }
}

impl std::fmt::Display for StepError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            StepError::NonFinite { particle, time, quantity } => write!(
                f,
                "the run diverged: the {quantity} of particle {particle} became non-finite at t = {}; \
                 reduce the time step or check the contact settings",
                silt_core::format_time(*time)
            ),
            StepError::LeftDomain { particle, time, position } => write!(
                f,
                "particle {particle} left the domain at t = {} (position {position}); add walls or enlarge \
                 the domain in its non-periodic directions",
                silt_core::format_time(*time)
            ),
            StepError::NoStages => write!(
                f,
                "velocity Verlet has no Runge–Kutta stages to sub-step in a fluid; use integrator = \"seed\""
            ),
            StepError::OnRanks(message) => f.write_str(message),
        }
    }
}

impl std::error::Error for StepError {}

/// Everything needed to continue a run bit for bit.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub struct DemCheckpoint {
    pub step_count: u64,
    pub particles: Particles,
    /// Memory of every pair whose memory is not empty: (i, j, state), i < j.
    pub pair_states: Vec<(u32, u32, ContactState)>,
    pub wall_states: Vec<ContactState>,
    /// Loads carried from one step to the next (velocity Verlet only).
    pub carried_loads: Option<Loads>,
    /// Global indices of the spheres of a rank's piece (a split system, [`crate::distributed`]), in
    /// the order of `particles`, whose pair memories are then in global indices; empty: the whole
    /// system.
    pub ids: Vec<u32>,
}

/// Scratch arrays of the integrators, kept between steps to avoid allocations.
#[derive(Clone, Debug, Default)]
pub(crate) struct Scratch {
    position: Vec<Vec3>,
    velocity: Vec<Vec3>,
    angular_velocity: Vec<Vec3>,
    current: Loads,
    previous: Loads,
    predicted: Loads,
    loads: LoadScratch,
}

/// Spheres, walls, a contact model and a clock.
#[derive(Clone, Debug)]
pub struct DemSystem {
    pub domain: Domain,
    pub gravity: Vec3,
    pub materials: Vec<Material>,
    pub model: ContactModel,
    pub particles: Particles,
    pub walls: Vec<Wall>,
    pub integrator: Integrator,
    /// Time step (the fluid time step in coupled runs).
    pub dt: f64,
    pub step_count: u64,
    pub neighbors: NeighborList,
    /// Memory of particle–wall contacts, `walls.len().max(1)` slots per particle.
    pub wall_states: Vec<ContactState>,
    /// Number of force evaluations so far (for cost per evaluation).
    pub evaluations: u64,
    /// Groups of fixed spheres (prescribed motion: they move at their velocity) that become free at a
    /// given time; the seed prescribes the approach velocity of a sphere before letting it go.
    pub releases: Vec<Release>,
    /// Groups of fixed spheres whose prescribed velocity is a function of time.
    pub prescribed: Vec<PrescribedVelocity>,
    pub(crate) carried_loads: Option<Loads>,
    densities: Vec<f64>,
    pub(crate) scratch: Scratch,
    /// This rank's part of a system split over ranks ([`crate::distributed`]); `None`: the whole.
    pub halo: Option<Halo>,
}

/// Spheres `particles` move at their prescribed velocity until `time`, and are free from the first step
/// that starts at or after it (to half a step).
#[derive(Clone, Debug, PartialEq)]
pub struct Release {
    pub time: f64,
    pub particles: std::ops::Range<usize>,
}

/// Spheres `particles`, while fixed, move at `velocity`, taken at the middle of each step (the seed's
/// approach velocity u_in (exp(-40 t) - 1) of a sphere driven at a wall, sec. 5.2).
#[derive(Clone, Debug, PartialEq)]
pub struct PrescribedVelocity {
    pub velocity: [Signal; 3],
    pub particles: std::ops::Range<usize>,
}

impl DemSystem {
    #[allow(clippy::too_many_arguments)]
    pub fn new(
        domain: Domain,
        gravity: Vec3,
        materials: Vec<Material>,
        model: ContactModel,
        particles: Particles,
        walls: Vec<Wall>,
        integrator: Integrator,
        dt: f64,
        skin: f64,
    ) -> Self {
        let wall_states = vec![ContactState::default(); particles.len() * walls.len().max(1)];
        let densities = materials.iter().map(|m| m.density).collect();
        DemSystem {
            domain,
            gravity,
            materials,
            model,
            particles,
            walls,
            integrator,
            dt,
            step_count: 0,
            neighbors: NeighborList::new(skin),
            wall_states,
            evaluations: 0,
            releases: Vec::new(),
            prescribed: Vec::new(),
            carried_loads: None,
            densities,
            scratch: Scratch::default(),
            halo: None,
        }
    }

    /// Simulated time, step count times dt (no accumulated round-off).
    pub fn time(&self) -> f64 {
        self.step_count as f64 * self.dt
    }

    /// Advances the system by one time step dt.
    pub fn step(&mut self) -> Result<(), StepError> {
        self.step_with_loads(&Loads::default())
    }

    /// Advances the system by one time step dt with `external` loads (per particle; empty for none)
    /// added to the contact, lubrication and gravity loads of every evaluation.
    pub fn step_with_loads(&mut self, external: &Loads) -> Result<(), StepError> {
        let outcome = match self.integrator {
            Integrator::PredictorCorrector { .. } | Integrator::EulerCrankNicolson { .. } => {
                (0..3).try_for_each(|stage| self.step_stage_here(stage, external))
            }
            // Its half kicks, drift, folding and checks share the passes over the particles of the
            // evaluation of the loads.
            Integrator::VelocityVerlet => {
                self.begin_step();
                self.velocity_verlet_step(external)
            }
        };
        self.agree(outcome)
    }

    /// The outcome of a step, the same on every rank of a split system (a collective there): the
    /// failure of the lowest sphere index over all ranks, or a sphere that moved beyond what the
    /// ghost layers cover.
    fn agree(&self, outcome: Result<(), StepError>) -> Result<(), StepError> {
        let Some(halo) = &self.halo else {
            return outcome;
        };
        let overrun = halo
            .overrun
            .swap(false, std::sync::atomic::Ordering::Relaxed);
        let local = match outcome {
            Err(e) => {
                let e = e.with_global_index(&halo.ids);
                Err((e.order(), e.to_string()))
            }
            Ok(()) if overrun => Err((
                -2.0,
                format!(
                    "a sphere moved more than a quarter of the neighbour skin ({}) within one step \
                     at t = {}: the ghost layers of the ranks no longer cover its contacts; reduce \
                     the time step or raise neighbor_skin",
                    self.neighbors.skin,
                    silt_core::format_time(self.time())
                ),
            )),
            Ok(()) => Ok(()),
        };
        silt_parallel::agree_on_failure(&*halo.comm, local).map_err(StepError::OnRanks)
    }

    /// The sub-steps of Runge–Kutta stage `stage` (0, 1, 2) of a step, for a coupled run in which the
    /// fluid advances between the stages (seed sec. 4: the particles sub-step within each fluid stage,
    /// with the `external` loads, the fluid's, held over the stage). The last stage completes the step.
    /// Only the integrators with stages take them: velocity Verlet is refused.
    pub fn step_stage(&mut self, stage: usize, external: &Loads) -> Result<(), StepError> {
        let outcome = self.step_stage_here(stage, external);
        if stage == 2 {
            self.agree(outcome)
        } else {
            outcome
        }
    }

    /// [`DemSystem::step_stage`] on this rank.
    fn step_stage_here(&mut self, stage: usize, external: &Loads) -> Result<(), StepError> {
        if stage == 0 {
            self.begin_step();
        }
        match self.integrator {
            Integrator::PredictorCorrector { substeps } => {
                let h = stage_fraction(stage) * self.dt / substeps[stage] as f64;
                for _ in 0..substeps[stage] {
                    self.predictor_corrector_substep(stage, h, external);
                }
            }
            Integrator::EulerCrankNicolson { substeps } => {
                let h = stage_fraction(stage) * self.dt / substeps[stage] as f64;
                for _ in 0..substeps[stage] {
                    self.euler_crank_nicolson_substep(h, external);
                }
            }
            Integrator::VelocityVerlet => return Err(StepError::NoStages),
        }
        if stage < 2 {
            return Ok(());
        }
        self.step_count += 1;
        let time = self.time();
        let p = &mut self.particles;
        wrap_and_check(
            &self.domain,
            time,
            &mut p.position,
            &p.velocity,
            &p.angular_velocity,
            self.halo.as_ref().map(|h| &h.owned[..]),
        )
    }

    /// What is due at the start of a step: the releases of fixed spheres and the prescribed velocities
    /// of those still fixed. A coupled step calls it before it forces the fluid with the spheres' motion;
    /// calling it again within the step changes nothing.
    pub fn begin_step(&mut self) {
        if self.halo.is_some() {
            self.redistribute_if_needed();
        }
        self.apply_releases();
        self.apply_prescribed();
    }

    /// Rebuilds the pair lists (keeping the memory of the pairs that persist) as after a change of the
    /// interaction range, e.g. lubrication switched on after a dry settling: pairs now within reach
    /// that the lists, built for the shorter range, left out are taken from the next evaluation on. On
    /// a split system the spheres are distributed anew (a collective).
    pub fn rebuild_pair_lists(&mut self) {
        if self.halo.is_some() {
            self.redistribute();
        } else {
            self.neighbors.invalidate();
        }
    }

    /// The global index of held sphere `k` (itself when the system is whole).
    #[inline]
    pub fn global_index(&self, k: usize) -> usize {
        self.halo.as_ref().map_or(k, |h| h.ids[k] as usize)
    }

    /// Frees the spheres of every release that is due at the start of this step (see [`Release`]). Their
    /// `fixed` flags are part of the particles, so a checkpoint keeps what was released.
    fn apply_releases(&mut self) {
        let start = self.time();
        for release in &self.releases {
            if start >= release.time - 0.5 * self.dt {
                for i in held(&self.halo, &release.particles) {
                    if self.particles.fixed[i] {
                        self.particles.fixed[i] = false;
                        // The pairs' effective masses change with it.
                        self.scratch.loads.forget_pair_constants();
                    }
                }
            }
        }
    }

    /// Sets the velocity of the still fixed spheres of each prescribed motion to its value at the middle
    /// of this step (see [`PrescribedVelocity`]).
    fn apply_prescribed(&mut self) {
        let middle = self.time() + 0.5 * self.dt;
        for motion in &self.prescribed {
            let velocity = Vec3::from_array(motion.velocity.each_ref().map(|s| s.at(middle)));
            for i in held(&self.halo, &motion.particles) {
                if self.particles.fixed[i] {
                    self.particles.velocity[i] = velocity;
                }
            }
        }
    }

    /// One sub-step of length h in RK stage `stage`: the predictor–corrector of seed eq. (19).
    fn predictor_corrector_substep(&mut self, stage: usize, h: f64, external: &Loads) {
        // Loads at the actual state (x^{k-1}, u^{k-1}); contacts start and end here.
        let mut current = std::mem::take(&mut self.scratch.current);
        self.evaluate(
            false,
            Update {
                track_contacts: true,
                spring_increment: None,
                substep: h,
            },
            &mut current,
            external,
            &NoHooks,
        );

        // Predictor, eq. (19a-b).
        let n = self.particles.len();
        let previous = &self.scratch.previous;
        let p = &self.particles;
        let mut x_pred = std::mem::take(&mut self.scratch.position);
        let mut u_pred = std::mem::take(&mut self.scratch.velocity);
        let mut w_pred = std::mem::take(&mut self.scratch.angular_velocity);
        x_pred.resize(n, Vec3::ZERO);
        u_pred.resize(n, Vec3::ZERO);
        w_pred.resize(n, Vec3::ZERO);
        // Stage 1 has zeta_1 = 0: the previous loads enter only from stage 2 on, within the same step.
        let has_previous = stage > 0 && previous.force.len() == n;
        for_each_particle(
            &mut x_pred,
            &mut u_pred,
            &mut w_pred,
            |i, x_pred, u_pred, w_pred| {
                if p.fixed[i] {
                    *u_pred = p.velocity[i];
                    *w_pred = p.angular_velocity[i];
                } else {
                    let (prev_a, prev_alpha) = if has_previous {
                        (
                            previous.force[i] / p.mass[i],
                            previous.torque[i] / p.inertia[i],
                        )
                    } else {
                        (Vec3::ZERO, Vec3::ZERO)
                    };
                    *u_pred = predict_velocity(
                        p.velocity[i],
                        current.force[i] / p.mass[i],
                        prev_a,
                        h,
                        stage,
                    );
                    *w_pred = predict_velocity(
                        p.angular_velocity[i],
                        current.torque[i] / p.inertia[i],
                        prev_alpha,
                        h,
                        stage,
                    );
                }
                *x_pred = trapezoid(p.position[i], *u_pred, p.velocity[i], h);
            },
        );

        // Loads at the predicted state; the tangential springs advance here (Appendix C).
        self.scratch.position = x_pred;
        self.scratch.velocity = u_pred;
        self.scratch.angular_velocity = w_pred;
        let mut predicted = std::mem::take(&mut self.scratch.predicted);
        self.evaluate(
            true,
            Update {
                track_contacts: false,
                spring_increment: Some(h),
                substep: h,
            },
            &mut predicted,
            external,
            &NoHooks,
        );

        // Corrector, eq. (19c-d).
        let p = &mut self.particles;
        let (mass, inertia, fixed) = (&p.mass, &p.inertia, &p.fixed);
        for_each_particle(
            &mut p.position,
            &mut p.velocity,
            &mut p.angular_velocity,
            |i, x, u, w| {
                if fixed[i] {
                    *x += h * *u;
                    return;
                }
                let u_new = correct_velocity(
                    *u,
                    predicted.force[i] / mass[i],
                    current.force[i] / mass[i],
                    h,
                );
                let w_new = correct_velocity(
                    *w,
                    predicted.torque[i] / inertia[i],
                    current.torque[i] / inertia[i],
                    h,
                );
                *x = trapezoid(*x, u_new, *u, h);
                *u = u_new;
                *w = w_new;
            },
        );

        // This sub-step's loads become the previous ones of the next; reuse the old buffer.
        self.scratch.current = std::mem::replace(&mut self.scratch.previous, current);
        self.scratch.predicted = predicted;
    }

    /// Forward Euler velocity and Crank–Nicolson position over a sub-step of length h (seed eq. 18).
    fn euler_crank_nicolson_substep(&mut self, h: f64, external: &Loads) {
        let mut loads = std::mem::take(&mut self.scratch.current);
        self.evaluate(
            false,
            Update {
                track_contacts: true,
                spring_increment: Some(h),
                substep: h,
            },
            &mut loads,
            external,
            &NoHooks,
        );
        let p = &mut self.particles;
        let (mass, inertia, fixed) = (&p.mass, &p.inertia, &p.fixed);
        for_each_particle(
            &mut p.position,
            &mut p.velocity,
            &mut p.angular_velocity,
            |i, x, u, w| {
                if fixed[i] {
                    *x += h * *u;
                    return;
                }
                let u_new = *u + h * loads.force[i] / mass[i];
                *w += h * loads.torque[i] / inertia[i];
                *x = trapezoid(*x, u_new, *u, h);
                *u = u_new;
            },
        );
        self.scratch.current = loads;
    }

    /// Velocity Verlet as LAMMPS `fix nve/sphere`: half kick, drift, new loads, half kick. The updates run
    /// within the per-particle passes of the evaluation ([`VerletHalfSteps`]); both half kicks see the
    /// `external` loads.
    fn velocity_verlet_step(&mut self, external: &Loads) -> Result<(), StepError> {
        let previous = match self.carried_loads.take() {
            Some(loads) => loads,
            None => {
                let mut loads = Loads::default();
                self.evaluate(
                    false,
                    Update {
                        track_contacts: true,
                        spring_increment: None,
                        substep: self.dt,
                    },
                    &mut loads,
                    external,
                    &NoHooks,
                );
                loads
            }
        };
        // The new loads go to a second buffer, since the first half kick reads the previous ones.
        let mut loads = std::mem::take(&mut self.scratch.current);
        let (dt, time) = (self.dt, (self.step_count + 1) as f64 * self.dt);
        let problem = self.evaluate(
            false,
            Update {
                track_contacts: true,
                spring_increment: Some(dt),
                substep: dt,
            },
            &mut loads,
            external,
            &VerletHalfSteps {
                dt,
                time,
                previous: &previous,
            },
        );
        self.step_count += 1;
        self.carried_loads = Some(loads);
        self.scratch.current = previous;
        match problem {
            Some(error) => Err(error),
            None => Ok(()),
        }
    }

    /// Loads at the actual particle state, or at the predicted one held in the scratch arrays, with the
    /// per-particle work of `hooks`; returns the first problem they report.
    fn evaluate<H: ParticleHooks>(
        &mut self,
        predicted: bool,
        update: Update,
        loads: &mut Loads,
        external: &Loads,
        hooks: &H,
    ) -> Option<H::Problem> {
        // Move the evaluated arrays out of `self` so that the rest of it can be borrowed alongside.
        let (mut position, mut velocity, mut angular_velocity) = if predicted {
            let s = &mut self.scratch;
            (
                std::mem::take(&mut s.position),
                std::mem::take(&mut s.velocity),
                std::mem::take(&mut s.angular_velocity),
            )
        } else {
            let p = &mut self.particles;
            (
                std::mem::take(&mut p.position),
                std::mem::take(&mut p.velocity),
                std::mem::take(&mut p.angular_velocity),
            )
        };
        let ctx = ForceContext {
            model: &self.model,
            domain: &self.domain,
            walls: &self.walls,
            gravity: self.gravity,
            particles: &self.particles,
            densities: &self.densities,
            external,
            halo: self.halo.as_ref(),
        };
        let problem = compute_loads(
            &ctx,
            Kinematics {
                position: &mut position,
                velocity: &mut velocity,
                angular_velocity: &mut angular_velocity,
            },
            &mut self.neighbors,
            &mut self.wall_states,
            update,
            &mut self.scratch.loads,
            loads,
            hooks,
        );
        self.evaluations += 1;
        let (x, u, w) = if predicted {
            let s = &mut self.scratch;
            (&mut s.position, &mut s.velocity, &mut s.angular_velocity)
        } else {
            let p = &mut self.particles;
            (&mut p.position, &mut p.velocity, &mut p.angular_velocity)
        };
        *x = position;
        *u = velocity;
        *w = angular_velocity;
        problem
    }
    /// Holds sphere `i` (`fixed`: it moves at its velocity, whatever acts on it) or frees it, from
    /// the next evaluation on; the pairs' effective masses change with it.
    pub fn set_fixed(&mut self, i: usize, fixed: bool) {
        if self.particles.fixed[i] != fixed {
            self.particles.fixed[i] = fixed;
            self.scratch.loads.forget_pair_constants();
        }
    }

    /// The loads on every sphere at the current state: contacts, lubrication and gravity (seed eq.
    /// 7-8) plus `external`, as the next step's first evaluation sees them (contacts starting now
    /// recorded, tangential springs as they stand), evaluated on a copy: the system is unchanged.
    pub fn loads_now(&self, external: &Loads) -> Loads {
        let mut copy = self.clone();
        let mut loads = Loads::zeros(copy.particles.len());
        let update = Update {
            track_contacts: true,
            spring_increment: None,
            substep: copy.dt,
        };
        copy.evaluate(false, update, &mut loads, external, &NoHooks);
        loads
    }

    /// The contact and lubrication loads of spheres `i` and `j` on each other at the current state
    /// with the pair's memory `state` (the kernel of every step for one pair, see
    /// [`ForceContext::pair_contact`]); `update` says what the evaluation may change in `state`.
    pub fn pair_contact(
        &self,
        (i, j): (usize, usize),
        state: &mut ContactState,
        update: Update,
    ) -> Option<ContactForce> {
        let p = &self.particles;
        let external = Loads::default();
        let ctx = ForceContext {
            model: &self.model,
            domain: &self.domain,
            walls: &self.walls,
            gravity: self.gravity,
            particles: p,
            densities: &self.densities,
            external: &external,
            halo: self.halo.as_ref(),
        };
        ctx.pair_contact(
            (i, j),
            (&p.position, &p.velocity, &p.angular_velocity),
            state,
            update,
        )
    }

    /// For each particle, the largest Stokes number St = rho_p D_p u_in / (9 rho_f nu_f) (seed eq. 23) of
    /// its contacts touching now (spheres and walls), from their recorded impact speeds u_in; 0 when it
    /// touches nothing. The enduring-contact rule (seed eq. 22) compares it with St_crit.
    pub fn contact_stokes_numbers(&self, fluid_density: f64, kinematic_viscosity: f64) -> Vec<f64> {
        let p = &self.particles;
        self.largest_over_contacts(|i, state| {
            let density = self.densities[p.material[i]];
            density * 2.0 * p.radius[i] * state.impact_speed.abs()
                / (9.0 * fluid_density * kinematic_viscosity)
        })
    }

    /// For each particle, whether it touches a wall or another sphere now.
    pub fn touching(&self) -> Vec<bool> {
        self.largest_over_contacts(|_, _| 1.0)
            .into_iter()
            .map(|v| v > 0.0)
            .collect()
    }

    /// For each particle, the largest `value(particle, contact)` over its contacts touching now (spheres
    /// and walls); 0 when it touches nothing.
    fn largest_over_contacts(&self, value: impl Fn(usize, &ContactState) -> f64) -> Vec<f64> {
        let n = self.particles.len();
        let mut largest = vec![0.0f64; n];
        let list = &self.neighbors;
        for (pair, state) in list.state.iter().enumerate() {
            if state.touching {
                for i in [list.first[pair] as usize, list.second[pair] as usize] {
                    largest[i] = largest[i].max(value(i, state));
                }
            }
        }
        let slots = self.walls.len().max(1);
        for (i, states) in self.wall_states.chunks(slots).enumerate().take(n) {
            for state in states.iter().take(self.walls.len()) {
                if state.touching {
                    largest[i] = largest[i].max(value(i, state));
                }
            }
        }
        largest
    }

    /// State needed to continue this run bit for bit (on a split system: this rank's piece).
    pub fn checkpoint(&self) -> DemCheckpoint {
        if self.halo.is_some() {
            return self.checkpoint_piece();
        }
        let list = &self.neighbors;
        let pair_states = (0..list.pair_count())
            .filter(|&p| !list.state[p].is_empty())
            .map(|p| (list.first[p], list.second[p], list.state[p]))
            .collect();
        DemCheckpoint {
            step_count: self.step_count,
            particles: self.particles.clone(),
            pair_states,
            wall_states: self.wall_states.clone(),
            carried_loads: self.carried_loads.clone(),
            ids: Vec::new(),
        }
    }

    /// Continues from a checkpoint written by [`DemSystem::checkpoint`] for the same scene.
    pub fn restore(&mut self, checkpoint: DemCheckpoint) -> Result<(), String> {
        if self.halo.is_some() {
            return self.restore_split(checkpoint);
        }
        if !checkpoint.ids.is_empty() {
            return Err(format!(
                "the checkpoint is one rank's piece ({} spheres) of a distributed run; resume it on \
                 the ranks that wrote it, or from all their pieces",
                checkpoint.particles.len()
            ));
        }
        if checkpoint.particles.len() != self.particles.len() {
            return Err(format!(
                "the checkpoint holds {} particles but the scene defines {}",
                checkpoint.particles.len(),
                self.particles.len()
            ));
        }
        if checkpoint.wall_states.len() != self.wall_states.len() {
            return Err(
                "the checkpoint was written for a scene with a different number of walls".into(),
            );
        }
        self.step_count = checkpoint.step_count;
        self.particles = checkpoint.particles;
        self.wall_states = checkpoint.wall_states;
        self.carried_loads = checkpoint.carried_loads;
        let range = self.model.interaction_range();
        self.neighbors.rebuild(
            &self.domain,
            &self.particles.position,
            &self.particles.radius,
            range,
        );
        for &(i, j, _) in &checkpoint.pair_states {
            if self.neighbors.find(i as usize, j as usize).is_none() {
                return Err(format!(
                    "the checkpoint has contact memory for pair ({i}, {j}), which is out of reach"
                ));
            }
        }
        self.neighbors.restore_states(&checkpoint.pair_states);
        Ok(())
    }
}

/// The local indices of the spheres of global index range `members` held by this rank (all of them
/// when the system is whole), ascending.
fn held(halo: &Option<Halo>, members: &std::ops::Range<usize>) -> Vec<usize> {
    match halo {
        None => members.clone().collect(),
        Some(h) => {
            let from = h.ids.partition_point(|&id| (id as usize) < members.start);
            let to = h.ids.partition_point(|&id| (id as usize) < members.end);
            (from..to).collect()
        }
    }
}

/// Particles handed to a thread at a time in the per-particle loops below.
const PARTICLES_PER_TASK: usize = 512;

/// The velocity-Verlet updates of one step around its evaluation of the loads: the first half kick (with
/// the `previous` loads) and the drift before the particles are gathered, the second half kick, the folding
/// into the box and the checks once their loads are summed.
struct VerletHalfSteps<'a> {
    dt: f64,
    /// Time at the end of the step, for the error reports.
    time: f64,
    previous: &'a Loads,
}

impl ParticleHooks for VerletHalfSteps<'_> {
    type Problem = StepError;

    #[inline]
    fn before_loads(&self, ctx: &ForceContext, i: usize, x: &mut Vec3, u: &mut Vec3, w: &mut Vec3) {
        let (dt, p) = (self.dt, ctx.particles);
        if !p.fixed[i] {
            *u += 0.5 * dt * self.previous.force[i] / p.mass[i];
            *w += 0.5 * dt * self.previous.torque[i] / p.inertia[i];
        }
        *x += dt * *u;
    }

    #[inline]
    fn after_loads(
        &self,
        ctx: &ForceContext,
        i: usize,
        force: Vec3,
        torque: Vec3,
        x: &mut Vec3,
        u: &mut Vec3,
        w: &mut Vec3,
    ) -> Option<StepError> {
        let (dt, p) = (self.dt, ctx.particles);
        if !p.fixed[i] {
            *u += 0.5 * dt * force / p.mass[i];
            *w += 0.5 * dt * torque / p.inertia[i];
        }
        let problem = check_and_wrap(ctx.domain, self.time, i, x, *u, *w);
        // A ghost's own state is refreshed before it is read: only its owner checks it.
        problem.filter(|_| ctx.halo.is_none_or(|h| h.owned[i]))
    }
}

/// Folds position `x` of particle i into the box unless a value is not finite; reports a non-finite value
/// or an escape.
#[inline(always)]
fn check_and_wrap(
    domain: &Domain,
    time: f64,
    i: usize,
    x: &mut Vec3,
    u: Vec3,
    w: Vec3,
) -> Option<StepError> {
    // One test of all nine values (v * 0 is 0 exactly when v is finite) before the one naming the quantity.
    if *x * 0.0 + u * 0.0 + w * 0.0 != Vec3::ZERO {
        return Some(non_finite(time, i, *x, u, w));
    }
    *x = domain.wrap(*x);
    if domain.contains(*x) {
        None
    } else {
        Some(StepError::LeftDomain {
            particle: i,
            time,
            position: *x,
        })
    }
}

/// The first of position `x`, velocity `u` and angular velocity `w` of particle i that is not finite.
#[cold]
fn non_finite(time: f64, i: usize, x: Vec3, u: Vec3, w: Vec3) -> StepError {
    let quantity = [(x, "position"), (u, "velocity"), (w, "angular velocity")]
        .into_iter()
        .find(|(value, _)| !silt_core::is_finite3(*value))
        .map_or("state", |(_, quantity)| quantity);
    debug_assert_ne!(quantity, "state", "called for finite values");
    StepError::NonFinite {
        particle: i,
        time,
        quantity,
    }
}

/// Folds the positions into the periodic box and stops on non-finite values or escaped particles (at
/// `time`).
///
/// One parallel pass folds and checks every particle and finds the first particle in trouble (the one
/// reported), in chunks whose outcome does not depend on the thread count.
fn wrap_and_check(
    domain: &Domain,
    time: f64,
    x: &mut [Vec3],
    u: &[Vec3],
    w: &[Vec3],
    owned: Option<&[bool]>,
) -> Result<(), StepError> {
    let problems = x
        .par_chunks_mut(PARTICLES_PER_TASK)
        .zip(u.par_chunks(PARTICLES_PER_TASK))
        .zip(w.par_chunks(PARTICLES_PER_TASK))
        .enumerate()
        .map(|(chunk, ((x, u), w))| {
            let mut first_problem = None;
            let particles = chunk * PARTICLES_PER_TASK..;
            for (i, ((x, u), w)) in particles.zip(x.iter_mut().zip(u).zip(w)) {
                let problem = check_and_wrap(domain, time, i, x, *u, *w);
                // A ghost's own state is refreshed before it is read: only its owner checks it.
                if owned.is_none_or(|owned| owned[i]) {
                    first_problem = first_problem.or(problem);
                }
            }
            first_problem
        });
    match problems.reduce_with(Option::or).flatten() {
        Some(error) => Err(error),
        None => Ok(()),
    }
}

/// Calls `update(i, x_i, u_i, w_i)` for every particle i, in parallel chunks of plain loops. Each call only
/// touches particle i, so the result does not depend on the thread count.
fn for_each_particle(
    x: &mut [Vec3],
    u: &mut [Vec3],
    w: &mut [Vec3],
    update: impl Fn(usize, &mut Vec3, &mut Vec3, &mut Vec3) + Sync,
) {
    x.par_chunks_mut(PARTICLES_PER_TASK)
        .zip(u.par_chunks_mut(PARTICLES_PER_TASK))
        .zip(w.par_chunks_mut(PARTICLES_PER_TASK))
        .enumerate()
        .for_each(|(chunk, ((x, u), w))| {
            let particles = chunk * PARTICLES_PER_TASK..;
            for (i, ((x, u), w)) in particles.zip(x.iter_mut().zip(u).zip(w)) {
                update(i, x, u, w);
            }
        });
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::contact::{EnduringContact, NormalLaw, TangentialLaw};

    /// One material of `density` (e_dry 0.9, mu_s 0.5, mu_k 0.4).
    fn test_materials(density: f64) -> Vec<Material> {
        vec![Material {
            name: "m".into(),
            density,
            e_dry: 0.9,
            poisson: 0.2,
            mu_s: 0.5,
            mu_k: 0.4,
        }]
    }

    /// `normal` with the seed's spring with history, dry, overlap bound 1e-3.
    fn test_model(
        materials: &[Material],
        normal: NormalLaw,
        collision_time: f64,
        min_speed: f64,
    ) -> ContactModel {
        ContactModel::new(
            normal,
            TangentialLaw::SpringHistory,
            materials,
            collision_time,
            EnduringContact::MinimumSpeed(min_speed),
            1e-3,
            0.0,
            None,
        )
    }

    #[test]
    fn non_finite_state_is_reported_with_particle_and_time() {
        let materials = test_materials(1.0);
        let model = test_model(&materials, NormalLaw::Linear, 0.01, 0.01);
        let mut particles = Particles::default();
        particles.push(Vec3::splat(2.0), Vec3::ZERO, 0.5, 1.0, 0, false);
        particles.push(Vec3::splat(5.0), Vec3::ZERO, 0.5, 1.0, 0, false);
        particles.velocity[1] = Vec3::new(f64::NAN, 0.0, 0.0);
        let domain = Domain {
            min: Vec3::ZERO,
            max: Vec3::splat(8.0),
            periodic: [false; 3],
        };
        let mut system = DemSystem::new(
            domain,
            Vec3::ZERO,
            materials,
            model,
            particles,
            vec![],
            Integrator::SEED,
            1e-3,
            0.1,
        );
        let err = system.step().unwrap_err();
        assert!(
            matches!(
                err,
                StepError::NonFinite {
                    particle: 1,
                    quantity: "position",
                    ..
                }
            ),
            "{err:?}"
        );
        assert!(err.to_string().contains("particle 1"));
    }

    /// External loads held over the stages (the fluid's, in coupled runs) move a free sphere as a constant
    /// force should: the sub-stepped predictor–corrector is exact for constant accelerations, and the
    /// stages taken one by one are the step.
    #[test]
    fn external_loads_act_over_the_stages() {
        let materials = test_materials(2.0);
        let model = test_model(&materials, NormalLaw::Linear, 0.01, 0.01);
        let mut particles = Particles::default();
        particles.push(Vec3::splat(4.0), Vec3::ZERO, 0.5, 2.0, 0, false);
        let domain = Domain {
            min: Vec3::ZERO,
            max: Vec3::splat(8.0),
            periodic: [false; 3],
        };
        let dt = 1e-2;
        let mut system = DemSystem::new(
            domain,
            Vec3::ZERO,
            materials,
            model,
            particles,
            vec![],
            Integrator::SEED,
            dt,
            0.1,
        );
        let (mass, inertia) = (system.particles.mass[0], system.particles.inertia[0]);
        let (force, torque) = (Vec3::new(0.3, -0.2, 0.1), Vec3::new(0.0, 0.05, 0.0));
        let external = Loads {
            force: vec![force],
            torque: vec![torque],
        };
        let mut staged = system.clone();
        let mut verlet = system.clone();
        verlet.integrator = Integrator::VelocityVerlet;
        for _ in 0..10 {
            system.step_with_loads(&external).unwrap();
            verlet.step_with_loads(&external).unwrap();
            for stage in 0..3 {
                staged.step_stage(stage, &external).unwrap();
            }
        }
        assert_eq!(
            verlet.step_stage(0, &external),
            Err(StepError::NoStages),
            "Verlet has no stages"
        );
        // Velocity Verlet is exact for a constant force too: both half kicks carry it (issue 20: the
        // second half kick once missed the external load, giving half the impulse).
        let v = &verlet.particles;
        let t = 10.0 * dt;
        assert!(
            (v.velocity[0] - force / mass * t).length() < 1e-15,
            "{} vs {}",
            v.velocity[0],
            force / mass * t
        );
        assert!((v.angular_velocity[0] - torque / inertia * t).length() < 1e-15);
        let expected = Vec3::splat(4.0) + 0.5 * force / mass * t * t;
        assert!((v.position[0] - expected).length() < 1e-14);
        assert_eq!(system.particles, staged.particles);
        assert_eq!(system.step_count, 10);
        let t = 10.0 * dt;
        let p = &system.particles;
        assert!((p.velocity[0] - force / mass * t).length() < 1e-14);
        assert!((p.angular_velocity[0] - torque / inertia * t).length() < 1e-14);
        let expected = Vec3::splat(4.0) + 0.5 * force / mass * t * t;
        assert!(
            (p.position[0] - expected).length() < 1e-13,
            "{}",
            p.position[0]
        );
    }

    /// A released sphere's pairs take its own mass from the release on: the step after the release equals,
    /// bit for bit, that of a system built with both spheres free (the lubrication, limited by the pair's
    /// effective mass, acts between them).
    #[test]
    fn a_released_sphere_pairs_with_its_own_mass() {
        let materials = test_materials(1.0);
        let lubrication = crate::contact::lubrication::Lubrication {
            fluid_density: 1.0,
            kinematic_viscosity: 1.0,
            range: 0.5,
            roughness_ratio: 3e-3,
        };
        let model = ContactModel::new(
            NormalLaw::Linear,
            TangentialLaw::SpringHistory,
            &materials,
            0.1,
            EnduringContact::MinimumSpeed(0.01),
            1e-3,
            0.0,
            Some(lubrication),
        );
        let domain = Domain {
            min: Vec3::ZERO,
            max: Vec3::splat(8.0),
            periodic: [false; 3],
        };
        let system = |fixed: bool, upper: Vec3, velocity: Vec3| {
            let mut particles = Particles::default();
            particles.push(Vec3::new(4.0, 4.0, 2.0), Vec3::ZERO, 0.5, 1.0, 0, fixed);
            particles.push(upper, velocity, 0.5, 1.0, 0, false);
            DemSystem::new(
                domain.clone(),
                Vec3::ZERO,
                materials.clone(),
                model.clone(),
                particles,
                vec![],
                Integrator::SEED,
                0.01,
                0.1,
            )
        };
        let mut released = system(true, Vec3::new(4.0, 4.0, 3.2), Vec3::new(0.0, 0.0, -0.5));
        released.releases = vec![Release {
            time: 0.05,
            particles: 0..1,
        }];
        for _ in 0..5 {
            released.step().unwrap();
        }
        let p = &released.particles;
        assert!(
            p.fixed[0] && p.position[1].z - 3.0 < 0.2,
            "{:?}",
            p.position[1]
        );
        let mut free = system(false, p.position[1], p.velocity[1]);
        released.step().unwrap();
        free.step().unwrap();
        assert!(!released.particles.fixed[0]);
        for i in 0..2 {
            assert_eq!(
                released.particles.velocity[i], free.particles.velocity[i],
                "{i}"
            );
            assert_eq!(
                released.particles.position[i], free.particles.position[i],
                "{i}"
            );
        }
    }

    /// A fixed sphere with a velocity moves at it, ignoring gravity, until its release; from the first step
    /// at or after the release time it falls freely from where it was, with the velocity it had.
    #[test]
    fn released_spheres_keep_their_prescribed_velocity_until_the_release_time() {
        let materials = test_materials(2.0);
        let model = test_model(&materials, NormalLaw::Linear, 0.01, 0.01);
        let mut particles = Particles::default();
        let (start, velocity) = (Vec3::new(4.0, 4.0, 6.0), Vec3::new(0.0, 0.1, -0.2));
        particles.push(start, velocity, 0.5, 2.0, 0, true);
        particles.push(Vec3::new(1.0, 1.0, 1.0), Vec3::ZERO, 0.5, 2.0, 0, true);
        let domain = Domain {
            min: Vec3::ZERO,
            max: Vec3::splat(8.0),
            periodic: [false; 3],
        };
        let (dt, gravity) = (1e-2, Vec3::new(0.0, 0.0, -1.0));
        let mut system = DemSystem::new(
            domain,
            gravity,
            materials,
            model,
            particles,
            vec![],
            Integrator::SEED,
            dt,
            0.1,
        );
        system.releases = vec![Release {
            time: 0.2,
            particles: 0..1,
        }];
        for _ in 0..20 {
            system.step().unwrap();
        }
        let p = &system.particles;
        assert!(p.fixed[0], "released too early");
        let released_at = start + 0.2 * velocity;
        assert!(
            (p.position[0] - released_at).length() < 1e-12,
            "{} vs {released_at}",
            p.position[0]
        );
        assert_eq!(p.velocity[0], velocity);
        for _ in 0..10 {
            system.step().unwrap();
        }
        let p = &system.particles;
        assert!(
            !p.fixed[0] && p.fixed[1],
            "only the first sphere is released"
        );
        let t = 10.0 * dt;
        assert!((p.velocity[0] - (velocity + gravity * t)).length() < 1e-12);
        let expected = released_at + velocity * t + 0.5 * gravity * t * t;
        assert!((p.position[0] - expected).length() < 1e-12);
        assert_eq!(p.position[1], Vec3::ONE);
    }

    /// The Stokes number of a contact is rho_p D u_in / (9 rho_f nu) from its recorded impact speed, for
    /// wall and sphere contacts, and 0 for particles touching nothing.
    #[test]
    fn contact_stokes_numbers_follow_the_impact_speed() {
        let materials = test_materials(3.0);
        let dt = 1e-3;
        let model = test_model(&materials, NormalLaw::Actm, 10.0 * dt, 0.0);
        let mut particles = Particles::default();
        // 0 hits the floor, 1 and 2 collide head on, each at speed 1; 3 is alone.
        particles.push(
            Vec3::new(2.0, 2.0, 0.52),
            Vec3::new(0.0, 0.0, -1.0),
            0.5,
            3.0,
            0,
            false,
        );
        particles.push(
            Vec3::new(4.0, 2.0, 3.0),
            Vec3::new(0.5, 0.0, 0.0),
            0.5,
            3.0,
            0,
            false,
        );
        particles.push(
            Vec3::new(5.02, 2.0, 3.0),
            Vec3::new(-0.5, 0.0, 0.0),
            0.5,
            3.0,
            0,
            false,
        );
        particles.push(Vec3::new(7.0, 7.0, 7.0), Vec3::ZERO, 0.5, 3.0, 0, false);
        let floor = Wall {
            point: Vec3::ZERO,
            normal: Vec3::Z,
            material: 0,
            velocity: Vec3::ZERO,
        };
        let domain = Domain {
            min: Vec3::ZERO,
            max: Vec3::splat(8.0),
            periodic: [false; 3],
        };
        let mut system = DemSystem::new(
            domain,
            Vec3::ZERO,
            materials,
            model,
            particles,
            vec![floor],
            Integrator::SEED,
            dt,
            0.1,
        );
        // Both contacts begin at t = 0.02 and last T_c = 0.01.
        for _ in 0..25 {
            system.step().unwrap();
        }
        let (rho_f, nu) = (1.0, 0.1);
        let st = system.contact_stokes_numbers(rho_f, nu);
        let expected = |u: f64| 3.0 * 1.0 * u / (9.0 * rho_f * nu);
        // Impacts at about 1 (floor) and 1 (relative speed of the pair): u_in is recorded at the first
        // sub-step that finds the surfaces touching, when the contact has acted for part of it.
        assert!((st[0] / expected(1.0) - 1.0).abs() < 1e-2, "{st:?}");
        assert!((st[1] / expected(1.0) - 1.0).abs() < 1e-2, "{st:?}");
        assert_eq!(st[1], st[2]);
        assert_eq!(st[3], 0.0);
        assert_eq!(system.touching(), [true, true, true, false]);
    }

    /// Two overlapping spheres of [`verlet_line`] alone: no walls, no gravity.
    fn touching_pair() -> DemSystem {
        let mut system = verlet_line(2, -0.02);
        system.walls.clear();
        system.wall_states = vec![ContactState::default(); 2];
        system.gravity = Vec3::ZERO;
        system
    }

    /// A pass of the contact kernel that records contacts and leaves the springs as they stand.
    fn tracking(system: &DemSystem) -> Update {
        Update {
            track_contacts: true,
            spring_increment: None,
            substep: system.dt,
        }
    }

    /// The loads of the current state come from the step's kernel without changing the system, and
    /// one pair's contact (`pair_contact`) is what the pair loop gives two touching spheres.
    #[test]
    fn loads_now_and_one_pair_match_the_pair_loop() {
        let mut system = touching_pair();
        system.particles.angular_velocity[1] = Vec3::new(0.0, 0.3, -0.2);
        let before = system.checkpoint();
        let loads = system.loads_now(&Loads::zeros(2));
        assert_eq!(system.checkpoint(), before, "loads_now changed the system");
        let update = tracking(&system);
        let mut state = ContactState::default();
        let pair = system
            .pair_contact((0, 1), &mut state, update)
            .expect("the spheres overlap");
        assert!(pair.touching && state.touching, "{pair:?} {state:?}");
        assert!(pair.force_on_p.x < 0.0, "repulsion: {:?}", pair.force_on_p);
        assert_eq!(loads.force[0], pair.force_on_p);
        assert_eq!(loads.force[1], -pair.force_on_p);
        assert_eq!(loads.torque[0], pair.torque_on_p());
        assert_eq!(loads.torque[1], pair.torque_on_q());
    }

    /// Holding a sphere between steps changes its pairs' effective mass at the next evaluation (the
    /// near pairs' cached constants are recomputed), as a fresh evaluation of the pair gives it.
    #[test]
    fn holding_a_sphere_changes_its_pairs_effective_mass_at_once() {
        let mut system = touching_pair();
        system.step().unwrap();
        let free = system.loads_now(&Loads::zeros(2));
        system.set_fixed(1, true);
        let held = system.loads_now(&Loads::zeros(2));
        let mut state = system
            .checkpoint()
            .pair_states
            .first()
            .map(|p| p.2)
            .unwrap_or_default();
        let update = tracking(&system);
        let pair = system.pair_contact((0, 1), &mut state, update).unwrap();
        assert_ne!(held.force[0], free.force[0]);
        assert_eq!(held.force[0], pair.force_on_p);
    }

    /// A small velocity-Verlet system: `count` spheres of radius 0.5 on a line along x, with gaps `gap`
    /// between them and half of that to the floor, in a box periodic along x and y.
    fn verlet_line(count: usize, gap: f64) -> DemSystem {
        let materials = vec![Material {
            name: "m".into(),
            density: 1.0,
            e_dry: 0.9,
            poisson: 0.2,
            mu_s: 0.5,
            mu_k: 0.5,
        }];
        let hertz = crate::contact::hertz::HertzCoefficients {
            k_n: 2.0e5,
            k_t: 2.0e5 * 2.0 / 7.0,
            gamma_n: 50.0,
            gamma_t: 25.0,
        };
        let model = ContactModel::new(
            NormalLaw::Hertz(hertz),
            TangentialLaw::ShearHistory,
            &materials,
            0.01,
            EnduringContact::MinimumSpeed(0.01),
            1e-3,
            10.0,
            None,
        );
        let mut particles = Particles::default();
        for k in 0..count {
            let x = Vec3::new(1.0 + k as f64 * (1.0 + gap), 2.0, 0.5 + 0.5 * gap);
            particles.push(x, Vec3::new(0.1, -0.05 * k as f64, 0.0), 0.5, 1.0, 0, false);
        }
        let domain = Domain {
            min: Vec3::ZERO,
            max: Vec3::new(count as f64 * 2.0, 4.0, 4.0),
            periodic: [true, true, false],
        };
        let floor = Wall {
            point: Vec3::ZERO,
            normal: Vec3::Z,
            material: 0,
            velocity: Vec3::ZERO,
        };
        DemSystem::new(
            domain,
            Vec3::new(0.0, 0.0, -10.0),
            materials,
            model,
            particles,
            vec![floor],
            Integrator::VelocityVerlet,
            2e-4,
            0.2,
        )
    }

    #[test]
    fn velocity_verlet_reports_the_first_particle_in_trouble() {
        let mut system = verlet_line(6, 1.0);
        system.step().unwrap();
        system.particles.angular_velocity[4] = Vec3::new(0.0, f64::INFINITY, 0.0);
        system.particles.velocity[2] = Vec3::new(0.0, f64::NAN, 0.0);
        let err = system.step().unwrap_err();
        assert!(
            matches!(
                err,
                StepError::NonFinite {
                    particle: 2,
                    quantity: "position",
                    ..
                }
            ),
            "{err:?}"
        );
        assert_eq!(system.step_count, 2);

        let mut system = verlet_line(6, 1.0);
        system.particles.velocity[3].z = 1e5;
        system.particles.velocity[5].z = 1e5;
        let err = system.step().unwrap_err();
        assert!(
            matches!(err, StepError::LeftDomain { particle: 3, .. }),
            "{err:?}"
        );
    }

    #[test]
    fn velocity_verlet_restarts_and_changes_of_time_step_continue_bit_for_bit() {
        // Overlapping spheres on the floor: contacts, friction and rolling from the first step.
        let steps = |system: &mut DemSystem, count: usize| {
            for _ in 0..count {
                system.step().unwrap();
            }
        };
        let mut run = verlet_line(8, -0.02);
        steps(&mut run, 50);
        let at_50 = run.checkpoint();
        steps(&mut run, 30);
        let at_80 = run.checkpoint();
        run.dt = 1e-4;
        steps(&mut run, 30);

        // Restored over a system that has run (and carries half kicks of its own).
        let mut other = verlet_line(8, -0.02);
        steps(&mut other, 10);
        other.restore(at_50).unwrap();
        steps(&mut other, 30);
        assert_eq!(other.checkpoint(), at_80);

        // The new time step at once after a restart.
        let mut again = verlet_line(8, -0.02);
        again.restore(at_80).unwrap();
        again.dt = 1e-4;
        steps(&mut again, 30);
        assert_eq!(again.checkpoint(), run.checkpoint());
    }
}
