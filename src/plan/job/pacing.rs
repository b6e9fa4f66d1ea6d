//! How a job paces itself (fio's rate, rate_iops, thinktime, flow), said as its options say it:
//! the phase frame's limiter may then be `paced`.

use super::Job;

impl Job {
    /// How the job paces itself, as its options say, when it does (the limiter may then be
    /// `paced`).
    pub fn pacing(&self) -> Option<String> {
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
        if let Some(r) = per_dir(self.rate, crate::plan::units::format_bytes) {
            how.push(format!("rate={r}/s"));
        }
        if let Some(r) = per_dir(self.rate_iops, |n| n.to_string()) {
            how.push(format!("rate_iops={r}"));
        }
        if let Some(t) = self.thinktime {
            how.push(format!("thinktime={t:?}"));
        }
        if self.flow != 0 {
            how.push(format!("flow={}", self.flow));
        }
        (!how.is_empty()).then(|| how.join(", "))
    }
}
