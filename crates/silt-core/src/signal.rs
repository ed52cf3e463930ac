//! Quantities given as functions of time: a body force, a driving pressure gradient or flow rate that
//! is constant, periodic (a Fourier series) or read from a table (an oscillatory flow, a protocol that
//! changes the flow rate mid-run), or a prescribed velocity that relaxes exponentially to its final value
//! (the seed's approach of a sphere to a wall, u = u_in (exp(-40 t) - 1), sec. 5.2).

use serde::{Deserialize, Serialize};
use std::f64::consts::PI;

/// A value as a function of simulated time.
#[derive(Clone, Debug, PartialEq, Serialize, Deserialize)]
pub enum Signal {
    Constant(f64),
    /// mean + sum_k (cos[k-1] cos(2 pi k t / period) + sin[k-1] sin(2 pi k t / period)).
    Fourier {
        mean: f64,
        period: f64,
        cos: Vec<f64>,
        sin: Vec<f64>,
    },
    /// Linear between the points `(t, value)` (times increasing); the first and last values before and
    /// after them.
    Table(Vec<[f64; 2]>),
    /// to + (from - to) exp(-rate t): from `from` at t = 0 towards `to`.
    Relaxation {
        from: f64,
        to: f64,
        rate: f64,
    },
}

impl From<f64> for Signal {
    fn from(value: f64) -> Self {
        Signal::Constant(value)
    }
}

impl Signal {
    /// Three constant components.
    pub fn constants(values: [f64; 3]) -> [Signal; 3] {
        values.map(Signal::Constant)
    }

    /// The value at time `t`.
    pub fn at(&self, t: f64) -> f64 {
        match self {
            Signal::Constant(v) => *v,
            Signal::Fourier {
                mean,
                period,
                cos,
                sin,
            } => {
                let phase = 2.0 * PI * t / period;
                let mut value = *mean;
                for (k, (a, b)) in cos.iter().zip(sin).enumerate() {
                    let n = (k + 1) as f64;
                    value += a * (n * phase).cos() + b * (n * phase).sin();
                }
                value
            }
            Signal::Table(points) => {
                let next = points.partition_point(|p| p[0] <= t);
                match next {
                    0 => points[0][1],
                    n if n == points.len() => points[n - 1][1],
                    n => {
                        let ([t0, v0], [t1, v1]) = (points[n - 1], points[n]);
                        v0 + (v1 - v0) * (t - t0) / (t1 - t0)
                    }
                }
            }
            Signal::Relaxation { from, to, rate } => to + (from - to) * (-rate * t).exp(),
        }
    }

    /// The constant value, if the signal is one.
    pub fn constant(&self) -> Option<f64> {
        match self {
            Signal::Constant(v) => Some(*v),
            _ => None,
        }
    }

    /// The largest |value| the signal takes (a bound for a Fourier series).
    pub fn max_abs(&self) -> f64 {
        match self {
            Signal::Constant(v) => v.abs(),
            Signal::Fourier { mean, cos, sin, .. } => {
                mean.abs() + cos.iter().zip(sin).map(|(a, b)| a.hypot(*b)).sum::<f64>()
            }
            Signal::Table(points) => points.iter().map(|p| p[1].abs()).fold(0.0, f64::max),
            Signal::Relaxation { from, to, .. } => from.abs().max(to.abs()),
        }
    }

    /// The signal plus a constant.
    pub fn shifted(&self, offset: f64) -> Signal {
        match self {
            Signal::Constant(v) => Signal::Constant(v + offset),
            Signal::Fourier {
                mean,
                period,
                cos,
                sin,
            } => Signal::Fourier {
                mean: mean + offset,
                period: *period,
                cos: cos.clone(),
                sin: sin.clone(),
            },
            Signal::Table(points) => {
                Signal::Table(points.iter().map(|p| [p[0], p[1] + offset]).collect())
            }
            Signal::Relaxation { from, to, rate } => Signal::Relaxation {
                from: from + offset,
                to: to + offset,
                rate: *rate,
            },
        }
    }

