//! Block I/O presets: a table of data, each job written in fio's own option syntax, so that every
//! preset *is* a fio job file (`fsbench list --preset NAME` prints it) and runs the same in fio.

use crate::plan::job::Job;
use crate::plan::workload::Overrides;
use crate::plan::PlanError;

pub struct Preset {
    pub name: &'static str,
    pub summary: &'static str,
    /// Options every job of the preset starts from (fio's [global] section).
    pub global: &'static str,
    /// (job name, options), run one after another (each job has `stonewall`).
    pub jobs: &'static [(&'static str, &'static str)],
    /// Where the choice comes from.
    pub why: &'static str,
}

/// Defaults of every preset and of ad hoc `block:` jobs: direct io_uring on a 1 GiB test file,
/// 5 seconds per test, as CrystalDiskMark does (it runs 5 s per test on a 1 GiB file).
pub const DEFAULTS: &str = "ioengine=io_uring,direct=1,size=1g,runtime=5s,time_based";

/// The test file every job of a preset shares (as CrystalDiskMark's one test file), unless the
/// job says `filename=` (then each of its numjobs writes its own file, fio's `name.N.0`).
pub const SHARED_FILE: &str = "fsbench-block.dat";

pub static PRESETS: &[Preset] = &[
    Preset {
        name: "cdm",
        summary: "CrystalDiskMark 8 default: SEQ1M_Q8T1, SEQ1M_Q1T1, RND4K_Q32T1, RND4K_Q1T1, read and write",
        global: DEFAULTS,
        jobs: &[
            ("SEQ1M_Q8T1-read", "rw=read,bs=1m,iodepth=8"),
            ("SEQ1M_Q8T1-write", "rw=write,bs=1m,iodepth=8"),
            ("SEQ1M_Q1T1-read", "rw=read,bs=1m,iodepth=1"),
            ("SEQ1M_Q1T1-write", "rw=write,bs=1m,iodepth=1"),
            ("RND4K_Q32T1-read", "rw=randread,bs=4k,iodepth=32"),
            ("RND4K_Q32T1-write", "rw=randwrite,bs=4k,iodepth=32"),
            ("RND4K_Q1T1-read", "rw=randread,bs=4k,iodepth=1"),
            ("RND4K_Q1T1-write", "rw=randwrite,bs=4k,iodepth=1"),
        ],
        why: "the Btrfs vs ZFS article's CrystalDiskMark-style tables; CrystalDiskMark 8's default profile",
    },
    Preset {
        name: "cdm-nvme",
        summary: "CrystalDiskMark NVMe profile: SEQ128K_Q32T1 and RND4K_Q32T16, read and write",
        global: DEFAULTS,
        jobs: &[
            ("SEQ128K_Q32T1-read", "rw=read,bs=128k,iodepth=32"),
            ("SEQ128K_Q32T1-write", "rw=write,bs=128k,iodepth=32"),
            ("RND4K_Q32T16-read", "rw=randread,bs=4k,iodepth=32,numjobs=16"),
            ("RND4K_Q32T16-write", "rw=randwrite,bs=4k,iodepth=32,numjobs=16"),
        ],
        why: "CrystalDiskMark 8's NVMe SSD profile",
    },
    Preset {
        name: "seq-read",
        summary: "sequential 1 MiB reads (the HPC study's job 1)",
        global: DEFAULTS,
        jobs: &[("seq-read", "rw=read,bs=1m,iodepth=1")],
        why: "the HPC study's [job_1_seq_read]: rw=read, bs=1M, libaio, direct, no iodepth (fio's 1)",
    },
    Preset {
        name: "seq-write",
        summary: "sequential 1 MiB writes (the HPC study's job 2)",
        global: DEFAULTS,
        jobs: &[("seq-write", "rw=write,bs=1m,iodepth=1")],
        why: "the HPC study's [job_2_seq_write]: rw=write, bs=1M, libaio, direct, no iodepth (fio's 1)",
    },
    Preset {
        name: "rand-read",
        summary: "random 4 KiB reads, queue depth 32 (the HPC study's random tests)",
        global: DEFAULTS,
        jobs: &[("rand-read", "rw=randread,bs=4k,iodepth=32")],
        why: "the HPC study describes random 4 KiB tests but omits their job text; queue depth 32 as in CrystalDiskMark's RND4K_Q32T1",
    },
    Preset {
        name: "rand-write",
        summary: "random 4 KiB writes, queue depth 32 (the HPC study's random tests)",
        global: DEFAULTS,
        jobs: &[("rand-write", "rw=randwrite,bs=4k,iodepth=32")],
        why: "as rand-read",
    },
    Preset {
        name: "mixed",
        summary: "random reads and writes 70/30 of 4 KiB to 1 MiB, queue depth 16 (the HPC study's mixed test)",
        global: DEFAULTS,
        jobs: &[(
            "mixed",
            "rw=randrw,rwmixread=70,bssplit=4k/60:64k/30:1m/10,iodepth=16",
        )],
        why: "the HPC study's mixed load \"combines sequential and random read-write operations\" without job text; small random and large near-sequential requests in one stream",
    },
    Preset {
        name: "web-server",
        summary: "random reads and writes 80/20 of 4 KiB, queue depth 64 (the HPC study's web server)",
        global: DEFAULTS,
        jobs: &[("web-server", "rw=randrw,rwmixread=80,bs=4k,iodepth=64")],
        why: "the HPC study: \"80/20 read-write ratio and depth of 64\"",
    },
    Preset {
        name: "db-server",
        summary: "random reads and writes 50/50 of 8-64 KiB, queue depth 128 (the HPC study's job 6)",
        global: DEFAULTS,
        jobs: &[(
            "db-server",
            "rw=randrw,rwmixread=50,bsrange=8k-64k,iodepth=128",
        )],
        why: "the HPC study's [job_6_db_server], with its invalid 'bs = 8 k-64 k' written as bsrange=8k-64k",
    },
    Preset {
        name: "hpc",
        summary: "4 jobs each writing its own 256 MiB file sequentially in 4 MiB requests, queue depth 8",
        global: DEFAULTS,
        jobs: &[("hpc", "rw=write,bs=4m,iodepth=8,numjobs=4,size=256m,filename=")],
        why: "the HPC study's HPC test ran 16 pods of an application; the common HPC I/O pattern is the N-to-N checkpoint (a file per process, large sequential writes)",
    },
    Preset {
        name: "hpc-battery",
        summary: "the whole battery of the HPC study (Computers 2024, 13(6), 139): seq-read, seq-write, rand-read, rand-write, mixed, web-server, db-server, hpc",
        global: DEFAULTS,
        jobs: &[
            ("seq-read", "rw=read,bs=1m,iodepth=1"),
            ("seq-write", "rw=write,bs=1m,iodepth=1"),
            ("rand-read", "rw=randread,bs=4k,iodepth=32"),
            ("rand-write", "rw=randwrite,bs=4k,iodepth=32"),
            ("mixed", "rw=randrw,rwmixread=70,bssplit=4k/60:64k/30:1m/10,iodepth=16"),
            ("web-server", "rw=randrw,rwmixread=80,bs=4k,iodepth=64"),
            ("db-server", "rw=randrw,rwmixread=50,bsrange=8k-64k,iodepth=128"),
            ("hpc", "rw=write,bs=4m,iodepth=8,numjobs=4,size=256m,filename="),
        ],
        why: "the presets above, in the HPC study's order",
    },
];

