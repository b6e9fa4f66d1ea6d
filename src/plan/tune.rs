//! What `fsbench tune` optimises and constrains, as the plan carries it into the manifest (so a
//! resumed tune, and the report of one, replay its race from the records alone).

use serde::{Deserialize, Serialize};

/// What a tune optimises and constrains, as the plan carries it (the report replays the race).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct TuneMeta {
    /// The objective: a catalogue metric and whether higher is better.
    pub metric: String,
    pub higher_is_better: bool,
    /// Only this test's records (all the workload's records otherwise: their geometric mean).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub test: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub slos: Vec<Slo>,
    /// Survivors whose ratio to the leader lies within 1 ± this are tied (0.05: 5%).
    pub tie: f64,
    /// Family-wise significance of a round's drops (Holm).
    pub alpha: f64,
    /// The candidates, in the order they were given (the first is "the default" of the verdict
    /// when it is a plain filesystem).
    pub candidates: Vec<String>,
}

/// A constraint: `lat_p99_ns < 2000000` (`--slo 'lat_p99<2ms'`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Slo {
    pub metric: String,
    pub below: bool,
    pub value: f64,
    /// As the user wrote it.
    pub text: String,
}
