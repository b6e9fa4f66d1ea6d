//! The block I/O job model, as fio understands a job (fio's thread_options: one flat struct,
//! serde): the fio job-file parser (`fio::jobfile`, its options in `fio::options`) and the presets
//! both produce it, and the block workload lowers it into the I/O loop's parts. Pure data:
//! nothing here does I/O.

use std::time::Duration;

use serde::{Deserialize, Serialize};

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rw {
    Read,
    Write,
    RandRead,
    RandWrite,
    /// Sequential mixed reads and writes (fio `rw` / `readwrite`).
    Rw,
    RandRw,
    /// Trims (fio `trim`, `randtrim`): hole punching on a file, discard on a block device.
    Trim,
    RandTrim,
    /// Each block trimmed, then written (fio `trimwrite`, `randtrimwrite`).
    TrimWrite,
    RandTrimWrite,
}

impl Rw {
    pub fn random(self) -> bool {
        matches!(
            self,
            Rw::RandRead | Rw::RandWrite | Rw::RandRw | Rw::RandTrim | Rw::RandTrimWrite
        )
    }

    /// Does the job change the file's contents (writes or trims)?
    pub fn writes(self) -> bool {
        !matches!(self, Rw::Read | Rw::RandRead)
    }

    pub fn reads(self) -> bool {
        matches!(self, Rw::Read | Rw::RandRead | Rw::Rw | Rw::RandRw)
    }

