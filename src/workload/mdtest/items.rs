//! One rank's items of an mdtest phase: each item's path made as mdtest makes it (the full path
//! from the test's directory, its directory's part kept while the items stay in one directory),
//! then the calls mdtest's POSIX interface makes for it (a file created: open, seek, write,
//! fsync with -y, close; read: open, seek, read, close; stat, unlink, mkdir, rmdir, rename),
//! each item timed.

use std::io::{Read, Seek, SeekFrom, Write};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::tree::{Owner, Tree};
use crate::frame::WorkerCtx;
use crate::io::calls::Lat;
use crate::plan::hpc::mdtest::MdPlan;
use crate::stop::StopReason;

/// What a phase does to each item.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Op {
    TreeCreate,
    DirCreate,
    DirStat,
    DirRename,
    DirRemove,
    FileCreate,
    FileStat,
    FileRead,
    FileRemove,
    TreeRemove,
}

impl Op {
    /// The record's test, and the line of mdtest's summary.
    pub fn name(self) -> &'static str {
        match self {
            Op::TreeCreate => "tree-create",
            Op::DirCreate => "dir-create",
            Op::DirStat => "dir-stat",
            Op::DirRename => "dir-rename",
            Op::DirRemove => "dir-remove",
            Op::FileCreate => "file-create",
            Op::FileStat => "file-stat",
            Op::FileRead => "file-read",
            Op::FileRemove => "file-remove",
            Op::TreeRemove => "tree-remove",
        }
    }

    /// How many ranks on is the rank whose tree (and whose items) a phase works on, in -N
    /// strides: mdtest shifts each phase by one more.
    pub(super) fn shift(self) -> (u64, u64) {
        match self {
            Op::DirCreate | Op::FileCreate => (1, 0),
            Op::DirStat | Op::FileStat | Op::DirRename => (2, 1),
            Op::FileRead => (3, 2),
            Op::DirRemove | Op::FileRemove => (4, 3),
            Op::TreeCreate | Op::TreeRemove => (0, 0),
        }
    }

    pub(super) fn reads(self) -> bool {
        matches!(self, Op::DirStat | Op::FileStat | Op::FileRead)
    }
}

impl crate::workload::hpc::Kind for Op {
    fn name(self) -> &'static str {
        Op::name(self)
    }
}

/// What a phase works on: its items (or a tree's directories) by number, in whose tree, under
/// whose name, in mdtest's order.
pub struct Walk {
    pub op: Op,
    pub iteration: u32,
    pub owner: Owner,
    pub name: usize,
    pub nums: Vec<u64>,
}

/// What one rank's phase did.
#[derive(Debug, Default)]
pub struct Done {
    pub items: u64,
    pub bytes: u64,
    /// Items when the stonewall struck (-W), and when.
    pub wall: Option<(u64, Instant)>,
}

/// Why a rank's items stopped short.
pub enum Short {
    Stopped(StopReason),
    Failed(std::io::Error, PathBuf),
}

/// What the calls need: the plan, the data a file gets, a buffer a read fills.
pub struct Io<'a> {
    pub plan: &'a MdPlan,
    pub data: &'a [u8],
    pub buf: &'a mut [u8],
}

/// How mdtest makes an item's path in a phase; its rate counts the making.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Naming {
    /// Creations and removals walk the tree: a directory's path is made once, each item's name
    /// appended to it.
    PerDirectory,
    /// Stats and reads go by item number (`mdtest_stat`, `mdtest_read`): each item's path is
    /// made anew, its directory's ancestors walked up from the item's number to the tree's root.
    PerItem,
}

impl Op {
    fn naming(self) -> Naming {
        match self.reads() {
            true => Naming::PerItem,
            false => Naming::PerDirectory,
        }
    }
}

/// Item paths, made as mdtest makes them in the phase (`Naming`). Made ready before mdtest's
/// barrier: its own strings (the tree's root, the base name) are made once, not in the timer.
pub struct Namer<'a> {
    tree: &'a Tree<'a>,
    walk: &'a Walk,
    kind: &'static str,
    /// The directory whose path is kept (`PerDirectory`), and that path.
    dir: Option<u64>,
    kept: String,
    /// The tree's root and its directories' base name, and the ancestors' scratch.
    root: String,
    base: String,
    chain: Vec<u64>,
    buf: String,
}

impl<'a> Namer<'a> {
    pub fn new(tree: &'a Tree<'a>, walk: &'a Walk) -> Self {
        let kind = match walk.op {
            Op::DirCreate | Op::DirStat | Op::DirRename | Op::DirRemove => "dir",
            _ => "file",
        };
        Namer {
            tree,
            walk,
            kind,
            dir: None,
            kept: String::new(),
            root: tree
                .dir(walk.iteration, walk.owner, 0)
                .display()
                .to_string(),
            base: walk.owner.base(),
            chain: Vec::new(),
            buf: String::with_capacity(256),
        }
    }

    /// Directory `k`'s path into the buffer: the root, then its ancestors walked up from `k`.
    fn dir_of(&mut self, k: u64) {
        self.buf.clear();
        self.buf.push_str(&self.root);
        self.tree
            .push_below_root(&mut self.buf, &self.base, k, &mut self.chain);
    }

