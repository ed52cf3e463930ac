//! Initial placement of spheres: diameter distributions, random placement without overlap (random
//! sequential addition), and simple-cubic lattices.

use glam::DVec3 as Vec3;
use rand::Rng;
use rand_distr::{Distribution, Normal};
use silt_dem::domain::Domain;
use std::collections::HashMap;

/// How the diameters of a group of spheres are drawn.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum DiameterDistribution {
    Fixed(f64),
    Uniform {
        min: f64,
        max: f64,
    },
    /// Normal distribution truncated to [mean - 3 std, mean + 3 std] (and to positive values).
    Gaussian {
        mean: f64,
        std: f64,
    },
}

impl DiameterDistribution {
    /// Draws one diameter.
    pub fn sample(&self, rng: &mut impl Rng) -> f64 {
        match *self {
            DiameterDistribution::Fixed(d) => d,
            DiameterDistribution::Uniform { min, max } => {
                if max > min {
                    rng.gen_range(min..max)
                } else {
                    min
                }
            }
            DiameterDistribution::Gaussian { mean, std } => {
                if std == 0.0 {
                    return mean;
                }
                let normal = Normal::new(mean, std).expect("validated: std >= 0");
                let (low, high) = ((mean - 3.0 * std).max(0.05 * mean), mean + 3.0 * std);
                loop {
                    let d = normal.sample(rng);
                    if d >= low && d <= high {
                        return d;
                    }
                }
            }
        }
    }

    /// Largest diameter the distribution can produce.
    pub fn max(&self) -> f64 {
        match *self {
            DiameterDistribution::Fixed(d) => d,
            DiameterDistribution::Uniform { max, .. } => max,
            DiameterDistribution::Gaussian { mean, std } => mean + 3.0 * std,
        }
    }
}

/// Why spheres could not be placed.
#[derive(Clone, Debug, PartialEq)]
pub enum PlacementError {
    /// The region cannot hold the spheres without overlap (after many random attempts).
    RegionFull {
        placed: usize,
        requested: usize,
        solid_fraction: f64,
    },
    /// The region is thinner than a sphere in some direction.
    RegionTooSmall { diameter: f64 },
}

impl std::fmt::Display for PlacementError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            PlacementError::RegionFull { placed, requested, solid_fraction } => write!(
                f,
                "only {placed} of {requested} spheres fit in the region without overlap (solid fraction {solid_fraction:.3}; \
                 random placement rarely exceeds 0.3): enlarge the region or reduce the count"
            ),
            PlacementError::RegionTooSmall { diameter } => {
                write!(f, "the region is thinner than a sphere of diameter {diameter:e} in some direction")
            }
        }
    }
}

/// Spatial hash of already placed spheres, for overlap checks with the minimum-image convention.
struct PlacedSpheres<'a> {
    domain: &'a Domain,
    cell: f64,
    cells: HashMap<[i64; 3], Vec<usize>>,
    position: Vec<Vec3>,
    radius: Vec<f64>,
    largest_radius: f64,
    dims: [i64; 3],
}

impl<'a> PlacedSpheres<'a> {
    fn new(domain: &'a Domain, max_diameter: f64) -> Self {
        let cell = max_diameter.max(1e-300);
        let l = domain.length();
        let dims = [0, 1, 2].map(|a| ((l[a] / cell).floor() as i64).max(1));
        PlacedSpheres {
            domain,
            cell,
            cells: HashMap::new(),
            position: vec![],
            radius: vec![],
            largest_radius: 0.0,
            dims,
        }
    }

    fn key(&self, x: Vec3) -> [i64; 3] {
        let mut k = [0i64; 3];
        for a in 0..3 {
            let c = ((x[a] - self.domain.min[a]) / self.cell).floor() as i64;
            k[a] = if self.domain.periodic[a] {
                c.rem_euclid(self.dims[a])
            } else {
                c
            };
        }
        k
    }

    fn overlaps(&self, x: Vec3, r: f64) -> bool {
        let k = self.key(x);
        let reach = ((r + self.largest_radius) / self.cell).ceil() as i64;
        for dz in -reach..=reach {
            for dy in -reach..=reach {
                for dx in -reach..=reach {
                    let mut n = [k[0] + dx, k[1] + dy, k[2] + dz];
                    for a in 0..3 {
                        if self.domain.periodic[a] {
                            n[a] = n[a].rem_euclid(self.dims[a]);
                        }
                    }
                    if let Some(list) = self.cells.get(&n) {
                        for &j in list {
                            let d = self.domain.separation(x, self.position[j]).length();
                            if d < r + self.radius[j] {
                                return true;
                            }
                        }
                    }
                }
            }
        }
        false
    }

