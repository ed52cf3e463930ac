//! Progress display: a bar with rate and ETA on a terminal, plain log lines otherwise.

use indicatif::{ProgressBar, ProgressStyle};
use std::time::{Duration, Instant};

pub struct Progress {
    bar: Option<ProgressBar>,
    plain: bool,
    start: Instant,
    last_log: Instant,
    first_step: u64,
    end_step: u64,
    /// Work items per step (particles, cells) and their name, for the cost per item-step.
    items: usize,
    item_name: &'static str,
    /// What is counted: steps, or frames (rod runs, whose integrators choose their own steps).
    unit: &'static str,
}

impl Progress {
    pub fn new(
        quiet: bool,
        terminal: bool,
        first_step: u64,
        end_step: u64,
        (items, item_name): (usize, &'static str),
    ) -> Self {
        let bar = (!quiet && terminal).then(|| {
            let bar = ProgressBar::new(end_step);
            bar.set_style(
                ProgressStyle::with_template(
                    "{bar:40} {pos}/{len} steps  {per_sec}  ETA {eta}  {msg}",
                )
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
            bar.set_position(first_step);
            bar
        });
        let now = Instant::now();
        Progress {
            bar,
            plain: !quiet && !terminal,
            start: now,
            last_log: now,
            first_step,
            end_step,
            items,
            item_name,
            unit: "step",
        }
    }

    /// Counts frames (or another unit) instead of steps.
    pub fn counting(mut self, unit: &'static str) -> Self {
        self.unit = unit;
        if let Some(bar) = &self.bar {
            bar.set_style(
                ProgressStyle::with_template(&format!(
                    "{{bar:40}} {{pos}}/{{len}} {unit}s  {{per_sec}}  ETA {{eta}}  {{msg}}"
                ))
                .unwrap_or_else(|_| ProgressStyle::default_bar()),
            );
        }
        self
    }

    pub fn update(&mut self, step: u64) {
        if let Some(bar) = &self.bar {
            bar.set_position(step);
        } else if self.plain
            && (self.last_log.elapsed() >= Duration::from_secs(5) || step == self.end_step)
        {
            self.last_log = Instant::now();
            let elapsed = self.start.elapsed().as_secs_f64();
            let done = (step - self.first_step) as f64;
            let rate = done / elapsed.max(1e-9);
            let remaining = (self.end_step - step) as f64 / rate.max(1e-9);
            let unit = self.unit;
            eprintln!(
                "{unit} {step}/{} ({:.1}%), {rate:.1} {unit}s/s, {:.3} us per {}-{unit}, ETA {remaining:.0} s",
                self.end_step,
                100.0 * step as f64 / self.end_step.max(1) as f64,
                1e6 / (rate * self.items as f64).max(1e-9),
                self.item_name
            );
        }
    }

    pub fn finish(&mut self) {
        if let Some(bar) = self.bar.take() {
            bar.finish_and_clear();
        }
    }
}
