//! MPI check of the slab-decomposed pressure / Helmholtz solver: `mpirun -np N` of this program
//! solves a Poisson and a Helmholtz problem on N ranks and compares every rank's planes with the
//! serial solve, bit for bit (exit status 1 on any difference). Built with `--features mpi`.

use silt_fluid::poisson::{AxisKind, SeparableSolver};
use silt_fluid::slab_solver::SlabSolver;
use silt_mpi::MpiWorld;

fn main() {
    let Some((_universe, comm)) = MpiWorld::initialize() else {
        eprintln!("mpi_slab_solver: MPI was initialised already");
        std::process::exit(2);
    };
    use AxisKind::*;
    let cases = [
        ([24, 18, 21], [Periodic, Periodic, NeumannNeumann], 0.0, 1.0),
        (
            [24, 18, 21],
            [Periodic, Periodic, DirichletDirichlet],
            1.0,
            -0.02,
        ),
        ([17, 12, 19], [NeumannNeumann, Periodic, Periodic], 0.0, 1.0),
    ];
    let spacing = [0.1, 0.13, 0.07];
    let mut failed = false;
    for (cells, kinds, a, b) in cases {
        let mut serial_solver = SeparableSolver::new(cells, kinds, spacing).expect("serial plan");
        let [m0, m1, m2] = serial_solver.shape();
        let f: Vec<f64> = (0..m0 * m1 * m2)
            .map(|i| {
                let x = i as f64 * 0.618_033_988_749_894_9;
                (x - x.floor()) - 0.5
            })
            .collect();
        let mut serial = f.clone();
        serial_solver.solve(a, b, &mut serial);

        let mut slab = match SlabSolver::new(cells, kinds, spacing, comm.clone()) {
            Ok(s) => s,
            Err(e) => {
                eprintln!("mpi_slab_solver: {e}");
                std::process::exit(2);
            }
        };
        let planes = slab.local_planes();
        let mut local = f[planes.start * m0 * m1..planes.end * m0 * m1].to_vec();
        slab.solve(a, b, &mut local);
        let expected = &serial[planes.start * m0 * m1..planes.end * m0 * m1];
        let difference = local
            .iter()
            .zip(expected)
            .map(|(d, s)| (d - s).abs())
            .fold(0.0, f64::max);
        let worst = comm.max(if local == expected {
            0.0
        } else {
            difference.max(f64::MIN_POSITIVE)
        });
        if comm.rank() == 0 {
            println!(
                "{cells:?} {kinds:?} a = {a}, b = {b} on {} ranks: {}",
                comm.size(),
                if worst == 0.0 {
                    "bit-for-bit the serial solve".to_string()
                } else {
                    format!("DIFFERS by {worst:e}")
                }
            );
        }
        failed |= worst != 0.0;
    }
    if failed {
        std::process::exit(1);
    }
}
