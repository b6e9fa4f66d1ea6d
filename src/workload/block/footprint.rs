//! What a block workload leaves on its target, counted from its jobs before anything runs: the
//! files its jobs lay out (a file named by several jobs once, at its largest), and the bytes a
//! phase (a stonewall group) rewrites in place.

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

impl Block {
    /// The block devices a job names are not the target's files: they take no room there.
    fn on_target(name: &str) -> bool {
        !name.starts_with("/dev/")
    }

    pub(super) fn footprint_of(&self) -> Footprint {
        let mut fp = Footprint::default();
        let mut kept: BTreeMap<String, u64> = BTreeMap::new();
        let mut phase: BTreeMap<String, u64> = BTreeMap::new();
        let close = |phase: &mut BTreeMap<String, u64>, fp: &mut Footprint| {
            fp.rewritten = fp.rewritten.max(phase.values().sum());
            phase.clear();
        };
        for (i, job) in self.jobs.iter().enumerate() {
            if job.stonewall && i > 0 {
                close(&mut phase, &mut fp);
            }
            let Some(fs) = files(job) else {
                fp.uncounted.push(format!(
                    "job {}: its size is a share of the free space",
                    job.name
                ));
                continue;
            };
            // The first job of a fresh file (aging) writes it from empty: not a rewrite.
            let rewrites = writes(job.rw) && !(self.fresh && i == 0);
            for (name, bytes) in fs.into_iter().filter(|(n, _)| Self::on_target(n)) {
                let k = kept.entry(name.clone()).or_default();
                *k = (*k).max(bytes);
                if rewrites {
                    let p = phase.entry(name).or_default();
                    *p = (*p).max(bytes);
                }
            }
        }
        close(&mut phase, &mut fp);
        fp.kept = kept.values().sum();
        if self.snap.is_some() {
            fp.snapshots = 1;
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
}
