//! The `ior:` and `mdtest:` workloads under a real `mpirun -np 4 --oversubscribe` on a `dir:`
//! target: a shared file written in segments by every rank and checked when read back, IOR's
//! stonewall with wear-out (every rank goes on to the most transfers any did, agreed in the middle
//! of the phase) and its -g barriers, mdtest's unique and shared trees with -N strides, and its
//! stonewall; a stop that still ends a rank's wait in mdtest's barrier when another rank hangs;
//! the note of ranks that crowd the CPUs unbound.
//! Built with the `mpi` feature (scripts/test's MPI pass runs this module).

// The helpers below serve the multi-rank tests (built with --features mpi).
#![cfg_attr(not(feature = "mpi"), allow(dead_code, unused_imports))]

use crate::cli_mpi::{
    hit_rank, manifest, mpi_cmd, mpi_launch, mpirun, ok, ranks, records, setup, Setup,
};
use crate::common::{is_root, run, skip, stderr};

fn m(r: &serde_json::Value, k: &str) -> f64 {
    r["metrics"][k]
        .as_f64()
        .unwrap_or_else(|| panic!("{k} in {r}"))
}

fn ops(r: &serde_json::Value) -> Vec<f64> {
    ranks(r)
        .iter()
        .map(|x| x["ops"].as_f64().unwrap())
        .collect()
}

/// `mpirun -np 4 fsbench compare TARGET -w W... -q --out OUT` (a fresh OUT), checked; its records.
fn compare4(s: &Setup, workloads: &[&str]) -> Vec<serde_json::Value> {
    let _ = std::fs::remove_dir_all(&s.out);
    let mut args = vec!["compare", &s.target];
    for w in workloads {
        args.extend(["-w", w]);
    }
    args.extend(["-q", "--out", s.out.to_str().unwrap()]);
    ok(&mpirun(4, &args));
    records(&s.out)
}

#[cfg(feature = "mpi")]
#[test]
fn ior_shares_one_file_in_segments_and_reads_it_back_checked() {
    // (The lock and the directory live to the end of the test.)
    let Some(s) = setup() else { return };
    let w = "ior:-w -r -R -t 64k -b 256k -s 3 -e -C";
    let recs = compare4(&s, &[w]);
    assert_eq!(recs.len(), 2);
    for r in &recs {
        assert_eq!(r["outcome"], "ok", "{r}");
        assert_eq!(
            ops(r),
            [12.0; 4],
            "4 transfers of each of 3 segments per rank"
        );
        assert_eq!(m(r, "bytes"), 4.0 * 3.0 * 262144.0);
        // IOR's time: the earliest open to the latest close, within the frame's first start to
        // last end of any rank.
        let total = m(r, "runtime_s");
        assert!(total > 0.0 && total <= m(r, "last_done_s") + 1e-6, "{r}");
        let bw = m(r, "bytes") / total;
        assert!((m(r, "bytes_per_sec") - bw).abs() / bw < 1e-9);
        assert_eq!(r["config"]["tasks"], 4);
    }
    assert_eq!(
        m(&recs[1], "wrong_transfers"),
        0.0,
        "every rank's data read back as written"
    );
    assert_eq!(
        std::fs::read_dir(&s.shared).unwrap().count(),
        0,
        "nothing left"
    );
}

/// The CPUs online (the cpuN lines of /proc/stat).
fn online_cpus() -> usize {
    let stat = std::fs::read_to_string("/proc/stat").unwrap();
    stat.lines()
        .filter(|l| l.starts_with("cpu") && l.as_bytes().get(3).is_some_and(u8::is_ascii_digit))
        .count()
}

#[cfg(feature = "mpi")]
#[test]
fn ranks_that_crowd_the_cpus_unbound_say_so_and_bound_ones_do_not() {
    // (The lock and the directory live to the end of the test.)
    let Some(s) = setup() else { return };
    let cpus = online_cpus();
    let bound = ["--bind-to", "core:overload-allowed", "--map-by", "core"];
    // mpirun leaves oversubscribed ranks unbound: on fewer than 4 CPUs they crowd them.
    for (launcher, crowd) in [(&[][..], 4 > cpus), (&bound[..], false)] {
        let _ = std::fs::remove_dir_all(&s.out);
        let out = s.out.to_str().unwrap();
        let args = [
            "compare",
            &s.target,
            "-w",
            "mdtest:-n 20 -u",
            "-q",
            "--out",
            out,
        ];
        ok(&mpi_launch(4, launcher, &args).output().unwrap());
        let recs = records(&s.out);
        assert!(!recs.is_empty());
        for r in &recs {
            let notes = r["notes"].as_array().unwrap();
            let said = notes.iter().any(|n| {
                n.as_str()
                    .unwrap()
                    .starts_with("placement: 4 ranks share this node's")
            });
            assert_eq!(said, crowd, "{launcher:?} on {cpus} CPUs: {r}");
        }
    }
}

