//! The coordinator: one loop for `compare` (provision each target in turn) and `run` (the paths a
//! job file names, "here"). For every repeat and target: get the target, run each workload's phases
//! through the phase frame, persist every record the moment it exists, tear down.

mod coordinator;
mod sink;
mod targets;

pub use coordinator::{run, Ended, Options, RunnerError, Summary, Where};
pub use targets::here_ctx;

#[cfg(test)]
mod tests;
