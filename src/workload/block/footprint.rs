//! What a block workload leaves on its target, counted from its jobs before anything runs: the
//! files its jobs lay out (a file named by several jobs once, at its largest), the bytes a phase
//! (a stonewall group) rewrites in place, and under `snapshots=RATE` the copies of those its
//! snapshots pin (the rate times the phase's time, at most `keep=`, at most what it writes).

use std::collections::BTreeMap;

use super::{writes, Block};
use crate::plan::job::{Job, SizeSpec};
use crate::workload::Footprint;

/// A job's files: (name, bytes), by fio's naming (`filename` and its list, shared by the clones;
/// else one file per clone and per `nrfiles`, named after the job). None: a size given as a
/// share of the free space, which only the target knows.
fn files(job: &Job) -> Option<Vec<(String, u64)>> {
    let total = match job.size {
        Some(SizeSpec::Bytes(b)) => Some(b),
        Some(SizeSpec::Percent(_)) => None,
        None => job.filesize.map(|f| f * u64::from(job.nrfiles.max(1))),
    }?;
    let n = job.nrfiles.max(1);
    let each = job.filesize.unwrap_or(total / u64::from(n));
    let mut out = Vec::new();
    match &job.filename {
        Some(first) => {
            for name in std::iter::once(first).chain(&job.more_files) {
                out.push((name.clone(), each));
            }
        }
        None => {
            for clone in 0..job.numjobs.max(1) {
                for f in 0..n {
                    out.push((format!("{}.{clone}.{f}", job.name), each));
                }
            }
        }
    }
    Some(out)
}

/// The bytes a job writes over its run, when its size says (None: it runs for a time).
fn written(job: &Job, files: &[(String, u64)]) -> Option<u64> {
    if job.time_based || job.number_ios.is_some() {
        return None;
    }
    let region: u64 = files.iter().map(|f| f.1).sum();
    let per_pass = job.io_size.unwrap_or(region);
    let clones = match &job.filename {
        Some(_) => u64::from(job.numjobs.max(1)),
        None => 1,
    };
    Some(per_pass * u64::from(job.loops.max(1)) * clones)
}

/// The longest a job can run (its runtime, ramp and start delay), when it has a runtime.
fn longest(job: &Job) -> Option<f64> {
    let secs = |d: Option<std::time::Duration>| d.map_or(0.0, |d| d.as_secs_f64());
    job.runtime
        .map(|r| r.as_secs_f64() + secs(job.ramp_time) + secs(job.startdelay))
}

/// One phase (a stonewall group) as the footprint counts it.
#[derive(Default)]
struct Phase {
    /// Its first job's name (what `Block::snaps` asks about).
    name: String,
    /// The most bytes of each file it rewrites.
    rewrites: BTreeMap<String, u64>,
    /// What it writes over its run (None: a job of it runs for a time).
    written: Option<u64>,
    /// The longest it runs (None: a job of it has no runtime).
    secs: Option<f64>,
}

impl Phase {
    fn rewritten(&self) -> u64 {
        self.rewrites.values().sum()
    }
}

impl Block {
    /// The block devices a job names are not the target's files: they take no room there.
    fn on_target(name: &str) -> bool {
        !name.starts_with("/dev/")
    }

    /// The copies of a phase's rewrites its snapshots pin: one per snapshot it takes (its rate
    /// times the phase's time), at most the `keep=` it keeps, and no more than what it writes
    /// holds (each byte written after a snapshot pins one old block). None when neither the
    /// time nor the bytes are known before the run.
    fn pinned(&self, p: &Phase) -> Option<u64> {
        let opts = self.snap.as_ref().filter(|_| self.snaps(&p.name))?;
        let by_time = p.secs.map(|t| (opts.rate * t).ceil().max(1.0) as u64);
        let by_bytes = p
            .written
            .filter(|_| p.rewritten() > 0)
            .map(|w| w.div_ceil(p.rewritten()).max(1));
        let kept = opts.keep.map(|k| k as u64);
        [by_time, by_bytes, kept].into_iter().flatten().min()
    }

