//! The option families added for issue 29: fio's log files, recording and replaying I/O, and
//! errors, ends, buffers and CPUs; fio's aliases and CPU lists.

use super::{Got, GROUPS, R};
use crate::plan::fio::values::*;
use crate::plan::job::{FioLogs, Job, LogWindow, SizeSpec};
use crate::plan::PlanError;
use Got::{Done, NotMine, Noted};

impl Job {
    /// fio's log files: which, their names, windows and columns.
    pub(super) fn apply_logs(&mut self, key: &str, v: Option<&str>) -> R<Got> {
        let ours = GROUPS
            .iter()
            .find(|g| g.0 == "log files")
            .map_or("", |g| g.1);
        if !ours.split_whitespace().any(|k| k == key) {
            return Ok(NotMine);
        }
        let prefix = || v.unwrap_or("").to_string();
        let logs = self.logs.get_or_insert_with(FioLogs::new);
        match key {
            "write_bw_log" => logs.bw = Some(prefix()),
            "write_lat_log" => logs.lat = Some(prefix()),
            "write_iops_log" => logs.iops = Some(prefix()),
            "write_hist_log" => logs.hist = Some(prefix()),
            "log_avg_msec" => logs.avg_msec = parse_u64(key, need(key, v)?)?,
            "log_hist_msec" => logs.hist_msec = parse_u64(key, need(key, v)?)?,
            "log_hist_coarseness" => logs.hist_coarseness = parse_u32(key, need(key, v)?, 0, 6)?,
            "log_max_value" | "log_window_value" => {
                logs.window = match v.unwrap_or("1") {
                    "0" | "avg" | "mean" => LogWindow::Avg,
                    "1" | "max" => LogWindow::Max,
                    "both" => LogWindow::Both,
                    o => {
                        return Err(format!("{key}={o}: expected avg, max or both (or 0, 1)").into())
                    }
                }
            }
            "log_offset" => logs.offset = parse_bool(key, v)?,
            "log_issue_time" => logs.issue_time = parse_bool(key, v)?,
            "log_prio" => logs.prio = parse_bool(key, v)?,
            "per_job_logs" => logs.per_job = parse_bool(key, v)?,
            "log_unix_epoch" => logs.unix_epoch = parse_bool(key, v)?,
            "log_entries" => {
                parse_u64(key, need(key, v)?)?;
                return Ok(Noted("log_entries: fsbench keeps a job's log lines in memory as text and grows it as needed; the option has no effect".into()));
            }
            "log_compression" | "log_store_compressed" => {
                let on = if key == "log_compression" {
                    parse_fio_size(need(key, v)?).map_err(|e| format!("{key}: {e}"))? > 0
                } else {
                    parse_bool(key, v)?
                };
                if on {
                    return Err(format!("{key}={}: fsbench does not compress its log files (fio's compressed chunks and .fz files need fio's --inflate-log to read back); leave {key} out: the logs are written as plain text, with log_avg_msec to keep them small", v.unwrap_or("1")).into());
                }
            }
            _ => return Ok(NotMine),
        }
        Ok(Done)
    }

    /// Errors, ends, buffers and CPUs: exitall, continue_on_error, fill_device, buffer_pattern,
    /// cpus_allowed, io_submit_mode.
    pub(super) fn apply_misc(&mut self, key: &str, v: Option<&str>) -> R<Got> {
        match key {
            "exitall" => self.exitall = parse_bool(key, v)?,
            "continue_on_error" => {
                self.continue_on_error = match need(key, v)? {
                    "none" | "0" => vec![],
                    "read" => vec!["read".into()],
                    "write" => vec!["write".into()],
                    "io" => vec!["read".into(), "write".into()],
                    "verify" => vec!["verify".into()],
                    "all" | "1" => vec!["read".into(), "write".into(), "verify".into()],
                    o => return Err(format!("continue_on_error={o}: expected none, read, write, io, verify or all").into()),
                }
            }
            "fill_device" => {
                self.fill_device = parse_bool(key, v)?;
                if self.fill_device && self.size.is_none() {
                    self.size = Some(SizeSpec::Percent(100.0));
                }
            }
            "buffer_pattern" => {
                self.buffer_pattern =
                    crate::plan::fio::pattern::parse_pattern(key, need(key, v)?)?;
            }
            "cpus_allowed" => self.cpus_allowed = parse_cpus(need(key, v)?)?,
            "flow" => {
                let w: i64 = need(key, v)?.parse().map_err(|_| format!("flow={}: expected a whole number (the job's weight)", v.unwrap_or("")))?;
                if w < 0 {
                    return Err(format!("flow={w}: fsbench takes fio's positive weights only (the share of the flow's I/Os this job gets)").into());
                }
                self.flow = w as u64;
            }
            "verify_state_save" => self.verify_state_save = parse_bool(key, v)?,
            "verify_state_load" => self.verify_state_load = parse_bool(key, v)?,
            "flow_id" => self.flow_id = parse_u64(key, need(key, v)?)?,
            "flow_sleep" => self.flow_sleep = Some(std::time::Duration::from_micros(parse_u64(key, need(key, v)?)?)),
            "zonemode" => match need(key, v)? {
                "none" => self.more.strided = false,
                "zbd" => return Err("zonemode=zbd: zoned block devices (SMR disks, ZNS SSDs) cannot be a target here: fsbench runs on files and conventional block devices, whose writes need no zone write pointer; run this job with fio on the zoned device".into()),
                "strided" => self.more.strided = true,
                o => return Err(format!("zonemode={o}: expected none, strided or zbd").into()),
            },
            "zonesize" | "zonerange" | "zoneskip" => {
                let b = byte_size(key, need(key, v)?)?;
                let z = &mut self.more.zones;
                match key {
                    "zonesize" => z.size = b,
                    "zonerange" => z.range = b,
                    _ => z.skip = b,
                }
            }
            "random_generator" => match need(key, v)? {
                "tausworthe" | "lfsr" | "tausworthe64" => return Ok(Noted(format!("random_generator={}: fsbench draws offsets with its own generator (every block once per pass with the random map, as fio's); the sequence differs from fio's", v.unwrap_or("")))),
                o => return Err(format!("random_generator={o}: expected tausworthe, lfsr or tausworthe64").into()),
            },
            "numa_cpu_nodes" | "numa_mem_policy" => {
                need(key, v)?;
                return Ok(Noted(format!("{key}: fsbench places neither CPUs nor memory by NUMA node (use cpus_allowed); on a one-node host this changes nothing")));
            }
            "create_serialize" => {
                parse_bool(key, v)?;
                return Ok(Noted("create_serialize: fsbench lays out every job's file one after another before the phase starts, whatever this says".into()));
            }
            "cpus_allowed_policy" => {
                self.cpus_split = match need(key, v)? {
                    "shared" => false,
                    "split" => true,
                    o => return Err(format!("cpus_allowed_policy={o}: expected shared or split").into()),
                }
            }
            "io_submit_mode" => match need(key, v)? {
                "inline" => {}
                "offload" => return Ok(Noted("io_submit_mode=offload: fsbench submits from the job's own thread (fio's inline); latencies are timed from each I/O's queueing, as with inline".into())),
                o => return Err(format!("io_submit_mode={o}: expected inline or offload").into()),
            },
            _ => return Ok(NotMine),
        }
        Ok(Done)
    }

