//! fio's options of how each I/O is issued: I/O priorities (prio, prioclass, priohint and the
//! io_uring and libaio engines' cmdprio_*), atomic writes, latency_target and its companions,
//! serialize_overlap. The job keeps them in `Job::issue` (`plan::issue`).

use super::{Got, R};
use crate::plan::fio::values::*;
use crate::plan::issue::{ioprio_value, SplitPrio};
use crate::plan::job::{BlockSize, Job};
use crate::plan::PlanError;
use Got::{Done, NotMine, Noted};

impl Job {
    /// The trims' block size from bs=, bsrange= or bssplit=: its third value, or the last one
    /// before it ("a value not terminated in a comma applies to subsequent types", fio's
    /// HOWTO). Never the option's group: `apply_shape` reads the reads' and writes' sizes.
    pub(super) fn apply_trim_bs(&mut self, key: &str, v: Option<&str>) -> R<Got> {
        let parse: fn(&str) -> R<BlockSize> = match key {
            "bs" | "blocksize" => |s| block_size("bs", s).map(BlockSize::Fixed),
            "bsrange" | "blocksize_range" => parse_bsrange,
            "bssplit" => parse_bssplit,
            _ => return Ok(NotMine),
        };
        let parts: Vec<&str> = v.unwrap_or("").split(',').map(str::trim).collect();
        let last = match parts.len() {
            1 | 2 => parts[parts.len() - 1],
            _ => parts[2],
        };
        let write = parts.get(1).unwrap_or(&parts[0]);
        if !last.is_empty() && last == *write {
            // The writes' size (None says so).
            self.trim_bs = None;
        } else if !last.is_empty() {
            // Errors are apply_shape's to tell (it reads the same text next).
            if let Ok(bs) = parse(last) {
                self.trim_bs = Some(bs);
            }
        }
        Ok(NotMine)
    }

    pub(super) fn apply_issue(&mut self, key: &str, v: Option<&str>) -> R<Got> {
        let io = &mut self.issue;
        match key {
            "prio" => io.level = Some(parse_u32(key, need(key, v)?, 0, 7)? as u8),
            "prioclass" => io.class = Some(parse_u32(key, need(key, v)?, 0, 3)? as u8),
            "priohint" => io.hint = Some(parse_u32(key, need(key, v)?, 0, 1023)? as u16),
            "cmdprio_percentage" => {
                if io.cmdprio.bssplit.is_some() {
                    return Err(exclusive());
                }
                io.cmdprio.percentage = both(key, v, 0, 100)?;
            }
            "cmdprio_class" => {
                io.cmdprio.class = both(key, v, 1, 3)?.map(|c| c as u8);
            }
            "cmdprio" => io.cmdprio.level = both(key, v, 0, 7)?.map(|c| c as u8),
            "cmdprio_hint" => io.cmdprio.hint = both(key, v, 0, 1023)?.map(|c| c as u16),
            "cmdprio_bssplit" => {
                if io.cmdprio.percentage != [0, 0] {
                    return Err(exclusive());
                }
                let [r, w] = per_dir(need(key, v)?, parse_split_prio)?;
                io.cmdprio.bssplit = Some([r.unwrap_or_default(), w.unwrap_or_default()]);
            }
            "atomic" => io.atomic = parse_bool(key, v)?,
            "verify_write_sequence" => {
                parse_bool(key, v)?;
                return Ok(Noted("verify_write_sequence: fsbench's verify header carries no write sequence number (only what identifies the block and its checksum): there is nothing to check or skip".into()));
            }
            "latency_target" | "latency_window" | "latency_percentile" | "latency_run" => {
                let t = io.latency.get_or_insert_with(Default::default);
                match key {
                    "latency_target" => t.target = usecs(key, v)?,
                    "latency_window" => t.window = usecs(key, v)?,
                    "latency_percentile" => t.percentile = percent(key, need(key, v)?)?,
                    _ => t.run = parse_bool(key, v)?,
                }
            }
            "serialize_overlap" => io.serialize_overlap = parse_bool(key, v)?,
            _ => return Ok(NotMine),
        }
        Ok(Done)
    }
}

/// A time whose unit, when left out, is microseconds (fio's latency options).
fn usecs(key: &str, v: Option<&str>) -> R<std::time::Duration> {
    parse_duration_unit(need(key, v)?, 1e-6).map_err(|e| format!("{key}: {e}").into())
}

fn percent(key: &str, v: &str) -> R<f64> {
    v.trim()
        .parse::<f64>()
        .ok()
        .filter(|p| *p > 0.0 && *p <= 100.0)
        .ok_or_else(|| format!("{key}={v}: expected a percentage above 0, up to 100").into())
}

fn exclusive() -> PlanError {
    "cmdprio_percentage and cmdprio_bssplit are mutually exclusive (as in fio): give one".into()
}

/// A per-direction whole number (`int[,int]`): a single value applies to reads and writes.
fn both(key: &str, v: Option<&str>, min: u32, max: u32) -> R<[u32; 2]> {
    let [r, w] = per_dir(need(key, v)?, |s| parse_u32(key, s, min, max))?;
    Ok([r.unwrap_or(0), w.unwrap_or(0)])
}