    pub fn trims(self) -> bool {
        matches!(
            self,
            Rw::Trim | Rw::RandTrim | Rw::TrimWrite | Rw::RandTrimWrite
        )
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum BlockSize {
    Fixed(u64),
    /// Uniformly chosen between the bounds, in multiples of the lower one (fio `bsrange`).
    Range(u64, u64),
    /// Sizes with percentages that add up to 100 (fio `bssplit`).
    Split(Vec<(u64, u32)>),
}

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SizeSpec {
    Bytes(u64),
    /// A share of the target's free space (or of the device or file).
    Percent(f64),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EngineKind {
    /// pread/pwrite (fio `sync` and `psync`).
    Sync,
    /// preadv/pwritev (fio `pvsync`).
    Pvsync,
    /// preadv2/pwritev2 (fio `pvsync2`).
    Pvsync2,
    IoUring,
    /// Linux native AIO (fio `libaio`).
    Libaio,
    /// No I/O: measures the framework itself.
    Null,
}

/// Where random offsets fall (fio `random_distribution`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum Distribution {
    /// Uniform (with the random map: every block once per pass).
    #[default]
    Random,
    /// Zipf with exponent theta (fio `zipf:θ`).
    Zipf(f64),
    /// Pareto with power h (fio `pareto:h`).
    Pareto(f64),
    /// Normal with a deviation of sigma percent of the region around its middle (fio `normal:σ`).
    Normal(f64),
    /// Zones: (share of accesses %, share of the region %) (fio `zoned`).
    Zoned(Vec<(f64, f64)>),
    /// Zones: (share of accesses %, bytes) (fio `zoned_abs`).
    ZonedAbs(Vec<(f64, u64)>),
    /// Block indices in this order, over and over (fio `sequence:2,0,1`); with `stride` each
    /// round moves on by the sequence's length (fio's random_sequence_stride).
    Sequence { blocks: Vec<u64>, stride: bool },
}

/// Opening the file with O_SYNC or O_DSYNC (fio `sync=1` / `sync=dsync`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum OpenSync {
    #[default]
    None,
    Sync,
    Dsync,
}

mod logs;
mod pacing;
mod parts;
pub mod per_io;
mod steady;
pub use logs::{FioLogs, LogWindow, ReplaySpec};
pub use pacing::{Achieved, Pacing};
pub use parts::{
    ContinueOn, ExitWhat, Fadvise, Failing, FileService, FileServiceKind, Strided, Verify,
    MALLOC_LEAD,
};
pub use steady::{Steady, SteadyKind};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(default)]
pub struct Job {
    pub name: String,
    pub rw: Rw,
    /// Percentage of reads in mixed jobs.
    pub rwmixread: u32,
    /// Block size (of reads, and of writes unless `write_bs` is set).
    pub bs: BlockSize,
    /// Block size of writes when it differs (fio `bs=4k,64k`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub write_bs: Option<BlockSize>,
    pub iodepth: u32,
    pub numjobs: u32,
    pub direct: bool,
    pub size: Option<SizeSpec>,
    /// Bytes of I/O to do before the job ends (fio io_size / io_limit); without it, one pass over
    /// `size`. With the random map, a random job below its size visits that many distinct blocks.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub io_size: Option<u64>,
    /// The job ends after this many I/Os (fio number_ios).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub number_ios: Option<u64>,
    /// Passes over the region (fio loops).
    pub loops: u32,
    pub runtime: Option<Duration>,
    pub time_based: bool,
    pub ramp_time: Option<Duration>,
    /// The job starts this long after the others of its group (fio startdelay).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub startdelay: Option<Duration>,
    /// fsync after every N writes (0: never).
    pub fsync: u32,
    /// fdatasync after every N writes (0: never).
    pub fdatasync: u32,
    pub end_fsync: bool,
    /// O_SYNC / O_DSYNC on open (fio sync=).
    pub open_sync: OpenSync,
    pub engine: EngineKind,
    /// Percentage of each buffer that compresses (0: incompressible, the default).
    pub compress_pct: u32,
    /// Percentage of writes whose buffer repeats an earlier one (fio dedupe_percentage).
    pub dedupe_pct: u32,
    /// fio refill_buffers. Some(true): regenerate every write buffer in full. Some(false): fio's
    /// own default, a new stamp per sector over a reused buffer (cheaper, but compresses when a
    /// filesystem's compression unit spans several small writes). None, fsbench's default:
    /// data nothing can compress or deduplicate at about fio's cost: writes of 64 KiB and more
    /// cycle through a 16 MiB ring of random buffers with a fresh stamp per sector, smaller
    /// ones are regenerated in full (`io::data`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub refill_buffers: Option<bool>,
    /// Draw random offsets independently (fio norandommap); by default every block is visited
    /// once per pass over the file, as fio does.
    pub norandommap: bool,
    /// Where random offsets fall.
    pub distribution: Distribution,
    /// Where the distribution's most likely offsets sit, 0 to 1 of the region (fio's second
    /// value of random_distribution); None: zipf and pareto scatter their hot blocks over the
    /// region, normal centres on the middle.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dist_center: Option<f64>,
    /// Share of a random job's I/Os that are random; the rest continue sequentially.
    pub random_pct: u32,
    /// rw=read:8k (a hole after each sequential I/O) or rw=randread:8 (a new random offset every
    /// 8 I/Os, the ones between as `rw_sequencer` says).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rw_mod: Option<u64>,
    /// rw=read:-8k: the hole is negative; sequential I/O steps back by it less the block.
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub rw_backwards: bool,
    /// rw_sequencer=identical: the I/Os between random offsets repeat the offset.
    pub rw_identical: bool,
    /// The seed of the job's random streams (fio randseed; randrepeat=0 picks a fresh one).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub randseed: Option<u64>,
    /// Start of the region in the file (fio offset), and each clone's step (offset_increment).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<SizeSpec>,
    pub offset_increment: u64,
    /// Offsets are multiples of this (fio blockalign; default: the smallest block).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub blockalign: Option<u64>,
    /// Bytes per second of reads and of writes (fio rate=R,W).
    pub rate: [Option<u64>; 2],
    /// I/Os per second of reads and of writes (fio rate_iops).
    pub rate_iops: [Option<u64>; 2],
    /// The job fails when its bandwidth falls below this (fio rate_min).
    pub rate_min: [Option<u64>; 2],
    /// Poisson arrivals at the asked rate instead of even spacing (fio rate_process=poisson).
    pub rate_poisson: bool,
    /// Pause after every `thinktime_blocks` I/Os; the first `thinktime_spin` of it busy.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinktime: Option<Duration>,
    pub thinktime_blocks: u32,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub thinktime_spin: Option<Duration>,
    /// Delete the job's files when it ends (fio unlink).
    pub unlink: bool,
    /// Drop the file's pages before the job (fio invalidate, default 1).
    pub invalidate: bool,
    /// May the job create its file (fio allow_file_create, default 1).
    pub allow_file_create: bool,
    /// Latency percentiles to report besides the usual ones (fio percentile_list).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub percentiles: Vec<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub verify: Option<Verify>,
    pub filename: Option<String>,
    /// The files after `filename` (fio's `filename=a:b:c`), shared by the job's clones.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub more_files: Vec<String>,
    /// Files per worker (fio's nrfiles; with `filename=a:b`, the names' count), default 1.
    pub nrfiles: u32,
    /// Each file's size (fio's filesize); without it, a share of `size` (size / nrfiles).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub filesize: Option<u64>,
    /// How a worker moves between its files (fio's file_service_type).
    pub file_service: FileService,
    pub directory: Option<String>,
    pub stonewall: bool,
    pub group_reporting: bool,
    /// fio's steadystate, ss_dur and ss_ramp: the job ends once its IOPS or bandwidth hold
    /// steady (judged only when `dur` is above 0, as in fio).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub steadystate: Option<Steady>,
    /// fio's log files (write_bw_log, write_lat_log, write_iops_log, write_hist_log and their
    /// companions).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub logs: Option<FioLogs>,
    /// fio's write_iolog: the job's I/O recorded as a version 3 iolog in this file.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub write_iolog: Option<String>,
    /// fio's read_iolog and the replay_* options: the job replays a trace instead of its rw.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub replay: Option<ReplaySpec>,
    /// When a worker of this job ends, the others of its phase end too (fio exitall).
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub exitall: bool,
    /// Errors the job counts and goes on past (fio continue_on_error): read, write, verify.
    #[serde(skip_serializing_if = "ContinueOn::is_empty", default)]
    pub continue_on_error: ContinueOn,
    /// Write until the filesystem is full (ENOSPC or EDQUOT ends the job, not as an error; fio
    /// fill_device / fill_fs).
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub fill_device: bool,
    /// Keep what a writing job wrote in fio's state file (verify_state_save=1), and verify only
    /// that in a reading job (verify_state_load=1).
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub verify_state_save: bool,
    /// Time submission and completion apart (fio's slat and clat) on the asynchronous engines:
    /// asked by slat_percentiles or clat_percentiles (and by write_lat_log, for its files).
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub split_lat: bool,
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub verify_state_load: bool,
    /// The bytes every write buffer repeats (fio buffer_pattern).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub buffer_pattern: Vec<u8>,
    /// The CPUs the job's workers may run on (fio cpus_allowed), each worker one of them in
    /// turn with `cpus_split` (cpus_allowed_policy=split).
    #[serde(skip_serializing_if = "Vec::is_empty", default)]
    pub cpus_allowed: Vec<usize>,
    #[serde(skip_serializing_if = "std::ops::Not::not", default)]
    pub cpus_split: bool,
    /// fio's flow control: this job's weight (0: none), its flow's id, the wait when ahead.
    #[serde(skip_serializing_if = "is_zero", default)]
    pub flow: u64,
    #[serde(skip_serializing_if = "is_zero", default)]
    pub flow_id: u64,
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub flow_sleep: Option<Duration>,
    /// The block size of trims (the third value of bs=, bsrange= or bssplit=, or the last one
    /// given before it, as fio reads them); None: the writes'.
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub trim_bs: Option<BlockSize>,
    /// How each I/O is issued: priorities, atomic writes, latency_target, serialize_overlap.
    #[serde(
        skip_serializing_if = "crate::plan::job::per_io::IoOpts::is_default",
        default
    )]
    pub issue: crate::plan::job::per_io::IoOpts,

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

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_default<T: Default + PartialEq>(t: &T) -> bool {
    *t == T::default()
}

