//! fio's steady state of a job: what it judges (IOPS, bandwidth or latency, their spread or
//! slope), against which limit, over which window.

use std::time::Duration;

use serde::{Deserialize, Serialize};

/// What fio's steadystate judges: the spread of the samples around their mean, or their
/// least-squares slope, of IOPS, of bandwidth or of the mean completion latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SteadyKind {
    Iops,
    IopsSlope,
    Bw,
    BwSlope,
    Lat,
    LatSlope,
}

impl SteadyKind {
    pub const ALL: [(SteadyKind, &'static str); 6] = [
        (SteadyKind::Iops, "iops"),
        (SteadyKind::IopsSlope, "iops_slope"),
        (SteadyKind::Bw, "bw"),
        (SteadyKind::BwSlope, "bw_slope"),
        (SteadyKind::Lat, "lat"),
        (SteadyKind::LatSlope, "lat_slope"),
    ];

    pub fn name(self) -> &'static str {
        SteadyKind::ALL
            .iter()
            .find(|k| k.0 == self)
            .map_or("iops", |k| k.1)
    }

    /// Judges IOPS (else bandwidth).
    pub fn iops(self) -> bool {
        matches!(self, SteadyKind::Iops | SteadyKind::IopsSlope)
    }

    /// Judges the mean completion latency (ns) of each sample's I/Os.
    pub fn lat(self) -> bool {
        matches!(self, SteadyKind::Lat | SteadyKind::LatSlope)
    }

    pub fn slope(self) -> bool {
        matches!(
            self,
            SteadyKind::IopsSlope | SteadyKind::BwSlope | SteadyKind::LatSlope
        )
    }
}

/// fio's steadystate=KIND:LIMIT[%] with ss_dur and ss_ramp; `headline` (compare --until-steady)
/// makes the steady window's figures the record's own.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Steady {
    pub kind: SteadyKind,
    /// The limit: IOPS, bytes per second (per second, for a slope), or a percentage of the
    /// window's mean when `pct`.
    pub limit: f64,
    pub pct: bool,
    /// The rolling window (ss_dur), one sample a second; zero: not judged (fio's default).
    pub dur: Duration,
    /// How long after the job's ramp_time the first sample is taken (ss_ramp).
    pub ramp: Duration,
    #[serde(default)]
    pub headline: bool,
    /// A sample every this long (fio's steadystate_check_interval); zero: every second.
    #[serde(default, skip_serializing_if = "Duration::is_zero")]
    pub interval: Duration,
}

impl Default for Steady {
    /// fio's default criterion, iops_slope:0.01%, not judged until ss_dur is given.
    fn default() -> Steady {
        Steady {
            kind: SteadyKind::IopsSlope,
            limit: 0.01,
            pct: true,
            dur: Duration::ZERO,
            ramp: Duration::ZERO,
            headline: false,
            interval: Duration::ZERO,
        }
    }
}

impl Steady {
    /// The criterion as fio spells it: `iops_slope:0.3%`.
    pub fn criterion(&self) -> String {
        format!(
            "{}:{}{}",
            self.kind.name(),
            self.limit,
            if self.pct { "%" } else { "" }
        )
    }

    /// Whole seconds of the window (at least 1 when judged).
    pub fn window(&self) -> usize {
        self.dur.as_secs_f64().round() as usize
    }

    /// The time between samples (1 s unless steadystate_check_interval says otherwise).
    pub fn every(&self) -> Duration {
        if self.interval.is_zero() {
            Duration::from_secs(1)
        } else {
            self.interval
        }
    }

    /// The samples in the window: ss_dur over the interval.
    pub fn samples(&self) -> usize {
        (self.dur.as_secs_f64() / self.every().as_secs_f64()).round() as usize
    }
}
