//! What the filesystem said about the damage: the kernel's log (btrfs names each repaired inode),
//! ZFS's checksum error counts, and the filesystem's own checker afterwards (`e2fsck -fn`,
//! `xfs_repair -n` and `fsck.f2fs` offline; `btrfs scrub` and `zpool scrub` online).

use crate::metrics::name as metric;
use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use super::AuditError;
use crate::provision::exec::{argv, run_status, Sys};
use crate::provision::{Checker, ErrorCount, Handle};
use crate::store::Phase;

fn kernel_log(sys: &Sys) -> Vec<String> {
    sys.query(&argv(&["dmesg"]))
        .map(|t| t.lines().map(str::to_string).collect())
        .unwrap_or_default()
}

/// The kernel log's last line now (a mark for `kernel_log_since`).
pub fn kernel_log_mark(sys: &Sys) -> Option<String> {
    kernel_log(sys).pop()
}

/// The kernel's log lines after `mark` (all of them if the mark rolled out of the ring buffer)
/// that name `device`'s kernel name (`loop3`): this target's messages only.
pub fn kernel_log_since(sys: &Sys, mark: &Option<String>, device: &str) -> Vec<String> {
    let all = kernel_log(sys);
    let from = mark
        .as_ref()
        .and_then(|m| all.iter().rposition(|l| l == m))
        .map_or(0, |i| i + 1);
    let name = device.rsplit('/').next().unwrap_or(device);
    all[from..]
        .iter()
        .filter(|l| !name.is_empty() && l.contains(name))
        .cloned()
        .collect()
}

/// Inodes btrfs says it repaired: `read error corrected: ino 257 off 0 (dev /dev/loop0 ...)`.
pub fn btrfs_repaired_inodes(lines: &[String]) -> BTreeSet<u64> {
    lines
        .iter()
        .filter(|l| l.contains("BTRFS") && (l.contains("corrected") || l.contains("fixed up")))
        .filter_map(|l| {
            let rest = &l[l.find(" ino ")? + 5..];
            rest.split_whitespace().next()?.parse().ok()
        })
        .collect()
}

/// The first few distinct filesystem messages the damage caused, for the record's notes.
pub fn kernel_summary(lines: &[String]) -> Vec<String> {
    let mut seen = BTreeSet::new();
    let mut out = Vec::new();
    for l in lines {
        let msg = match l.find("] ") {
            Some(i) => &l[i + 2..],
            None => l.as_str(),
        };
        let is_fs = crate::provision::FILESYSTEMS
            .iter()
            .filter_map(|d| d.integrity.map(|i| i.kernel_prefix))
            .any(|k| !k.is_empty() && msg.contains(k));
        let lower = msg.to_ascii_lowercase();
        let about_damage = [
            "error", "fail", "corrupt", "csum", "crc", "checksum", "fixed", "bad",
        ]
        .iter()
        .any(|k| lower.contains(k));
        // Messages differ by offsets and inode numbers: one of each kind (up to the first digit).
        let kind: String = msg.chars().take_while(|c| !c.is_ascii_digit()).collect();
        if is_fs && about_damage && seen.insert(kind) && out.len() < 3 {
            out.push(format!("kernel: {}", msg.trim()));
        }
    }
    out
}

/// The errors the filesystem has counted on its devices: btrfs `device stats` corruption
/// errors, ZFS checksum errors; 0 where it keeps no such count.
pub fn error_counter(
    sys: &Sys,
    how: Option<ErrorCount>,
    mnt: &std::path::Path,
    pool: Option<&str>,
) -> u64 {
    match (how, pool) {
        (Some(ErrorCount::ZpoolCksum), Some(p)) => zfs_cksum_errors(sys, p),
        (Some(ErrorCount::BtrfsDeviceStats), _) => sys
            .query(&argv(&["btrfs", "device", "stats", &mnt.to_string_lossy()]))
            .map(|t| {
                t.lines()
                    .filter(|l| l.contains("corruption_errs"))
                    .filter_map(|l| l.split_whitespace().last()?.parse::<u64>().ok())
                    .sum()
            })
            .unwrap_or(0),
        _ => 0,
    }
}

/// The pool's checksum errors (the CKSUM column summed over its devices).
pub fn zfs_cksum_errors(sys: &Sys, pool: &str) -> u64 {
    let Ok(text) = sys.query(&argv(&["zpool", "status", pool])) else {
        return 0;
    };
    text.lines()
        .filter(|l| l.trim_start().starts_with("loop") || l.contains("/dev/"))
        .filter_map(|l| l.split_whitespace().nth(4)?.parse::<u64>().ok())
        .sum()
}