impl Default for Job {
    /// fio's defaults: sequential reads of 4 KiB, queue depth 1, one job, buffered, psync; except
    /// that written data is unique and incompressible (see refill_buffers).
    fn default() -> Job {
        Job {
            name: "job".into(),
            rw: Rw::Read,
            rwmixread: 50,
            bs: BlockSize::Fixed(4096),
            write_bs: None,
            iodepth: 1,
            numjobs: 1,
            direct: false,
            size: None,
            io_size: None,
            number_ios: None,
            loops: 1,
            runtime: None,
            time_based: false,
            ramp_time: None,
            startdelay: None,
            fsync: 0,
            fdatasync: 0,
            end_fsync: false,
            open_sync: OpenSync::None,
            engine: EngineKind::Sync,
            compress_pct: 0,
            dedupe_pct: 0,
            refill_buffers: None,
            norandommap: false,
            distribution: Distribution::Random,
            dist_center: None,
            random_pct: 100,
            rw_mod: None,
            rw_backwards: false,
            rw_identical: false,
            randseed: None,
            offset: None,
            offset_increment: 0,
            blockalign: None,
            rate: [None, None],
            rate_iops: [None, None],
            rate_min: [None, None],
            rate_poisson: false,
            thinktime: None,
            thinktime_blocks: 1,
            thinktime_spin: None,
            unlink: false,
            invalidate: true,
            allow_file_create: true,
            percentiles: Vec::new(),
            verify: None,
            filename: None,
            more_files: Vec::new(),
            nrfiles: 1,
            filesize: None,
            file_service: FileService::default(),
            directory: None,
            stonewall: false,
            group_reporting: false,
            steadystate: None,
            logs: None,
            write_iolog: None,
            replay: None,
            exitall: false,
            continue_on_error: ContinueOn::NONE,
            fill_device: false,
            verify_state_save: false,
            split_lat: false,
            verify_state_load: false,
            buffer_pattern: Vec::new(),
            cpus_allowed: Vec::new(),
            cpus_split: false,
            flow: 0,
            flow_id: 0,
            flow_sleep: None,
            trim_bs: None,
            issue: Default::default(),
            new_group: false,
            exit_what: ExitWhat::Group,
            ignore_error: Default::default(),
            seq_stride: false,
            dedupe_working_set: false,
            dedupe_ws_pct: None,
            dedupe_global: false,
            wait_for: None,
            pattern_src: Vec::new(),
            strided: false,
            zones: Strided::default(),
            reap_min: None,
            reap_max: None,
            mem_align: None,
            malloc_buffers: false,
            fadvise: Fadvise::Pattern,
        }
    }
}

