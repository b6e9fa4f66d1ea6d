//! `files`: many small files, as the billion-files study (seed 003) wrote them: a tree of top
//! folders and subfolders, sizes from a distribution, every file's content unique and
//! incompressible and bound to the file by a trailer (run seed, file number, checksum), then read
//! back and verified. Multi-threaded (one subfolder at a time per thread), checkpointed after each
//! subfolder so that `resume=1` continues a killed run, with memory that does not grow with the
//! file count.
//!
//! Tree: ROOT/t<top>/s<sub>/f<i>, with ROOT/.fsbench-files.json (seed, schedule, distribution) and
//! ROOT/.fsbench-files.progress (one line per finished subfolder: unit, files, bytes).

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs::{File, OpenOptions};
use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use super::data::DataGen;
use super::{Context, Phase, Workload, WorkloadDef};
use crate::metrics::clock::now_rfc3339;
use crate::metrics::hist::{self, Hist};
use crate::plan::units::{format_count, parse_size};
use crate::plan::WorkloadSpec;

pub const DEF: WorkloadDef = WorkloadDef {
    name: "files",
    summary: "many small files (seed 003): write, read back and verify, stat, delete; files:count=200000,threads=2",
    params: &[
        ("count", "number of files (default 100000), spread over 10 tops x 10 subfolders"),
        ("schedule", "the seed's schedules: 10M, 100M or 1B (100 tops, subfolders of 100,000 files)"),
        ("tops", "top folders"),
        ("subs", "subfolders per top folder"),
        ("files", "files per subfolder"),
        ("dist", "size distribution: normal (default), fixed, uniform, lognormal, exponential"),
        ("mean", "mean size (default 5500)"),
        ("sd", "standard deviation (default 1000; normal and lognormal)"),
        ("min", "smallest size (default 1K)"),
        ("max", "largest size (default 10K)"),
        ("size", "the size, for dist=fixed (e.g. 0 for empty files)"),
        ("threads", "worker threads (default: the CPU count)"),
        ("fsync", "none (default), file, dir or end"),
        ("phases", "any of write,read,stat,delete joined by + (default write+read)"),
        ("checksum", "crc32c (default) or crc32 (as the seed)"),
        ("seed", "content seed (default: from the clock, recorded)"),
        ("path", "absolute directory for the tree (default: the target's mount point)"),
        ("resume", "1: continue a tree whose write phase was interrupted"),
    ],
    fio_params: false,
    build,
};

/// Bytes of the trailer: run seed (8), file number (8), checksum (4).
pub const TRAILER: usize = 20;
const POOL: usize = 16 << 20;
const MANIFEST: &str = ".fsbench-files.json";
const PROGRESS: &str = ".fsbench-files.progress";

#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Dist {
    Normal,
    Fixed,
    Uniform,
    LogNormal,
    Exponential,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Checksum {
    Crc32c,
    Crc32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Fsync {
    None,
    File,
    Dir,
    End,
}

/// What a tree is: everything needed to regenerate and verify it, kept in its root.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Tree {
    pub version: u32,
    pub seed: u64,
    pub tops: u64,
    pub subs: u64,
    pub per_sub: u64,
    pub count: u64,
    pub dist: Dist,
    pub mean: f64,
    pub sd: f64,
    pub min: u64,
    pub max: u64,
    pub checksum: Checksum,
}

impl Tree {
    pub fn units(&self) -> u64 {
        self.tops * self.subs
    }

    /// Files in subfolder `u` (the last ones may hold fewer).
    pub fn files_in(&self, u: u64) -> u64 {
        self.count
            .saturating_sub(u * self.per_sub)
            .min(self.per_sub)
    }

    /// The size of file `n`: drawn from the distribution with a generator keyed by the seed and
    /// the file number, so a reader knows it without any per-file state.
    pub fn size_of(&self, n: u64) -> u64 {
        let mut g = DataGen::new(self.seed ^ n.wrapping_mul(0x9E37_79B9_7F4A_7C15) ^ 0x5112_e5eb);
        let u = |g: &mut DataGen| ((g.next_u64() >> 11) as f64 + 0.5) / (1u64 << 53) as f64;
        let normal = |g: &mut DataGen| {
            let (u1, u2) = (u(g), u(g));
            (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
        };
        let v = match self.dist {
            Dist::Fixed => self.mean,
            Dist::Normal => self.mean + self.sd * normal(&mut g),
            Dist::Uniform => self.min as f64 + u(&mut g) * (self.max - self.min + 1) as f64,
            Dist::LogNormal => {
                let s2 = (1.0 + (self.sd / self.mean).powi(2)).ln();
                let mu = self.mean.ln() - s2 / 2.0;
                (mu + s2.sqrt() * normal(&mut g)).exp()
            }
            Dist::Exponential => -self.mean * u(&mut g).ln(),
        };
        if self.dist == Dist::Fixed {
            return self.mean as u64;
        }
        (v.max(0.0) as u64).clamp(self.min, self.max)
    }

    fn path_of(&self, root: &Path, u: u64) -> PathBuf {
        root.join(format!("t{:03}", u / self.subs))
            .join(format!("s{:03}", u % self.subs))
    }
}

fn checksum(kind: Checksum, seed: u64, number: u64, len: u64, payload: &[u8]) -> u32 {
    let mut head = [0u8; 24];
    head[..8].copy_from_slice(&seed.to_le_bytes());
    head[8..16].copy_from_slice(&number.to_le_bytes());
    head[16..].copy_from_slice(&len.to_le_bytes());
    match kind {
        Checksum::Crc32c => crc32c::crc32c_append(crc32c::crc32c(&head), payload),
        Checksum::Crc32 => {
            let mut h = crc32fast::Hasher::new();
            h.update(&head);
            h.update(payload);
            h.finalize()
        }
    }
}

/// Fills `buf` (its length is the file's size) with file `n`'s content: a slice of the random
/// pool at a place keyed by the file number, then the trailer.
pub fn content(tree: &Tree, pool: &[u8], n: u64, buf: &mut [u8]) {
    let len = buf.len();
    if len < TRAILER {
        let mut g = DataGen::new(tree.seed ^ n);
        g.fill(buf);
        return;
    }
    let body = len - TRAILER;
    let mut g = DataGen::new(tree.seed ^ n.rotate_left(17) ^ 0x00C0_FFEE);
    let at = (g.next_u64() % (pool.len() - body) as u64) as usize;
    buf[..body].copy_from_slice(&pool[at..at + body]);
    let c = checksum(tree.checksum, tree.seed, n, len as u64, &buf[..body]);
    buf[body..body + 8].copy_from_slice(&tree.seed.to_le_bytes());
    buf[body + 8..body + 16].copy_from_slice(&n.to_le_bytes());
    buf[body + 16..].copy_from_slice(&c.to_le_bytes());
}

/// What reading a file back found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Ok,
    CrcMismatch,
    WrongIdentity,
    WrongSize,
}

