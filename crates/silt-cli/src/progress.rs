//! Progress display of a run, measured in simulated time (adaptive steps make the step count unknown):
//! a bar with the time, step and ETA on a terminal, a plain line every 5 s otherwise.

use indicatif::{ProgressBar, ProgressStyle};
use silt_io::run::{format_time, Progress};
use std::time::{Duration, Instant};

pub struct Display {
    bar: Option<ProgressBar>,
    plain: bool,
    start: Instant,
    last_log: Instant,
    first_step: Option<u64>,
    /// Work items per step (particles, cells, ...) and their name, for the cost per item-step.
    size: (usize, &'static str),
}

impl Display {
    const TICKS: u64 = 1000;

    pub fn new(quiet: bool, terminal: bool, size: (usize, &'static str)) -> Self {
        let bar = (!quiet && terminal).then(|| {
            let bar = ProgressBar::new(Self::TICKS);
            bar.set_style(
                ProgressStyle::with_template("{bar:40} {percent:>3}%  ETA {eta}  {msg}")
                    .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar
        });
        let now = Instant::now();
        Display {
            bar,
            plain: !quiet && !terminal,
            start: now,
            last_log: now,
            first_step: None,
            size,
        }
    }

    pub fn update(&mut self, p: Progress) {
        let first_step = *self.first_step.get_or_insert(p.steps.saturating_sub(1));
        let span = p.stop_time - p.first_time;
        let fraction = if span > 0.0 {
            ((p.time - p.first_time) / span).clamp(0.0, 1.0)
        } else {
            1.0
        };
        let time = format_time(p.time);
        if let Some(bar) = &self.bar {
            bar.set_position((fraction * Self::TICKS as f64) as u64);
            let status = p
                .status
                .as_deref()
                .map(|s| format!(", {s}"))
                .unwrap_or_default();
            bar.set_message(format!("t {time}, step {}{status}", p.steps));
        } else if self.plain
            && (self.last_log.elapsed() >= Duration::from_secs(5) || fraction >= 1.0)
        {
            self.last_log = Instant::now();
            let elapsed = self.start.elapsed().as_secs_f64().max(1e-9);
            let rate = (p.steps - first_step) as f64 / elapsed;
            let remaining = elapsed * (1.0 - fraction) / fraction.max(1e-9);
            let (items, unit) = self.size;
            let status = p
                .status
                .as_deref()
                .map(|s| format!(", {s}"))
                .unwrap_or_default();
            eprintln!(
                "t = {time}/{} ({:.1}%), step {}, {rate:.1} steps/s, {:.3} us per {unit}-step, ETA {remaining:.0} s{status}",
                format_time(p.stop_time),
                100.0 * fraction,
                p.steps,
                1e6 / (rate * items as f64).max(1e-9),
            );
        }
    }

    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
