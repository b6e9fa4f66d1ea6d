//! How each I/O is issued beyond its offset and size, from fio's engine options: I/O priorities
//! (prio, prioclass, priohint; cmdprio_* per I/O), atomic writes (atomic), queue-depth probing
//! (latency_target and its companions) and serialize_overlap. Pure data: nothing here does I/O.

use std::time::Duration;

use serde::{Deserialize, Serialize};

use crate::plan::dir::Dir;

/// fio's I/O priority classes (ionice(1)): none, realtime, best effort, idle.
pub const CLASS_RT: u8 = 1;
pub const CLASS_BE: u8 = 2;

/// Linux's ioprio value: class << 13 | hint << 3 | level, with no class meaning best effort
/// (fio's ioprio_value).
pub fn ioprio_value(class: u8, level: u8, hint: u16) -> u16 {
    let class = if class == 0 { CLASS_BE } else { class };
    (u16::from(class) << 13) | (hint << 3) | u16::from(level)
}

/// The parts of an ioprio value, as `class/level/hint` for the record.
pub fn describe(ioprio: u16) -> String {
    let class = match ioprio >> 13 {
        1 => "realtime",
        2 => "best-effort",
        3 => "idle",
        _ => "none",
    };
    format!(
        "{class} level {} hint {}",
        ioprio & 7,
        (ioprio >> 3) & 0x3ff
    )
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct IoOpts {
    /// fio prioclass, prio, priohint: the worker's priority (ioprio_set(2)); None: unset.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub class: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub level: Option<u8>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hint: Option<u16>,
    /// fio's cmdprio_* options (io_uring and libaio): a priority per I/O.
    #[serde(skip_serializing_if = "CmdPrio::is_off")]
    pub cmdprio: CmdPrio,
    /// fio atomic: writes with RWF_ATOMIC (torn-write protection).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub atomic: bool,
    /// fio latency_target and its companions: probe the deepest queue that meets the target.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub latency: Option<LatencyTarget>,
    /// fio serialize_overlap: an I/O overlapping one in flight waits for it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub serialize_overlap: bool,
}

impl IoOpts {
    pub fn is_default(&self) -> bool {
        *self == IoOpts::default()
    }

    /// The worker's ioprio value when prio, prioclass or priohint was given.
    pub fn ioprio(&self) -> Option<u16> {
        if self.class.is_none() && self.level.is_none() && self.hint.is_none() {
            return None;
        }
        Some(ioprio_value(
            self.class.unwrap_or(0),
            self.level.unwrap_or(0),
            self.hint.unwrap_or(0),
        ))
    }
}

/// One entry of cmdprio_bssplit: I/Os of `bs` bytes, `perc` of them with a priority (its own,
/// or cmdprio_class/cmdprio/cmdprio_hint's when None).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SplitPrio {
    pub bs: u64,
    pub perc: u32,
    pub prio: Option<u16>,
}

/// fio's cmdprio options, per direction (reads, writes; fio's `R,W` values).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct CmdPrio {
    pub percentage: [u32; 2],
    /// 0: unset (realtime, fio's default for cmdprio).
    pub class: [u8; 2],
    pub level: [u8; 2],
    pub hint: [u16; 2],
    /// cmdprio_bssplit, per direction; exclusive with `percentage`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bssplit: Option<[Vec<SplitPrio>; 2]>,
}

impl CmdPrio {
    pub fn is_off(&self) -> bool {
        self.percentage == [0, 0] && self.bssplit.is_none()
    }

    /// Where a direction's values are: reads first, then writes (a trim takes the writes').
    fn at(d: Dir) -> usize {
        match d {
            Dir::Read => 0,
            Dir::Write | Dir::Trim => 1,
        }
    }

    /// The priority cmdprio_class, cmdprio and cmdprio_hint give a direction.
    pub fn implicit(&self, dir: Dir) -> u16 {
        let d = CmdPrio::at(dir);
        let class = if self.class[d] == 0 {
            CLASS_RT
        } else {
            self.class[d]
        };
        ioprio_value(class, self.level[d], self.hint[d])
    }

    /// The share (percent) of I/Os of this direction and size that get a priority of their own.
    pub fn share(&self, dir: Dir, len: u64) -> u32 {
        let d = CmdPrio::at(dir);
        match &self.bssplit {
            None => self.percentage[d],
            Some(split) => split[d]
                .iter()
                .filter(|e| e.bs == len)
                .map(|e| e.perc)
                .sum(),
        }
    }

    /// The priority of an I/O given a draw `r` from 0 to 99 (fio's fio_cmdprio_set_ioprio): None
    /// when it gets none of its own.
    pub fn pick(&self, dir: Dir, len: u64, r: u32) -> Option<u16> {
        let d = CmdPrio::at(dir);
        if r >= self.share(dir, len) {
            return None;
        }
        let Some(split) = &self.bssplit else {
            return Some(self.implicit(dir));
        };
        let mut acc = 0;
        for e in split[d].iter().filter(|e| e.bs == len) {
            acc += e.perc;
            if r < acc {
                return Some(e.prio.unwrap_or_else(|| self.implicit(dir)));
            }
        }
        None
    }
}

/// fio's latency_target, latency_window, latency_percentile and latency_run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct LatencyTarget {
    pub target: Duration,
    /// Each queue depth is judged over this long.
    pub window: Duration,
    /// The share of I/Os (percent) that must complete within the target.
    pub percentile: f64,
    /// Keep running once the depth is found, adjusting it (fio latency_run=1).
    pub run: bool,
}

impl Default for LatencyTarget {
    fn default() -> LatencyTarget {
        LatencyTarget {
            target: Duration::ZERO,
            window: Duration::ZERO,
            percentile: 100.0,
            run: false,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ioprio_values_are_linuxs() {
        assert_eq!(ioprio_value(1, 0, 0), 1 << 13);
        assert_eq!(ioprio_value(0, 7, 0), (2 << 13) | 7);
        assert_eq!(ioprio_value(2, 0, 3), (2 << 13) | (3 << 3));
        assert_eq!(describe(ioprio_value(3, 0, 0)), "idle level 0 hint 0");
    }

    #[test]
    fn cmdprio_picks_by_percentage_and_by_block_size() {
        let c = CmdPrio {
            percentage: [20, 0],
            ..Default::default()
        };
        assert_eq!(c.pick(Dir::Read, 4096, 19), Some(1 << 13));
        assert_eq!(c.pick(Dir::Read, 4096, 20), None);
        assert_eq!(c.pick(Dir::Write, 4096, 0), None);
        let e = |bs, perc, prio| SplitPrio { bs, perc, prio };
        let c = CmdPrio {
            bssplit: Some([
                vec![
                    e(65536, 25, Some(ioprio_value(1, 1, 0))),
                    e(65536, 75, None),
                ],
                vec![],
            ]),
            class: [3, 3],
            level: [2, 2],
            ..Default::default()
        };
        assert_eq!(c.pick(Dir::Read, 65536, 10), Some(ioprio_value(1, 1, 0)));
        assert_eq!(c.pick(Dir::Read, 65536, 99), Some(ioprio_value(3, 2, 0)));
        assert_eq!(c.pick(Dir::Read, 1 << 20, 0), None);
        assert_eq!(c.pick(Dir::Write, 65536, 0), None);
    }
}
