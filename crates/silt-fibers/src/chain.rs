//! Fibers as chains of touching beads: all beads of all fibers in one array, each fiber a contiguous
//! run of it (seed sec. 2.2; rods of length l = 2a between bead centres).

use std::ops::Range;

use silt_core::Vec3;

/// The beads of every fiber.
#[derive(Clone, Debug, PartialEq)]
pub struct Fibers {
    radius: f64,
    /// Gap ε_g between a bead's surface and its joint (joint model, seed sec. 2.2.1); 0 for gears.
    gap: f64,
    /// Bead centres `Y_n`, fiber by fiber.
    pub positions: Vec<Vec3>,
    fibers: Vec<Range<usize>>,
}

impl Fibers {
    /// No fibers yet, beads of `radius` (positive and finite).
    pub fn new(radius: f64) -> Result<Self, String> {
        if !(radius.is_finite() && radius > 0.0) {
            return Err(format!(
                "bead radius must be positive and finite, got {radius}"
            ));
        }
        Ok(Fibers {
            radius,
            gap: 0.0,
            positions: Vec::new(),
            fibers: Vec::new(),
        })
    }

    /// No fibers yet, beads of `radius` whose joints sit `gap` beyond their surfaces (the joint model):
    /// centres `2 (a + ε_g)` apart along a straight fiber.
    pub fn with_gap(radius: f64, gap: f64) -> Result<Self, String> {
        if !(gap.is_finite() && gap >= 0.0) {
            return Err(format!(
                "joint gap must be non-negative and finite, got {gap}"
            ));
        }
        let mut fibers = Fibers::new(radius)?;
        fibers.gap = gap;
        Ok(fibers)
    }

    /// Distance between neighbouring bead centres of a straight fiber, `2 (a + ε_g)`.
    pub fn spacing(&self) -> f64 {
        2.0 * (self.radius + self.gap)
    }

    /// The joint gap ε_g.
    pub fn gap(&self) -> f64 {
        self.gap
    }

    /// Adds a fiber of `beads` beads (at least 2) along the curve `points(t)`, `t >= 0`, and returns its
    /// index. The first bead sits at `points(0)` and each next one at the first point of the curve at
    /// chord distance exactly `2a` (`2 (a + ε_g)` with a gap) from the previous bead (the beads touch), found by bisection; for a
    /// curve parametrised by arc length the beads are about `2a` apart in `t`.
    pub fn add(&mut self, beads: usize, points: impl Fn(f64) -> Vec3) -> Result<usize, String> {
        if beads < 2 {
            return Err(format!("a fiber needs at least 2 beads, got {beads}"));
        }
        let fiber = self.fibers.len();
        let spacing = self.spacing();
        let finite = |t: f64| {
            let y = points(t);
            if silt_core::is_finite3(y) {
                Ok(y)
            } else {
                Err(format!(
                    "fiber {fiber}: the curve is not finite at t = {t}: {y}"
                ))
            }
        };
        let mut chain = vec![finite(0.0)?];
        let mut t = 0.0;
        while chain.len() < beads {
            let last = *chain.last().unwrap();
            // March in steps of a quarter spacing until the curve leaves the sphere of radius 2a.
            let (mut low, mut high) = (t, t);
            let mut steps = 0;
            while (finite(high)? - last).length() < spacing {
                low = high;
                high += 0.25 * spacing;
                steps += 1;
                if steps > 100_000 {
                    return Err(format!(
                        "fiber {fiber}: the curve does not leave a sphere of radius 2a around bead {}",
                        chain.len() - 1
                    ));
                }
            }
            for _ in 0..100 {
                let mid = 0.5 * (low + high);
                if (finite(mid)? - last).length() < spacing {
                    low = mid;
                } else {
                    high = mid;
                }
            }
            t = high;
            // Exactly 2a from the previous bead, in the direction of the curve point found.
            chain.push(last + spacing * (finite(t)? - last).normalize());
        }
        let first = self.positions.len();
        self.positions.extend(chain);
        self.fibers.push(first..first + beads);
        Ok(fiber)
    }

