//! The block I/O job model (one struct, serde), as fio understands a job; the fio job-file parser
//! (`jobfile`, with its options in `jobopts`) and the presets both produce it. Pure data: nothing
//! here does I/O.

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

mod parts;
pub use parts::{ContinueOn, Failing, FileService, FileServiceKind, Verify};

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
        skip_serializing_if = "crate::plan::issue::IoOpts::is_default",
        default
    )]
    pub issue: crate::plan::issue::IoOpts,
    /// More of fio's settings (jobmore.rs).
    #[serde(flatten)]
    pub more: super::jobmore::JobMore,
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

/// A trace to replay (fio's read_iolog) and how.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct ReplaySpec {
    /// The iolog (empty: replay options without read_iolog, which do nothing, as in fio).
    pub file: String,
    pub no_stall: bool,
    /// Percent of the trace's rate.
    pub time_scale: u32,
    /// Offsets divided by this.
    pub scale: u64,
    /// Offsets rounded down to a multiple of this (a power of two; 0: none).
    pub align: u64,
    /// Kinds not replayed (replay_skip: read, write, trim, sync).
    pub skip: Vec<String>,
}

impl Default for ReplaySpec {
    fn default() -> ReplaySpec {
        ReplaySpec {
            file: String::new(),
            no_stall: false,
            time_scale: 100,
            scale: 1,
            align: 0,
            skip: Vec::new(),
        }
    }
}

/// What a windowed log (log_avg_msec) writes for each window (fio's log_window_value; the
/// older log_max_value=1 is `Max`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(rename_all = "snake_case")]
pub enum LogWindow {
    #[default]
    Avg,
    Max,
    /// The average and the maximum, in two columns.
    Both,
}

/// fio's log files of a job: each `Some(prefix)` writes `PREFIX_TYPE.N.log` (an empty prefix:
/// the job's name), as fio does.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, Default)]
#[serde(default)]
pub struct FioLogs {
    /// `_bw` (KiB/s).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub bw: Option<String>,
    /// `_lat`, `_clat` and `_slat` (ns).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub lat: Option<String>,
    /// `_iops`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub iops: Option<String>,
    /// `_clat_hist` (fio's latency bins, every `hist_msec`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub hist: Option<String>,
    /// Average (or take the maximum of) each window of this many ms; 0: a line per I/O.
    pub avg_msec: u64,
    pub window: LogWindow,
    /// The histogram log's window (0: no histogram lines, as in fio).
    pub hist_msec: u64,
    /// Each step halves the histogram's bins (0 to 6).
    pub hist_coarseness: u32,
    /// The offset column (log_offset).
    pub offset: bool,
    /// The priority column as fio's hexadecimal class and level (log_prio).
    pub prio: bool,
    /// A file per worker, `.N` (per_job_logs, default 1); else one file per prefix.
    pub per_job: bool,
    /// Time stamps in ms since the Unix epoch (log_unix_epoch) rather than since the job's start.
    pub unix_epoch: bool,
    /// A last column: each I/O's issue time in ns since the job's start in the latency log, 0
    /// elsewhere (log_issue_time; fio asks for write_lat_log and log_offset with it).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub issue_time: bool,
}

impl FioLogs {
    /// fio's defaults: no log, a line per I/O, a file per job.
    pub fn new() -> FioLogs {
        FioLogs {
            per_job: true,
            ..FioLogs::default()
        }
    }

    /// Whether any log file is asked for.
    pub fn any(&self) -> bool {
        self.bw.is_some() || self.lat.is_some() || self.iops.is_some() || self.hist.is_some()
    }
}

/// What fio's steadystate judges: the spread of the samples around their mean, or their
/// least-squares slope, of IOPS, of bandwidth or of the mean completion latency.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SteadyKind {
    Iops,
    IopsSlope,
    Bw,
    BwSlope,
    Lat,
    LatSlope,
}

impl SteadyKind {
    pub const ALL: [(SteadyKind, &'static str); 6] = [
        (SteadyKind::Iops, "iops"),
        (SteadyKind::IopsSlope, "iops_slope"),
        (SteadyKind::Bw, "bw"),
        (SteadyKind::BwSlope, "bw_slope"),
        (SteadyKind::Lat, "lat"),
        (SteadyKind::LatSlope, "lat_slope"),
    ];

    pub fn name(self) -> &'static str {
        SteadyKind::ALL
            .iter()
            .find(|k| k.0 == self)
            .map_or("iops", |k| k.1)
    }

    /// Judges IOPS (else bandwidth).
    pub fn iops(self) -> bool {
        matches!(self, SteadyKind::Iops | SteadyKind::IopsSlope)
    }

    /// Judges the mean completion latency (ns) of each sample's I/Os.
    pub fn lat(self) -> bool {
        matches!(self, SteadyKind::Lat | SteadyKind::LatSlope)
    }

    pub fn slope(self) -> bool {
        matches!(
            self,
            SteadyKind::IopsSlope | SteadyKind::BwSlope | SteadyKind::LatSlope
        )
    }
}

/// fio's steadystate=KIND:LIMIT[%] with ss_dur and ss_ramp; `headline` (compare --until-steady)
/// makes the steady window's figures the record's own.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Steady {
    pub kind: SteadyKind,
    /// The limit: IOPS, bytes per second (per second, for a slope), or a percentage of the
    /// window's mean when `pct`.
    pub limit: f64,
    pub pct: bool,
    /// The rolling window (ss_dur), one sample a second; zero: not judged (fio's default).
    pub dur: Duration,
    /// How long after the job's ramp_time the first sample is taken (ss_ramp).
    pub ramp: Duration,
    #[serde(default)]
    pub headline: bool,
    /// A sample every this long (fio's steadystate_check_interval); zero: every second.
    #[serde(default, skip_serializing_if = "Duration::is_zero")]
    pub interval: Duration,
}

impl Default for Steady {
    /// fio's default criterion, iops_slope:0.01%, not judged until ss_dur is given.
    fn default() -> Steady {
        Steady {
            kind: SteadyKind::IopsSlope,
            limit: 0.01,
            pct: true,
            dur: Duration::ZERO,
            ramp: Duration::ZERO,
            headline: false,
            interval: Duration::ZERO,
        }
    }
}

impl Steady {
    /// The criterion as fio spells it: `iops_slope:0.3%`.
    pub fn criterion(&self) -> String {
        format!(
            "{}:{}{}",
            self.kind.name(),
            self.limit,
            if self.pct { "%" } else { "" }
        )
    }

    /// Whole seconds of the window (at least 1 when judged).
    pub fn window(&self) -> usize {
        self.dur.as_secs_f64().round() as usize
    }

    /// The time between samples (1 s unless steadystate_check_interval says otherwise).
    pub fn every(&self) -> Duration {
        if self.interval.is_zero() {
            Duration::from_secs(1)
        } else {
            self.interval
        }
    }

    /// The samples in the window: ss_dur over the interval.
    pub fn samples(&self) -> usize {
        (self.dur.as_secs_f64() / self.every().as_secs_f64()).round() as usize
    }
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
            more: Default::default(),
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