#[cfg(feature = "mpi")]
#[test]
fn ior_stonewall_wears_out_to_the_most_transfers_any_rank_did() {
    // (The lock and the directory live to the end of the test.)
    let Some(s) = setup() else { return };
    // A deadline of one second on a file far larger than a second's worth, with -g's barriers.
    let w = "ior:-w -r -F -t 4k -b 4g -D 1 -O stoneWallingWearOut=1 -g";
    let recs = compare4(&s, &[w]);
    for r in &recs {
        assert_eq!(r["outcome"], "ok", "{r}");
        let per = ops(r);
        assert!(per[0] > 0.0 && per.iter().all(|x| *x == per[0]), "{per:?}");
        assert!(m(r, "ior_stonewall_bytes") <= m(r, "bytes"));
    }
    // The write hits its deadline; the read stops where the write did, or at its own
    // deadline when that comes first (a cached read of a second's writes usually ends sooner,
    // not always beside the rest of the suite on two CPUs).
    assert!(m(&recs[0], "ior_stonewall_s") >= 1.0, "{}", recs[0]);
    let (wrote, read) = (ops(&recs[0]), ops(&recs[1]));
    if read != wrote {
        assert!(read[0] < wrote[0], "{read:?} read of {wrote:?} written");
        assert!(m(&recs[1], "ior_stonewall_s") >= 1.0, "{}", recs[1]);
    }
}

#[cfg(feature = "mpi")]
#[test]
fn mdtest_trees_unique_and_shared_with_strides_over_ranks() {
    // (The lock and the directory live to the end of the test.)
    let Some(s) = setup() else { return };
    for args in [
        "-n 60 -u -N 1 -w 512 -e 512",
        "-n 60 -N 1 -z 1 -b 2 -w 512 -e 512",
    ] {
        let w = format!("mdtest:{args}");
        let recs = compare4(&s, &[&w]);
        assert_eq!(recs.len(), 10, "{args}");
        for r in &recs {
            assert_eq!(r["outcome"], "ok", "{args}: {r}");
            let t = r["test"].as_str().unwrap();
            if !t.starts_with("tree") {
                assert_eq!(m(r, "items"), 4.0 * 60.0, "{args} {t}");
                assert_eq!(ops(r), [60.0; 4]);
            }
        }
        let read = recs.iter().find(|r| r["test"] == "file-read").unwrap();
        assert_eq!(
            m(read, "bytes"),
            4.0 * 60.0 * 512.0,
            "each rank read its neighbour's"
        );
        assert_eq!(
            std::fs::read_dir(&s.shared).unwrap().count(),
            0,
            "{args}: nothing left"
        );
    }
}

#[cfg(feature = "mpi")]
#[test]
fn mdtest_stonewall_wears_out_to_the_most_items_any_rank_made() {
    // (The lock and the directory live to the end of the test.)
    let Some(s) = setup() else { return };
    let w = "mdtest:-n 1000000 -u -F -C -W 1 -x sw";
    let recs = compare4(&s, &[w, "mdtest:-n 1000000 -u -F -r -x sw"]);
    let create = recs.iter().find(|r| r["test"] == "file-create").unwrap();
    let per = ops(create);
    assert!(
        per[0] > 0.0 && per[0] < 1e6 && per.iter().all(|x| *x == per[0]),
        "{per:?}"
    );
    assert!(m(create, "stonewall_items") <= m(create, "items"));
    // The remove, a workload of its own, removes as many as the status file says.
    let remove = recs.iter().find(|r| r["test"] == "file-remove").unwrap();
    assert_eq!(ops(remove), per, "{remove}");
    assert!(recs.iter().all(|r| r["outcome"] == "ok"), "{recs:?}");
}