pub fn find(name: &str) -> Option<&'static Preset> {
    // `seed000`: the battery's earlier name, still read from older studies' plans.
    let name = if name == "seed000" {
        "hpc-battery"
    } else {
        name
    };
    PRESETS.iter().find(|p| p.name == name)
}

/// Applies `a=b,c,d=e` options to a job; an empty value (`filename=`) clears the option.
pub fn apply_options(job: &mut Job, options: &str) -> Result<Vec<String>, PlanError> {
    let mut notes = Vec::new();
    for token in options.split(',').filter(|t| !t.trim().is_empty()) {
        let (k, v) = match token.split_once('=') {
            Some((k, v)) => (k.trim(), Some(v.trim())),
            None => (token.trim(), None),
        };
        if k == "filename" && v == Some("") {
            job.filename = None;
            continue;
        }
        if let Some(n) = job.apply(k, v)? {
            notes.push(n);
        }
    }
    Ok(notes)
}

/// Applies the command line's global overrides (--runtime, --file-size) to a job.
pub fn apply_overrides(job: &mut Job, o: &Overrides) {
    if let Some(r) = o.runtime {
        job.runtime = Some(r);
        job.time_based = true;
    }
    if let Some(s) = o.file_size {
        job.size = Some(crate::plan::job::SizeSpec::Bytes(s));
    }
}

