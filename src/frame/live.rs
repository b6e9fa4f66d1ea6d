//! The live progress line every phase of every workload shows on a terminal (indicatif): target
//! and repeat, phase, a bar when the end is known (operations, or the runtime of a time-based
//! phase), elapsed time, ETA and the live rate. Nothing when standard error is not a terminal or
//! the run is quiet.

use std::time::Duration;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::PhaseSpec;
use crate::plan::units::format_count;

pub struct Live {
    bar: Option<ProgressBar>,
    unit: &'static str,
    by_time: bool,
}

/// A bar on standard error drawn with `template`, labelled `prefix`.
fn new_bar(len: Option<u64>, template: &str, prefix: &str) -> ProgressBar {
    let bar = ProgressBar::with_draw_target(len, ProgressDrawTarget::stderr());
    bar.set_style(
        ProgressStyle::with_template(template)
            .unwrap_or_else(|_| ProgressStyle::default_bar())
            .progress_chars("=> "),
    );
    bar.set_prefix(prefix.to_string());
    bar
}

const BY_OPS: &str = "fsbench: [{prefix}] {msg} [{wide_bar}] {percent:>3}% {elapsed} ETA {eta}";

impl Live {
    /// A progress line for `spec` on `label` ("ext4, repeat 2/3"). The caller decides whether to
    /// show one at all (a terminal, not quiet).
    pub fn start(spec: &PhaseSpec, label: &str) -> Live {
        let (len, template) = match (spec.total_ops, spec.total_secs) {
            (Some(n), _) => (Some(n), BY_OPS),
            (None, Some(s)) => (
                Some((s * 1000.0) as u64),
                "fsbench: [{prefix}] {msg} [{wide_bar}] {elapsed} ETA {eta}",
            ),
            (None, None) => (None, "fsbench: [{prefix}] {msg} {spinner} {elapsed}"),
        };
        let bar = new_bar(len, template, label);
        bar.set_message(spec.name.clone());
        Live {
            bar: Some(bar),
            unit: spec.unit,
            by_time: spec.total_ops.is_none() && spec.total_secs.is_some(),
        }
    }

    /// Publishes `done` operations after `elapsed`: the bar and the live rate.
    pub fn update(&self, name: &str, done: u64, elapsed: Duration) {
        let Some(bar) = &self.bar else {
            return;
        };
        let rate = done as f64 / elapsed.as_secs_f64().max(1e-3);
        bar.set_position(if self.by_time {
            elapsed.as_millis() as u64
        } else {
            done
        });
        bar.set_message(format!("{name}: {} {}/s", format_count(rate), self.unit));
    }

    /// A line over a whole session rather than a phase (iozone's matrix): a bar of `total`
    /// units with its ETA; `set` moves it.
    pub fn session(prefix: &str, total: u64, show: bool) -> Live {
        Live {
            bar: show.then(|| new_bar(Some(total), BY_OPS, prefix)),
            unit: "",
            by_time: false,
        }
    }

    /// Moves a session's bar to `done`, with a new message when one is given.
    pub fn set(&self, done: u64, msg: Option<String>) {
        if let Some(bar) = &self.bar {
            bar.set_position(done);
            if let Some(m) = msg {
                bar.set_message(m);
            }
        }
    }

    /// Removes the line (the phase's record says what it measured).
    pub fn finish(&self) {
        if let Some(bar) = &self.bar {
            bar.finish_and_clear();
        }
    }
}
