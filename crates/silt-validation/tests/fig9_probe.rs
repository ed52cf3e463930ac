use silt_ibm::coupling::ContactHydrodynamics;
use silt_validation::gondret::{run, GondretCase};
#[test]
#[ignore]
fn probe() {
    let st: f64 = std::env::var("ST").unwrap().parse().unwrap();
    for mode in [ContactHydrodynamics::Wet, ContactHydrodynamics::Dry] {
        let c = GondretCase::wall_collision(st, 8.0, mode);
        let r = run(c).unwrap();
        println!("St {} {:?}: cells {:?} contact speed {:.4} rebound speed {:.4} e {:.3} peaks {:?} secs {:.0} steps {}", c.stokes(), mode, r.cells, r.contact_speed, r.rebound_speed, r.rebound_speed / r.contact_speed, r.peaks, r.seconds, r.history.len());
    }
}