/// The jobs of a preset, with the user's extra options (`cdm:runtime=2s`) applied to each.
pub fn expand(p: &Preset, extra: &str) -> Result<Vec<Job>, PlanError> {
    p.jobs
        .iter()
        .map(|(name, opts)| {
            // A preset is its fio job file: buffers where fio's would be (job::MALLOC_LEAD).
            let mut job = Job {
                malloc_buffers: true,
                ..Job::default()
            };
            apply_options(&mut job, p.global)?;
            job.filename = Some(SHARED_FILE.to_string());
            apply_options(&mut job, opts)?;
            apply_options(&mut job, extra)?;
            job.name = name.to_string();
            job.stonewall = true;
            Ok(job)
        })
        .collect()
}

/// The preset as a fio job file: fio runs it as fsbench does.
pub fn to_fio(p: &Preset) -> String {
    let mut out = format!(
        "; fsbench preset '{}': {}\n; {}\n[global]\n",
        p.name, p.summary, p.why
    );
    for opt in p.global.split(',') {
        out.push_str(opt);
        out.push('\n');
    }
    for (name, opts) in p.jobs {
        out.push_str(&format!("\n[{name}]\n"));
        if opts.contains("filename=") {
            out.push_str("; each of numjobs writes its own file (fio's default name.N.0)\n");
        } else {
            out.push_str(&format!("filename={SHARED_FILE}\n"));
        }
        for opt in opts.split(',') {
            if opt == "filename=" {
                continue;
            }
            out.push_str(opt);
            out.push('\n');
        }
        out.push_str("stonewall\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::plan::job::{BlockSize, EngineKind, Rw, SizeSpec};
    use std::time::Duration;

    #[test]
    fn every_preset_expands_and_equals_its_fio_job_file() {
        for p in PRESETS {
            let jobs = expand(p, "").unwrap_or_else(|e| panic!("{}: {e}", p.name));
            assert_eq!(jobs.len(), p.jobs.len());
            let parsed = crate::plan::fio::jobfile::parse(&to_fio(p), p.name)
                .unwrap_or_else(|e| panic!("{}: {e:?}", p.name));
            assert_eq!(jobs, parsed.jobs, "{}", p.name);
        }
    }

    #[test]
    fn cdm_is_crystaldiskmark() {
        let jobs = expand(find("cdm").unwrap(), "").unwrap();
        let names: Vec<&str> = jobs.iter().map(|j| j.name.as_str()).collect();
        assert_eq!(
            names,
            [
                "SEQ1M_Q8T1-read",
                "SEQ1M_Q8T1-write",
                "SEQ1M_Q1T1-read",
                "SEQ1M_Q1T1-write",
                "RND4K_Q32T1-read",
                "RND4K_Q32T1-write",
                "RND4K_Q1T1-read",
                "RND4K_Q1T1-write"
            ]
        );
        let q32 = &jobs[4];
        assert_eq!(
            (q32.rw, &q32.bs, q32.iodepth, q32.numjobs),
            (Rw::RandRead, &BlockSize::Fixed(4096), 32, 1)
        );
        assert!(q32.direct && q32.time_based && q32.stonewall);
        assert_eq!(q32.engine, EngineKind::IoUring);
        assert_eq!(q32.size, Some(SizeSpec::Bytes(1 << 30)));
        assert_eq!(q32.runtime, Some(Duration::from_secs(5)));
        let nvme = expand(find("cdm-nvme").unwrap(), "").unwrap();
        assert_eq!((nvme[2].iodepth, nvme[2].numjobs), (32, 16));
        let db = &expand(find("db-server").unwrap(), "").unwrap()[0];
        assert_eq!(
            (db.rw, db.rwmixread, &db.bs, db.iodepth),
            (Rw::RandRw, 50, &BlockSize::Range(8192, 65536), 128)
        );
        let web = &expand(find("web-server").unwrap(), "").unwrap()[0];
        assert_eq!((web.rwmixread, web.iodepth), (80, 64));
    }

    #[test]
    fn extra_options_and_overrides_apply_to_every_job() {
        let mut jobs = expand(find("cdm").unwrap(), "ioengine=sync,size=64m").unwrap();
        assert!(jobs.iter().all(|j| j.engine == EngineKind::Sync));
        let o = Overrides {
            runtime: Some(Duration::from_secs(2)),
            file_size: Some(256 << 20),
            ..Default::default()
        };
        for j in &mut jobs {
            apply_overrides(j, &o);
        }
        assert!(jobs
            .iter()
            .all(|j| j.runtime == Some(Duration::from_secs(2))
                && j.size == Some(SizeSpec::Bytes(256 << 20))));
        assert!(expand(find("cdm").unwrap(), "bogus=1")
            .unwrap_err()
            .0
            .contains("'bogus'"));
    }
}
