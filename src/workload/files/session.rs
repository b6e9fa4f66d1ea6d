//! The files workload on one target: one frame phase per phase kind; workers take subfolders one
//! at a time from a shared counter.

use crate::metrics::name as metric;
use std::collections::BTreeMap;
use std::fs::File;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use super::unit::{Site, State, Unit};
use super::{checkpoint, scan, write, Counts, Files, Ops, PhaseKind, RankWork};
use crate::frame::{
    CachePolicy, Merged, Phase, PhaseSpec, RunError, Session, WorkerCtx, WorkerOut,
};
use crate::io::content::{Fsync, Tree, POOL};
use crate::metrics::hist;

pub struct FilesSession {
    /// What the workers read of the session: the tree, its root, the content pool.
    pub site: Site,
    /// Files per unit on disk (from the progress log, then from the write phase).
    have: BTreeMap<u64, u64>,
    threads: usize,
    own_root: bool,
    kinds: Vec<PhaseKind>,
    specs: Vec<PhaseSpec>,
    state: Option<State>,
    /// Several ranks: this rank's part (see `RankWork`).
    ranks: Option<RankWork>,
    /// The peer's tree is swapped in (a read or stat phase of a subtree-per-rank run).
    swapped: bool,
    /// One tree for all ranks: this phase's subfolders are those of rank `.0` of `.1`.
    deal: Option<(u64, u64)>,
}

impl FilesSession {
    pub fn new(
        f: &Files,
        root: PathBuf,
        tree: Tree,
        have: BTreeMap<u64, u64>,
        ranks: Option<RankWork>,
    ) -> FilesSession {
        let pool = tree.pool(POOL);
        let resumed: u64 = have.values().sum();
        let specs = f
            .phases
            .iter()
            .map(|k| PhaseSpec {
                name: k.name().into(),
                does: match k {
                    PhaseKind::Write => "create and write every file",
                    PhaseKind::Read => "read every file back and verify its trailer",
                    PhaseKind::Stat => "stat every file and check its size",
                    PhaseKind::Delete => "unlink every file and folder",
                }
                .into(),
                cache: match k {
                    PhaseKind::Read | PhaseKind::Stat => CachePolicy::Drop,
                    _ => CachePolicy::Keep,
                },
                writes: matches!(k, PhaseKind::Write | PhaseKind::Delete),
                reads: *k == PhaseKind::Read,
                workers: f.threads,
                unit: "files",
                total_ops: Some(if *k == PhaseKind::Write {
                    tree.count.saturating_sub(resumed)
                } else {
                    tree.count
                }),
                // Write reports the space and inodes used, delete the space freed.
                space: matches!(k, PhaseKind::Write | PhaseKind::Delete),
                ..Default::default()
            })
            .collect();
        FilesSession {
            own_root: f.path.is_none(),
            site: Site {
                tree,
                root,
                pool,
                fsync: f.fsync,
                resume: f.resume,
            },
            have,
            threads: f.threads,
            kinds: f.phases.clone(),
            specs,
            state: None,
            ranks,
            swapped: false,
            deal: None,
        }
    }

    /// Several ranks: a read or stat phase works on the previous rank's files (mdtest -N 1), the
    /// other phases on this rank's own.
    fn shift(&mut self, kind: PhaseKind) {
        let Some(rw) = self.ranks.as_mut() else {
            return;
        };
        let check = matches!(kind, PhaseKind::Read | PhaseKind::Stat);
        let (r, n) = (rw.index as u64, rw.size as u64);
        if rw.shared {
            let owner = if check { (r + n - 1) % n } else { r };
            self.deal = Some((owner, n));
            // What this rank wrote says nothing of another rank's subfolders: all are expected.
            self.have.clear();
            return;
        }
        if check != self.swapped {
            if let Some(peer) = rw.peer.as_mut() {
                std::mem::swap(&mut self.site.root, &mut peer.0);
                std::mem::swap(&mut self.site.tree, &mut peer.1);
                self.have = BTreeMap::new();
                self.site.pool = self.site.tree.pool(POOL);
                self.swapped = check;
            }
        }
    }

