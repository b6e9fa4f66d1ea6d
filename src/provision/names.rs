//! The names fsbench generates for what it makes: run directories `fsbench-YYYYMMDDTHHMMSS-PID`
//! (a node's of a multi-rank run: `...-PID-nK`) directly inside a marked work directory, mount
//! points `mnt-N-LABEL` and `fault-N` in them, images `fsbench-N.img` and `fsbench-N-K.img`, the
//! fault device's `fault-N/disk`, and pools `fsbench-RUNID-N`. With no state file to say what is
//! whose, cleanup acts on these names only.

use std::path::Path;

use super::workdir::{trusted, WORKDIR_MARKER};

/// Is `run_dir` a run directory fsbench makes (`fsbench-YYYYMMDDTHHMMSS-PID`) directly inside a
/// trusted work directory that carries the marker? The marker speaks for its own directory only,
/// never for what lies deeper.
fn run_dir_in_workdir(run_dir: &Path) -> bool {
    let name_ok = run_dir
        .file_name()
        .and_then(|n| n.to_str())
        .and_then(|n| n.strip_prefix(super::NAME_PREFIX))
        .is_some_and(is_run_id);
    name_ok
        && run_dir
            .parent()
            .is_some_and(|w| w.join(WORKDIR_MARKER).is_file() && trusted(w))
}

/// A run id as fsbench makes them: `YYYYMMDDTHHMMSS-PID`, or a node's `YYYYMMDDTHHMMSS-PID-nK`.
fn is_run_id(s: &str) -> bool {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    match without_node(s).split_once('-') {
        Some((stamp, pid)) => {
            stamp.len() == 15
                && stamp.as_bytes()[8] == b'T'
                && digits(&stamp[..8])
                && digits(&stamp[9..])
                && digits(pid)
        }
        None => false,
    }
}

/// The run id of the run directory `path` lies in (its nearest ancestor named `fsbench-RUNID`).
pub fn run_of_path(path: &Path) -> Option<&str> {
    path.ancestors()
        .skip(1)
        .filter_map(|a| a.file_name()?.to_str()?.strip_prefix(super::NAME_PREFIX))
        .find(|id| is_run_id(id))
}

/// The run id a pool name fsbench generates carries (`fsbench-RUNID-N`).
pub fn run_of_pool(pool: &str) -> Option<&str> {
    pool_id(pool)?.rsplit_once('-').map(|(run, _)| run)
}

/// The pid of the process that made a run and the run's start, `YYYYMMDDTHHMMSS`, from its id.
pub fn run_maker(run: &str) -> Option<(u32, &str)> {
    let (stamp, pid) = without_node(run).split_once('-')?;
    Some((pid.parse().ok()?, stamp))
}

/// A run id without a node's `-nK` (a multi-rank run's node directories carry rank 0's id).
fn without_node(run: &str) -> &str {
    match run.rsplit_once("-n") {
        Some((r, node)) if !node.is_empty() && node.bytes().all(|b| b.is_ascii_digit()) => r,
        _ => run,
    }
}

/// `PREFIX` followed by digits, then, when `more` is given, a dash and digits (`fsbench-3`,
/// `fsbench-3-1`).
fn indexed(name: &str, prefix: &str, dash_more: bool) -> bool {
    let Some(rest) = name.strip_prefix(prefix) else {
        return false;
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    digits(rest)
        || (dash_more
            && rest
                .split_once('-')
                .is_some_and(|(a, b)| digits(a) && digits(b)))
}

/// Is `path` a mount point fsbench makes in a run directory of a marked work directory:
/// `WORKDIR/fsbench-RUNID/mnt-N-LABEL` or `.../fault-N` (fsbench's fault device)? Cleanup unmounts
/// an unrecorded mount only then: a user's mount anywhere else in the work directory stays.
pub fn is_own_mountpoint(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let mnt = name
        .strip_prefix("mnt-")
        .and_then(|r| r.split_once('-'))
        .is_some_and(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()));
    (mnt || indexed(name, "fault-", false)) && path.parent().is_some_and(run_dir_in_workdir)
}

/// Is `path` a loop image fsbench makes (`WORKDIR/fsbench-RUNID/fsbench-N.img`, `fsbench-N-K.img`)
/// or the disk of its fault device (`.../fault-N/disk`)?
pub fn is_own_image(path: &Path) -> bool {
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return false;
    };
    let parent = path.parent();
    let image = name
        .strip_suffix(".img")
        .is_some_and(|n| indexed(n, super::NAME_PREFIX, true))
        && parent.is_some_and(run_dir_in_workdir);
    let fault_disk = name == super::faultdev::DISK
        && parent.is_some_and(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| indexed(n, "fault-", false))
                && p.parent().is_some_and(run_dir_in_workdir)
        });
    image || fault_disk
}