/// Checks a file's bytes against what file `n` of `tree` must hold.
pub fn verify(tree: &Tree, n: u64, data: &[u8]) -> Verdict {
    let want = tree.size_of(n) as usize;
    let len = data.len();
    if len < TRAILER || want < TRAILER {
        return if len != want {
            Verdict::WrongSize
        } else {
            let mut expect = vec![0u8; len];
            DataGen::new(tree.seed ^ n).fill(&mut expect);
            if expect == data {
                Verdict::Ok
            } else {
                Verdict::CrcMismatch
            }
        };
    }
    let body = len - TRAILER;
    let t = &data[body..];
    let seed = u64::from_le_bytes(t[..8].try_into().expect("8 bytes"));
    let number = u64::from_le_bytes(t[8..16].try_into().expect("8 bytes"));
    let crc = u32::from_le_bytes(t[16..].try_into().expect("4 bytes"));
    if checksum(tree.checksum, seed, number, len as u64, &data[..body]) != crc {
        return if len != want {
            Verdict::WrongSize
        } else {
            Verdict::CrcMismatch
        };
    }
    if seed != tree.seed || number != n {
        return Verdict::WrongIdentity;
    }
    if len != want {
        return Verdict::WrongSize;
    }
    Verdict::Ok
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum PhaseKind {
    Write,
    Read,
    Stat,
    Delete,
}

pub struct Files {
    tree: Tree,
    threads: usize,
    fsync: Fsync,
    phases: Vec<PhaseKind>,
    path: Option<PathBuf>,
    resume: bool,
    /// The user gave the tree's shape or content (not only phases): a later read must match.
    explicit: bool,
}

fn bad(spec: &WorkloadSpec, what: String) -> String {
    format!("workload '{}': {what}", spec.spec)
}

fn num(spec: &WorkloadSpec, key: &str) -> Result<Option<u64>, String> {
    spec.param(key)
        .map(|v| {
            let t = v.trim();
            let scaled = t
                .strip_suffix(['M', 'm'])
                .map(|x| (x, 1_000_000))
                .or_else(|| t.strip_suffix(['B', 'b']).map(|x| (x, 1_000_000_000)))
                .or_else(|| t.strip_suffix(['k', 'K']).map(|x| (x, 1000)));
            match scaled {
                Some((x, m)) if key != "mean" && key != "sd" => x.parse::<u64>().map(|n| n * m),
                _ => t.parse::<u64>(),
            }
            .map_err(|_| bad(spec, format!("{key}={v} is not a whole number")))
        })
        .transpose()
}

fn size_param(spec: &WorkloadSpec, key: &str) -> Result<Option<u64>, String> {
    spec.param(key)
        .map(|v| parse_size(v).map_err(|e| bad(spec, format!("{key}: {e}"))))
        .transpose()
}

fn build(spec: &WorkloadSpec, _o: &crate::plan::Overrides) -> Result<Box<dyn Workload>, String> {
    let (mut tops, mut subs, mut per_sub) = (10u64, 10u64, None);
    let mut count = num(spec, "count")?;
    if let Some(s) = spec.param("schedule") {
        let (c, s_) = match s.to_ascii_uppercase().as_str() {
            "10M" => (10_000_000, 1),
            "100M" => (100_000_000, 10),
            "1B" => (1_000_000_000, 100),
            o => {
                return Err(bad(
                    spec,
                    format!("schedule={o}: the seed's schedules are 10M, 100M and 1B"),
                ))
            }
        };
        if count.is_some() {
            return Err(bad(spec, "give count or schedule, not both".into()));
        }
        count = Some(c);
        tops = 100;
        subs = s_;
        per_sub = Some(100_000);
    }
    tops = num(spec, "tops")?.unwrap_or(tops);
    subs = num(spec, "subs")?.unwrap_or(subs);
    per_sub = num(spec, "files")?.or(per_sub);
    if tops == 0 || subs == 0 || per_sub == Some(0) {
        return Err(bad(spec, "tops, subs and files must be at least 1".into()));
    }
    let count = match (count, per_sub) {
        (Some(c), _) => c,
        (None, Some(p)) => tops * subs * p,
        (None, None) => 100_000,
    };
    let per_sub = per_sub.unwrap_or_else(|| count.div_ceil(tops * subs).max(1));
    if count > tops * subs * per_sub {
        return Err(bad(
            spec,
            format!(
                "{count} files do not fit in {tops} tops x {subs} subfolders x {per_sub} files"
            ),
        ));
    }
    let dist = match spec.param("dist").unwrap_or("normal") {
        "normal" => Dist::Normal,
        "fixed" => Dist::Fixed,
        "uniform" => Dist::Uniform,
        "lognormal" => Dist::LogNormal,
        "exponential" => Dist::Exponential,
        o => {
            return Err(bad(
                spec,
                format!("dist={o}: use normal, fixed, uniform, lognormal or exponential"),
            ))
        }
    };
    let min = size_param(spec, "min")?.unwrap_or(1024);
    let max = size_param(spec, "max")?.unwrap_or(10240);
    let fixed = size_param(spec, "size")?;
    if fixed.is_some() && dist != Dist::Fixed && spec.param("dist").is_some() {
        return Err(bad(spec, "size= is for dist=fixed".into()));
    }
    let dist = if fixed.is_some() { Dist::Fixed } else { dist };
    let mean = match (dist, fixed) {
        (Dist::Fixed, Some(s)) => s as f64,
        _ => size_param(spec, "mean")?
            .map(|v| v as f64)
            .unwrap_or(5500.0),
    };
    let sd = size_param(spec, "sd")?.map(|v| v as f64).unwrap_or(1000.0);
    if min > max {
        return Err(bad(spec, format!("min ({min}) is larger than max ({max})")));
    }
    if max > 64 << 20 {
        return Err(bad(
            spec,
            "max is at most 64M (this is the small-files workload)".into(),
        ));
    }
    let threads = match num(spec, "threads")? {
        Some(0) => return Err(bad(spec, "threads must be at least 1".into())),
        Some(t) => t as usize,
        None => std::thread::available_parallelism()
            .map(|n| n.get())
            .unwrap_or(1),
    };
    let fsync = match spec.param("fsync").unwrap_or("none") {
        "none" => Fsync::None,
        "file" => Fsync::File,
        "dir" => Fsync::Dir,
        "end" => Fsync::End,
        o => return Err(bad(spec, format!("fsync={o}: use none, file, dir or end"))),
    };
    let mut phases = Vec::new();
    for p in spec
        .param("phases")
        .unwrap_or("write+read")
        .split(['+', ' '])
    {
        let k = match p.trim() {
            "write" => PhaseKind::Write,
            "read" => PhaseKind::Read,
            "stat" => PhaseKind::Stat,
            "delete" => PhaseKind::Delete,
            "" => continue,
            o => return Err(bad(spec, format!("phase '{o}': phases are write, read, stat and delete, joined by + (e.g. phases=write+read)"))),
        };
        if !phases.contains(&k) {
            phases.push(k);
        }
    }
    let checksum = match spec.param("checksum").unwrap_or("crc32c") {
        "crc32c" => Checksum::Crc32c,
        "crc32" => Checksum::Crc32,
        o => return Err(bad(spec, format!("checksum={o}: use crc32c or crc32"))),
    };
    let seed = match num(spec, "seed")? {
        Some(s) => s,
        None => std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos() as u64)
            .unwrap_or(1),
    };
    let path = spec.param("path").map(PathBuf::from);
    if let Some(p) = &path {
        if !p.is_absolute() {
            return Err(bad(spec, format!("path={} must be absolute", p.display())));
        }
    }
    let resume = matches!(spec.param("resume"), Some("1") | Some("yes") | Some("true"));
    let explicit = spec.params.iter().any(|(k, _)| {
        !matches!(
            k.as_str(),
            "phases" | "threads" | "path" | "resume" | "fsync"
        )
    });
    Ok(Box::new(Files {
        tree: Tree {
            version: 1,
            seed,
            tops,
            subs,
            per_sub,
            count,
            dist,
            mean,
            sd,
            min,
            max,
            checksum,
        },
        threads,
        fsync,
        phases,
        path,
        resume,
        explicit,
    }))
}