    /// fio's write_iolog, read_iolog and the replay options.
    pub(super) fn apply_replay(&mut self, key: &str, v: Option<&str>) -> R<Got> {
        if key == "write_iolog" {
            self.write_iolog = Some(need(key, v)?.to_string());
            return Ok(Done);
        }
        if !(key.starts_with("replay_") || key.starts_with("read_iolog")) {
            return Ok(NotMine);
        }
        if key == "read_iolog_chunked" {
            parse_bool(key, v)?;
            return Ok(Noted("read_iolog_chunked: fsbench reads the whole iolog before the job starts (it checks every line first); the option has no effect".into()));
        }
        let r = self.replay.get_or_insert_with(Default::default);
        match key {
            "read_iolog" => {
                let f = need(key, v)?;
                if f == "-" || (f.contains(':') && !f.contains("\\:")) {
                    return Err(format!("read_iolog={f}: fsbench replays one iolog file per job (not standard input, nor a : separated list); give one file, a job per trace").into());
                }
                r.file = f.replace("\\:", ":");
            }
            "replay_no_stall" => r.no_stall = parse_bool(key, v)?,
            "replay_time_scale" => r.time_scale = parse_u32(key, need(key, v)?, 1, 1_000_000)?,
            "replay_scale" => r.scale = parse_u64(key, need(key, v)?)?.max(1),
            "replay_align" => {
                let a = byte_size(key, need(key, v)?)?;
                if a != 0 && !a.is_power_of_two() {
                    return Err(format!(
                        "replay_align={}: must be a power of 2 (e.g. 4k)",
                        v.unwrap_or("")
                    )
                    .into());
                }
                r.align = a;
            }
            "replay_redirect" => {
                // Every I/O of the trace goes to this one file or device (fio's semantics):
                // the job's file.
                self.filename = Some(need(key, v)?.to_string());
            }
            "replay_skip" => {
                let mut skip = Vec::new();
                for k in need(key, v)?.split(',').map(str::trim) {
                    if !["read", "write", "trim", "sync"].contains(&k) {
                        return Err(format!(
                            "replay_skip={}: '{k}' is not read, write, trim or sync",
                            v.unwrap_or("")
                        )
                        .into());
                    }
                    skip.push(k.to_string());
                }
                r.skip = skip;
            }
            _ => return Ok(NotMine),
        }
        Ok(Done)
    }
}

/// fio's other names of options (its option table's aliases) and the name fsbench reads.
pub(super) const ALIASES: &[(&str, &str)] = &[
    ("ratemin", "rate_min"),
    ("ratecycle", "rate_cycle"),
    ("fileoffset", "offset"),
    ("allrandrepeat", "randrepeat"),
    ("nr_files", "nrfiles"),
    ("fill_fs", "fill_device"),
];

/// An option by the name fsbench reads.
pub(super) fn canonical(key: &str) -> &str {
    ALIASES.iter().find(|a| a.0 == key).map_or(key, |a| a.1)
}

/// fio's CPU list: `0,5,8-15`.
pub(super) fn parse_cpus(v: &str) -> R<Vec<usize>> {
    let bad = || {
        PlanError(format!(
            "cpus_allowed={v}: expected CPU numbers and ranges, e.g. 0,5,8-15"
        ))
    };
    let mut cpus = Vec::new();
    for part in v.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let (a, b) = part.split_once('-').unwrap_or((part, part));
        let (a, b): (usize, usize) = (
            a.trim().parse().map_err(|_| bad())?,
            b.trim().parse().map_err(|_| bad())?,
        );
        if a > b || b >= 1024 {
            return Err(bad());
        }
        cpus.extend(a..=b);
    }
    if cpus.is_empty() {
        return Err(bad());
    }
    cpus.sort_unstable();
    cpus.dedup();
    Ok(cpus)
}
