//! fio's options, as `Job::apply` reads them: one table (`GROUPS`, which `fsbench run --help`
//! prints), and one function per group. An option outside the table is an error naming it.

#[cfg(test)]
use std::time::Duration;

use super::values::*;
use crate::plan::job::{BlockSize, Job, OpenSync, Verify};
use crate::plan::PlanError;

#[cfg(test)]
use crate::plan::job::{Distribution, EngineKind, Rw};

type R<T> = Result<T, PlanError>;

/// Every option fsbench accepts, by what it does (names separated by spaces).
pub const GROUPS: &[(&str, &str)] = &[
    (
        "parallelism and run length",
        "name description thread numjobs group_reporting new_group loops io_size io_limit number_ios runtime timeout time_based ramp_time startdelay stonewall wait_for_previous",
    ),
    (
        "where the I/O goes",
        "filename directory size filesize nrfiles openfiles file_service_type offset offset_increment unlink create_on_open allow_file_create overwrite fallocate invalidate",
    ),
    (
        "shape of the load",
        "rw readwrite rwmixread rwmixwrite rw_sequencer percentage_random random_distribution norandommap randrepeat randseed bs blocksize bsrange blocksize_range bssplit blockalign ba iodepth iodepth_batch iodepth_batch_submit iodepth_batch_complete iodepth_batch_complete_min iodepth_batch_complete_max iodepth_low rate rate_iops rate_min rate_cycle rate_process thinktime thinktime_blocks thinktime_spin",
    ),
    (
        "syncing",
        "direct buffered sync fsync fdatasync end_fsync fsync_on_close",
    ),
    (
        "data written",
        "refill_buffers scramble_buffers zero_buffers buffer_compress_percentage buffer_compress_chunk dedupe_percentage iomem mem iomem_align mem_align",
    ),
    (
        "verification",
        "verify do_verify verify_only verify_pattern verify_interval verify_offset verify_fatal verify_dump verify_backlog",
    ),
    (
        "steady state",
        "steadystate ss steadystate_duration ss_dur steadystate_ramp_time ss_ramp steadystate_check_interval ss_interval",
    ),
    (
        "log files",
        "write_bw_log write_lat_log write_iops_log write_hist_log log_avg_msec log_window_value log_max_value log_hist_msec log_hist_coarseness log_offset log_issue_time log_prio per_job_logs log_unix_epoch log_entries log_compression log_store_compressed",
    ),
    (
        "recording and replaying I/O",
        "write_iolog read_iolog read_iolog_chunked replay_no_stall replay_time_scale replay_redirect replay_align replay_scale replay_skip",
    ),
    (
        "errors, ends and CPUs",
        "exitall exit_what flow flow_id flow_sleep verify_state_save verify_state_load continue_on_error fill_device fill_fs buffer_pattern cpus_allowed cpus_allowed_policy numa_cpu_nodes numa_mem_policy io_submit_mode zonemode zonesize zonerange zoneskip random_generator create_serialize",
    ),
    (
        "how each I/O is issued",
        "prio prioclass priohint cmdprio_percentage cmdprio_class cmdprio cmdprio_hint cmdprio_bssplit atomic verify_write_sequence latency_target latency_window latency_percentile latency_run serialize_overlap",
    ),
    (
        "engines and reporting",
        "ioengine fixedbufs registerfiles percentile_list clat_percentiles lat_percentiles slat_percentiles disk_util gtod_reduce disable_lat disable_clat disable_slat clocksource kb_base unit_base",
    ),
    ("more of fio's options", more::MORE),
];

pub fn all_options() -> impl Iterator<Item = &'static str> {
    GROUPS.iter().flat_map(|g| g.1.split_whitespace())
}

/// Whether `key` is an option fsbench lists (or one of fio's aliases of one).
pub fn is_option(key: &str) -> bool {
    let key = canonical(key);
    all_options().any(|o| o == key)
}

/// What is said of an option fsbench does not take.
pub fn unsupported(key: &str) -> String {
    format!(
        "option '{key}' is not supported by fsbench (`fsbench run --help` lists the accepted ones; run this job with fio)"
    )
}