/// Per-operation latency histograms of one phase.
struct Ops {
    names: &'static [&'static str],
    hists: Vec<Hist>,
}

impl Ops {
    fn new(names: &'static [&'static str]) -> Ops {
        Ops {
            names,
            hists: names.iter().map(|_| hist::new()).collect(),
        }
    }
    fn rec(&mut self, i: usize, d: Duration) {
        self.hists[i].saturating_record((d.as_nanos() as u64).max(1));
    }
    fn merge(&mut self, o: &Ops) {
        for (a, b) in self.hists.iter_mut().zip(&o.hists) {
            let _ = a.add(b);
        }
    }
    fn syscall_ns(&self) -> f64 {
        self.hists.iter().map(|h| h.mean() * h.len() as f64).sum()
    }
}

const WRITE_OPS: &[&str] = &["mkdir", "create", "write", "close", "fsync"];
const READ_OPS: &[&str] = &["open", "read", "close"];
const STAT_OPS: &[&str] = &["stat"];
const DELETE_OPS: &[&str] = &["unlink", "rmdir"];

#[derive(Default, Clone, Copy)]
struct Counts {
    files: u64,
    bytes: u64,
    ok: u64,
    crc: u64,
    identity: u64,
    size: u64,
    missing: u64,
    fs_detected: u64,
}

impl Counts {
    fn add(&mut self, o: &Counts) {
        self.files += o.files;
        self.bytes += o.bytes;
        self.ok += o.ok;
        self.crc += o.crc;
        self.identity += o.identity;
        self.size += o.size;
        self.missing += o.missing;
        self.fs_detected += o.fs_detected;
    }
}

/// The degradation curve: the last 1% threshold passed, and (seconds, files done, bytes) at
/// each.
type Trend = (u64, Vec<(f64, u64, u64)>);

/// Shared state of a phase's workers.
struct Shared<'a> {
    tree: &'a Tree,
    root: &'a Path,
    next: AtomicU64,
    done_files: AtomicU64,
    stop: AtomicBool,
    exhausted: Mutex<Option<String>>,
    error: Mutex<Option<String>>,
    progress: Option<Mutex<File>>,
    /// Files per unit already present (resume, and what a later phase may expect).
    have: Mutex<BTreeMap<u64, u64>>,
    trend: Mutex<Trend>,
    started: Instant,
    pool: &'a [u8],
    /// Continuing an interrupted write: files already on disk are checked and kept.
    resume: bool,
    /// Files already done when the phase started (resume).
    start_files: u64,
}

impl Shared<'_> {
    fn fail(&self, e: String) {
        self.error.lock().expect("lock").get_or_insert(e);
        self.stop.store(true, Ordering::Relaxed);
    }

    fn unit_done(&self, files: u64, bytes: u64, total: u64) {
        let done = self.done_files.fetch_add(files, Ordering::Relaxed) + files;
        let mut t = self.trend.lock().expect("lock");
        // One trend point per 1% of the phase's files.
        let step = (total / 100).max(1);
        if done >= t.0 + step || done == total {
            t.0 = done - done % step;
            let e = self.started.elapsed().as_secs_f64();
            t.1.push((e, done, bytes));
        }
    }
}

/// fsbench's peak resident memory so far (VmHWM), to show that it does not grow with the files.
fn peak_rss_bytes() -> Option<u64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let kb = s
        .lines()
        .find(|l| l.starts_with("VmHWM:"))?
        .split_whitespace()
        .nth(1)?
        .parse::<u64>()
        .ok()?;
    Some(kb * 1024)
}

fn is_exhaustion(e: &std::io::Error) -> bool {
    matches!(e.raw_os_error(), Some(libc::ENOSPC) | Some(libc::EDQUOT))
}

fn fs_detected(e: &std::io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EIO) | Some(libc::EBADMSG) | Some(libc::EUCLEAN)
    )
}

impl Files {
    fn root(&self, ctx: &Context) -> PathBuf {
        self.path
            .clone()
            .unwrap_or_else(|| ctx.dir.join("fsbench-files"))
    }

    /// The tree to work on: the one on disk (for read/stat/delete or resume) or this run's.
    fn open_tree(&self, root: &Path) -> Result<(Tree, BTreeMap<u64, u64>), String> {
        let mpath = root.join(MANIFEST);
        let on_disk: Option<Tree> = match std::fs::read_to_string(&mpath) {
            Ok(t) => {
                Some(serde_json::from_str(&t).map_err(|e| format!("{}: {e}", mpath.display()))?)
            }
            Err(_) => None,
        };
        let writes = self.phases.contains(&PhaseKind::Write);
        let progress = read_progress(&root.join(PROGRESS));
        match on_disk {
            None if writes => {
                if root.join("t000").exists() {
                    return Err(format!("{} holds files but no {MANIFEST}: not a tree fsbench can continue; choose another path", root.display()));
                }
                Ok((self.tree.clone(), BTreeMap::new()))
            }
            None => Err(format!(
                "{} holds no files tree ({MANIFEST} is missing): run phases=write first, or give path= of an earlier tree",
                root.display()
            )),
            Some(t) if writes => {
                if !self.resume {
                    return Err(format!("{} already holds a files tree: add resume=1 to continue its write phase, or phases=read to verify it", root.display()));
                }
                if self.explicit && !same_shape(&t, &self.tree) {
                    return Err(format!("resume=1: the tree in {} was written with other parameters (seed {}, {} files); resume it with the same ones, or only phases/threads", root.display(), t.seed, t.count));
                }
                Ok((t, progress))
            }
            Some(t) => {
                if self.explicit && !same_shape(&t, &self.tree) {
                    return Err(format!("the tree in {} was written with other parameters (seed {}, {} files): give only phases, threads or path to verify it", root.display(), t.seed, t.count));
                }
                Ok((t, progress))
            }
        }
    }
}

