//! Measurements: latency histograms, CPU time, device statistics, the clock, and the evidence
//! of what limited a phase.

pub mod catalog;
pub mod clock;
pub mod evidence;
pub mod hist;
pub mod layout;
pub mod limiter;
pub mod name;
pub mod procfs;
pub mod progress;
pub mod steady;
pub mod timeline;
