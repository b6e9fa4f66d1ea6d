//! Pacing a worker: a rate in bytes or I/Os per second per direction (evenly spaced, or Poisson
//! arrivals), and a pause after every N I/Os. The loop asks before each I/O and waits when told.

use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::clock::{Clock, Ns};
use super::DataGen;
use crate::plan::dir::{Dir, PerDir};

/// Bytes and I/Os per second per direction (None: not limited).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    pub bytes: PerDir<Option<u64>>,
    pub ios: PerDir<Option<u64>>,
    pub arrivals: Arrivals,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrivals {
    Even,
    Poisson,
}

/// A pause of `total` (its first `spin` busy) after every `every` I/Os.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Think {
    pub total: Duration,
    pub spin: Duration,
    pub every: u32,
}

pub struct Pacer {
    /// Seconds per byte and per I/O of each direction (0: no limit).
    per_byte: PerDir<f64>,
    per_io: PerDir<f64>,
    arrivals: Arrivals,
    due: PerDir<Ns>,
}

impl Pacer {
    pub fn new(r: &Rate, start: Ns) -> Pacer {
        let inv = |x: &Option<u64>| x.filter(|v| *v > 0).map_or(0.0, |v| 1.0 / v as f64);
        Pacer {
            per_byte: r.bytes.map(|_, x| inv(x)),
            per_io: r.ios.map(|_, x| inv(x)),
            arrivals: r.arrivals,
            due: PerDir::new(|_| start),
        }
    }

    /// When an I/O of `len` bytes in direction `d` may be issued: None for now (and its slot in
    /// the schedule is taken), or the time to wait for.
    #[inline]
    pub fn admit(&mut self, d: Dir, len: u64, rng: &mut DataGen, clock: &Clock) -> Option<Ns> {
        let iv = (self.per_byte[d] * len as f64).max(self.per_io[d]);
        if iv == 0.0 {
            return None;
        }
        let now = clock.now();
        if self.due[d] > now {
            return Some(self.due[d]);
        }
        let step = match self.arrivals {
            Arrivals::Poisson => {
                let u = ((rng.next_u64() >> 11) as f64 / (1u64 << 53) as f64).max(1e-12);
                -u.ln() * iv
            }
            Arrivals::Even => iv,
        };
        // Behind schedule (a slow device, a stall): catch up, but by at most a second's worth.
        let floor = Ns(now.0.saturating_sub(1_000_000_000));
        self.due[d] = self.due[d].max(floor).after(Duration::from_secs_f64(step));
        None
    }
}

/// Counts I/Os towards the next pause.
pub struct Thinker {
    think: Think,
    since: u32,
}

impl Thinker {
    pub fn new(think: Think) -> Thinker {
        Thinker {
            think: Think {
                spin: think.spin.min(think.total),
                every: think.every.max(1),
                ..think
            },
            since: 0,
        }
    }

    /// Counts an issued I/O; the pause when one is due.
    #[inline]
    pub fn issued(&mut self) -> Option<Think> {
        self.since += 1;
        if self.since >= self.think.every {
            self.since = 0;
            return Some(self.think);
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

/// A pause: `spin` of it busy, the rest asleep (cut short as `wait_until_or`).
pub fn think(t: Think, ends: &[Option<&AtomicBool>]) {
    let start = Instant::now();
    while start.elapsed() < t.spin {
        std::hint::spin_loop();
    }
    wait_until_or(start + t.total, ends);
}
