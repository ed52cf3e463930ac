//! Geometrically exact Cosserat rods (Lang, Linn & Arnold 2011, the seed `001_*.txt`; the discretisation
//! reconstructed in `shared/notes/cosserat-rod.md` and derived in `docs/theory/cosserat-rod.md`).
//!
//! The centreline is sampled at nodes `φ_j`, `j = 0..N`; each of the N segments between them carries a
//! quaternion `p_(j-½)` for the orientation of its cross-section (directors `d_k = p e_k p̄`). Strains:
//! shear and extension `Γ` on the segments, curvature and torsion `K` on the interior nodes. Every
//! formula is polynomial in the unknowns (no roots, no trigonometric functions), as the seed requires
//! of the right-hand side and its Jacobian.

pub mod band;
pub mod boundary;
pub mod dissipation;
pub mod dynamics;
pub mod fields;
pub mod hessian;
pub mod implicit;
pub mod jacobian;
pub mod loads;
pub mod model;
pub mod potential;
pub mod quaternion;
pub mod radau;
pub mod rod;
pub mod statics;
pub mod strains;
pub mod verlet;
