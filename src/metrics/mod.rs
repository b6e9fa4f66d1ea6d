//! Measurements: latency histograms, CPU time, device statistics, and the clock.

pub mod catalog;
pub mod clock;
pub mod cpu;
pub mod diskstats;
pub mod hist;
pub mod layout;
pub mod name;
pub mod progress;
pub mod steady;
pub mod timeline;