/// The accepted options, a line per group, for `fsbench run --help`.
pub fn help_text() -> String {
    let mut s = String::from("Accepted fio options:\n");
    for (group, keys) in GROUPS {
        let keys: Vec<&str> = keys.split_whitespace().collect();
        s.push_str(&format!("  {group}: {}\n", keys.join(", ")));
    }
    let aliases: Vec<String> = families::ALIASES
        .iter()
        .map(|(a, k)| format!("{a} ({k})"))
        .collect();
    s.push_str(&format!("  fio's aliases: {}\n", aliases.join(", ")));
    s
}

impl Job {
    /// Applies one `key[=value]` option. Returns a note when the option was translated or has
    /// no effect in fsbench; an error names what is wrong and what would be right.
    pub fn apply(&mut self, key: &str, value: Option<&str>) -> R<Option<String>> {
        let key = canonical(key);
        for group in [
            // First: apply_verify takes every verify* option.
            Job::apply_more,
            Job::apply_run,
            Job::apply_where,
            Job::apply_trim_bs,
            Job::apply_shape,
            Job::apply_pace,
            Job::apply_data,
            Job::apply_verify,
            Job::apply_steady,
            Job::apply_logs,
            Job::apply_replay,
            Job::apply_misc,
            Job::apply_issue,
            Job::apply_report,
        ] {
            match group(self, key, value)? {
                NotMine => continue,
                Done => return Ok(fixed_note(key, value)),
                Noted(n) => return Ok(Some(n)),
            }
        }
        Err(unsupported(key).into())
    }

    fn apply_run(&mut self, key: &str, v: Option<&str>) -> R<Got> {
        match key {
            "name" => self.name = need(key, v)?.to_string(),
            "description" => {}
            "thread" => {
                parse_bool(key, v)?;
            }
            "numjobs" => self.numjobs = parse_u32(key, need(key, v)?, 1, 4096)?,
            "group_reporting" => self.group_reporting = parse_bool(key, v)?,
            "loops" => self.loops = parse_u32(key, need(key, v)?, 1, u32::MAX)?,
            "io_size" | "io_limit" => {
                self.io_size =
                    Some(parse_fio_size(need(key, v)?).map_err(|e| format!("{key}: {e}"))?)
            }
            "number_ios" => self.number_ios = Some(parse_u64(key, need(key, v)?)?),
            "runtime" | "timeout" => self.runtime = Some(duration(key, v)?),
            "ramp_time" => self.ramp_time = Some(duration(key, v)?),
            "startdelay" => {
                let d = need(key, v)?;
                if d.contains('-') {
                    return Err(format!("startdelay={d}: a random start delay (a range) is not supported; give one time").into());
                }
                self.startdelay = Some(duration(key, v)?)
            }
            "time_based" => self.time_based = parse_bool(key, v)?,
            "stonewall" | "wait_for_previous" => self.stonewall = parse_bool(key, v)?,
            _ => return Ok(NotMine),
        }
        Ok(Done)
    }