fn same_shape(a: &Tree, b: &Tree) -> bool {
    // The seed of this run is a fresh one unless given: compare it only when it differs on purpose.
    a.tops == b.tops
        && a.subs == b.subs
        && a.per_sub == b.per_sub
        && a.count == b.count
        && a.dist == b.dist
        && a.checksum == b.checksum
}

fn read_progress(path: &Path) -> BTreeMap<u64, u64> {
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

fn used(dir: &Path) -> Option<crate::sys::FsStat> {
    crate::sys::statvfs(dir).ok()
}

impl Workload for Files {
    fn run(&self, ctx: &mut Context) -> Result<(), String> {
        if ctx.raw_device.is_some() {
            return (ctx.emit)(Phase {
                test: "write".into(),
                started_at: now_rfc3339(),
                skipped: Some("files needs a filesystem; raw targets run block workloads".into()),
                ..Default::default()
            })
            .map_err(|e| format!("cannot save the record: {e}"));
        }
        let root = self.root(ctx);
        let (tree, mut have) = self.open_tree(&root)?;
        let pool = {
            let mut p = vec![0u8; POOL];
            DataGen::new(tree.seed ^ 0x900d).fill(&mut p);
            p
        };
        for kind in &self.phases {
            if crate::runner::stop_requested() {
                return Err("interrupted".into());
            }
            let phase = match kind {
                PhaseKind::Write => self.write_phase(ctx, &root, &tree, &pool, &mut have)?,
                PhaseKind::Read => {
                    self.scan_phase(ctx, &root, &tree, &have, PhaseKind::Read, &pool)?
                }
                PhaseKind::Stat => {
                    self.scan_phase(ctx, &root, &tree, &have, PhaseKind::Stat, &pool)?
                }
                PhaseKind::Delete => {
                    self.scan_phase(ctx, &root, &tree, &have, PhaseKind::Delete, &pool)?
                }
            };
            let stop = phase.notes.iter().any(|n| n.starts_with("interrupted"));
            (ctx.emit)(phase).map_err(|e| format!("cannot save the record: {e}"))?;
            if stop {
                return Err("interrupted".into());
            }
        }
        Ok(())
    }
}

/// Progress on standard error: files, files/s and the ETA, once a second (terminals only).
fn progress_line(label: &str, done: u64, total: u64, started: Instant) -> String {
    let secs = started.elapsed().as_secs_f64().max(1e-3);
    let rate = done as f64 / secs;
    let eta = if rate > 0.0 {
        (total.saturating_sub(done)) as f64 / rate
    } else {
        0.0
    };
    format!(
        "\rfsbench:   {label}: {} / {} files ({:.1}%), {} files/s, ETA {:.0} s   ",
        format_count(done as f64),
        format_count(total as f64),
        done as f64 / total.max(1) as f64 * 100.0,
        format_count(rate),
        eta
    )
}

impl Files {
    fn run_units<F>(&self, shared: &Shared, label: &str, quiet: bool, work: F) -> (Ops, Counts)
    where
        F: Fn(u64, &mut Ops, &mut Counts, &mut Vec<u8>, &mut String) + Sync,
    {
        let names = match label {
            "write" => WRITE_OPS,
            "read" => READ_OPS,
            "stat" => STAT_OPS,
            _ => DELETE_OPS,
        };
        let units = shared.tree.units();
        let total: u64 = shared.tree.count;
        let show = !quiet && std::io::IsTerminal::is_terminal(&std::io::stderr());
        let results: Vec<(Ops, Counts)> = std::thread::scope(|s| {
            let handles: Vec<_> = (0..self.threads)
                .map(|_| {
                    s.spawn(|| {
                        let mut ops = Ops::new(names);
                        let mut counts = Counts::default();
                        let mut buf = vec![0u8; shared.tree.max as usize + TRAILER + 1];
                        let mut path = String::new();
                        loop {
                            if shared.stop.load(Ordering::Relaxed)
                                || crate::runner::stop_requested()
                            {
                                break;
                            }
                            let u = shared.next.fetch_add(1, Ordering::Relaxed);
                            if u >= units {
                                break;
                            }
                            work(u, &mut ops, &mut counts, &mut buf, &mut path);
                        }
                        (ops, counts)
                    })
                })
                .collect();
            if show {
                while !handles.iter().all(|h| h.is_finished()) {
                    std::thread::sleep(Duration::from_millis(200));
                    eprint!(
                        "{}",
                        progress_line(
                            label,
                            shared.done_files.load(Ordering::Relaxed),
                            total,
                            shared.started
                        )
                    );
                }
                eprintln!();
            }
            handles
                .into_iter()
                .map(|h| {
                    h.join()
                        .unwrap_or_else(|_| (Ops::new(names), Counts::default()))
                })
                .collect()
        });
        let mut ops = Ops::new(names);
        let mut counts = Counts::default();
        for (o, c) in &results {
            ops.merge(o);
            counts.add(c);
        }
        (ops, counts)
    }

    fn write_phase(
        &self,
        ctx: &Context,
        root: &Path,
        tree: &Tree,
        pool: &[u8],
        have: &mut BTreeMap<u64, u64>,
    ) -> Result<Phase, String> {
        std::fs::create_dir_all(root).map_err(|e| format!("{}: {e}", root.display()))?;
        let mpath = root.join(MANIFEST);
        if !mpath.exists() {
            let text = serde_json::to_string_pretty(tree).map_err(|e| e.to_string())?;
            let tmp = root.join(format!("{MANIFEST}.tmp"));
            std::fs::write(&tmp, text)
                .and_then(|_| File::open(&tmp)?.sync_all())
                .and_then(|_| std::fs::rename(&tmp, &mpath))
                .map_err(|e| format!("{}: {e}", mpath.display()))?;
        }
        let progress = OpenOptions::new()
            .create(true)
            .append(true)
            .open(root.join(PROGRESS))
            .map_err(|e| format!("{}: {e}", root.join(PROGRESS).display()))?;
        let resumed_files: u64 = have.values().sum();
        let before = used(root);
        let started_at = now_rfc3339();
        let shared = Shared {
            tree,
            root,
            next: AtomicU64::new(0),
            done_files: AtomicU64::new(resumed_files),
            stop: AtomicBool::new(false),
            exhausted: Mutex::new(None),
            error: Mutex::new(None),
            progress: Some(Mutex::new(progress)),
            have: Mutex::new(have.clone()),
            trend: Mutex::new((resumed_files, Vec::new())),
            started: Instant::now(),
            pool,
            resume: self.resume,
            start_files: resumed_files,
        };
        let fsync = self.fsync;
        let (ops, counts) =
            self.run_units(&shared, "write", ctx.quiet, |u, ops, counts, buf, path| {
                write_unit(&shared, u, fsync, ops, counts, buf, path)
            });
        let mut end_sync = Duration::ZERO;
        if fsync == Fsync::End && shared.error.lock().expect("lock").is_none() {
            let t = Instant::now();
            if let Ok(f) = File::open(root) {
                let _ = crate::sys::syncfs(&f);
            }
            end_sync = t.elapsed();
        }
        let wall = shared.started.elapsed();
        // Space is counted after the filesystem has written everything back.
        if let Ok(f) = File::open(root) {
            let _ = crate::sys::syncfs(&f);
        }
        let after = used(root);
        *have = shared.have.lock().expect("lock").clone();
        let mut m = BTreeMap::new();
        let secs = wall.as_secs_f64().max(1e-9);
        m.insert("files".into(), counts.files as f64);
        m.insert("bytes".into(), counts.bytes as f64);
        m.insert("files_per_sec".into(), counts.files as f64 / secs);
        m.insert("bytes_per_sec".into(), counts.bytes as f64 / secs);
        m.insert("files_total".into(), have.values().sum::<u64>() as f64);
        m.insert("threads".into(), self.threads as f64);
        if end_sync > Duration::ZERO {
            m.insert("end_fsync_ns".into(), end_sync.as_nanos() as f64);
        }
        if let (Some(b), Some(a)) = (before, after) {
            let space =
                (a.blocks - a.blocks_free).saturating_sub(b.blocks - b.blocks_free) * a.block_size;
            let blocks = (a.blocks - a.blocks_free).saturating_sub(b.blocks - b.blocks_free);
            let inodes = (a.inodes - a.inodes_free).saturating_sub(b.inodes - b.inodes_free);
            m.insert("space_used_bytes".into(), space as f64);
            m.insert("blocks_used".into(), blocks as f64);
            m.insert("block_size".into(), a.block_size as f64);
            m.insert("blocks_per_sec".into(), blocks as f64 / secs);
            m.insert("inodes_used".into(), inodes as f64);
            if space > 0 {
                m.insert(
                    "space_overhead_pct".into(),
                    (space as f64 - counts.bytes as f64) / space as f64 * 100.0,
                );
            }
        }
        let mut notes = Vec::new();
        if resumed_files > 0 {
            notes.push(format!(
                "resumed: {} files were already on disk and were not written again",
                format_count(resumed_files as f64)
            ));
        }
        if let Some(x) = shared.exhausted.lock().expect("lock").clone() {
            notes.push(format!("exhausted: {x}"));
            m.insert(
                if x.contains("inodes") {
                    "exhausted_inodes"
                } else {
                    "exhausted_space"
                }
                .into(),
                1.0,
            );
        }
        if crate::runner::stop_requested() {
            notes.push("interrupted: stopped by a signal; resume=1 continues the tree".into());
        }
        let error = shared.error.lock().expect("lock").clone();
        Ok(self.finish_phase("write", started_at, wall, ops, m, notes, error, &shared))
    }

    #[allow(clippy::too_many_arguments)]
    fn finish_phase(
        &self,
        test: &str,
        started_at: String,
        wall: Duration,
        ops: Ops,
        mut m: BTreeMap<String, f64>,
        notes: Vec<String>,
        error: Option<String>,
        shared: &Shared,
    ) -> Phase {
        if let Some(rss) = peak_rss_bytes() {
            m.insert("peak_rss_bytes".into(), rss as f64);
        }
        let mut histograms = BTreeMap::new();
        for (name, h) in ops.names.iter().zip(&ops.hists) {
            if !h.is_empty() {
                hist::summarize(h, name, &mut m);
                histograms.insert(format!("{name}_ns"), hist::encode(h));
            }
        }
        let workers = (self.threads as f64).min(shared.tree.units() as f64);
        let busy = wall.as_secs_f64() * 1e9 * workers;
        if busy > 0.0 {
            m.insert(
                "outside_syscalls_pct".into(),
                ((busy - ops.syscall_ns()) / busy * 100.0).clamp(0.0, 100.0),
            );
        }
        let mut series = BTreeMap::new();
        let t = shared.trend.lock().expect("lock");
        let mut fps = Vec::new();
        let mut at = Vec::new();
        let mut last = (0.0f64, shared.start_files);
        for &(e, done, _) in &t.1 {
            let dt = e - last.0;
            if dt > 0.0 && done > last.1 {
                fps.push((done - last.1) as f64 / dt);
                at.push(done as f64);
            }
            last = (e, done);
        }
        series.insert("files_per_sec".to_string(), fps);
        series.insert("files_done".to_string(), at);
        let mut config = serde_json::to_value(shared.tree).unwrap_or_default();
        if let Some(o) = config.as_object_mut() {
            o.insert("threads".into(), self.threads.into());
            o.insert(
                "fsync".into(),
                serde_json::to_value(self.fsync).unwrap_or_default(),
            );
            o.insert("root".into(), shared.root.display().to_string().into());
        }
        Phase {
            test: test.into(),
            started_at,
            duration_s: wall.as_secs_f64(),
            error,
            metrics: m,
            notes,
            histograms,
            series,
            config: Some(config),
            skipped: None,
        }
    }

    fn scan_phase(
        &self,
        ctx: &Context,
        root: &Path,
        tree: &Tree,
        have: &BTreeMap<u64, u64>,
        kind: PhaseKind,
        pool: &[u8],
    ) -> Result<Phase, String> {
        let label = match kind {
            PhaseKind::Read => "read",
            PhaseKind::Stat => "stat",
            _ => "delete",
        };
        let mut notes = Vec::new();
        if matches!(kind, PhaseKind::Read | PhaseKind::Stat)
            && !crate::runner::sync_and_drop_caches()
        {
            notes.push(
                "page_cache: caches could not be dropped (not root); reads may come from memory"
                    .into(),
            );
        }
        if ctx.fs == "tmpfs" && kind == PhaseKind::Read {
            notes.push("page_cache: tmpfs lives in the page cache; reads measure memory".into());
        }
        let before = used(root);
        let started_at = now_rfc3339();
        let shared = Shared {
            tree,
            root,
            next: AtomicU64::new(0),
            done_files: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            exhausted: Mutex::new(None),
            error: Mutex::new(None),
            progress: None,
            have: Mutex::new(have.clone()),
            trend: Mutex::new((0, Vec::new())),
            started: Instant::now(),
            pool,
            resume: false,
            start_files: 0,
        };
        let expect = |u: u64| -> u64 {
            if have.is_empty() {
                tree.files_in(u)
            } else {
                have.get(&u).copied().unwrap_or(0)
            }
        };
        let (ops, counts) =
            self.run_units(&shared, label, ctx.quiet, |u, ops, counts, buf, path| {
                scan_unit(&shared, u, expect(u), kind, ops, counts, buf, path)
            });
        let wall = shared.started.elapsed();
        let mut m = BTreeMap::new();
        let secs = wall.as_secs_f64().max(1e-9);
        m.insert("files".into(), counts.files as f64);
        m.insert("files_per_sec".into(), counts.files as f64 / secs);
        m.insert("threads".into(), self.threads as f64);
        if kind == PhaseKind::Read {
            m.insert("bytes".into(), counts.bytes as f64);
            m.insert("bytes_per_sec".into(), counts.bytes as f64 / secs);
        }
        if kind != PhaseKind::Delete {
            m.insert("integrity_ok".into(), counts.ok as f64);
            m.insert("crc_mismatch".into(), counts.crc as f64);
            m.insert("wrong_identity".into(), counts.identity as f64);
            m.insert("wrong_size".into(), counts.size as f64);
            m.insert("missing".into(), counts.missing as f64);
            m.insert("fs_detected".into(), counts.fs_detected as f64);
        }
        if kind == PhaseKind::Delete {
            if let (Some(b), Some(a)) = (before, used(root)) {
                m.insert(
                    "space_freed_bytes".into(),
                    (b.blocks - b.blocks_free).saturating_sub(a.blocks - a.blocks_free) as f64
                        * a.block_size as f64,
                );
            }
        }
        let bad = counts.crc + counts.identity + counts.size + counts.missing + counts.fs_detected;
        let mut error = shared.error.lock().expect("lock").clone();
        if bad > 0 && error.is_none() {
            error = Some(format!(
                "integrity: {bad} of {} files failed ({} checksum mismatch, {} wrong identity, {} wrong size, {} missing, {} I/O errors from the filesystem)",
                counts.files, counts.crc, counts.identity, counts.size, counts.missing, counts.fs_detected
            ));
        }
        if crate::runner::stop_requested() {
            notes.push("interrupted: stopped by a signal".into());
        }
        if kind == PhaseKind::Delete && error.is_none() {
            let _ = std::fs::remove_file(root.join(PROGRESS));
            let _ = std::fs::remove_file(root.join(MANIFEST));
            if self.path.is_none() {
                let _ = std::fs::remove_dir(root);
            }
        }
        Ok(self.finish_phase(label, started_at, wall, ops, m, notes, error, &shared))
    }
}

fn write_unit(
    sh: &Shared,
    u: u64,
    fsync: Fsync,
    ops: &mut Ops,
    counts: &mut Counts,
    buf: &mut [u8],
    path: &mut String,
) {
    let tree = sh.tree;
    let n_files = tree.files_in(u);
    let already = sh.have.lock().expect("lock").get(&u).copied();
    if already == Some(n_files) {
        return;
    }
    let dir = tree.path_of(sh.root, u);
    let top = dir.parent().expect("a top folder");
    let mut existed = false;
    for d in [top, dir.as_path()] {
        let t = Instant::now();
        match std::fs::create_dir(d) {
            Ok(()) => ops.rec(0, t.elapsed()),
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => existed = d == dir.as_path(),
            Err(e) => {
                if is_exhaustion(&e) {
                    exhausted(sh);
                } else {
                    sh.fail(format!("mkdir {}: {e}", d.display()));
                }
                return;
            }
        }
    }
    path.clear();
    path.push_str(&dir.to_string_lossy());
    path.push_str("/f");
    let base = path.len();
    let resuming = sh.resume && existed;
    let mut written = 0u64;
    let mut bytes = 0u64;
    for i in 0..n_files {
        if sh.stop.load(Ordering::Relaxed) {
            return;
        }
        let n = u * tree.per_sub + i;
        path.truncate(base);
        let _ = write!(path, "{i}");
        let size = tree.size_of(n) as usize;
        let data = &mut buf[..size];
        content(tree, sh.pool, n, data);
        if resuming {
            // Keep a file an earlier run finished: it is counted, not written again.
            if let Ok(old) = std::fs::read(&*path) {
                if verify(tree, n, &old) == Verdict::Ok {
                    written += 1;
                    bytes += size as u64;
                    continue;
                }
            }
        }
        let t0 = Instant::now();
        let f = OpenOptions::new()
            .write(true)
            .create(true)
            .truncate(true)
            .open(&*path);
        let t1 = Instant::now();
        let mut f = match f {
            Ok(f) => f,
            Err(e) if is_exhaustion(&e) => {
                log_unit(sh, u, written, bytes);
                exhausted(sh);
                return;
            }
            Err(e) => return sh.fail(format!("create {path}: {e}")),
        };
        ops.rec(1, t1 - t0);
        if let Err(e) = f.write_all(data) {
            drop(f);
            if is_exhaustion(&e) {
                let _ = std::fs::remove_file(&*path);
                log_unit(sh, u, written, bytes);
                exhausted(sh);
                return;
            }
            return sh.fail(format!("write {path}: {e}"));
        }
        let t2 = Instant::now();
        ops.rec(2, t2 - t1);
        if fsync == Fsync::File {
            if let Err(e) = f.sync_all() {
                return sh.fail(format!("fsync {path}: {e}"));
            }
            ops.rec(4, t2.elapsed());
        }
        let t3 = Instant::now();
        drop(f);
        ops.rec(3, t3.elapsed());
        written += 1;
        bytes += size as u64;
        counts.files += 1;
        counts.bytes += size as u64;
    }
    if fsync == Fsync::Dir {
        let t = Instant::now();
        if let Ok(d) = File::open(&dir) {
            if let Err(e) = d.sync_all() {
                return sh.fail(format!("fsync {}: {e}", dir.display()));
            }
        }
        ops.rec(4, t.elapsed());
    }
    log_unit(sh, u, written, bytes);
    sh.unit_done(written, bytes, tree.count);
}

/// The checkpoint: a finished subfolder, appended and made durable.
fn log_unit(sh: &Shared, u: u64, files: u64, bytes: u64) {
    sh.have.lock().expect("lock").insert(u, files);
    if let Some(p) = &sh.progress {
        let mut f = p.lock().expect("lock");
        let line = format!("{u} {files} {bytes}\n");
        if f.write_all(line.as_bytes())
            .and_then(|_| f.sync_data())
            .is_err()
        {
            // Out of space for the checkpoint itself: the tree is still consistent on disk.
        }
    }
}

fn exhausted(sh: &Shared) {
    let st = crate::sys::statvfs(sh.root).ok();
    let total: u64 = sh.have.lock().expect("lock").values().sum::<u64>();
    let fs = crate::provision::mounts::mounts()
        .into_iter()
        .rev()
        .find(|m| sh.root.starts_with(&m.mountpoint))
        .map(|m| m.fstype)
        .unwrap_or_else(|| "the filesystem".into());
    let what = match st {
        Some(s) if s.inodes > 0 && s.inodes_free == 0 => "inodes",
        _ => "space",
    };
    let msg = format!(
        "{fs} ran out of {what} after {} files",
        format_count(total as f64)
    );
    sh.exhausted.lock().expect("lock").get_or_insert(msg);
    sh.stop.store(true, Ordering::Relaxed);
}

#[allow(clippy::too_many_arguments)]
fn scan_unit(
    sh: &Shared,
    u: u64,
    n_files: u64,
    kind: PhaseKind,
    ops: &mut Ops,
    counts: &mut Counts,
    buf: &mut [u8],
    path: &mut String,
) {
    let tree = sh.tree;
    let dir = tree.path_of(sh.root, u);
    path.clear();
    path.push_str(&dir.to_string_lossy());
    path.push_str("/f");
    let base = path.len();
    let mut bytes = 0u64;
    for i in 0..n_files {
        if sh.stop.load(Ordering::Relaxed) || crate::runner::stop_requested() {
            return;
        }
        let n = u * tree.per_sub + i;
        path.truncate(base);
        let _ = write!(path, "{i}");
        counts.files += 1;
        match kind {
            PhaseKind::Read => {
                let t0 = Instant::now();
                let f = File::open(&*path);
                let t1 = Instant::now();
                let mut f = match f {
                    Ok(f) => f,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                        counts.missing += 1;
                        continue;
                    }
                    Err(e) if fs_detected(&e) => {
                        counts.fs_detected += 1;
                        continue;
                    }
                    Err(e) => return sh.fail(format!("open {path}: {e}")),
                };
                ops.rec(0, t1 - t0);
                let mut got = 0;
                let want = tree.size_of(n) as usize;
                let r = loop {
                    match f.read(&mut buf[got..]) {
                        Ok(0) => break Ok(()),
                        Ok(k) => {
                            got += k;
                            // A short read of a regular file is its end: one read per file
                            // when the length is the expected one (longer files fill more).
                            if got == buf.len() || (got == want && got < buf.len()) {
                                break Ok(());
                            }
                        }
                        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                        Err(e) => break Err(e),
                    }
                };
                let t2 = Instant::now();
                ops.rec(1, t2 - t1);
                drop(f);
                ops.rec(2, t2.elapsed());
                match r {
                    Err(e) if fs_detected(&e) => {
                        counts.fs_detected += 1;
                        continue;
                    }
                    Err(e) => return sh.fail(format!("read {path}: {e}")),
                    Ok(()) => {}
                }
                bytes += got as u64;
                counts.bytes += got as u64;
                match verify(tree, n, &buf[..got]) {
                    Verdict::Ok => counts.ok += 1,
                    Verdict::CrcMismatch => counts.crc += 1,
                    Verdict::WrongIdentity => counts.identity += 1,
                    Verdict::WrongSize => counts.size += 1,
                }
            }
            PhaseKind::Stat => {
                let t0 = Instant::now();
                let m = std::fs::metadata(&*path);
                ops.rec(0, t0.elapsed());
                match m {
                    Ok(m) if m.len() == tree.size_of(n) => counts.ok += 1,
                    Ok(_) => counts.size += 1,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => counts.missing += 1,
                    Err(e) if fs_detected(&e) => counts.fs_detected += 1,
                    Err(e) => return sh.fail(format!("stat {path}: {e}")),
                }
            }
            _ => {
                let t0 = Instant::now();
                let r = std::fs::remove_file(&*path);
                ops.rec(0, t0.elapsed());
                match r {
                    Ok(()) => counts.ok += 1,
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => counts.missing += 1,
                    Err(e) => return sh.fail(format!("unlink {path}: {e}")),
                }
            }
        }
    }
    if kind == PhaseKind::Delete {
        let t = Instant::now();
        let _ = std::fs::remove_dir(&dir);
        if u % tree.subs == tree.subs - 1 {
            let _ = std::fs::remove_dir(dir.parent().expect("top"));
        }
        ops.rec(1, t.elapsed());
    }
    sh.unit_done(n_files, bytes, tree.count);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tree(dist: Dist) -> Tree {
        Tree {
            version: 1,
            seed: 7,
            tops: 2,
            subs: 2,
            per_sub: 10,
            count: 40,
            dist,
            mean: 5500.0,
            sd: 1000.0,
            min: 1024,
            max: 10240,
            checksum: Checksum::Crc32c,
        }
    }

    fn stats(t: &Tree, n: u64) -> (f64, f64, u64, u64) {
        let v: Vec<f64> = (0..n).map(|i| t.size_of(i) as f64).collect();
        let mean = v.iter().sum::<f64>() / n as f64;
        let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n as f64).sqrt();
        let lo = v.iter().cloned().fold(f64::MAX, f64::min) as u64;
        let hi = v.iter().cloned().fold(0.0, f64::max) as u64;
        (mean, sd, lo, hi)
    }

    #[test]
    fn sizes_follow_their_distribution_and_stay_clamped() {
        let (mean, sd, lo, hi) = stats(&tree(Dist::Normal), 100_000);
        assert!((mean - 5500.0).abs() < 20.0, "mean {mean}");
        assert!((sd - 1000.0).abs() < 20.0, "sd {sd}");
        assert!(lo >= 1024 && hi <= 10240);
        let mut t = tree(Dist::Normal);
        t.sd = 5000.0;
        let (_, _, lo, hi) = stats(&t, 20_000);
        assert_eq!((lo, hi), (1024, 10240), "clamped at both ends");
        let (mean, _, lo, hi) = stats(&tree(Dist::Uniform), 100_000);
        assert!(
            (mean - 5632.0).abs() < 40.0 && lo >= 1024 && hi <= 10240,
            "{mean}"
        );
        let mut t = tree(Dist::LogNormal);
        t.max = 1 << 20;
        t.min = 0;
        let (mean, sd, _, _) = stats(&t, 200_000);
        assert!(
            (mean - 5500.0).abs() < 50.0 && (sd - 1000.0).abs() < 50.0,
            "{mean} {sd}"
        );
        let mut t = tree(Dist::Exponential);
        t.max = 1 << 20;
        t.min = 0;
        let (mean, sd, _, _) = stats(&t, 200_000);
        assert!(
            (mean - 5500.0).abs() < 60.0 && (sd - 5500.0).abs() < 120.0,
            "{mean} {sd}"
        );
        let mut t = tree(Dist::Fixed);
        t.mean = 0.0;
        assert_eq!(t.size_of(3), 0);
        // The same file always has the same size.
        assert_eq!(
            tree(Dist::Normal).size_of(12345),
            tree(Dist::Normal).size_of(12345)
        );
    }

    #[test]
    fn the_trailer_catches_flips_truncation_swaps_and_stale_files() {
        let t = tree(Dist::Normal);
        let mut pool = vec![0u8; POOL];
        DataGen::new(1).fill(&mut pool);
        let file = |t: &Tree, n: u64| {
            let mut b = vec![0u8; t.size_of(n) as usize];
            content(t, &pool, n, &mut b);
            b
        };
        let a = file(&t, 3);
        assert_eq!(verify(&t, 3, &a), Verdict::Ok);
        let mut flipped = a.clone();
        flipped[100] ^= 0x10;
        assert_eq!(verify(&t, 3, &flipped), Verdict::CrcMismatch);
        assert_eq!(verify(&t, 3, &a[..a.len() - 1]), Verdict::WrongSize);
        let b = file(&t, 4);
        assert_eq!(
            verify(&t, 3, &b),
            Verdict::WrongIdentity,
            "file 4 where file 3 belongs"
        );
        let mut other = t.clone();
        other.seed = 8;
        let stale = file(&other, 3);
        assert_ne!(
            verify(&t, 3, &stale),
            Verdict::Ok,
            "a file from another run"
        );
        // Content is unique per file and does not compress.
        assert_ne!(a[..1000], b[..1000]);
        for c in [Checksum::Crc32, Checksum::Crc32c] {
            let mut t2 = t.clone();
            t2.checksum = c;
            assert_eq!(verify(&t2, 9, &file(&t2, 9)), Verdict::Ok);
        }
    }

    fn run_files(spec: &str, dir: &Path) -> Result<Vec<Phase>, String> {
        let w = build(
            &crate::plan::workload::parse_workload(spec).unwrap(),
            &Default::default(),
        )?;
        let mut phases = Vec::new();
        let mut emit = |p: Phase| {
            phases.push(p);
            Ok(())
        };
        let mut ctx = Context {
            dir,
            fs: "test",
            device: None,
            raw_device: None,
            quiet: true,
            emit: &mut emit,
        };
        w.run(&mut ctx)?;
        Ok(phases)
    }

    #[test]
    fn reading_back_counts_each_kind_of_damage_done_to_files_on_disk() {
        let dir = tempfile::tempdir().unwrap();
        let other = tempfile::tempdir().unwrap();
        let spec = "files:tops=2,subs=2,files=10,seed=11,threads=2,phases=write";
        let w = run_files(spec, dir.path()).unwrap();
        assert_eq!(w[0].metrics["files"], 40.0);
        assert!(w[0].error.is_none());
        run_files(
            "files:tops=2,subs=2,files=10,seed=12,phases=write",
            other.path(),
        )
        .unwrap();
        let f = |t: u32, s: u32, i: u32| {
            dir.path()
                .join(format!("fsbench-files/t{t:03}/s{s:03}/f{i}"))
        };
        // A bit flip, a truncation, a swap, a stale file from another run, a deleted file.
        let mut b = std::fs::read(f(0, 0, 0)).unwrap();
        b[10] ^= 1;
        std::fs::write(f(0, 0, 0), &b).unwrap();
        let b = std::fs::read(f(0, 0, 1)).unwrap();
        std::fs::write(f(0, 0, 1), &b[..b.len() - 100]).unwrap();
        let (x, y) = (
            std::fs::read(f(0, 1, 0)).unwrap(),
            std::fs::read(f(0, 1, 1)).unwrap(),
        );
        std::fs::write(f(0, 1, 0), &y).unwrap();
        std::fs::write(f(0, 1, 1), &x).unwrap();
        std::fs::copy(other.path().join("fsbench-files/t001/s000/f0"), f(1, 0, 0)).unwrap();
        std::fs::remove_file(f(1, 1, 9)).unwrap();
        // A later run verifies what the earlier one wrote, from the tree's own manifest.
        let r = run_files("files:phases=read,threads=2", dir.path()).unwrap();
        let m = &r[0].metrics;
        assert_eq!(m["integrity_ok"], 34.0);
        assert_eq!(m["crc_mismatch"], 1.0);
        assert_eq!(m["wrong_size"], 1.0);
        assert_eq!(
            m["wrong_identity"], 3.0,
            "the swapped pair and the stale file"
        );
        assert_eq!(m["missing"], 1.0);
        assert!(r[0]
            .error
            .as_deref()
            .unwrap()
            .contains("6 of 40 files failed"));
        // Reading where no tree is, or writing over an existing tree, is refused.
        let empty = tempfile::tempdir().unwrap();
        assert!(run_files("files:phases=read", empty.path())
            .unwrap_err()
            .contains("no files tree"));
        assert!(run_files(spec, dir.path())
            .unwrap_err()
            .contains("resume=1"));
    }

    #[test]
    fn specs_are_checked() {
        let b = |s: &str| {
            build(
                &crate::plan::workload::parse_workload(s).unwrap(),
                &Default::default(),
            )
        };
        assert!(b("files:count=1000,threads=2").is_ok());
        assert!(b("files:schedule=10M").is_ok());
        assert!(b("files:schedule=3M")
            .err()
            .unwrap()
            .contains("10M, 100M and 1B"));
        assert!(b("files:dist=zipf")
            .err()
            .unwrap()
            .contains("normal, fixed"));
        assert!(b("files:phases=write+scan")
            .err()
            .unwrap()
            .contains("phases are write"));
        assert!(b("files:count=1000,tops=1,subs=1,files=10")
            .err()
            .unwrap()
            .contains("do not fit"));
        assert!(b("files:min=10K,max=1K")
            .err()
            .unwrap()
            .contains("larger than max"));
        assert!(b("files:path=rel").err().unwrap().contains("absolute"));
    }
}
