//! Pacing a worker: rate and rate_iops per direction (evenly spaced, or Poisson arrivals), and
//! thinktime after every N I/Os. The driver asks before each I/O and waits when told to.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::{DataGen, Pattern};

pub struct Pacer {
    /// Seconds per byte and per I/O of reads [0] and writes [1].
    per_byte: [f64; 2],
    per_io: [f64; 2],
    poisson: bool,
    due: [Instant; 2],
    think: Option<(Duration, Duration)>,
    think_every: u32,
    since_think: u32,
}

impl Pacer {
    pub fn new(p: &Pattern, start: Instant) -> Pacer {
        let inv = |x: Option<u64>| x.filter(|v| *v > 0).map_or(0.0, |v| 1.0 / v as f64);
        let pace = &p.pace;
        Pacer {
            per_byte: [inv(pace.rate[0]), inv(pace.rate[1])],
            per_io: [inv(pace.rate_iops[0]), inv(pace.rate_iops[1])],
            poisson: pace.poisson,
            due: [start; 2],
            think: pace.thinktime.map(|t| (t, pace.thinktime_spin.min(t))),
            think_every: pace.thinktime_blocks.max(1),
            since_think: 0,
        }
    }

    /// When an I/O of `len` bytes in this direction may be issued: None for now (and its slot in
    /// the schedule is taken), or the instant to wait for.
    #[inline]
    pub fn admit(&mut self, write: bool, len: u64, rng: &mut DataGen) -> Option<Instant> {
        let d = write as usize;
        let iv = (self.per_byte[d] * len as f64).max(self.per_io[d]);
        if iv == 0.0 {
            return None;
        }
        let now = Instant::now();
        if self.due[d] > now {
            return Some(self.due[d]);
        }
        let step = if self.poisson {
            let u = ((rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64).max(1e-12);
            -u.ln() * iv
        } else {
            iv
        };
        // Behind schedule (a slow device, a stall): catch up, but by at most a second's worth.
        let floor = now.checked_sub(Duration::from_secs(1)).unwrap_or(now);
        self.due[d] = self.due[d].max(floor) + Duration::from_secs_f64(step);
        None
    }

    /// Counts an issued I/O; the pause (total, spun part) when one is due.
    #[inline]
    pub fn issued(&mut self) -> Option<(Duration, Duration)> {
        let think = self.think?;
        self.since_think += 1;
        if self.since_think >= self.think_every {
            self.since_think = 0;
            return Some(think);
        }
        None
    }
}

/// Waits until `t` (sleeping; a stop request cuts it short).
pub fn wait_until(t: Instant) {
    wait_until_or(t, &[])
}

/// Waits until `t`; a stop request or a raised flag (steady state reached, exitall) cuts it
/// short.
pub fn wait_until_or(t: Instant, ends: &[Option<&AtomicBool>]) {
    loop {
        let now = Instant::now();
        if now >= t
            || crate::stop::requested().is_some()
            || ends.iter().flatten().any(|f| f.load(Ordering::Relaxed))
        {
            return;
        }
        std::thread::sleep((t - now).min(Duration::from_millis(50)));
    }
}

/// thinktime: `spin` busy, the rest asleep (cut short as `wait_until_or`).
pub fn think(total: Duration, spin: Duration, ends: &[Option<&AtomicBool>]) {
    let start = Instant::now();
    while start.elapsed() < spin {
        std::hint::spin_loop();
    }
    wait_until_or(start + total, ends);
}