impl Job {
    /// The block size of writes.
    pub fn wbs(&self) -> &BlockSize {
        self.write_bs.as_ref().unwrap_or(&self.bs)
    }
}

impl Job {
    /// The job as it runs, in fio's option words: rw, bs, size and every option not at its
    /// default (what `run --check` and `study --check` print, and the report's job lines).
    pub fn line(&self) -> String {
        let job = self;
        let bs = |b: &BlockSize| match b {
            BlockSize::Fixed(n) => crate::plan::units::format_bytes(*n),
            BlockSize::Range(a, b) => format!(
                "{}-{}",
                crate::plan::units::format_bytes(*a),
                crate::plan::units::format_bytes(*b)
            ),
            BlockSize::Split(v) => v
                .iter()
                .map(|(s, p)| format!("{}/{p}%", crate::plan::units::format_bytes(*s)))
                .collect::<Vec<_>>()
                .join(":"),
        };
        let size = |s: &SizeSpec| match s {
            SizeSpec::Bytes(n) => crate::plan::units::format_bytes(*n),
            SizeSpec::Percent(p) => format!("{p}%"),
        };
        let mut parts = vec![
            format!(
                "rw={}",
                serde_json::to_value(job.rw)
                    .unwrap_or_default()
                    .as_str()
                    .unwrap_or("")
            ),
            format!("bs={}", bs(&job.bs)),
        ];
        if let Some(w) = &job.write_bs {
            parts.push(format!("write_bs={}", bs(w)));
        }
        parts.push(format!(
            "size={}",
            job.size.as_ref().map_or("(the file's)".into(), size)
        ));
        if let Some(o) = &job.offset {
            parts.push(format!("offset={}", size(o)));
        }
        let value = serde_json::to_value(job).unwrap_or_default();
        let default = serde_json::to_value(Job::default()).unwrap_or_default();
        let skip = ["name", "rw", "bs", "write_bs", "size", "offset"];
        if let (Some(v), Some(d)) = (value.as_object(), default.as_object()) {
            for (k, x) in v {
                if skip.contains(&k.as_str()) || d.get(k) == Some(x) {
                    continue;
                }
                let secs = x.get("secs").and_then(|s| s.as_f64());
                let nanos = x.get("nanos").and_then(|s| s.as_f64());
                let shown = match (x, secs, nanos) {
                    (_, Some(s), Some(n)) => format!("{}s", s + n / 1e9),
                    (serde_json::Value::String(s), ..) => s.clone(),
                    (other, ..) => other.to_string(),
                };
                parts.push(format!("{k}={shown}"));
            }
        }
        parts.join(" ")
    }
}
