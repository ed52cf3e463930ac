//! Supports at the rod's ends, optionally in prescribed motion:
//!
//! - **free**: nothing held;
//! - **hinged**: the end node is held, the cross-section turns freely;
//! - **clamped**: the end node is held and the cross-section at it keeps a frame, which the end
//!   segment bends against through a half-length boundary node ([`crate::rod::Clamp`]).
//!
//! A held end may move: its node at `origin + t U` and its frame at `exp(t ω) frame_0` (ω a world
//! rotation vector per unit time) for t up to a duration, e.g. an end twisted at a constant rate
//! about the rod's axis.

use silt_core::Vec3;

use crate::quaternion::{mul, Quat};
use crate::rod::{Clamp, End, Rod};
use crate::verlet::rotation_exp;

/// How an end is supported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Support {
    Free,
    Hinged,
    Clamped,
}

/// Constant translational and angular velocity (world frame) of a held end, for `duration` (then
/// the end stays where it got to).
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct EndMotion {
    pub velocity: Vec3,
    pub angular_velocity: Vec3,
    pub duration: f64,
}

impl Default for EndMotion {
    fn default() -> Self {
        EndMotion {
            velocity: Vec3::ZERO,
            angular_velocity: Vec3::ZERO,
            duration: f64::INFINITY,
        }
    }
}

impl EndMotion {
    /// Moving for ever.
    pub fn constant(velocity: Vec3, angular_velocity: Vec3) -> Self {
        EndMotion {
            velocity,
            angular_velocity,
            duration: f64::INFINITY,
        }
    }

    /// The velocity at time t.
    pub fn velocity_at(&self, t: f64) -> Vec3 {
        if t < self.duration {
            self.velocity
        } else {
            Vec3::ZERO
        }
    }
}

/// The support of one end and where it was at t = 0.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Boundary {
    pub end: End,
    pub support: Support,
    pub motion: EndMotion,
    /// End node position at t = 0.
    pub origin: Vec3,
    /// Clamp frame at t = 0.
    pub frame: Quat,
}

impl Boundary {
    /// Supports `end` of `rod` as it is now (a clamp keeps the end segment's current orientation);
    /// registers the clamp's bending term with the rod.
    pub fn new(rod: &mut Rod, end: End, support: Support, motion: EndMotion) -> Boundary {
        let n = rod.segments();
        let (node, segment) = match end {
            End::First => (0, 0),
            End::Last => (n, n - 1),
        };
        let frame = rod.orientations[segment];
        if support == Support::Clamped {
            rod.clamps.retain(|c| c.end != end);
            rod.clamps.push(Clamp { end, frame });
        }
        Boundary {
            end,
            support,
            motion,
            origin: rod.nodes[node],
            frame,
        }
    }

    /// The node this support holds, if any.
    pub fn held_node(&self, rod: &Rod) -> Option<usize> {
        match self.support {
            Support::Free => None,
            Support::Hinged | Support::Clamped => Some(match self.end {
                End::First => 0,
                End::Last => rod.segments(),
            }),
        }
    }

    /// Where the held node is at time t.
    pub fn position(&self, t: f64) -> Vec3 {
        self.origin + t.min(self.motion.duration) * self.motion.velocity
    }

    /// The clamp frame at time t.
    pub fn frame_at(&self, t: f64) -> Quat {
        mul(
            rotation_exp(t.min(self.motion.duration) * self.motion.angular_velocity),
            self.frame,
        )
    }

    /// Puts the held node and the clamp frame where they are at time t.
    pub fn apply(&self, rod: &mut Rod, t: f64) {
        if let Some(node) = self.held_node(rod) {
            rod.nodes[node] = self.position(t);
        }
        if self.support == Support::Clamped {
            let frame = self.frame_at(t);
            for clamp in rod.clamps.iter_mut().filter(|c| c.end == self.end) {
                clamp.frame = frame;
            }
        }
    }
}