    /// The signal in words for reports: `0.5`, `0.1 + series of period 2 (3 terms)`, `table of 4
    /// points, t = 0 .. 10`.
    pub fn describe(&self) -> String {
        match self {
            Signal::Constant(v) => format!("{v}"),
            Signal::Fourier {
                mean, period, cos, ..
            } => format!(
                "{mean} + a Fourier series of period {period} ({} harmonics)",
                cos.len()
            ),
            Signal::Table(points) => format!(
                "a table of {} points, t = {} .. {}",
                points.len(),
                points[0][0],
                points[points.len() - 1][0]
            ),
            Signal::Relaxation { from, to, rate } => {
                format!("from {from} towards {to} as exp(-{rate} t)")
            }
        }
    }

    /// Why the signal cannot be used, if it cannot: non-finite numbers, a period that is not
    /// positive, a series whose cosine and sine lists differ in length, an empty or unsorted table.
    pub fn problem(&self) -> Option<String> {
        match self {
            Signal::Constant(v) if !v.is_finite() => Some(format!("{v} is not finite")),
            Signal::Fourier {
                mean,
                period,
                cos,
                sin,
            } => {
                if !(period.is_finite() && *period > 0.0) {
                    Some(format!("the period {period} must be > 0"))
                } else if cos.len() != sin.len() {
                    Some(format!(
                        "{} cosine and {} sine coefficients: give one of each per harmonic",
                        cos.len(),
                        sin.len()
                    ))
                } else if !(mean.is_finite() && cos.iter().chain(sin).all(|c| c.is_finite())) {
                    Some("the coefficients must be finite".into())
                } else {
                    None
                }
            }
            Signal::Table(points) => {
                if points.is_empty() {
                    Some("the table is empty".into())
                } else if points.iter().flatten().any(|v| !v.is_finite()) {
                    Some("the table's times and values must be finite".into())
                } else if points.windows(2).any(|w| w[1][0] <= w[0][0]) {
                    Some("the table's times must increase".into())
                } else {
                    None
                }
            }
            Signal::Relaxation { from, to, rate } => {
                if !(from.is_finite() && to.is_finite()) {
                    Some("`from` and `to` must be finite".into())
                } else if !(rate.is_finite() && *rate > 0.0) {
                    Some(format!("the rate {rate} must be > 0"))
                } else {
                    None
                }
            }
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn signals_take_their_values() {
        assert_eq!(Signal::Constant(2.5).at(7.0), 2.5);
        let wave = Signal::Fourier {
            mean: 1.0,
            period: 2.0,
            cos: vec![0.5, 0.0],
            sin: vec![0.0, 0.25],
        };
        // t = 0.25: phase pi/4; cos(pi/4) / 2 + sin(pi/2) / 4.
        let expected = 1.0 + 0.5 * (PI / 4.0).cos() + 0.25;
        assert!((wave.at(0.25) - expected).abs() < 1e-15);
        assert_eq!(wave.max_abs(), 1.75);
        let table = Signal::Table(vec![[0.0, 1.0], [2.0, 8.0], [3.0, 2.0]]);
        assert_eq!(table.at(-1.0), 1.0);
        assert_eq!(table.at(1.0), 4.5);
        assert_eq!(table.at(2.0), 8.0);
        assert_eq!(table.at(2.5), 5.0);
        assert_eq!(table.at(9.0), 2.0);
        assert_eq!(table.shifted(1.0).at(1.0), 5.5);
        assert!(Signal::Table(vec![[1.0, 0.0], [1.0, 2.0]])
            .problem()
            .is_some());
        assert!(Signal::Table(vec![]).problem().is_some());
        assert!(wave.problem().is_none());
        let approach = Signal::Relaxation {
            from: 0.0,
            to: -2.0,
            rate: 40.0,
        };
        assert_eq!(approach.at(0.0), 0.0);
        assert!((approach.at(0.1) - 2.0 * ((-4.0f64).exp() - 1.0)).abs() < 1e-15);
        assert_eq!(approach.max_abs(), 2.0);
        assert!(Signal::Relaxation {
            from: 0.0,
            to: 1.0,
            rate: 0.0
        }
        .problem()
        .is_some());
    }
}