    /// fio's steadystate: the criterion, the window and its ramp, in any order.
    fn apply_steady(&mut self, key: &str, v: Option<&str>) -> R<Got> {
        let ours = [
            "steadystate",
            "ss",
            "steadystate_duration",
            "ss_dur",
            "steadystate_ramp_time",
            "ss_ramp",
            "steadystate_check_interval",
            "ss_interval",
        ];
        if !ours.contains(&key) {
            return Ok(NotMine);
        }
        let ss = self.steadystate.get_or_insert_with(Default::default);
        match key {
            "steadystate" | "ss" => {
                let (kind, limit, pct) = parse_steady(need(key, v)?)?;
                (ss.kind, ss.limit, ss.pct) = (kind, limit, pct);
            }
            "steadystate_duration" | "ss_dur" => {
                let d = duration(key, v)?;
                if !d.is_zero() && d < std::time::Duration::from_secs(1) {
                    return Err(format!("{key}={}: the window holds one sample a second: give 1s or more (0 turns steady state off)", need(key, v)?).into());
                }
                ss.dur = d;
            }
            "steadystate_check_interval" | "ss_interval" => {
                let d = duration(key, v)?;
                if d < std::time::Duration::from_secs(1) {
                    return Err(format!(
                        "{key}={}: fio samples at most once a second: give 1s or more",
                        need(key, v)?
                    )
                    .into());
                }
                ss.interval = d;
            }
            _ => ss.ramp = duration(key, v)?,
        }
        // fio's rule: the window is a whole number of intervals, more than one.
        let (dur, every) = (ss.dur.as_millis(), ss.every().as_millis());
        if dur > 0 && (dur % every != 0 || dur <= every) {
            return Err(format!("{key}={}: ss_dur ({} s) must be a multiple of ss_interval ({} s) and longer, as fio requires", need(key, v)?, ss.dur.as_secs_f64(), ss.every().as_secs_f64()).into());
        }
        Ok(Done)
    }

    fn apply_where(&mut self, key: &str, v: Option<&str>) -> R<Got> {
        match key {
            "filename" => self.set_filenames(need(key, v)?)?,
            "directory" => {
                let d = need(key, v)?;
                if d.contains(':') {
                    return Err(format!("directory={d}: several directories per job are not supported by fsbench; give one").into());
                }
                self.directory = Some(d.to_string())
            }
            "size" => self.size = Some(size_spec(key, need(key, v)?)?),
            "filesize" => {
                let f = need(key, v)?;
                let (lo, hi) = f.split_once('-').unwrap_or((f, f));
                let (lo, hi) = (byte_size(key, lo)?, byte_size(key, hi)?);
                if lo != hi {
                    return Err(format!("filesize={f}: a range of file sizes is not supported by fsbench; give one size").into());
                }
                self.filesize = Some(lo);
            }
            "nrfiles" => self.nrfiles = parse_u32(key, need(key, v)?, 1, 1 << 20)?,
            "openfiles" => {
                parse_u32(key, need(key, v)?, 1, u32::MAX)?;
                return Ok(Noted(format!("openfiles={}: fsbench opens all of a worker's files when it starts and keeps them open (fio closes and opens files to stay within openfiles)", v.unwrap_or(""))));
            }
            "file_service_type" => self.file_service = file_service(need(key, v)?)?,
            "offset" => self.offset = Some(size_spec(key, need(key, v)?)?),
            "offset_increment" => {
                self.offset_increment = byte_size(key, need(key, v)?)?;
            }
            "unlink" => self.unlink = parse_bool(key, v)?,
            "invalidate" => self.invalidate = parse_bool(key, v)?,
            "allow_file_create" => self.allow_file_create = parse_bool(key, v)?,
            "create_on_open" => {
                parse_bool(key, v)?;
            }
            "overwrite" => {
                parse_bool(key, v)?;
            }
            "fallocate" => match need(key, v)? {
                "none" | "native" | "posix" | "keep" | "truncate" | "0" | "1" => {}
                o => {
                    return Err(format!(
                        "fallocate={o}: expected none, native, posix, keep or truncate"
                    )
                    .into())
                }
            },
            _ => return Ok(NotMine),
        }
        Ok(Done)
    }