    /// The `k`th subfolder a worker takes in this phase (dealt out by rank in a shared tree).
    fn unit(&self, k: u64) -> u64 {
        match self.deal {
            Some((owner, n)) => k.saturating_mul(n).saturating_add(owner),
            None => k,
        }
    }

    /// Files expected in unit `u` by a scanning phase.
    fn expect(&self, u: u64) -> u64 {
        if self.have.is_empty() {
            self.site.tree.files_in(u)
        } else {
            self.have.get(&u).copied().unwrap_or(0)
        }
    }

    fn state(&self) -> &State {
        self.state.as_ref().expect("prepare made the phase's state")
    }

    /// The last worker to finish a write phase with fsync=end syncs the filesystem (timed).
    fn end_fsync(&self, out: &mut WorkerOut) {
        let st = self.state();
        let last = st.finished_workers.fetch_add(1, Ordering::AcqRel) + 1 == self.threads;
        let ok = st.error.lock().map(|e| e.is_none()).unwrap_or(false);
        if last && ok {
            let t = Instant::now();
            if let Ok(f) = File::open(&self.site.root) {
                let _ = crate::sys::syncfs(&f);
            }
            out.counters
                .insert(metric::END_FSYNC_NS, t.elapsed().as_nanos() as f64);
        }
    }
}

impl Session for FilesSession {
    fn phases(&self) -> &[PhaseSpec] {
        &self.specs
    }

    fn prepare(&mut self, phase: usize) -> Result<(), RunError> {
        let kind = self.kinds[phase];
        self.shift(kind);
        // One tree for all ranks: rank 0 keeps its records.
        let records = self
            .ranks
            .as_ref()
            .is_none_or(|r| !r.shared || r.index == 0);
        let log = match kind {
            PhaseKind::Write if records => Some(Mutex::new(checkpoint::start_writing(
                &self.site.root,
                &self.site.tree,
            )?)),
            _ => None,
        };
        let start_files = match kind {
            PhaseKind::Write => self.have.values().sum(),
            _ => 0,
        };
        self.state = Some(State {
            next: AtomicU64::new(0),
            stop: AtomicBool::new(false),
            exhausted: Mutex::new(None),
            error: Mutex::new(None),
            log,
            have: Mutex::new(self.have.clone()),
            trend: Mutex::new((start_files, Vec::new())),
            started: OnceLock::new(),
            done_files: AtomicU64::new(start_files),
            start_files,
            finished_workers: AtomicUsize::new(0),
        });
        Ok(())
    }

    fn stat_dir(&self) -> Option<&Path> {
        Some(&self.site.root)
    }

    fn work(&self, phase: usize, ctx: &WorkerCtx) -> WorkerOut {
        let kind = self.kinds[phase];
        let st = self.state();
        let started = *st.started.get_or_init(Instant::now);
        let mut ops = Ops::over(ctx.interval, started);
        let mut c = Counts::default();
        let mut buf = vec![0u8; self.site.tree.max as usize + super::TRAILER + 1];
        let mut path = String::new();
        let mut out = WorkerOut::default();
        loop {
            if st.stop.load(Ordering::Relaxed) {
                break;
            }
            if let Some(why) = crate::stop::requested() {
                out.stopped = Some(why);
                break;
            }
            let u = self.unit(st.next.fetch_add(1, Ordering::Relaxed));
            if u >= self.site.tree.units() {
                break;
            }
            let before = (c.files, c.bytes);
            let mut w = Unit {
                s: &self.site,
                st,
                ops: &mut ops,
                c: &mut c,
                buf: &mut buf,
                path: &mut path,
            };
            match kind {
                PhaseKind::Write => write::unit(&mut w, u),
                PhaseKind::Read => w.read(u, self.expect(u)),
                PhaseKind::Stat => w.stat(u, self.expect(u)),
                PhaseKind::Delete => w.delete(u, self.expect(u)),
            }
            ctx.progress.add(c.files - before.0, c.bytes - before.1);
        }
        if kind == PhaseKind::Write && self.site.fsync == Fsync::End {
            self.end_fsync(&mut out);
        }
        out.window = started.elapsed();
        out.timeline = ops.timeline(Instant::now());
        for op in kind.ops() {
            out.hists.insert(op.name(), ops.hists[*op as usize].clone());
        }
        for (k, v) in [
            ("files", c.files),
            ("bytes", c.bytes),
            ("ok", c.ok),
            ("crc", c.crc),
            ("identity", c.identity),
            ("size", c.size),
            ("missing", c.missing),
            (metric::FS_DETECTED, c.fs_detected),
        ] {
            out.counters.insert(k, v as f64);
        }
        out
    }

