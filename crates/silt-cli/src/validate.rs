//! `silt validate` and `silt bench`.

use std::path::Path;
use std::process::ExitCode;

pub fn run(
    case: Option<&str>,
    output: &Path,
    quick: bool,
    list: bool,
    runs: Option<&[String]>,
) -> ExitCode {
    let cases = silt_validation::report::CASES;
    if let Some(runs) = runs {
        if case != Some("sheared-bed") {
            eprintln!(
                "error: --runs picks runs of the sheared-bed validation: `silt validate sheared-bed \
                 --runs a9`"
            );
            return ExitCode::from(2);
        }
        let labels = match silt_validation::sheared_bed::run_labels(quick) {
            Ok(labels) => labels,
            Err(e) => {
                eprintln!("error: sheared-bed: {e}");
                return ExitCode::FAILURE;
            }
        };
        if let Some(bad) = runs.iter().find(|r| !labels.contains(r)) {
            eprintln!(
                "error: --runs: no run of the sheared-bed validation is labelled \"{bad}\"; the runs: {}",
                labels.join(", ")
            );
            return ExitCode::from(2);
        }
    }
    if list {
        for c in cases {
            println!("{:22} {}", c.name, c.description);
        }
        return ExitCode::SUCCESS;
    }
    let selected: Vec<_> = match case {
        None | Some("all") => cases.iter().collect(),
        Some(name) => match cases.iter().find(|c| c.name == name) {
            Some(c) => vec![c],
            None => {
                let names: Vec<&str> = cases.iter().map(|c| c.name).collect();
                eprintln!(
                    "error: no validation case is named \"{name}\"; available: {}",
                    names.join(", ")
                );
                return ExitCode::from(2);
            }
        },
    };
    let mut all_passed = true;
    for c in selected {
        eprintln!("validate: {} ...", c.name);
        let outcome = match runs {
            Some(runs) => silt_validation::sheared_bed::report_runs(output, quick, Some(runs)),
            None => (c.run)(output, quick),
        };
        match outcome {
            Ok(report) => {
                println!("{}", report.summary());
                all_passed &= report.passed;
            }
            Err(e) => {
                eprintln!("error: {}: {e}", c.name);
                all_passed = false;
            }
        }
    }
    if all_passed {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

pub fn bench(name: &str, quick: bool) -> ExitCode {
    match name {
        "dem" => bench_dem(quick),
        "fluid" => bench_fluid(quick),
        "ibm" => bench_ibm(quick),
        "fibers" => bench_fibers(quick),
        "rods" => bench_rods(quick),
        "sheared-bed" => bench_sheared_bed(quick),
        "mpi" => bench_mpi(quick),
        other => {
            eprintln!(
                "error: no benchmark is named \"{other}\"; available: dem, fluid, ibm, fibers, rods, \
                 sheared-bed, mpi"
            );
            ExitCode::from(2)
        }
    }
}

/// The LAMMPS settling problem (`../shared/peers/lammps-settle.in`) with the LAMMPS law and the seed's model.
fn bench_dem(quick: bool) -> ExitCode {
    use silt_validation::bench_dem::{run, BenchOptions};
    let mut options = BenchOptions::default();
    if quick {
        options.lattice = [8, 8, 8];
        options.settle_steps = 2_000;
        options.timed_steps = 200;
        options.seed_model_steps = 20;
    }
    let report = run(&options, &mut |line: &str| eprintln!("bench: {line}"));
    println!(
        "Silt DEM benchmark: {} particles, {}",
        report.particles, report.machine
    );
    print!("{}", report.table());
    ExitCode::SUCCESS
}

/// Taylor–Green and channel at 128^3, explicit and Crank–Nicolson, beside CaNS (docs/performance.md).
fn bench_fluid(quick: bool) -> ExitCode {
    use silt_validation::bench_fluid::{run, FluidBenchOptions};
    let options = if quick {
        FluidBenchOptions::quick()
    } else {
        FluidBenchOptions::default()
    };
    match run(&options, &mut |line: &str| eprintln!("bench: {line}")) {
        Ok(report) => {
            println!("Silt fluid benchmark");
            print!("{}", report.table());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The fluid on MPI ranks beside threads and CaNS (issue 23; docs/performance.md): runs this
/// `silt` under `mpirun`, so it needs a build with `--features mpi`.
fn bench_mpi(quick: bool) -> ExitCode {
    use silt_validation::bench_mpi::{run, MpiBenchOptions};
    if !cfg!(feature = "mpi") {
        eprintln!(
            "error: `silt bench mpi` runs this silt under mpirun: build it with `cargo build --release \
             -p silt-cli --features mpi` (README, \"Running on a cluster\")"
        );
        return ExitCode::from(2);
    }
    let silt = match std::env::current_exe() {
        Ok(path) => path,
        Err(e) => {
            eprintln!("error: cannot find this program's path: {e}");
            return ExitCode::FAILURE;
        }
    };
    let options = match (quick, std::env::var("SILT_BENCH_MPI_PARTS")) {
        (true, _) => MpiBenchOptions::quick(),
        (false, Ok(parts)) => match MpiBenchOptions::with_parts(&parts) {
            Ok(options) => options,
            Err(e) => {
                eprintln!("error: {e}");
                return ExitCode::from(2);
            }
        },
        (false, Err(_)) => MpiBenchOptions::default(),
    };
    match run(&silt, &options, &mut |line: &str| {
        eprintln!("bench: {line}")
    }) {
        Ok(report) => {
            println!("Silt MPI benchmark");
            print!("{}", report.table());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// The sheared bed's A10 set-up after settling: the coupled step split, beside the fluid alone
/// (docs/performance.md).
fn bench_sheared_bed(quick: bool) -> ExitCode {
    use silt_validation::bench_sheared_bed::{run, BedBenchOptions};
    let options = if quick {
        BedBenchOptions::quick()
    } else {
        BedBenchOptions::default()
    };
    match run(&options, &mut |line: &str| eprintln!("bench: {line}")) {
        Ok(report) => {
            println!("Silt sheared-bed benchmark");
            print!("{}", report.table());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Coupled spheres and fluid: ten Cate E3 at D/h = 16 and 500 spheres in 128 x 64 x 128 (docs/performance.md).
fn bench_ibm(quick: bool) -> ExitCode {
    use silt_validation::bench_ibm::{run, IbmBenchOptions};
    let options = if quick {
        IbmBenchOptions::quick()
    } else {
        IbmBenchOptions::default()
    };
    match run(&options, &mut |line: &str| eprintln!("bench: {line}")) {
        Ok(report) => {
            println!("Silt immersed-boundary benchmark");
            print!("{}", report.table());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Bead chains: the RPY product (N = 1,000 and 4,000, beside pystokes when installed) and full
/// constrained steps of 50 and 200 fibers (docs/performance.md).
fn bench_fibers(quick: bool) -> ExitCode {
    use silt_validation::bench_fibers::{run, FiberBenchOptions};
    let options = if quick {
        FiberBenchOptions::quick()
    } else {
        FiberBenchOptions::default()
    };
    match run(&options, &mut |line: &str| eprintln!("bench: {line}")) {
        Ok(report) => {
            println!("Silt fiber benchmark");
            print!("{}", report.table());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Cosserat rods beside PyElastica: Verlet per step, time to the static answer, the stiff steel rod
/// (docs/performance.md).
fn bench_rods(quick: bool) -> ExitCode {
    use silt_validation::bench_rods::{run, RodBenchOptions};
    let options = if quick {
        RodBenchOptions::quick()
    } else {
        RodBenchOptions::default()
    };
    match run(&options, &mut |line: &str| eprintln!("bench: {line}")) {
        Ok(report) => {
            println!("Silt rod benchmark");
            print!("{}", report.table());
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("error: {e}");
            ExitCode::FAILURE
        }
    }
}
