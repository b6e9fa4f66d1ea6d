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

/// What a job tells the kernel of its access pattern when it opens its files (fio's
/// fadvise_hint, posix_fadvise(2)): on a buffered file it sets the readahead.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Fadvise {
    /// By the job's rw: random for random jobs, sequential otherwise (fio's fadvise_hint=1,
    /// its default).
    #[default]
    Pattern,
    /// Nothing (fadvise_hint=0).
    Off,
    Sequential,
    Random,
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
    /// fio's iodepth_batch_complete_min and iodepth_batch_complete_max, as given.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reap_min: Option<u32>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reap_max: Option<u32>,
    /// fio's iomem_align (mem_align): the buffers start this many bytes past a page boundary.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub mem_align: Option<u32>,
    /// The job comes from a fio job file with fio's iomem=malloc (its default): without
    /// O_DIRECT or mem_align, its buffers sit where malloc puts them, not on a page boundary.
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub malloc_buffers: bool,
    #[serde(skip_serializing_if = "is_default")]
    pub fadvise: Fadvise,
}

/// Where glibc's malloc puts a large allocation (one mmap'd chunk): 16 bytes past a page
/// boundary, after the chunk's header. fio's buffers of a buffered job sit there.
pub const MALLOC_LEAD: usize = 16;

impl JobMore {
    /// How far past a page boundary the job's buffers start, by fio's rule (backend.c): with
    /// O_DIRECT or mem_align, a page boundary plus mem_align; otherwise where fio's memory came
    /// from (malloc: `MALLOC_LEAD`; mmap or shm: a page boundary).
    pub fn buffer_lead(&self, direct: bool) -> usize {
        match self.mem_align {
            Some(a) => a as usize,
            None if self.malloc_buffers && !direct => MALLOC_LEAD,
            None => 0,
        }
    }

    /// How many completions one reap takes at most, by fio's rule: iodepth_batch_complete_max,
    /// raised to iodepth_batch_complete_min (default 1) when below it, and at least 1.
    pub fn completions_per_reap(&self) -> usize {
        let min = self.reap_min.unwrap_or(1);
        self.reap_max.unwrap_or(0).max(min).max(1) as usize
    }
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

#[cfg(test)]
mod tests {
    use super::*;

    /// fio's rules: one completion per reap unless iodepth_batch_complete_max (or a larger
    /// minimum) says more; buffers on a page boundary unless a fio job file's malloc'd buffers
    /// are buffered, or mem_align moves them.
    #[test]
    fn reaps_and_buffer_leads_follow_fio() {
        let m = |min, max| JobMore {
            reap_min: min,
            reap_max: max,
            ..JobMore::default()
        };
        assert_eq!(m(None, None).completions_per_reap(), 1);
        assert_eq!(m(None, Some(16)).completions_per_reap(), 16);
        assert_eq!(m(Some(4), None).completions_per_reap(), 4);
        assert_eq!(m(Some(4), Some(2)).completions_per_reap(), 4);
        assert_eq!(m(Some(0), Some(0)).completions_per_reap(), 1);
        let fio = JobMore {
            malloc_buffers: true,
            ..JobMore::default()
        };
        assert_eq!(fio.buffer_lead(false), MALLOC_LEAD);
        assert_eq!(fio.buffer_lead(true), 0);
        assert_eq!(JobMore::default().buffer_lead(false), 0);
        let aligned = JobMore {
            mem_align: Some(512),
            ..fio
        };
        assert_eq!(aligned.buffer_lead(true), 512);
        assert_eq!(aligned.buffer_lead(false), 512);
    }
}
