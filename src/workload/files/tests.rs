//! Files workload tests: distributions, the trailer, and damage found on disk (no root needed).
use super::*;
use crate::frame::{Local, Phase, Place};
use crate::io::content::POOL;
use crate::io::DataGen;
use std::path::Path;

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
    let w = options::build(
        &crate::plan::workload::parse_workload(spec).unwrap(),
        &Default::default(),
    )
    .map_err(|e| e.to_string())?;
    let t = TargetCtx {
        place: Place::Mount(dir.to_path_buf()),
        fs: "test".into(),
        device: None,
        stat_dir: Some(dir.to_path_buf()),
        caps: Default::default(),
        target: None,
        quiet: true,
        ranks: Default::default(),
        interval: std::time::Duration::from_secs(1),
        profile: None,
    };
    let Opened::Run(mut s) = w.open(&t).map_err(|e| e.to_string())? else {
        return Err("skipped".into());
    };
    let mut phases = Vec::new();
    crate::frame::run_session(s.as_mut(), &t, "test", &Local, &mut |p| {
        phases.push(p);
        Ok(())
    })
    .map_err(|e| e.to_string())?;
    Ok(phases)
}

#[test]
fn reading_back_counts_each_kind_of_damage_done_to_files_on_disk() {
    let dir = tempfile::tempdir().unwrap();
    let other = tempfile::tempdir().unwrap();
    let spec = "files:tops=2,subs=2,files=10,seed=11,threads=2,phases=write";
    let w = run_files(spec, dir.path()).unwrap();
    assert_eq!(w[0].metrics["files"], 40.0);
    for k in w[0].metrics.keys() {
        assert!(
            crate::workload::catalog::find(k).is_some(),
            "{k} is not in the metrics catalog"
        );
    }
    // The phase frame gives files records CPU figures and, with 2 workers, first-done figures.
    assert!(w[0].metrics.contains_key("cpu_user_pct"));
    assert!(w[0].metrics["first_done_ops"] <= 40.0);
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
        options::build(
            &crate::plan::workload::parse_workload(s).unwrap(),
            &Default::default(),
        )
        .map_err(|e| e.0)
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