/// The filesystem's own checker on the damaged target, as a phase: `problems` is what it found
/// (a count where it gives one, else 1 for "found something"), `exit_code` its exit status.
pub fn checker(h: &Handle) -> Phase {
    let t0 = Instant::now();
    let dev = h.device().unwrap_or_default();
    let mnt = h.mountpoint.to_string_lossy().into_owned();
    let how = crate::provision::caps(&h.spec().fs)
        .integrity
        .map(|i| i.checker);
    let result = match how {
        Some(Checker::Offline { argv, found }) => {
            let mut cmd: Vec<&str> = argv.to_vec();
            cmd.push(&dev);
            offline_check(h, &cmd, found)
        }
        Some(Checker::BtrfsScrub) => btrfs_scrub(&mnt),
        Some(Checker::ZpoolScrub) => zfs_scrub(h.sys(), h.pool().as_deref().unwrap_or("")),
        None => Err(AuditError::Case(format!("no checker for {}", h.spec().fs))),
    };
    let mut p = Phase {
        test: "checker".into(),
        ..Default::default()
    };
    match result {
        Ok(f) => {
            p.metrics.insert("problems".into(), f.problems);
            if let Some(c) = f.code {
                p.metrics.insert(metric::EXIT_CODE.into(), c as f64);
            }
            p.notes.push(format!("{}: {}", f.tool, f.summary));
        }
        Err(e) => p.error = Some(e.to_string()),
    }
    p.duration_s = t0.elapsed().as_secs_f64();
    p
}

/// What a checker said.
struct Finding {
    tool: String,
    code: Option<i32>,
    /// Errors it counted, or 1 when it only says that it found some.
    problems: f64,
    summary: String,
}

type CheckOut = Result<Finding, AuditError>;

/// A checker that reads the unmounted device; `found` reads its exit code; the summary is its
/// first meaningful lines.
fn offline_check(h: &Handle, cmd: &[&str], found: fn(Option<i32>) -> bool) -> CheckOut {
    let (code, out, err) = h.offline(|_| run_status(&argv(cmd)))??;
    let text = format!("{out}{err}");
    let lines: Vec<&str> = text
        .lines()
        .map(str::trim)
        .filter(|l| !l.is_empty() && !l.starts_with("Pass ") && !l.starts_with("Phase "))
        .filter(|l| {
            !l.starts_with("- ") && !l.contains("e2fsck ") && !l.starts_with("Warning: skipping")
        })
        .take(2)
        .collect();
    Ok(Finding {
        tool: cmd[0].to_string(),
        code,
        problems: f64::from(u8::from(found(code))),
        summary: format!(
            "exit {} {}",
            code.map_or("?".into(), |c| c.to_string()),
            lines.join(" | ")
        ),
    })
}

fn btrfs_scrub(mnt: &str) -> CheckOut {
    let (code, out, err) = run_status(&argv(&["btrfs", "scrub", "start", "-B", "-R", mnt]))?;
    let get = |k: &str| -> f64 {
        out.lines()
            .find_map(|l| l.trim().strip_prefix(k)?.trim().parse().ok())
            .unwrap_or(0.0)
    };
    let (csum, corrected, uncorrectable) = (
        get("csum_errors:"),
        get("corrected_errors:"),
        get("uncorrectable_errors:"),
    );
    if out.trim().is_empty() {
        return Err(AuditError::Case(format!("btrfs scrub: {}", err.trim())));
    }
    Ok(Finding {
        tool: "btrfs scrub".into(),
        code,
        problems: csum + get("verify_errors:") + get("read_errors:"),
        summary: format!(
            "{csum} checksum errors, {corrected} corrected, {uncorrectable} uncorrectable"
        ),
    })
}

fn zfs_scrub(sys: &Sys, pool: &str) -> CheckOut {
    sys.run(&argv(&["zpool", "scrub", pool]))?;
    let end = Instant::now() + Duration::from_secs(120);
    let mut status = String::new();
    while Instant::now() < end {
        status = sys.query(&argv(&["zpool", "status", "-v", pool]))?;
        if !status.contains("in progress") {
            break;
        }
        std::thread::sleep(Duration::from_millis(200));
    }
    let scrub = status
        .lines()
        .find(|l| l.trim_start().starts_with("scrub:") || l.trim_start().starts_with("scan:"))
        .map(|l| l.trim().to_string())
        .unwrap_or_default();
    let errors = status
        .lines()
        .find(|l| l.trim_start().starts_with("errors:"))
        .map(|l| l.trim().to_string())
        .unwrap_or_default();
    Ok(Finding {
        tool: "zpool scrub".into(),
        code: Some(0),
        problems: zfs_cksum_errors(sys, pool) as f64,
        summary: format!("{scrub}; {errors}"),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn btrfs_repairs_name_their_inodes() {
        let lines = vec![
            "[  12.1] BTRFS warning (device loop0): csum failed root 5 ino 257 off 0 csum 0x1 expected csum 0x2 mirror 1".to_string(),
            "[  12.2] BTRFS info (device loop0): read error corrected: ino 257 off 0 (dev /dev/loop0 sector 206848)".to_string(),
            "[  12.3] BTRFS info (device loop0): read error corrected: ino 261 off 4096 (dev /dev/loop0 sector 1)".to_string(),
        ];
        assert_eq!(btrfs_repaired_inodes(&lines), BTreeSet::from([257, 261]));
        let s = kernel_summary(&lines);
        assert_eq!(s.len(), 2, "{s:?}");
        assert!(s[0].contains("csum failed"));
    }
}