    fn finish(&mut self, phase: usize, m: &Merged) -> Result<Vec<Phase>, RunError> {
        let kind = self.kinds[phase];
        let st = self.state.take().expect("prepare made the phase's state");
        let part = &m.parts[0];
        let wall = Duration::from_secs_f64(m.frame.last_done_s);
        let (mut metrics, notes, error) = match kind {
            PhaseKind::Write => write::figures(&st, part, m, wall),
            _ => scan::figures(kind, &st, part, m, wall),
        };
        if kind == PhaseKind::Write {
            self.have = st.have.lock().unwrap_or_else(|e| e.into_inner()).clone();
        }
        metrics.insert("threads".into(), self.threads as f64);
        if kind == PhaseKind::Delete && error.is_none() {
            checkpoint::remove(&self.site.root, self.own_root);
        }
        Ok(vec![
            self.phase(kind, &st, part, wall, metrics, notes, error)
        ])
    }
}

impl FilesSession {
    /// The record every phase kind shares: histograms, time outside syscalls, trend, config.
    #[allow(clippy::too_many_arguments)]
    fn phase(
        &self,
        kind: PhaseKind,
        st: &State,
        part: &WorkerOut,
        wall: Duration,
        mut m: BTreeMap<String, f64>,
        notes: Vec<String>,
        error: Option<String>,
    ) -> Phase {
        if let Some(rss) = crate::sys::host::peak_rss_bytes() {
            m.insert(metric::PEAK_RSS_BYTES.into(), rss as f64);
        }
        let mut histograms = BTreeMap::new();
        let mut syscall_ns = 0.0;
        for op in kind.ops() {
            let Some(h) = part.hists.get(op.name()) else {
                continue;
            };
            if !h.is_empty() {
                hist::summarize(h, op.name(), &mut m);
                histograms.insert(format!("{}_ns", op.name()), hist::encode(h));
                syscall_ns += h.mean() * h.len() as f64;
            }
        }
        let workers = (self.threads as f64).min(self.site.tree.units() as f64);
        let busy = wall.as_secs_f64() * 1e9 * workers;
        if busy > 0.0 {
            m.insert(
                metric::OUTSIDE_SYSCALLS_PCT.into(),
                ((busy - syscall_ns) / busy * 100.0).clamp(0.0, 100.0),
            );
        }
        let mut config = serde_json::to_value(&self.site.tree).unwrap_or_default();
        if let Some(o) = config.as_object_mut() {
            o.insert("threads".into(), self.threads.into());
            o.insert(
                "fsync".into(),
                serde_json::to_value(self.site.fsync).unwrap_or_default(),
            );
            o.insert("root".into(), self.site.root.display().to_string().into());
        }
        Phase {
            test: kind.name().into(),
            duration_s: wall.as_secs_f64(),
            error,
            metrics: m,
            notes,
            histograms,
            series: trend_series(st),
            config: Some(config),
            ..Default::default()
        }
    }
}

fn trend_series(st: &State) -> BTreeMap<String, Vec<f64>> {
    let t = st.trend.lock().unwrap_or_else(|e| e.into_inner());
    let mut fps = Vec::new();
    let mut at = Vec::new();
    let mut last = (0.0f64, st.start_files);
    for &(e, done, _) in &t.1 {
        let dt = e - last.0;
        if dt > 0.0 && done > last.1 {
            fps.push((done - last.1) as f64 / dt);
            at.push(done as f64);
        }
        last = (e, done);
    }
    let mut series = BTreeMap::new();
    series.insert(metric::FILES_PER_SEC.to_string(), fps);
    series.insert("files_done".to_string(), at);
    series
}
