//! CPU time: this process (getrusage) and the whole system (/proc/stat), as shares of wall time.

use crate::metrics::name as metric;
use std::collections::BTreeMap;
use std::time::Instant;

/// Aggregate jiffies from the first line of /proc/stat.
#[derive(Debug, Clone, Copy, Default)]
struct SystemTicks {
    user: u64,
    system: u64,
    iowait: u64,
    total: u64,
}

fn system_ticks() -> Option<SystemTicks> {
    let text = std::fs::read_to_string("/proc/stat").ok()?;
    parse_stat(&text)
}

fn parse_stat(text: &str) -> Option<SystemTicks> {
    let line = text.lines().find(|l| l.starts_with("cpu "))?;
    let v: Vec<u64> = line
        .split_whitespace()
        .skip(1)
        .filter_map(|x| x.parse().ok())
        .collect();
    if v.len() < 5 {
        return None;
    }
    // user nice system idle iowait irq softirq steal (guest time is already in user)
    let total = v.iter().take(8).sum();
    Some(SystemTicks {
        user: v[0] + v[1],
        system: v[2] + v.get(5).copied().unwrap_or(0) + v.get(6).copied().unwrap_or(0),
        iowait: v[4],
        total,
    })
}

/// A starting point; `finish` turns it into percentages.
pub struct CpuSample {
    at: Instant,
    own: (u64, u64),
    sys: Option<SystemTicks>,
}

pub fn start() -> CpuSample {
    CpuSample {
        at: Instant::now(),
        own: crate::sys::process_cpu_ns(),
        sys: system_ticks(),
    }
}

impl CpuSample {
    /// `cpu_user_pct`/`cpu_sys_pct`: fsbench's CPU time over wall time (100 = one core busy);
    /// `system_cpu_*_pct`: the share of all CPUs of the machine (0 to 100).
    pub fn finish(&self, out: &mut BTreeMap<String, f64>) -> (u64, u64) {
        let wall = self.at.elapsed().as_nanos().max(1) as f64;
        let (u, s) = crate::sys::process_cpu_ns();
        let (du, ds) = (u.saturating_sub(self.own.0), s.saturating_sub(self.own.1));
        out.insert(metric::CPU_USER_PCT.into(), du as f64 / wall * 100.0);
        out.insert(metric::CPU_SYS_PCT.into(), ds as f64 / wall * 100.0);
        if let (Some(a), Some(b)) = (self.sys, system_ticks()) {
            let total = b.total.saturating_sub(a.total).max(1) as f64;
            out.insert(
                metric::SYSTEM_CPU_USER_PCT.into(),
                b.user.saturating_sub(a.user) as f64 / total * 100.0,
            );
            out.insert(
                metric::SYSTEM_CPU_SYS_PCT.into(),
                b.system.saturating_sub(a.system) as f64 / total * 100.0,
            );
            out.insert(
                metric::SYSTEM_CPU_IOWAIT_PCT.into(),
                b.iowait.saturating_sub(a.iowait) as f64 / total * 100.0,
            );
        }
        (du, ds)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_proc_stat() {
        let t = parse_stat("cpu  100 5 50 1000 20 3 2 0 0 0\ncpu0 1 2 3 4\n").unwrap();
        assert_eq!((t.user, t.system, t.iowait, t.total), (105, 55, 20, 1180));
        assert!(parse_stat("intr 1 2\n").is_none());
    }
}
