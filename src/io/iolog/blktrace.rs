//! blktrace's binary trace (what `blkparse -d` writes, or one CPU's `blktrace` file), as fio
//! replays it: re-implemented from the record layout blktrace documents (blktrace_api.h): a
//! 48-byte header per event (magic and version, sequence, time in ns, sector, bytes, action,
//! pid, device, cpu, error, the length of the payload that follows), in the byte order of the
//! machine that traced (told by the magic). The queue events (`Q`) become the operations:
//! reads and writes at sector x 512, flushes as syncs, discards as trims (not replayed).

use std::time::Duration;

use super::{Adjust, Op, OpKind, Replay};

const HEADER: usize = 48;
/// The action of a queued request (__BLK_TA_QUEUE).
const TA_QUEUE: u32 = 1;
/// Categories (the action's high 16 bits).
const TC_WRITE: u32 = 1 << 1;
const TC_FLUSH: u32 = 1 << 2;
const TC_NOTIFY: u32 = 1 << 10;
const TC_DISCARD: u32 = 1 << 13;

/// Words of a trace in the byte order of the machine that traced it.
#[derive(Clone, Copy)]
struct Order {
    le: bool,
}

impl Order {
    fn u16_at(self, b: &[u8], i: usize) -> u16 {
        let w = [b[i], b[i + 1]];
        if self.le {
            u16::from_le_bytes(w)
        } else {
            u16::from_be_bytes(w)
        }
    }

    fn u32_at(self, b: &[u8], i: usize) -> u32 {
        let w = [b[i], b[i + 1], b[i + 2], b[i + 3]];
        if self.le {
            u32::from_le_bytes(w)
        } else {
            u32::from_be_bytes(w)
        }
    }

    fn u64_at(self, b: &[u8], i: usize) -> u64 {
        let (hi, lo) = if self.le {
            (self.u32_at(b, i + 4), self.u32_at(b, i))
        } else {
            (self.u32_at(b, i), self.u32_at(b, i + 4))
        };
        (hi as u64) << 32 | lo as u64
    }
}

/// Reads a blktrace's events into a replay; errors name the event's byte offset.
pub fn parse(bytes: &[u8], adj: Adjust) -> Result<Replay, String> {
    let Some(first) = bytes.get(..4) else {
        return Err("1: shorter than one blktrace event".into());
    };
    let word = u32::from_le_bytes([first[0], first[1], first[2], first[3]]);
    let order = Order {
        le: word & 0xffff_ff00 == super::BLKTRACE_MAGIC,
    };
    let mut r = Replay::default();
    let mut at = 0usize;
    let mut start: Option<u64> = None;
    while at < bytes.len() {
        let Some(h) = bytes.get(at..at + HEADER) else {
            return Err(format!(
                "byte {at} of a blktrace: a truncated event (the trace was cut)"
            ));
        };
        if order.u32_at(h, 0) & 0xffff_ff00 != super::BLKTRACE_MAGIC {
            return Err(format!("byte {at} of a blktrace: bad magic, not a blktrace event (a blktrace file holds only events; blkparse -d writes one)"));
        }
        at += HEADER + order.u16_at(h, 46) as usize;
        event(order, h, (&mut start, adj), &mut r);
    }
    Ok(r)
}

/// One event's header: a queued request becomes an operation (a discard is counted as a trim,
/// not kept), due from the first queued one's time.
fn event(o: Order, h: &[u8], (start, adj): (&mut Option<u64>, Adjust), r: &mut Replay) {
    let (time, sector, len, action) = (
        o.u64_at(h, 8),
        o.u64_at(h, 16),
        o.u32_at(h, 24),
        o.u32_at(h, 28),
    );
    let (what, cat) = (action & 0xffff, action >> 16);
    if what != TA_QUEUE || cat & TC_NOTIFY != 0 {
        return;
    }
    let t0 = *start.get_or_insert(time);
    let us = time.saturating_sub(t0) / 1000;
    let kind = if cat & TC_DISCARD != 0 {
        r.trims += 1;
        return;
    } else if len == 0 && cat & TC_FLUSH != 0 {
        OpKind::Sync
    } else if len == 0 {
        return;
    } else if cat & TC_WRITE != 0 {
        OpKind::Write
    } else {
        OpKind::Read
    };
    let mut offset = sector.saturating_mul(512) / adj.scale.max(1);
    if adj.align > 1 {
        offset &= !(adj.align - 1);
    }
    r.ops.push(Op {
        at: Duration::from_micros(us.saturating_mul(100) / adj.time_scale.max(1) as u64),
        kind,
        offset,
        len: len as u64,
    });
}

#[cfg(test)]
mod tests {
    use super::*;

    /// One event as blktrace lays it out (little-endian).
    fn event(time: u64, sector: u64, bytes: u32, action: u32, pdu: &[u8]) -> Vec<u8> {
        let mut e = Vec::new();
        e.extend(0x6561_7407u32.to_le_bytes());
        e.extend(1u32.to_le_bytes());
        e.extend(time.to_le_bytes());
        e.extend(sector.to_le_bytes());
        e.extend(bytes.to_le_bytes());
        e.extend(action.to_le_bytes());
        e.extend([0u8; 12]);
        e.extend([0u8; 2]);
        e.extend((pdu.len() as u16).to_le_bytes());
        e.extend(pdu);
        e
    }

    #[test]
    fn queue_events_become_reads_writes_and_syncs() {
        let q = TA_QUEUE;
        let mut t = event(5_000_000, 8, 4096, q | (TC_WRITE << 16), &[]);
        t.extend(event(5_500_000, 8, 4096, 6 | (TC_WRITE << 16), &[])); // an issue: skipped
        t.extend(event(7_000_000, 100, 8192, q, &[1, 2, 3]));
        t.extend(event(8_000_000, 0, 0, q | (TC_FLUSH << 16), &[]));
        t.extend(event(9_000_000, 64, 4096, q | (TC_DISCARD << 16), &[]));
        let r = super::super::parse(&t, Adjust::default()).unwrap();
        let got: Vec<(u128, OpKind, u64, u64)> = r
            .ops
            .iter()
            .map(|o| (o.at.as_micros(), o.kind, o.offset, o.len))
            .collect();
        assert_eq!(
            got,
            [
                (0, OpKind::Write, 4096, 4096),
                (2000, OpKind::Read, 51200, 8192),
                (3000, OpKind::Sync, 0, 0)
            ]
        );
        assert_eq!(r.trims, 1);
        let mut cut = t.clone();
        cut.truncate(t.len() - 10);
        assert!(super::super::parse(&cut, Adjust::default())
            .unwrap_err()
            .contains("truncated"));
        let mut bad = t;
        bad[48] = 0;
        bad[49] = 0;
        assert!(super::super::parse(&bad, Adjust::default())
            .unwrap_err()
            .contains("byte 48 of a blktrace: bad magic"));
    }
}
