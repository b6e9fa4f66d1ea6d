//! What a write's buffer holds (fio's io_u_fill): the job's pattern, fresh data (regenerated, or
//! a buffer filled once and stamped afresh each time it is written again), a repeat of earlier
//! data for the deduped share, then the verify header.

use crate::io::verify::Verifier;
use crate::io::worker::{Data, FillPlan, Fresh};
use crate::io::{DataGen, WriteData};

pub struct Fill<'a> {
    data: &'a WriteData,
    plan: Data,
    stamp: Option<Verifier>,
    /// The seed of the repeated buffer of a deduped write without a working set.
    seed: u64,
    /// Slots whose buffer holds a full fill of its own (then scrambling keeps it unique).
    filled: Vec<bool>,
    /// Unique writes made so far (the first are the dedupe working set's pages).
    unique: u64,
}

impl<'a> Fill<'a> {
    pub fn new(plan: &FillPlan, data: &'a WriteData, seed: u64, slots: usize) -> Fill<'a> {
        Fill {
            data,
            plan: plan.data.clone(),
            stamp: plan.stamp.as_ref().map(|v| Verifier::new(v, seed)),
            seed,
            filled: vec![false; slots],
            unique: 0,
        }
    }

    /// Fills the buffer of a write to the loop offset `at` through `slot`.
    #[inline]
    pub fn write(&mut self, buf: &mut [u8], slot: usize, at: u64, rng: &mut DataGen) {
        let full = match &self.plan {
            Data::Pattern(p) => {
                for (b, x) in buf.iter_mut().zip(p.iter().cycle()) {
                    *b = *x;
                }
                false
            }
            Data::Fresh(f) => self.fresh(*f, buf, slot, rng),
            Data::Dedupe { pct, set, fresh } => {
                if (rng.next_u64() % 100) < *pct as u64 {
                    match set {
                        // A page of the working set, drawn at random (fio's working_set).
                        Some(ws) => {
                            let (t, k) = (rng.next_u64() % ws.of, rng.next_u64() % ws.per);
                            self.data.fill_page(buf, &mut ws.page(t, k));
                        }
                        None => self.data.fill(buf, &mut DataGen::new(self.seed ^ 0xd0d0)),
                    }
                    false
                } else if let Some(ws) = set.filter(|ws| self.unique < ws.per) {
                    // The job's first unique writes are its pages of the working set.
                    self.data.fill_page(buf, &mut ws.page(ws.me, self.unique));
                    self.unique += 1;
                    false
                } else {
                    let f = *fresh;
                    self.fresh(f, buf, slot, rng)
                }
            }
        };
        self.filled[slot] = full;
        if let Some(v) = &self.stamp {
            v.stamp(buf, at);
            self.filled[slot] = false;
        }
    }

    /// Fresh data: regenerated, or a fresh stamp over a buffer filled before. Whether the
    /// buffer now holds a full fill of its own.
    #[inline]
    fn fresh(&self, f: Fresh, buf: &mut [u8], slot: usize, rng: &mut DataGen) -> bool {
        match f {
            Fresh::Scramble { every } if self.filled[slot] => {
                self.data.scramble(buf, every, rng);
            }
            _ => self.data.fill(buf, rng),
        }
        true
    }

    /// A read replaces the buffer's contents: the next write through `slot` fills it afresh.
    #[inline]
    pub fn read(&mut self, slot: usize) {
        self.filled[slot] = false;
    }
}
