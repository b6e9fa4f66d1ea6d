use super::*;

/// An iolog the real fio 3.33 wrote (write_iolog, randrw, thinktime=2ms).
const FIO_V3: &str = include_str!("../../../tests/fixtures/fio-3.33-write.iolog");

#[test]
fn fios_own_version_3_log_reads_back_with_its_times() {
    let r = parse(FIO_V3.as_bytes(), Adjust::default()).unwrap();
    assert_eq!(r.files, ["/tmp/fl/j.0.0"]);
    assert_eq!(r.ops.len(), 6);
    assert_eq!(
        r.ops[0],
        Op {
            at: Duration::from_micros(175),
            kind: OpKind::Read,
            offset: 61440,
            len: 4096
        }
    );
    assert_eq!(r.ops[3].kind, OpKind::Write);
    assert_eq!(r.ops[5].at, Duration::from_micros(11300));
    assert_eq!(r.extent(), 884736 + 4096);
}

#[test]
fn version_2_waits_and_the_replay_options() {
    let v2 = "fio version 2 iolog\n/f add\n/f open\n/f write 0 4096\n/f wait 2000 0\n/f read 12288 8192\n/f wait 50 0\n/f sync 0 0\n/f trim 0 4096\n/f close\n";
    let r = parse(v2.as_bytes(), Adjust::default()).unwrap();
    let got: Vec<(u64, OpKind, u64, u64)> = r
        .ops
        .iter()
        .map(|o| (o.at.as_micros() as u64, o.kind, o.offset, o.len))
        .collect();
    assert_eq!(
        got,
        [
            (0, OpKind::Write, 0, 4096),
            (2000, OpKind::Read, 12288, 8192),
            (2000, OpKind::Sync, 0, 0),
        ]
    );
    assert_eq!(r.trims, 1);
    let adj = Adjust {
        time_scale: 200,
        scale: 2,
        align: 4096,
    };
    let r = parse(v2.as_bytes(), adj).unwrap();
    assert_eq!(r.ops[1].at, Duration::from_micros(1000), "twice as fast");
    assert_eq!(
        r.ops[1].offset, 4096,
        "12288 / 2 = 6144, aligned down to 4096"
    );
}

#[test]
fn a_malformed_log_is_refused_at_its_line() {
    let bad = |t: &str| parse(t.as_bytes(), Adjust::default()).unwrap_err();
    assert!(bad("hello\n").starts_with("1: the first line"));
    assert!(bad("0, 0, 4096\n").contains("version 1"));
    assert!(bad("fio version 2 iolog\n/f add\n/f write x 4096\n").starts_with("3: offset 'x'"));
    assert!(bad("fio version 2 iolog\n/f read 0\n").starts_with("2: '/f read 0'"));
    assert!(bad("fio version 2 iolog\n/f frob 0 1\n").starts_with("2: unknown action 'frob'"));
    assert!(bad("fio version 3 iolog\n/f add\n").starts_with("2: '/f add' does not start"));
    assert!(bad("fio version 3 iolog\n5 /f wait 100 0\n").contains("not allowed"));
    assert!(bad("fio version 2 iolog\n/f read 0 0\n").contains("0 bytes"));
    // blktrace: the magic (0x65617400 | version) in the first word.
    let mut bt = 0x6561_7407u32.to_le_bytes().to_vec();
    bt.extend([0xff, 0xfe, 0, 0]);
    assert!(parse(&bt, Adjust::default())
        .unwrap_err()
        .contains("blktrace"));
    assert!(parse(&[0xff, 0, 1, 2, 0x80], Adjust::default())
        .unwrap_err()
        .contains("bad magic"));
}

#[test]
fn a_log_of_several_files_names_each_ios_file_as_fio_does() {
    let names = ["a".to_string(), "b".to_string()];
    let mut rec = Recorder::new(&names);
    rec.op(Duration::from_micros(5), OpKind::Write, 1, 4096, 4096);
    rec.op(Duration::from_micros(6), OpKind::Sync, 0, 0, 0);
    rec.close(Duration::from_micros(9));
    assert_eq!(
        rec.text,
        "fio version 3 iolog\n0 a add\n0 b add\n0 a open\n0 b open\n5 b write 4096 4096\n6 a sync 0 0\n6 b sync 0 0\n9 a close\n9 b close\n"
    );
}

#[test]
fn a_recorded_log_replays_the_same_offsets_and_sizes() {
    let mut rec = Recorder::new(&["/t/j.0.0".to_string()]);
    rec.op(Duration::from_micros(10), OpKind::Write, 0, 8192, 4096);
    rec.op(Duration::from_micros(2500), OpKind::Read, 0, 0, 65536);
    rec.op(Duration::from_micros(2600), OpKind::Datasync, 0, 0, 0);
    rec.close(Duration::from_micros(3000));
    assert!(rec.text.starts_with(
        "fio version 3 iolog\n0 /t/j.0.0 add\n0 /t/j.0.0 open\n10 /t/j.0.0 write 8192 4096\n"
    ));
    let r = parse(rec.text.as_bytes(), Adjust::default()).unwrap();
    let got: Vec<(u64, OpKind, u64, u64)> = r
        .ops
        .iter()
        .map(|o| (o.at.as_micros() as u64, o.kind, o.offset, o.len))
        .collect();
    assert_eq!(
        got,
        [
            (10, OpKind::Write, 8192, 4096),
            (2500, OpKind::Read, 0, 65536),
            (2600, OpKind::Datasync, 0, 0)
        ]
    );
}
