//! fio's log files: which a job writes (bandwidth, IOPS, latency, the latency histogram), their
//! windows and what a window's line says, their columns, one per worker or one per job.

use super::{Arg, Done, Family, FioOpt, Got, Noted, R};
use crate::plan::fio::values::parse_fio_size;
use crate::plan::job::{FioLogs, Job, LogWindow};

const fn opt(
    name: (&'static str, &'static [&'static str]),
    help: &'static str,
    example: &'static str,
    apply: fn(&mut Job, Arg) -> R<Got>,
) -> FioOpt {
    FioOpt::new(Family::Logs, name, help, example, apply)
}

/// The job's log settings, made by the first log option.
fn logs(j: &mut Job) -> &mut FioLogs {
    j.logs.get_or_insert_with(FioLogs::new)
}

/// A log's file name prefix (none: the job's name).
fn prefix(a: &Arg) -> Option<String> {
    Some(a.value.unwrap_or("").to_string())
}

pub(super) const OPTIONS: &[FioOpt] = &[
    opt(
        ("write_bw_log", &[]),
        "PREFIX_bw.N.log: bandwidth (KiB/s)",
        "job",
        |j, a| {
            logs(j).bw = prefix(&a);
            Ok(Done)
        },
    ),
    opt(
        ("write_lat_log", &[]),
        "PREFIX_lat, _clat, _slat.N.log: latencies (ns)",
        "job",
        |j, a| {
            logs(j).lat = prefix(&a);
            Ok(Done)
        },
    ),
    opt(
        ("write_iops_log", &[]),
        "PREFIX_iops.N.log: IOPS",
        "job",
        |j, a| {
            logs(j).iops = prefix(&a);
            Ok(Done)
        },
    ),
    opt(
        ("write_hist_log", &[]),
        "PREFIX_clat_hist.N.log: latency histograms",
        "job",
        |j, a| {
            logs(j).hist = prefix(&a);
            Ok(Done)
        },
    ),
    opt(
        ("log_avg_msec", &[]),
        "a line per window of this many ms (0: per I/O)",
        "1000",
        |j, a| {
            let ms = a.u64()?;
            logs(j).avg_msec = ms;
            Ok(Done)
        },
    ),
    opt(
        ("log_window_value", &["log_max_value"]),
        "a window's value: avg, max or both",
        "max",
        |j, a| {
            let w = match a.value.unwrap_or("1") {
                "0" | "avg" | "mean" => LogWindow::Avg,
                "1" | "max" => LogWindow::Max,
                "both" => LogWindow::Both,
                o => {
                    return Err(
                        format!("{}={o}: expected avg, max or both (or 0, 1)", a.key).into(),
                    )
                }
            };
            logs(j).window = w;
            Ok(Done)
        },
    ),
    opt(
        ("log_hist_msec", &[]),
        "the histogram log's window (ms)",
        "1000",
        |j, a| {
            let ms = a.u64()?;
            logs(j).hist_msec = ms;
            Ok(Done)
        },
    ),
    opt(
        ("log_hist_coarseness", &[]),
        "each step halves the histogram's bins (0 to 6)",
        "4",
        |j, a| {
            let c = a.u32(0, 6)?;
            logs(j).hist_coarseness = c;
            Ok(Done)
        },
    ),
    opt(("log_offset", &[]), "an offset column", "1", |j, a| {
        let on = a.bool()?;
        logs(j).offset = on;
        Ok(Done)
    }),
    opt(
        ("log_issue_time", &[]),
        "the latency log's issue time column",
        "1",
        |j, a| {
            let on = a.bool()?;
            logs(j).issue_time = on;
            Ok(Done)
        },
    ),
    opt(
        ("log_prio", &[]),
        "the priority column as the ioprio value",
        "1",
        |j, a| {
            let on = a.bool()?;
            logs(j).prio = on;
            Ok(Done)
        },
    ),
    opt(
        ("per_job_logs", &[]),
        "a file per worker (0: one per prefix)",
        "1",
        |j, a| {
            let on = a.bool()?;
            logs(j).per_job = on;
            Ok(Done)
        },
    ),
    opt(
        ("log_unix_epoch", &[]),
        "time stamps in ms since the Unix epoch",
        "1",
        |j, a| {
            let on = a.bool()?;
            logs(j).unix_epoch = on;
            Ok(Done)
        },
    ),
    opt(
        ("log_entries", &[]),
        "fio's in-memory log size (no effect)",
        "1024",
        |j, a| {
            a.u64()?;
            logs(j);
            Ok(Noted("log_entries: fsbench keeps a job's log lines in memory as text and grows it as needed; the option has no effect".into()))
        },
    ),
    opt(
        ("log_compression", &[]),
        "compressed logs (refused; 0 accepted)",
        "0",
        |j, a| {
            let on = parse_fio_size(a.need()?).map_err(|e| format!("{}: {e}", a.key))? > 0;
            logs(j);
            uncompressed(a, on)
        },
    ),
    opt(
        ("log_store_compressed", &[]),
        "logs kept compressed (refused; 0 accepted)",
        "0",
        |j, a| {
            let on = a.bool()?;
            logs(j);
            uncompressed(a, on)
        },
    ),
];

/// fsbench writes its logs as plain text: a compressed log is refused.
fn uncompressed(a: Arg, on: bool) -> R<Got> {
    if on {
        return Err(format!("{}={}: fsbench does not compress its log files (fio's compressed chunks and .fz files need fio's --inflate-log to read back); leave {} out: the logs are written as plain text, with log_avg_msec to keep them small", a.key, a.value.unwrap_or("1"), a.key).into());
    }
    Ok(Done)
}