    fn insert(&mut self, x: Vec3, r: f64) {
        let k = self.key(x);
        self.cells.entry(k).or_default().push(self.position.len());
        self.position.push(x);
        self.radius.push(r);
        self.largest_radius = self.largest_radius.max(r);
    }
}

/// Places spheres of the given radii at random in `region` (min, max corners) without overlapping each
/// other or `existing` spheres; sphere surfaces stay inside the region except along periodic directions
/// that the region spans completely. Deterministic for a given `rng` state.
pub fn random_positions(
    domain: &Domain,
    region: (Vec3, Vec3),
    radii: &[f64],
    existing: &[(Vec3, f64)],
    rng: &mut impl Rng,
) -> Result<Vec<Vec3>, PlacementError> {
    let max_radius = radii
        .iter()
        .chain(existing.iter().map(|(_, r)| r))
        .copied()
        .fold(0.0, f64::max);
    let mut placed = PlacedSpheres::new(domain, 2.0 * max_radius);
    for &(x, r) in existing {
        placed.insert(x, r);
    }
    let (lo, hi) = region;
    let spans = |a: usize| domain.periodic[a] && lo[a] <= domain.min[a] && hi[a] >= domain.max[a];
    let mut out = Vec::with_capacity(radii.len());
    let mut volume = 0.0;
    for (n, &r) in radii.iter().enumerate() {
        let mut bounds = [(0.0, 0.0); 3];
        for a in 0..3 {
            bounds[a] = if spans(a) {
                (domain.min[a], domain.max[a])
            } else {
                (lo[a] + r, hi[a] - r)
            };
            if bounds[a].1 < bounds[a].0 {
                return Err(PlacementError::RegionTooSmall { diameter: 2.0 * r });
            }
        }
        let mut success = false;
        for _ in 0..20_000 {
            let x = Vec3::new(
                sample_in(rng, bounds[0]),
                sample_in(rng, bounds[1]),
                sample_in(rng, bounds[2]),
            );
            if !placed.overlaps(x, r) {
                placed.insert(x, r);
                out.push(domain.wrap(x));
                volume += 4.0 / 3.0 * std::f64::consts::PI * r.powi(3);
                success = true;
                break;
            }
        }
        if !success {
            let region_volume = (hi - lo).x * (hi - lo).y * (hi - lo).z;
            return Err(PlacementError::RegionFull {
                placed: n,
                requested: radii.len(),
                solid_fraction: volume / region_volume,
            });
        }
    }
    Ok(out)
}

fn sample_in(rng: &mut impl Rng, (a, b): (f64, f64)) -> f64 {
    if b > a {
        rng.gen_range(a..b)
    } else {
        a
    }
}

/// Sites of a simple-cubic lattice of the given spacing filling `region`, first along x, then y, then z;
/// the first site sits half a spacing inside the corner. Returns at most `count` sites.
pub fn lattice_positions(region: (Vec3, Vec3), spacing: f64, count: usize) -> Vec<Vec3> {
    let (lo, hi) = region;
    let n = [0, 1, 2].map(|a| ((hi[a] - lo[a]) / spacing + 1e-9).floor() as usize);
    let mut out = Vec::new();
    'outer: for k in 0..n[2] {
        for j in 0..n[1] {
            for i in 0..n[0] {
                if out.len() == count {
                    break 'outer;
                }
                out.push(lo + spacing * Vec3::new(i as f64 + 0.5, j as f64 + 0.5, k as f64 + 0.5));
            }
        }
    }
    out
}

/// Columns (along x) and rows (along y, even) of the hexagonal layer of [`hexagonal_layer`].
fn hexagonal_shape(region: (Vec3, Vec3), spacing: f64) -> [usize; 2] {
    let size = region.1 - region.0;
    let columns = ((size.x / spacing).round() as usize).max(1);
    let rows = 2 * ((size.y / (3f64.sqrt() * spacing)).round() as usize).max(1);
    [columns, rows]
}

/// The number of sites of the hexagonal layer of [`hexagonal_layer`].
pub fn hexagonal_sites(region: (Vec3, Vec3), spacing: f64) -> usize {
    let [columns, rows] = hexagonal_shape(region, spacing);
    columns * rows
}

/// One layer of sites on a hexagonal lattice over the horizontal (x, y) extent of `region`, about
/// `spacing` apart: whole columns along x and an even number of rows along y, stretched to fill it (so
/// that a periodic box closes the lattice), each centre at a height drawn uniformly from the region's
/// z range: the rough bed of fixed spheres of the seed (sec. 6).
pub fn hexagonal_layer(region: (Vec3, Vec3), spacing: f64, rng: &mut impl Rng) -> Vec<Vec3> {
    let (lo, hi) = region;
    let size = hi - lo;
    let [columns, rows] = hexagonal_shape(region, spacing);
    let (dx, dy) = (size.x / columns as f64, size.y / rows as f64);
    let mut sites = Vec::with_capacity(rows * columns);
    for j in 0..rows {
        for i in 0..columns {
            let x = lo.x + (i as f64 + 0.5 * (j % 2) as f64) * dx;
            let y = lo.y + (j as f64 + 0.5) * dy;
            sites.push(Vec3::new(x, y, rng.gen_range(lo.z..=hi.z)));
        }
    }
    sites
}