    pub(super) fn footprint_of(&self) -> Footprint {
        let mut fp = Footprint::default();
        let mut kept: BTreeMap<String, u64> = BTreeMap::new();
        let mut phases: Vec<Phase> = Vec::new();
        for (i, job) in self.jobs.iter().enumerate() {
            if (job.stonewall && i > 0) || phases.is_empty() {
                phases.push(Phase {
                    name: job.name.clone(),
                    written: Some(0),
                    secs: Some(0.0),
                    ..Default::default()
                });
            }
            let p = phases.last_mut().expect("a phase");
            let Some(fs) = files(job) else {
                fp.uncounted.push(format!(
                    "job {}: its size is a share of the free space",
                    job.name
                ));
                continue;
            };
            let fs: Vec<(String, u64)> =
                fs.into_iter().filter(|(n, _)| Self::on_target(n)).collect();
            p.secs = p.secs.zip(longest(job)).map(|(a, b)| a.max(b));
            // The first job of a fresh file (aging) writes it from empty: not a rewrite.
            let rewrites = writes(job.rw) && !(self.fresh && i == 0);
            if writes(job.rw) {
                p.written = p.written.zip(written(job, &fs)).map(|(a, b)| a + b);
            }
            for (name, bytes) in fs {
                let k = kept.entry(name.clone()).or_default();
                *k = (*k).max(bytes);
                if rewrites {
                    let r = p.rewrites.entry(name).or_default();
                    *r = (*r).max(bytes);
                }
            }
        }
        fp.kept = kept.values().sum();
        fp.inodes = kept.len() as u64;
        fp.rewritten = phases.iter().map(Phase::rewritten).max().unwrap_or(0);
        for p in phases.iter().filter(|p| p.rewritten() > 0) {
            match self.pinned(p) {
                Some(n) => fp.snapshots = fp.snapshots.max(u32::try_from(n).unwrap_or(u32::MAX)),
                None if self.snaps(&p.name) => {
                    fp.snapshots = fp.snapshots.max(1);
                    fp.uncounted.push(format!(
                        "phase {}: how many snapshots (its time and bytes are known only as it runs; one counted)",
                        p.name
                    ));
                }
                None => {}
            }
        }
        fp
    }
}

#[cfg(test)]
mod tests {
    use crate::plan::workload::parse_workload;
    use crate::plan::Overrides;

    fn fp(spec: &str, o: &Overrides) -> crate::workload::Footprint {
        let w = crate::workload::build(&parse_workload(spec).unwrap(), o).unwrap();
        w.footprint().expect("a block workload counts its files")
    }

    #[test]
    fn the_hpc_battery_keeps_its_shared_file_and_four_job_files_and_rewrites_those() {
        let o = Overrides {
            file_size: Some(256 << 20),
            ..Default::default()
        };
        let f = fp("hpc-battery", &o);
        // fsbench-block.dat (256 MiB) and hpc.0.0 .. hpc.3.0 (256 MiB each).
        assert_eq!(f.kept, 5 * (256 << 20));
        // The hpc phase rewrites its four files: 1 GiB.
        assert_eq!(f.rewritten, 4 * (256 << 20));
        assert!(f.uncounted.is_empty());
    }

    #[test]
    fn a_shared_file_counts_once_and_reads_rewrite_nothing() {
        let f = fp(
            "block:rw=randread,bs=4k,size=64m,numjobs=4,filename=shared.dat",
            &Overrides::default(),
        );
        assert_eq!((f.kept, f.rewritten), (64 << 20, 0));
        // A block spec's clones share its one file (fsbench-block.dat): rewritten once.
        let f = fp(
            "block:rw=randwrite,bs=4k,size=64m,numjobs=2",
            &Overrides::default(),
        );
        assert_eq!((f.kept, f.rewritten), (64 << 20, 64 << 20));
    }

    #[test]
    fn snapshots_pin_a_copy_each_by_rate_and_time_kept_and_written() {
        let o = Overrides::default();
        let job = "block:rw=randwrite,bs=4k,size=64m";
        // 3 a second for 10 s: 30 copies of the 64 MiB rewritten.
        let f = fp(&format!("{job},runtime=10s,time_based,snapshots=3/s"), &o);
        assert_eq!((f.rewritten, f.snapshots), (64 << 20, 30));
        // Kept to 5 at once.
        let f = fp(
            &format!("{job},runtime=10s,time_based,snapshots=3/s,keep=5"),
            &o,
        );
        assert_eq!(f.snapshots, 5);
        // A job that ends by its size (block: is time based unless told not): no more copies
        // than its writes hold (256 MiB over a 64 MiB file: 4), nor than its runtime (5 s by
        // default, 500 ms here) lets it take.
        let f = fp(
            &format!("{job},time_based=0,io_size=256m,snapshots=3/s"),
            &o,
        );
        assert_eq!(f.snapshots, 4);
        let f = fp(
            &format!("{job},time_based=0,io_size=256m,runtime=500ms,snapshots=1/s"),
            &o,
        );
        assert_eq!(f.snapshots, 1);
        assert!(f.uncounted.is_empty(), "{:?}", f.uncounted);
        // No snapshots, no copies; a file an inode.
        let f = fp(&format!("{job},runtime=10s,time_based"), &o);
        assert_eq!((f.snapshots, f.inodes), (0, 1));
    }
}
