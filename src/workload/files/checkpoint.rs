//! The tree's own records: ROOT/.fsbench-files.json (what the tree is) and
//! ROOT/.fsbench-files.progress (one line per finished subfolder: unit, files, bytes), appended
//! and made durable after each subfolder so that `resume=1` continues a killed run.

use std::collections::BTreeMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::Path;
use std::sync::Mutex;

use super::{Files, PhaseKind};
use crate::frame::RunError;
use crate::io::content::Tree;

pub const MANIFEST: &str = ".fsbench-files.json";
pub const PROGRESS: &str = ".fsbench-files.progress";

fn same_shape(a: &Tree, b: &Tree) -> bool {
    // The seed of this run is a fresh one unless given: compare it only when it differs on purpose.
    a.tops == b.tops
        && a.subs == b.subs
        && a.per_sub == b.per_sub
        && a.count == b.count
        && a.dist == b.dist
        && a.checksum == b.checksum
}

pub fn read_progress(path: &Path) -> BTreeMap<u64, u64> {
    let mut m = BTreeMap::new();
    if let Ok(text) = std::fs::read_to_string(path) {
        for l in text.lines() {
            let f: Vec<&str> = l.split_whitespace().collect();
            if let (Some(u), Some(n)) = (f.first(), f.get(1)) {
                if let (Ok(u), Ok(n)) = (u.parse::<u64>(), n.parse::<u64>()) {
                    m.insert(u, n);
                }
            }
        }
    }
    m
}

fn invalid(s: String) -> RunError {
    RunError::Invalid(s)
}

/// The tree to work on: the one on disk (for read/stat/delete or resume) or this run's, with the
/// files per subfolder already there.
pub fn open_tree(
    f: &Files,
    tree: &Tree,
    root: &Path,
) -> Result<(Tree, BTreeMap<u64, u64>), RunError> {
    let mpath = root.join(MANIFEST);
    let on_disk: Option<Tree> = match std::fs::read_to_string(&mpath) {
        Ok(t) => Some(
            serde_json::from_str(&t).map_err(|e| invalid(format!("{}: {e}", mpath.display())))?,
        ),
        Err(_) => None,
    };
    let writes = f.phases.contains(&PhaseKind::Write);
    let progress = read_progress(&root.join(PROGRESS));
    match on_disk {
        None if writes => {
            if root.join("t000").exists() {
                return Err(invalid(format!("{} holds files but no {MANIFEST}: not a tree fsbench can continue; choose another path", root.display())));
            }
            Ok((tree.clone(), BTreeMap::new()))
        }
        None => Err(invalid(format!(
            "{} holds no files tree ({MANIFEST} is missing): run phases=write first, or give path= of an earlier tree",
            root.display()
        ))),
        Some(t) if writes => {
            if !f.resume {
                return Err(invalid(format!("{} already holds a files tree: add resume=1 to continue its write phase, or phases=read to verify it", root.display())));
            }
            if f.explicit && !same_shape(&t, tree) {
                return Err(invalid(format!("resume=1: the tree in {} was written with other parameters (seed {}, {} files); resume it with the same ones, or only phases/threads", root.display(), t.seed, t.count)));
            }
            Ok((t, progress))
        }
        Some(t) => {
            if f.explicit && !same_shape(&t, tree) {
                return Err(invalid(format!("the tree in {} was written with other parameters (seed {}, {} files): give only phases, threads or path to verify it", root.display(), t.seed, t.count)));
            }
            Ok((t, progress))
        }
    }
}

/// Creates the root, writes the tree's manifest (once, atomically) and opens the progress log.
pub fn start_writing(root: &Path, tree: &Tree) -> Result<File, RunError> {
    std::fs::create_dir_all(root).map_err(RunError::io(root.display()))?;
    let mpath = root.join(MANIFEST);
    if !mpath.exists() {
        let text = serde_json::to_string_pretty(tree)
            .map_err(|e| invalid(format!("{}: {e}", mpath.display())))?;
        let tmp = root.join(format!("{MANIFEST}.tmp"));
        std::fs::write(&tmp, text)
            .and_then(|_| File::open(&tmp)?.sync_all())
            .and_then(|_| std::fs::rename(&tmp, &mpath))
            .map_err(RunError::io(mpath.display()))?;
    }
    let ppath = root.join(PROGRESS);
    OpenOptions::new()
        .create(true)
        .append(true)
        .open(&ppath)
        .map_err(RunError::io(ppath.display()))
}

/// The checkpoint: a finished subfolder, appended and made durable.
pub fn log_unit(log: &Mutex<File>, u: u64, files: u64, bytes: u64) {
    let mut f = log.lock().unwrap_or_else(|e| e.into_inner());
    let line = format!("{u} {files} {bytes}\n");
    // Out of space for the checkpoint itself: the tree is still consistent on disk.
    let _ = f.write_all(line.as_bytes()).and_then(|_| f.sync_data());
}

/// Removes the tree's records after a clean delete phase (and the root fsbench chose).
pub fn remove(root: &Path, own_root: bool) {
    let _ = std::fs::remove_file(root.join(PROGRESS));
    let _ = std::fs::remove_file(root.join(MANIFEST));
    if own_root {
        let _ = std::fs::remove_dir(root);
    }
}
