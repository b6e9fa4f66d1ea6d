//! More of a fio job's settings (issue 29 part 5), apart from `Job`'s own fields: fio's
//! reporting groups and exit_what, its error lists, dedupe modes and sequence distribution.

use serde::{Deserialize, Serialize};

/// Which jobs end when a job with exitall ends (fio's exit_what).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ExitWhat {
    /// The jobs of its reporting group (fio's default).
    #[default]
    Group,
    /// Every running job (the phase's); the next stonewalled group then runs.
    Stonewall,
    /// Every job: the running ones end, the later groups do not run.
    All,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct JobMore {
    /// The job starts a new reporting group (fio's new_group); so does stonewall.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub new_group: bool,
    #[serde(skip_serializing_if = "is_default")]
    pub exit_what: ExitWhat,
    /// The errnos of failed reads, writes and verifies the job goes past (fio's ignore_error);
    /// an empty list: fio's non-fatal ones (EIO, EILSEQ) when continue_on_error names the
    /// direction.
    #[serde(skip_serializing_if = "is_default")]
    pub ignore_error: [Vec<i32>; 3],
    /// fio's random_sequence_stride (kept for a sequence distribution given after it).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub seq_stride: bool,
    /// fio's dedupe_mode=working_set: a deduped write copies one of the job's first unique
    /// pages (this percentage of its size), not the last unique one (repeat).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dedupe_working_set: bool,
    /// fio's dedupe_working_set_percentage (default 5).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dedupe_ws_pct: Option<u32>,
    /// fio's dedupe_global: the working set is shared by every job that sets it.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub dedupe_global: bool,
    /// fio's wait_for: the job's workers start once every worker of this (earlier) job is done.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub wait_for: Option<String>,
    /// buffer_pattern and verify_pattern values with a `'file'` piece, as written: the bytes
    /// are read when the job runs (workload::block's pattern_files).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub pattern_src: Vec<(String, String)>,
    /// fio's zonemode=strided, and its zonesize, zonerange and zoneskip in bytes (kept
    /// whatever the zonemode, as fio reads them).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub strided: bool,
    #[serde(skip_serializing_if = "is_default")]
    pub zones: Strided,
}

/// fio's strided zones: I/O stays in a zone of `range` bytes (0: `size`) until `size` bytes are
/// done, then moves on by `range + skip` (wrapping at the end of the region).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct Strided {
    pub size: u64,
    pub range: u64,
    pub skip: u64,
}

impl Strided {
    /// As run: the zone's range is its size when zonerange is not given.
    pub fn resolved(self) -> Strided {
        Strided {
            range: if self.range == 0 {
                self.size
            } else {
                self.range
            },
            ..self
        }
    }
}

fn is_default<T: Default + PartialEq>(t: &T) -> bool {
    *t == T::default()
}