    /// Adds a straight fiber of `beads` beads from `start` along `direction` (normalised here).
    pub fn add_straight(
        &mut self,
        beads: usize,
        start: Vec3,
        direction: Vec3,
    ) -> Result<usize, String> {
        let length = direction.length();
        if !(length.is_finite() && length > 0.0) {
            return Err(format!(
                "fiber direction must be a non-zero finite vector, got {direction}"
            ));
        }
        let unit = direction / length;
        self.add(beads, |s| start + s * unit)
    }

    /// Adds a fiber through the bead centres `points`, which must be 2a (2(a + gap)) apart within a
    /// relative `tolerance`; on error the index of the first point out of place and why.
    pub fn add_through(
        &mut self,
        points: &[Vec3],
        tolerance: f64,
    ) -> Result<usize, (usize, String)> {
        let spacing = self.spacing();
        for (k, pair) in points.windows(2).enumerate() {
            let gap = (pair[1] - pair[0]).length();
            let off = ((gap - spacing) / spacing).abs();
            if off.is_nan() || off > tolerance {
                return Err((
                    k + 1,
                    format!(
                        "is {gap} from the previous bead; neighbouring beads touch: their centres must \
                         be 2 bead_radius (+ 2 joint_gap) = {spacing} apart (relative tolerance \
                         {tolerance:e})"
                    ),
                ));
            }
        }
        let count = points.len();
        // Piecewise-linear through the given centres, which are `spacing` apart.
        self.add(count, |t| {
            let k = ((t / spacing).floor() as usize).min(count.saturating_sub(2));
            let f = t / spacing - k as f64;
            points[k] + f * (points[k + 1] - points[k])
        })
        .map_err(|m| (0, m))
    }

    /// Adds `count` straight fibers of `beads` beads at random in the box `region` (low and high
    /// corners): centres uniform, directions isotropic, no bead within 2a of a bead already placed (a
    /// cell list of size 2a), up to 1000 tries per fiber; the same `seed` gives the same fibers. On error
    /// the number of the fiber that did not fit.
    pub fn add_random_straight(
        &mut self,
        count: usize,
        beads: usize,
        region: (Vec3, Vec3),
        seed: u64,
    ) -> Result<(), usize> {
        use rand::{Rng, SeedableRng};
        let a = self.radius;
        let mut rng = rand_chacha::ChaCha8Rng::seed_from_u64(seed);
        let cell = 2.0 * a;
        let cell_of = |p: Vec3| (p / cell).floor().as_i64vec3().to_array();
        let mut occupied: std::collections::HashMap<[i64; 3], Vec<Vec3>> =
            std::collections::HashMap::new();
        for &p in &self.positions {
            occupied.entry(cell_of(p)).or_default().push(p);
        }
        let (low, high) = region;
        for fiber in 0..count {
            let placed = (0..1000).any(|_| {
                let centre = low + (high - low) * Vec3::new(rng.gen(), rng.gen(), rng.gen());
                let z: f64 = rng.gen_range(-1.0..1.0);
                let phi: f64 = rng.gen_range(0.0..2.0 * std::f64::consts::PI);
                let r = (1.0 - z * z).sqrt();
                let direction = Vec3::new(r * phi.cos(), r * phi.sin(), z);
                let start = centre - direction * a * (beads as f64 - 1.0);
                let chain: Vec<Vec3> = (0..beads)
                    .map(|k| start + direction * (2.0 * a * k as f64))
                    .collect();
                let clear =
                    chain.iter().all(|&p| {
                        let c = cell_of(p);
                        (-1..=1).all(|i| {
                            (-1..=1).all(|j| {
                                (-1..=1).all(|k| {
                                    occupied.get(&[c[0] + i, c[1] + j, c[2] + k]).is_none_or(
                                        |list| list.iter().all(|q| (p - *q).length() >= 2.0 * a),
                                    )
                                })
                            })
                        })
                    });
                if clear && self.add_straight(beads, start, direction).is_ok() {
                    for &p in &chain {
                        occupied.entry(cell_of(p)).or_default().push(p);
                    }
                }
                clear
            });
            if !placed {
                return Err(fiber);
            }
        }
        Ok(())
    }

