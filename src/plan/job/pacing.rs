//! How a job paces itself (fio's rate, rate_iops, thinktime, flow), as typed parts: the rates
//! it asks per direction, which a limiter checks were reached, and the pacing that has no rate
//! (think time, flow). Said as its options say it (`Display`).

use std::time::Duration;

use super::Job;

/// A job's own pacing.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Pacing {
    /// Bytes per second asked of reads and of writes.
    pub bytes: [Option<u64>; 2],
    /// I/Os per second asked of reads and of writes.
    pub iops: [Option<u64>; 2],
    /// A pause after every few I/Os.
    pub thinktime: Option<Duration>,
    /// fio's flow control weight (0: none).
    pub flow: u64,
}

/// What a phase did per direction (reads, writes): I/Os and bytes per second.
#[derive(Debug, Clone, Copy, Default, PartialEq)]
pub struct Achieved {
    pub iops: [f64; 2],
    pub bytes: [f64; 2],
}

impl Pacing {
    /// The share of its asked rates the job reached (the least over the rates it asks of the
    /// directions it moved, 0 to 1; 0 when it moved nothing); None when it asks none (it
    /// pauses, or follows a flow). `rate_iops=200` asks it of reads and writes alike: a job that
    /// only reads is judged by its reads.
    pub fn reached(&self, a: &Achieved) -> Option<f64> {
        let mut asked = false;
        let mut least: Option<f64> = None;
        for d in 0..2 {
            let moved = a.iops[d] > 0.0 || a.bytes[d] > 0.0;
            for (rate, got) in [(self.bytes[d], a.bytes[d]), (self.iops[d], a.iops[d])] {
                let Some(r) = rate.filter(|r| *r > 0) else {
                    continue;
                };
                asked = true;
                if moved {
                    let share = (got / r as f64).min(1.0);
                    least = Some(least.map_or(share, |l: f64| l.min(share)));
                }
            }
        }
        if asked {
            Some(least.unwrap_or(0.0))
        } else {
            None
        }
    }
}

impl std::fmt::Display for Pacing {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let mut how: Vec<String> = Vec::new();
        let per_dir = |v: [Option<u64>; 2], show: fn(u64) -> String| match v {
            [None, None] => None,
            [r, w] if r == w => r.map(show),
            [r, w] => Some(format!(
                "{},{}",
                r.map(show).unwrap_or_default(),
                w.map(show).unwrap_or_default()
            )),
        };
        if let Some(r) = per_dir(self.bytes, crate::plan::units::format_bytes) {
            how.push(format!("rate={r}/s"));
        }
        if let Some(r) = per_dir(self.iops, |n| n.to_string()) {
            how.push(format!("rate_iops={r}"));
        }
        if let Some(t) = self.thinktime {
            how.push(format!("thinktime={t:?}"));
        }
        if self.flow != 0 {
            how.push(format!("flow={}", self.flow));
        }
        f.write_str(&how.join(", "))
    }
}

impl Job {
    /// How the job paces itself, when it does (the limiter may then be `paced`).
    pub fn pacing(&self) -> Option<Pacing> {
        let p = Pacing {
            bytes: self.rate,
            iops: self.rate_iops,
            thinktime: self.thinktime,
            flow: self.flow,
        };
        (p != Pacing::default()).then_some(p)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_rate_is_reached_by_its_least_direction_and_a_pause_has_none() {
        let p = Pacing {
            iops: [Some(200), Some(100)],
            ..Default::default()
        };
        assert_eq!(p.to_string(), "rate_iops=200,100");
        let got = Achieved {
            iops: [200.0, 50.0],
            ..Default::default()
        };
        assert_eq!(p.reached(&got), Some(0.5));
        // A job that only reads is judged by its reads; one that moved nothing reached nothing.
        let reads = Achieved {
            iops: [190.0, 0.0],
            ..Default::default()
        };
        assert_eq!(p.reached(&reads), Some(0.95));
        assert_eq!(p.reached(&Achieved::default()), Some(0.0));
        let pause = Pacing {
            thinktime: Some(Duration::from_millis(5)),
            ..Default::default()
        };
        assert_eq!(pause.reached(&got), None);
        assert_eq!(pause.to_string(), "thinktime=5ms");
    }
}
