//! Measurements and the clock. (Latency histograms, CPU and device stats arrive with the block workloads.)

pub mod clock;