    /// Bead radius `a`.
    pub fn radius(&self) -> f64 {
        self.radius
    }

    /// Total number of beads.
    pub fn bead_count(&self) -> usize {
        self.positions.len()
    }

    /// The beads of each fiber.
    pub fn fibers(&self) -> &[Range<usize>] {
        &self.fibers
    }

    /// Links `(n, n + 1)` of neighbouring beads, fiber by fiber (first bead of each link).
    pub fn links(&self) -> impl Iterator<Item = usize> + '_ {
        self.fibers.iter().flat_map(|f| f.start..f.end - 1)
    }

    /// Puts every link back to length `2a` along its current direction (drift control after a time
    /// step). Each fiber is rebuilt outwards from its anchor bead (one whose position a constraint
    /// prescribes, `anchors[fiber]`), which stays put; a fiber without one keeps its centroid.
    pub fn restore_link_lengths(&mut self, anchors: &[Option<usize>]) {
        let spacing = self.spacing();
        for (fiber, beads) in self.fibers.iter().enumerate() {
            let y = &mut self.positions[beads.clone()];
            let anchor = anchors.get(fiber).copied().flatten();
            let centroid = y.iter().sum::<Vec3>() / y.len() as f64;
            let start = anchor.map_or(0, |b| b - beads.start);
            for n in start..y.len() - 1 {
                let link = y[n + 1] - y[n];
                y[n + 1] = y[n] + spacing * link.normalize();
            }
            for n in (0..start).rev() {
                let link = y[n] - y[n + 1];
                y[n] = y[n + 1] + spacing * link.normalize();
            }
            if anchor.is_none() {
                let shift = centroid - y.iter().sum::<Vec3>() / y.len() as f64;
                y.iter_mut().for_each(|p| *p += shift);
            }
        }
    }

    /// The fiber each bead belongs to.
    pub fn fiber_of_bead(&self) -> Vec<usize> {
        let mut owner = vec![0; self.positions.len()];
        for (fiber, beads) in self.fibers.iter().enumerate() {
            owner[beads.clone()].fill(fiber);
        }
        owner
    }

    /// Largest relative deviation `| |Y_(n+1) - Y_n| - 2a | / 2a` of the link lengths.
    pub fn link_length_error(&self) -> f64 {
        let spacing = self.spacing();
        self.links()
            .map(|n| {
                ((self.positions[n + 1] - self.positions[n]).length() - spacing).abs() / spacing
            })
            .fold(0.0, f64::max)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn straight_fibers_touch_and_refuse_bad_input() {
        let mut fibers = Fibers::new(0.5).unwrap();
        fibers
            .add_straight(4, Vec3::ZERO, Vec3::new(0.0, 3.0, 4.0))
            .unwrap();
        fibers.add_straight(3, Vec3::X * 10.0, Vec3::X).unwrap();
        assert_eq!(fibers.bead_count(), 7);
        assert_eq!(fibers.links().collect::<Vec<_>>(), vec![0, 1, 2, 4, 5]);
        assert!(fibers.link_length_error() < 1e-15);
        assert!((fibers.positions[3] - Vec3::new(0.0, 1.8, 2.4)).length() < 1e-15);
        assert!(fibers.add_straight(1, Vec3::ZERO, Vec3::X).is_err());
        assert!(fibers.add_straight(3, Vec3::ZERO, Vec3::ZERO).is_err());
        assert!(Fibers::new(-1.0).is_err());
        assert!(
            fibers.add(3, |s| Vec3::splat(s.ln())).is_err(),
            "ln 0 is not finite"
        );
        assert!(
            fibers.add(3, |_| Vec3::ZERO).is_err(),
            "a point is not a curve"
        );
        let helix = fibers
            .add(20, |t| Vec3::new(2.0 * t.cos(), 2.0 * t.sin(), 0.3 * t))
            .unwrap();
        assert!(fibers.link_length_error() < 1e-14);
        let beads = fibers.fibers()[helix].clone();
        let on_helix = |y: Vec3| ((y.x * y.x + y.y * y.y).sqrt() - 2.0).abs() < 1e-12;
        assert!(fibers.positions[beads].iter().all(|&y| on_helix(y)));
    }
}