    fn apply_shape(&mut self, key: &str, v: Option<&str>) -> R<Got> {
        match key {
            "rw" | "readwrite" => {
                let written = need(key, v)?;
                let (rw, m) = parse_rw(written)?;
                let back = written
                    .split_once(':')
                    .is_some_and(|(_, m)| m.trim().starts_with('-'));
                if back && rw.random() {
                    return Err(format!("rw={written}: a negative modifier (backwards) applies to sequential I/O: rw=read:-8k").into());
                }
                self.rw = rw;
                self.rw_mod = m;
                self.rw_backwards = back;
            }
            "rw_sequencer" => {
                self.rw_identical = match need(key, v)? {
                    "sequential" => false,
                    "identical" => true,
                    o => {
                        return Err(
                            format!("rw_sequencer={o}: expected sequential or identical").into(),
                        )
                    }
                }
            }
            "rwmixread" => self.rwmixread = parse_u32(key, need(key, v)?, 0, 100)?,
            "rwmixwrite" => self.rwmixread = 100 - parse_u32(key, need(key, v)?, 0, 100)?,
            "percentage_random" => {
                let [r, w] = per_dir(need(key, v)?, |s| parse_u32(key, s, 0, 100))?;
                if r.is_some() && w.is_some() && r != w {
                    return Err(format!("percentage_random={}: different shares for reads and writes are not supported by fsbench; give one", v.unwrap_or("")).into());
                }
                self.random_pct = r.or(w).unwrap_or(100);
            }
            "random_distribution" => {
                let (d, c) = parse_distribution(need(key, v)?)?;
                self.distribution = d;
                self.dist_center = c;
            }
            "norandommap" => self.norandommap = parse_bool(key, v)?,
            "randrepeat" => {
                if !parse_bool(key, v)? && self.randseed.is_none() {
                    self.randseed = Some(fresh_seed());
                }
            }
            "randseed" => self.randseed = Some(parse_u64(key, need(key, v)?)?),
            "bs" | "blocksize" => {
                let b = need(key, v)?;
                if b.contains('–') || (b.contains('-') && !b.contains(',')) {
                    return Err(format!(
                            "{key}={b}: a block size range is written bsrange=8k-64k (ASCII hyphen, no spaces)"
                        ).into());
                }
                let [r, w] = per_dir(b, |s| block_size(key, s).map(BlockSize::Fixed))?;
                self.set_bs(r, w);
            }
            "bsrange" | "blocksize_range" => {
                let [r, w] = per_dir(need(key, v)?, parse_bsrange)?;
                self.set_bs(r, w);
            }
            "bssplit" => {
                let [r, w] = per_dir(need(key, v)?, parse_bssplit)?;
                self.set_bs(r, w);
            }
            "blockalign" | "ba" => {
                let [r, w] = per_dir(need(key, v)?, |s| block_size(key, s))?;
                self.blockalign = r.or(w);
            }
            "iodepth" => self.iodepth = parse_u32(key, need(key, v)?, 1, 65536)?,
            _ => return Ok(NotMine),
        }
        Ok(Done)
    }

    /// Sets the block sizes of reads and writes from per-direction values.
    fn set_bs(&mut self, read: Option<BlockSize>, write: Option<BlockSize>) {
        let old_write = self.wbs().clone();
        if let Some(r) = read {
            self.bs = r;
        }
        let w = write.unwrap_or(old_write);
        self.write_bs = (w != self.bs).then_some(w);
    }

