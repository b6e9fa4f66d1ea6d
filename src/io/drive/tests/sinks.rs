//! What records the I/O: the per-second series, fio's logs (with each I/O's priority), the
//! iolog, the submission and completion timed apart.

use super::*;
use crate::io::worker::Timing;
use crate::plan::job::per_io::CmdPrio;
use crate::plan::job::FioLogs;

/// The latency log's priority column says each I/O's priority, as fio's log_prio does.
#[test]
fn the_logs_say_each_ios_priority() {
    let mut p = plan(reads(), random(), BlockSize::Fixed(4096), 4, 4 << 20);
    p.ops.marks.thread = Some(3 << 13);
    p.ops.marks.per_io = Some(CmdPrio {
        percentage: [20, 20],
        ..CmdPrio::default()
    });
    for (log_prio, rt, idle) in [(true, "0x2000", "0x6000"), (false, "1", "0")] {
        let mut logs = FioLogs::new();
        (logs.lat, logs.prio) = (Some("l".into()), log_prio);
        p.sinks.logs = Some(logs);
        let (_, st) = seen(&p);
        let text = st.logs.unwrap().text.lat;
        let last = |l: &str| l.rsplit(", ").next().unwrap().to_string();
        let cols: Vec<String> = text.lines().map(last).collect();
        let n_rt = cols.iter().filter(|c| *c == rt).count();
        assert_eq!(n_rt + cols.iter().filter(|c| *c == idle).count(), 1024);
        assert!((150..260).contains(&n_rt), "{n_rt}");
    }
}

#[test]
fn an_iolog_records_every_io_in_order() {
    let mut p = plan(
        writes(),
        in_turn(AtEnd::Stop),
        BlockSize::Fixed(4096),
        2,
        16384,
    );
    p.sinks.record = Some(vec!["f".into()]);
    let (_, st) = seen(&p);
    let text = st.iolog.unwrap().text;
    let lines: Vec<String> = text
        .lines()
        .filter(|l| l.contains(" write "))
        .map(|l| l.split_once(' ').unwrap().1.to_string())
        .collect();
    assert_eq!(
        lines,
        [
            "f write 0 4096",
            "f write 4096 4096",
            "f write 8192 4096",
            "f write 12288 4096"
        ]
    );
    assert!(text.ends_with(" f close\n"));
}

#[test]
fn submission_and_completion_are_timed_apart_when_asked() {
    let mut p = plan(reads(), random(), BlockSize::Fixed(4096), 4, 1 << 20);
    let (_, st) = seen(&p);
    assert!(st.tally.split.is_none(), "one clock read per I/O otherwise");
    p.sinks.timing = Timing::Split;
    let (_, st) = seen(&p);
    let split = st.tally.split.unwrap();
    assert_eq!(split[Dir::Read].slat.len(), 256);
    assert_eq!(split[Dir::Read].clat.len(), 256);
}

/// The series counts each whole second of the window: a 1.2 s run is one second, its last
/// fifth (shorter than half a second) left out as a dip it is not.
#[test]
fn the_series_has_a_line_per_whole_second() {
    let mut p = plan(reads(), random(), BlockSize::Fixed(4096), 4, 1 << 20);
    (p.ends.bytes, p.ends.runtime) = (None, Some(Duration::from_millis(1200)));
    let (_, st) = seen(&p);
    assert_eq!(st.per_sec.len(), 1);
    let (ios, bytes) = (st.per_sec[0].ops, st.per_sec[0].bytes);
    assert!(ios > 0 && bytes == ios * 4096);
}