#[cfg(feature = "mpi")]
#[test]
fn ranks_sharing_a_nodes_target_are_judged_for_room_together() {
    let Some(s) = setup() else { return };
    if skip(!is_root(), "ext4 targets need root") {
        return;
    }
    // 150 MiB a rank fits a 256 MiB ext4 alone; two ranks on its one node need 300 MiB.
    let w = "ior:-w -F -t 1m -b 150m";
    let wd = s.shared.to_str().unwrap();
    let out = s.out.to_str().unwrap();
    let args = [
        "compare",
        "ext4",
        "--size",
        "256M",
        "-w",
        w,
        "-q",
        "--workdir",
        wd,
        "--out",
        out,
    ];
    let o = run(&[&args[..], &["--check"]].concat());
    assert!(o.status.success(), "one rank fits: {}", stderr(&o));
    let o = mpirun(2, &args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("300 MiB")
            && e.contains("2 ranks share a node's target")
            && e.contains("--size"),
        "{e}"
    );
    assert!(!s.out.exists(), "nothing is created");
}

/// A rank waiting in mdtest's barrier for a rank that hangs still ends at a stop request: the
/// barrier is MPI's, which nothing but every rank's call ends, so rank 0 says which rank had not
/// finished (in its manifest), tears down and exits at once.
#[cfg(feature = "mpi")]
#[test]
fn a_stop_ends_a_wait_in_mdtests_barrier_for_a_rank_that_hangs() {
    // (The lock and the directory live to the end of the test.)
    let Some(s) = setup() else { return };
    // The create runs 2 s (-W 2) on each rank, then the ranks agree on the most items made.
    let w = "mdtest:-n 1000000 -u -F -C -W 2";
    let args = ["compare", &s.target, "-w", w, "-q", "--rank-timeout", "600"];
    let mut child = mpi_cmd(2, &args)
        .args(["--out", s.out.to_str().unwrap()])
        .spawn()
        .unwrap();
    // After the tree's record, in the create: rank 1 hangs, rank 0 waits for it at the stonewall.
    let hung = hit_rank(&s.out, 1, 1, "STOP");
    std::thread::sleep(std::time::Duration::from_secs(4));
    let _ = hit_rank(&s.out, 1, 0, "TERM");
    let t0 = std::time::Instant::now();
    let failure = loop {
        let f = manifest(&s.out)["rank_failure"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        if !f.is_empty() || t0.elapsed().as_secs() >= 30 {
            break f;
        }
        std::thread::sleep(std::time::Duration::from_millis(100));
    };
    // The stopped rank holds MPI's finalisation up: the launcher ends with it.
    let _ = std::process::Command::new("kill")
        .args(["-KILL", &hung])
        .status();
    let st = child.wait().unwrap();
    assert!(!st.success());
    assert!(
        failure.contains("rank 1") && failure.contains("file-create"),
        "rank 0 named the rank within 30 s of the stop: {}",
        manifest(&s.out)
    );
    assert!(records(&s.out)
        .iter()
        .all(|r| r["test"] != "file-create" || r["outcome"] != "ok"));
    // Rank 0 ended at once, its worker still in MPI's barrier: failed, and torn down first.
    assert_eq!(manifest(&s.out)["status"], "failed");
    assert_eq!(
        std::fs::read_dir(&s.shared).unwrap().count(),
        0,
        "rank 0 tore down"
    );
}

/// Every rank stopped in the middle of mdtest's create (-W) makes the same calls of MPI's
/// barrier as before the stop: the run ends in order, interrupted, with no rank lost.
#[cfg(feature = "mpi")]
#[test]
fn ranks_all_stopped_in_mdtests_create_end_in_order() {
    // (The lock and the directory live to the end of the test.)
    let Some(s) = setup() else { return };
    let w = "mdtest:-n 1000000 -u -F -C -W 3";
    let args = ["compare", &s.target, "-w", w, "-q"];
    let child = mpi_cmd(2, &args)
        .args(["--out", s.out.to_str().unwrap()])
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // A second into the create (3 s), after the tree's record: both ranks asked to stop. (A
    // stop between two phases, on one rank before the other, is a lost rank: not this test's.)
    let _ = hit_rank(&s.out, 1, 1, "0");
    std::thread::sleep(std::time::Duration::from_secs(1));
    for rank in [1, 0] {
        let _ = crate::cli_mpi::signal_rank(&s.out, rank, "TERM");
    }
    let o = child.wait_with_output().unwrap();
    let m = manifest(&s.out);
    assert_eq!(m["status"], "interrupted", "{m}\n{}", stderr(&o));
    assert!(m.get("rank_failure").is_none(), "{m}");
    assert!(!stderr(&o).contains("MPI's barrier"), "{}", stderr(&o));
    assert_eq!(std::fs::read_dir(&s.shared).unwrap().count(), 0);
}