    fn apply_pace(&mut self, key: &str, v: Option<&str>) -> R<Got> {
        match key {
            "iodepth_batch_complete" | "iodepth_batch_complete_min" => {
                self.more.reap_min = Some(parse_u32(key, need(key, v)?, 0, 65536)?);
            }
            "iodepth_batch_complete_max" => {
                self.more.reap_max = Some(parse_u32(key, need(key, v)?, 0, 65536)?);
            }
            "iodepth_batch" | "iodepth_batch_submit" | "iodepth_low" => {
                parse_u32(key, need(key, v)?, 0, 65536)?;
            }
            "rate" => self.rate = per_dir(need(key, v)?, |s| parse_u64(key, s))?,
            "rate_iops" => self.rate_iops = per_dir(need(key, v)?, |s| parse_u64(key, s))?,
            "rate_min" => self.rate_min = per_dir(need(key, v)?, |s| parse_u64(key, s))?,
            "rate_cycle" => {
                parse_u64(key, need(key, v)?)?;
                return Ok(Noted(
                    "rate_cycle: fsbench judges rate_min over the job's whole run, not per cycle"
                        .into(),
                ));
            }
            "rate_process" => {
                self.rate_poisson = match need(key, v)? {
                    "linear" => false,
                    "poisson" => true,
                    o => return Err(format!("rate_process={o}: expected linear or poisson").into()),
                }
            }
            "thinktime" => {
                self.thinktime = Some(
                    parse_duration_unit(need(key, v)?, 1e-6).map_err(|e| format!("{key}: {e}"))?,
                )
            }
            "thinktime_spin" => {
                self.thinktime_spin = Some(
                    parse_duration_unit(need(key, v)?, 1e-6).map_err(|e| format!("{key}: {e}"))?,
                )
            }
            "thinktime_blocks" => {
                self.thinktime_blocks = parse_u32(key, need(key, v)?, 1, u32::MAX)?
            }
            "direct" => self.direct = parse_bool(key, v)?,
            "buffered" => self.direct = !parse_bool(key, v)?,
            "sync" => {
                self.open_sync = match need(key, v)? {
                    "0" | "none" | "false" => OpenSync::None,
                    "1" | "sync" | "true" => OpenSync::Sync,
                    "dsync" => OpenSync::Dsync,
                    o => return Err(format!("sync={o}: expected 0, 1 (O_SYNC) or dsync").into()),
                }
            }
            "fsync" => self.fsync = parse_u32(key, need(key, v)?, 0, u32::MAX)?,
            "fdatasync" => self.fdatasync = parse_u32(key, need(key, v)?, 0, u32::MAX)?,
            "end_fsync" | "fsync_on_close" => {
                self.end_fsync = parse_bool(key, v)? || self.end_fsync
            }
            _ => return Ok(NotMine),
        }
        Ok(Done)
    }

    fn apply_data(&mut self, key: &str, v: Option<&str>) -> R<Got> {
        match key {
            "refill_buffers" => self.refill_buffers = Some(parse_bool(key, v)?),
            "scramble_buffers" => {
                if !parse_bool(key, v)? {
                    return Err("scramble_buffers=0 would write one repeated buffer; fsbench always scrambles (or refills, with refill_buffers=1)".into());
                }
            }
            "zero_buffers" => {
                if parse_bool(key, v)? {
                    self.compress_pct = 100;
                }
            }
            "buffer_compress_percentage" => {
                self.compress_pct = parse_u32(key, need(key, v)?, 0, 100)?
            }
            "buffer_compress_chunk" => {
                parse_u64(key, need(key, v)?)?;
            }
            "dedupe_percentage" => self.dedupe_pct = parse_u32(key, need(key, v)?, 0, 100)?,
            "iomem_align" | "mem_align" => {
                self.more.mem_align = Some(parse_u32(key, need(key, v)?, 0, 1 << 20)?)
            }
            "iomem" | "mem" => match need(key, v)? {
                "malloc" => self.more.malloc_buffers = true,
                "mmap" | "mmapshared" | "shm" => self.more.malloc_buffers = false,
                o => return Err(format!("{key}={o}: fsbench takes its buffers from malloc (fio's default) or as mmap/mmapshared/shm memory (page-aligned); huge pages, a backing file and GPU memory are not supported: run this job with fio").into()),
            },
            _ => return Ok(NotMine),
        }
        Ok(Done)
    }

    fn apply_verify(&mut self, key: &str, v: Option<&str>) -> R<Got> {
        if (!key.starts_with("verify") && key != "do_verify") || key.starts_with("verify_state") {
            return Ok(NotMine);
        }
        if key == "verify" {
            let kind = parse_verify_kind(need(key, v)?)?;
            self.verify = kind.map(|k| Verify {
                kind: k.into(),
                ..self.verify.clone().unwrap_or_default()
            });
            return Ok(Done);
        }
        let ver = self.verify.get_or_insert_with(|| Verify {
            kind: "null".into(),
            ..Verify::default()
        });
        match key {
            "do_verify" => ver.after_write = parse_bool(key, v)?,
            "verify_only" => ver.only = parse_bool(key, v)?,
            "verify_pattern" => ver.pattern = parse_pattern(need(key, v)?)?,
            "verify_interval" => ver.interval = block_size(key, need(key, v)?)?,
            "verify_offset" => ver.offset = parse_u64(key, need(key, v)?)?,
            "verify_fatal" => ver.fatal = parse_bool(key, v)?,
            "verify_dump" => ver.dump = parse_bool(key, v)?,
            "verify_backlog" => ver.backlog = parse_u64(key, need(key, v)?)?,
            _ => return Ok(NotMine),
        }
        Ok(Done)
    }