#[cfg(test)]
mod tests {
    use super::*;
    use rand::SeedableRng;
    use rand_chacha::ChaCha8Rng;

    #[test]
    fn a_hexagonal_layer_closes_a_periodic_box_and_blocks_the_floor() {
        // Spheres of diameter 1 about 1 apart over a 6 x 6 periodic floor, centres at heights in [0, 0.5]:
        // 6 columns, 6 rows, and no free sphere of radius 0.35 reaches the floor between them (every
        // point of the wall plane is closer than R_f + R_min to a fixed centre, seen from a sphere
        // touching the wall).
        let region = (Vec3::ZERO, Vec3::new(6.0, 6.0, 0.5));
        let layer = hexagonal_layer(region, 1.0, &mut ChaCha8Rng::seed_from_u64(1));
        assert_eq!(layer.len(), 36);
        assert!(layer.iter().all(|c| (0.0..=0.5).contains(&c.z)));
        let domain = Domain {
            min: Vec3::ZERO,
            max: Vec3::new(6.0, 6.0, 10.0),
            periodic: [true, true, false],
        };
        // Neighbours across the periodic seams are as close as inside: the nearest horizontal
        // distance is the spacing everywhere.
        for (a, &c) in layer.iter().enumerate() {
            let nearest = layer
                .iter()
                .enumerate()
                .filter(|&(b, _)| b != a)
                .map(|(_, &d)| {
                    let s = domain.separation(c, d);
                    s.x.hypot(s.y)
                })
                .fold(f64::INFINITY, f64::min);
            assert!((nearest - 1.0).abs() < 0.02, "site {a}: nearest {nearest}");
        }
        let r_min = 0.35;
        for i in 0..60 {
            for j in 0..60 {
                let x = Vec3::new(0.1 * i as f64, 0.1 * j as f64, r_min);
                let blocked = layer
                    .iter()
                    .any(|&c| domain.separation(x, c).length() < 0.5 + r_min);
                assert!(
                    blocked,
                    "a sphere of radius {r_min} reaches the wall at {x}"
                );
            }
        }
    }

    #[test]
    fn random_placement_does_not_overlap_and_is_reproducible() {
        let domain = Domain {
            min: Vec3::ZERO,
            max: Vec3::new(6.0, 6.0, 10.0),
            periodic: [true, true, false],
        };
        let dist = DiameterDistribution::Gaussian {
            mean: 1.0,
            std: 0.1,
        };
        let mut rng = ChaCha8Rng::seed_from_u64(7);
        let radii: Vec<f64> = (0..60).map(|_| 0.5 * dist.sample(&mut rng)).collect();
        let region = (Vec3::ZERO, Vec3::new(6.0, 6.0, 10.0));
        let a = random_positions(
            &domain,
            region,
            &radii,
            &[],
            &mut ChaCha8Rng::seed_from_u64(1),
        )
        .unwrap();
        let b = random_positions(
            &domain,
            region,
            &radii,
            &[],
            &mut ChaCha8Rng::seed_from_u64(1),
        )
        .unwrap();
        assert_eq!(a, b);
        for i in 0..a.len() {
            assert!(a[i].z - radii[i] >= 0.0 && a[i].z + radii[i] <= 10.0);
            for j in i + 1..a.len() {
                assert!(domain.separation(a[i], a[j]).length() >= radii[i] + radii[j]);
            }
        }
    }

    #[test]
    fn overfull_region_is_reported() {
        let domain = Domain {
            min: Vec3::ZERO,
            max: Vec3::splat(2.0),
            periodic: [false; 3],
        };
        let radii = vec![0.5; 50];
        let err = random_positions(
            &domain,
            (Vec3::ZERO, Vec3::splat(2.0)),
            &radii,
            &[],
            &mut ChaCha8Rng::seed_from_u64(3),
        );
        assert!(matches!(err, Err(PlacementError::RegionFull { .. })));
    }

    #[test]
    fn lattice_fills_in_x_y_z_order() {
        let sites = lattice_positions((Vec3::ZERO, Vec3::new(2.1, 2.1, 3.0)), 1.05, 100);
        assert_eq!(sites.len(), 2 * 2 * 2);
        assert!((sites[1] - Vec3::new(1.575, 0.525, 0.525)).length() < 1e-12);
    }
}