/// The target id a pool's name stands for, when it is a name fsbench generates:
/// `fsbench-RUNID-INDEX` (RUNID as `is_run_id` reads it).
pub fn pool_id(pool: &str) -> Option<&str> {
    let id = pool.strip_prefix(super::NAME_PREFIX)?;
    let (run, index) = id.rsplit_once('-')?;
    let digits = !index.is_empty() && index.bytes().all(|b| b.is_ascii_digit());
    (digits && is_run_id(run)).then_some(id)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::provision::workdir::secure;

    #[test]
    fn a_run_id_names_the_process_that_made_it_and_when() {
        let run = Path::new("/w/fsbench-20261123T101010-4242/mnt-0-ext4");
        assert_eq!(run_of_path(run), Some("20261123T101010-4242"));
        let disk = Path::new("/w/fsbench-20261123T101010-4242-n3/fault-1/disk");
        assert_eq!(run_of_path(disk), Some("20261123T101010-4242-n3"));
        assert_eq!(run_of_path(Path::new("/w/fsbench-mine/mnt-0-ext4")), None);
        assert_eq!(
            run_of_pool("fsbench-20261123T101010-4242-n3-0"),
            Some("20261123T101010-4242-n3")
        );
        assert_eq!(run_of_pool("fsbench-mine"), None);
        assert_eq!(
            run_maker("20261123T101010-4242-n3"),
            Some((4242, "20261123T101010"))
        );
        assert_eq!(
            run_maker("20261123T101010-4242"),
            Some((4242, "20261123T101010"))
        );
        assert_eq!(run_maker("20261123T101010-x"), None);
    }

    #[test]
    fn only_names_fsbench_generates_in_a_run_directory_of_a_marked_workdir_are_its_own() {
        let t = tempfile::tempdir().unwrap();
        let wd = secure(&t.path().join("wd")).unwrap();
        let run = wd.join("fsbench-20261123T101010-4242");
        std::fs::create_dir(&run).unwrap();
        assert!(is_own_mountpoint(&run.join("mnt-0-ext4")));
        assert!(is_own_mountpoint(&run.join("mnt-12-zfs_recordsize_4k")));
        assert!(is_own_mountpoint(&run.join("fault-3")));
        assert!(is_own_image(&run.join("fsbench-0.img")));
        assert!(is_own_image(&run.join("fsbench-2-1.img")));
        assert!(is_own_image(&run.join("fault-2").join("disk")));
        // A node's run directory of a multi-rank run.
        let node = wd.join("fsbench-20261123T101010-4242-n3");
        std::fs::create_dir(&node).unwrap();
        assert!(is_own_mountpoint(&node.join("mnt-0-ext4")));
        assert!(is_own_image(&node.join("fsbench-0.img")));
        // A user's mount or file anywhere else in the work directory, or below a run directory,
        // or in a directory a marker sits above, is not.
        for not in [
            wd.join("mine"),
            wd.join("mnt-0-ext4"),
            run.join("mine"),
            run.join("mnt-x"),
            run.join("mnt-0-ext4").join("deeper"),
            wd.join("data")
                .join("fsbench-20261123T101010-4242")
                .join("mnt-0-ext4"),
            wd.join("fsbench-mine").join("mnt-0-ext4"),
            wd.join("fsbench-20261123T101010-4242-nx")
                .join("mnt-0-ext4"),
            wd.join("fsbench-20261123T101010-4242-n").join("mnt-0-ext4"),
        ] {
            assert!(!is_own_mountpoint(&not), "{}", not.display());
        }
        for not in [
            wd.join("fsbench-0.img"),
            run.join("user.img"),
            run.join("fsbench-x.img"),
            run.join("mnt-0-ext4").join("disk"),
        ] {
            assert!(!is_own_image(&not), "{}", not.display());
        }
        // Without the marker, nothing is.
        std::fs::remove_file(wd.join(WORKDIR_MARKER)).unwrap();
        assert!(!is_own_mountpoint(&run.join("mnt-0-ext4")));
    }

    #[test]
    fn generated_pool_names_are_recognised_and_others_are_not() {
        assert_eq!(
            pool_id("fsbench-20261123T101010-4242-0"),
            Some("20261123T101010-4242-0")
        );
        assert_eq!(
            pool_id("fsbench-20261123T101010-4242-n3-0"),
            Some("20261123T101010-4242-n3-0")
        );
        for not in [
            "fsbench-mine",
            "fsbench-20261123T101010-4242",
            "fsbench-20261123T101010-x-0",
            "fsbench-2026112T101010-4242-0",
            "tank",
            "fsbench-20261123T101010-4242-0-1",
            "fsbench-20261123T101010-4242-n3",
            "fsbench-20261123T101010-4242-nx-0",
        ] {
            assert_eq!(pool_id(not), None, "{not}");
        }
    }
}