    fn path(&mut self, n: u64) -> &Path {
        let w = self.walk;
        if matches!(w.op, Op::TreeCreate | Op::TreeRemove) {
            self.dir_of(n);
            return Path::new(&self.buf);
        }
        let k = n / self.tree.plan.per_dir.max(1);
        match w.op.naming() {
            Naming::PerDirectory => {
                if self.dir != Some(k) {
                    self.dir_of(k);
                    std::mem::swap(&mut self.kept, &mut self.buf);
                    self.dir = Some(k);
                }
                self.buf.clear();
                self.buf.push_str(&self.kept);
            }
            Naming::PerItem => self.dir_of(k),
        }
        self.buf.push('/');
        super::tree::item_name(&mut self.buf, self.kind, w.name, n);
        Path::new(&self.buf)
    }
}

/// Items `from..to` of the namer's walk, each timed into `lat`; with `wall`, a create stops
/// once that much time has passed (mdtest's stonewall).
pub fn run(
    io: &mut Io,
    names: &mut Namer,
    (from, to): (usize, usize),
    wall: Option<Duration>,
    d: &mut Done,
    lat: &mut Lat,
    ctx: &WorkerCtx,
) -> Result<(), Short> {
    let walk = names.walk;
    let started = Instant::now();
    let mut t0 = started;
    let mut before = String::new();
    for i in from..to.min(walk.nums.len()) {
        if let Some(why) = crate::io::calls::stopped(i as u64) {
            return Err(Short::Stopped(why));
        }
        let r = match walk.op {
            Op::DirRename => rename(names, &mut before, i),
            op => one(io, op, names.path(walk.nums[i])),
        };
        let bytes = r.map_err(|e| Short::Failed(e, names.path(walk.nums[i]).to_path_buf()))?;
        let now = lat.since(t0);
        t0 = now;
        d.items += 1;
        d.bytes += bytes;
        ctx.progress.add(1, bytes);
        if wall.is_some_and(|w| now.duration_since(started) > w) {
            d.wall = Some((d.items, now));
            return Ok(());
        }
    }
    Ok(())
}

/// mdtest's rename of the items: the first moved aside, each next onto the name of the one
/// before it, the first (aside) onto the last but one's name; the last item stays. The item
/// before's path is the namer's last (`before`).
fn rename(names: &mut Namer, before: &mut String, i: usize) -> std::io::Result<u64> {
    let w = names.walk;
    let this = names
        .path(w.nums[i])
        .as_os_str()
        .to_string_lossy()
        .into_owned();
    let last = w.nums.len() - 1;
    let r = match i {
        0 => {
            *before = format!("{this}-XX");
            std::fs::rename(&this, &*before)
        }
        i if i == last => {
            let first = names
                .path(w.nums[0])
                .as_os_str()
                .to_string_lossy()
                .into_owned();
            std::fs::rename(format!("{first}-XX"), &*before)
        }
        _ => std::fs::rename(&this, &*before),
    };
    *before = this;
    r.map(|_| 0)
}

/// One item's calls; the bytes it wrote or read.
fn one(io: &mut Io, op: Op, path: &Path) -> std::io::Result<u64> {
    let direct = match io.plan.odirect {
        true => libc::O_DIRECT,
        false => 0,
    };
    match op {
        Op::TreeCreate | Op::DirCreate => {
            std::fs::DirBuilder::new().mode(0o775).create(path)?;
            Ok(0)
        }
        Op::DirStat | Op::FileStat => crate::sys::stat_only(path).map(|_| 0),
        Op::TreeRemove | Op::DirRemove => std::fs::remove_dir(path).map(|_| 0),
        Op::FileRemove => std::fs::remove_file(path).map(|_| 0),
        Op::DirRename => Ok(0),
        Op::FileCreate => {
            let mut f = std::fs::OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .mode(0o664)
                .custom_flags(direct)
                .open(path)?;
            if !io.data.is_empty() {
                f.seek(SeekFrom::Start(0))?;
                f.write_all(io.data)?;
                if io.plan.sync_file {
                    f.sync_all()?;
                }
            }
            Ok(io.data.len() as u64)
        }
        Op::FileRead => {
            let mut f = std::fs::OpenOptions::new()
                .read(true)
                .custom_flags(direct)
                .open(path)?;
            if !io.buf.is_empty() {
                f.seek(SeekFrom::Start(0))?;
                f.read_exact(io.buf)?;
            }
            Ok(io.buf.len() as u64)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Made per directory or per item, every item's path is the one mdtest names.
    #[test]
    fn both_namings_make_mdtests_paths() {
        let p = MdPlan::parse("-n 40 -z 2 -b 3 -u").unwrap();
        let tree = Tree {
            plan: &p,
            root: Path::new("/t"),
        };
        for op in [Op::FileCreate, Op::FileStat, Op::FileRead, Op::FileRemove] {
            let walk = Walk {
                op,
                iteration: 1,
                owner: Owner::Rank(2),
                name: 3,
                nums: tree.made(),
            };
            let mut names = Namer::new(&tree, &walk);
            for &n in walk.nums.iter().rev().chain(&walk.nums) {
                let want = tree.item(1, Owner::Rank(2), "file", 3, n);
                assert_eq!(names.path(n), want, "{op:?} item {n}");
            }
        }
        let walk = Walk {
            op: Op::TreeRemove,
            iteration: 0,
            owner: Owner::Shared,
            name: 0,
            nums: tree.dirs(),
        };
        let mut names = Namer::new(&tree, &walk);
        for &k in &walk.nums {
            assert_eq!(
                names.path(k),
                tree.dir(0, Owner::Shared, k),
                "directory {k}"
            );
        }
        assert_eq!(Op::FileStat.naming(), Naming::PerItem);
        assert_eq!(Op::FileCreate.naming(), Naming::PerDirectory);
    }
}