    fn apply_report(&mut self, key: &str, v: Option<&str>) -> R<Got> {
        match key {
            "ioengine" => {
                let (engine, note) = parse_engine(need(key, v)?)?;
                self.engine = engine;
                if let Some(n) = note {
                    return Ok(Noted(n));
                }
            }
            // fio's io_uring options, which fsbench's io_uring always has on where the kernel
            // allows (it registers its buffers and file): fio without them pins every
            // buffer's pages per I/O and writes 1 MiB blocks up to a quarter slower.
            "fixedbufs" | "registerfiles" => {
                if !parse_bool(key, v)? {
                    return Err(format!("{key}=0: fsbench's io_uring always registers its buffers and file where the kernel allows (fio's fixedbufs=1 and registerfiles=1); leave {key} out or set it to 1").into());
                }
            }
            "percentile_list" => {
                self.percentiles = need(key, v)?
                    .split(':')
                    .map(|p| {
                        p.trim()
                            .parse::<f64>()
                            .ok()
                            .filter(|x| *x > 0.0 && *x <= 100.0)
                            .ok_or_else(|| {
                                PlanError(format!(
                                    "percentile_list: '{p}' is not a percentile from 0 to 100"
                                ))
                            })
                    })
                    .collect::<R<Vec<f64>>>()?
            }
            "slat_percentiles" | "clat_percentiles" => {
                self.split_lat |= parse_bool(key, v)?;
            }
            "lat_percentiles" | "disk_util" | "gtod_reduce" | "disable_lat" | "disable_clat"
            | "disable_slat" => {
                parse_bool(key, v)?;
            }
            "clocksource" | "kb_base" | "unit_base" => {
                need(key, v)?;
            }
            _ => return Ok(NotMine),
        }
        Ok(Done)
    }
}

/// What a group made of an option.
enum Got {
    Done,
    /// Taken, with a note for the record (a translation).
    Noted(String),
    NotMine,
}
use Got::{Done, NotMine, Noted};

/// The note an accepted option carries whatever its value: it changes nothing in fsbench, or
/// fsbench does it its own way.
fn fixed_note(key: &str, v: Option<&str>) -> Option<String> {
    Some(match key {
        "overwrite" | "fallocate" | "create_on_open" => format!(
            "{key}={}: fsbench lays a job's file out with data before its first phase (as fio's overwrite=1), whatever this says",
            v.unwrap_or("1")
        ),
        "iodepth_batch_complete" | "iodepth_batch_complete_min" | "iodepth_batch_complete_max" => format!("{key}: fsbench waits for one completion when its queue is full and takes up to iodepth_batch_complete_max of them per reap (libaio: per io_getevents), as fio does with iodepth_batch_complete_min=1; a larger minimum is not waited for"),
        k if k.starts_with("iodepth_") => format!("{key}: fsbench submits each I/O as soon as a slot is free (fio's iodepth_batch_submit=1, iodepth_low=iodepth); the option has no effect"),
        "buffer_compress_chunk" => "buffer_compress_chunk: fsbench's compressible share is laid out per 4 KiB (the start of every 4 KiB is zeros), whatever the chunk".into(),
        "verify_backlog" => "verify_backlog: fsbench checks the blocks once the job's writing is done, not every N blocks while it writes (the same blocks, checked later)".into(),
        "gtod_reduce" | "disable_lat" | "disable_clat" | "disable_slat" | "clocksource" => format!("{key}: fsbench times every I/O from queue to completion with the monotonic clock, whatever this says"),
        _ => return None,
    })
}

mod families;
mod files;
use families::canonical;
use files::file_service;
mod issue;
mod more;
pub use more::wait_for;

#[cfg(test)]
mod tests;
