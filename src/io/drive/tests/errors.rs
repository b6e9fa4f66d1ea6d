//! Errors: the ones gone past, a full filesystem that ends the worker, a block that fails its
//! check.

use super::*;
use crate::io::worker::{BadBlock, ReadChecks, WhenFull, Written};
use crate::plan::job::Verify;
use crate::plan::units::Span;

fn failing(errno: i32, go_past: Vec<i32>, when_full: WhenFull) -> Stats {
    let mut p = plan(
        writes(),
        in_turn(AtEnd::Stop),
        BlockSize::Fixed(4096),
        1,
        64 << 10,
    );
    p.on_error.go_past[Dir::Write] = go_past;
    p.on_error.when_full = when_full;
    let mut e = fake::Disk::new(4096, Vec::new());
    e.write_errno = Some(errno);
    drive_with(&mut e, &p)
}

#[test]
fn listed_errnos_are_gone_past_and_counted_others_fail_the_worker() {
    let eio = vec![libc::EIO, libc::EILSEQ];
    let st = failing(libc::EIO, eio.clone(), WhenFull::Fails);
    assert_eq!(
        (st.ended.failure.is_some(), st.ended.gone_past),
        (false, 16)
    );
    assert!(st.ended.first_gone_past.unwrap().contains("EIO"));
    let st = failing(libc::ENOSPC, eio, WhenFull::Fails);
    assert!(st.ended.failure.is_some());
    let st = failing(libc::EIO, vec![], WhenFull::Fails);
    assert_eq!((st.ended.failure.is_some(), st.ended.gone_past), (true, 0));
}

#[test]
fn a_full_filesystem_ends_a_filling_worker_without_an_error() {
    let st = failing(libc::ENOSPC, vec![], WhenFull::Ends);
    assert!(st.ended.filled && st.ended.error.is_none());
    assert!(failing(libc::ENOSPC, vec![], WhenFull::Fails)
        .ended
        .error
        .is_some());
}

fn verify() -> Verify {
    Verify {
        kind: "md5".into(),
        ..Verify::default()
    }
}

#[test]
fn a_verifying_reader_catches_a_flipped_byte() {
    let mut w = plan(writes(), random(), BlockSize::Fixed(4096), 4, 64 << 10);
    w.fill.stamp = Some(verify());
    w.sinks.written = Written::Keep;
    let mut e = fake::Disk::new(4096, Vec::new());
    let st = drive_with(&mut e, &w);
    assert_eq!(
        st.verified.written.len(),
        16,
        "every write kept for the read back"
    );
    let mut r = plan(reads(), random(), BlockSize::Fixed(4096), 4, 64 << 10);
    r.sinks.checks = Some(ReadChecks {
        verify: verify(),
        ranges: None,
    });
    let read = |r: &WorkerPlan, disk: Vec<u8>| drive_with(&mut fake::Disk::new(4096, disk), r);
    let ok = read(&r, e.disk.clone());
    assert_eq!((ok.verified.checked, ok.verified.errors), (16, 0));
    assert!(ok.ended.error.is_none());
    let mut disk = e.disk;
    disk[5 * 4096 + 100] ^= 0x20;
    let bad = read(&r, disk.clone());
    assert_eq!(bad.verified.errors, 1);
    let m = bad.verified.mismatch.expect("the bad block");
    let said = m.describe("/f");
    assert!(said.starts_with("md5: verify failed at file /f offset 20480, length 4096 (requested block: offset=20480, length=4096)"), "{said}");
    assert_eq!(bad.ended.failure.map(|f| f.op), Some("verify".to_string()));
    assert_eq!(
        bad.tally.dirs[Dir::Read].ios,
        16,
        "it goes on past a bad block"
    );
    r.on_error.bad_block = BadBlock::Stops;
    let stopped = read(&r, disk);
    assert!(
        stopped.tally.dirs[Dir::Read].ios < 16,
        "verify_fatal stops it"
    );
}

/// Reads outside the ranges the writer completed are counted, not checked.
#[test]
fn a_reader_with_ranges_checks_only_inside_them() {
    let mut r = plan(
        reads(),
        in_turn(AtEnd::Stop),
        BlockSize::Fixed(4096),
        1,
        64 << 10,
    );
    r.sinks.checks = Some(ReadChecks {
        verify: verify(),
        ranges: Some(std::sync::Arc::new(vec![Span::new(0, 16384)])),
    });
    let mut w = plan(
        writes(),
        in_turn(AtEnd::Stop),
        BlockSize::Fixed(4096),
        1,
        16384,
    );
    w.fill.stamp = Some(verify());
    let mut e = fake::Disk::new(4096, vec![0; 64 << 10]);
    drive_with(&mut e, &w);
    let st = drive_with(&mut fake::Disk::new(4096, e.disk), &r);
    let v = &st.verified;
    assert_eq!((v.checked, v.skipped, v.errors), (4, 12, 0));
}
