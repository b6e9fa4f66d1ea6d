//! What a job records and replays: fio's log files (which, their windows and columns) and the
//! trace it replays instead of its own I/O.

use serde::{Deserialize, Serialize};

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