/// One direction of cmdprio_bssplit: `bs/perc[/class/level[/hint]]:...`.
fn parse_split_prio(v: &str) -> R<Vec<SplitPrio>> {
    let key = "cmdprio_bssplit";
    let mut out = Vec::new();
    for e in v.split(':').map(str::trim) {
        let f: Vec<&str> = e.split('/').map(str::trim).collect();
        if !matches!(f.len(), 2 | 4 | 5) {
            return Err(format!("cmdprio_bssplit: '{e}' is bs/percentage, bs/percentage/class/level or bs/percentage/class/level/hint").into());
        }
        let prio = if f.len() > 2 {
            let hint = f.get(4).map_or(Ok(0), |h| parse_u32(key, h, 0, 1023))?;
            Some(ioprio_value(
                parse_u32(key, f[2], 0, 3)? as u8,
                parse_u32(key, f[3], 0, 7)? as u8,
                hint as u16,
            ))
        } else {
            None
        };
        out.push(SplitPrio {
            bs: block_size(key, f[0])?,
            perc: parse_u32(key, f[1], 0, 100)?,
            prio,
        });
    }
    let mut sizes: Vec<u64> = out.iter().map(|e| e.bs).collect();
    sizes.dedup();
    for bs in sizes {
        let tot: u32 = out.iter().filter(|e| e.bs == bs).map(|e| e.perc).sum();
        if tot > 100 {
            return Err(format!("cmdprio_bssplit={v}: the percentages of {bs}-byte I/Os add up to {tot}, more than 100").into());
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::issue::CmdPrio;

    fn job(opts: &[(&str, &str)]) -> Job {
        let mut j = Job::default();
        for (k, v) in opts {
            j.apply(k, Some(v))
                .unwrap_or_else(|e| panic!("{k}={v}: {e}"));
        }
        j
    }

    #[test]
    fn prio_class_and_hint_make_the_workers_ioprio() {
        assert_eq!(Job::default().issue.ioprio(), None);
        let j = job(&[("prioclass", "2"), ("prio", "7")]);
        assert_eq!(j.issue.ioprio(), Some((2 << 13) | 7));
        let j = job(&[("prio", "3")]);
        assert_eq!(
            j.issue.ioprio(),
            Some((2 << 13) | 3),
            "no class: best effort"
        );
        assert!(Job::default().apply("prio", Some("8")).is_err());
    }

    #[test]
    fn trims_take_the_third_block_size_or_the_last_before_it() {
        let bs = |v: &str| job(&[("bs", v)]).trim_bs;
        // None: the writes' size.
        assert_eq!(bs("4k,4k,8k"), Some(BlockSize::Fixed(8192)));
        assert_eq!(bs("4k,16k"), None);
        assert_eq!(bs("2k"), None);
        assert_eq!(bs("4k,"), None);
        assert_eq!(bs("4k,8k,"), None);
        assert_eq!(bs("8k,8k,8k"), None);
        let j = job(&[("bs", "4k,4k,8k"), ("bs", "4k,4k,")]);
        assert_eq!(j.trim_bs, Some(BlockSize::Fixed(8192)), "kept");
        let j = job(&[("bs", "4k,4k,8k"), ("bs", "16k")]);
        assert_eq!(j.trim_bs, None, "all three from the last");
        let j = job(&[("bssplit", "4k/50:8k/50,4k/100,512/25:1k/:2k/:4k/")]);
        let want = Some(BlockSize::Split(vec![
            (512, 25),
            (1024, 25),
            (2048, 25),
            (4096, 25),
        ]));
        assert_eq!(j.trim_bs, want);
        let j = job(&[("bsrange", "1k-4k,1k-4k,512-4k")]);
        assert_eq!(j.trim_bs, Some(BlockSize::Range(512, 4096)));
    }

    #[test]
    fn cmdprio_options_as_in_fios_examples() {
        let j = job(&[
            ("prioclass", "3"),
            ("cmdprio_percentage", "20"),
            ("cmdprio_class", "1"),
        ]);
        let c = &j.issue.cmdprio;
        assert_eq!(c.percentage, [20, 20]);
        assert_eq!(c.implicit(crate::plan::dir::Dir::Read), 1 << 13);
        let j = job(&[("cmdprio_bssplit", "64k/25/1/1:64k/75/3/2:1024k/0,1024k/0")]);
        let s = j.issue.cmdprio.bssplit.clone().unwrap();
        assert_eq!(s[0].len(), 3);
        assert_eq!(s[0][1].prio, Some((3 << 13) | 2));
        assert_eq!(
            j.issue.cmdprio.share(crate::plan::dir::Dir::Read, 65536),
            100
        );
        assert_eq!(
            j.issue.cmdprio.share(crate::plan::dir::Dir::Write, 1 << 20),
            0
        );
        let j = job(&[("cmdprio_bssplit", "1M/10/2/0/1:1M/90/2/0/0")]);
        let c: &CmdPrio = &j.issue.cmdprio;
        assert_eq!(
            c.pick(crate::plan::dir::Dir::Read, 1 << 20, 5),
            Some((2 << 13) | (1 << 3))
        );
        let mut j = job(&[("cmdprio_percentage", "10")]);
        assert!(j
            .apply("cmdprio_bssplit", Some("4k/10"))
            .unwrap_err()
            .to_string()
            .contains("mutually exclusive"));
        assert!(Job::default()
            .apply("cmdprio_bssplit", Some("4k/60:4k/50"))
            .is_err());
    }
}
