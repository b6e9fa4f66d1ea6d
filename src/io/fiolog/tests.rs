//! The log formats against logs that fio 3.33 wrote (tests/fixtures/fio-3.33-logs/, from
//! fix.fio there).

use super::*;
use crate::io::clock::LatParts;

/// An I/O as the logs take it.
fn io(ms: u64, issue_ns: u64, dir: Dir, len: u64, offset: u64) -> Logged {
    Logged {
        ms,
        issue_ns,
        dir,
        len,
        offset,
    }
}

/// A latency timed apart.
fn split(ns: u64, clat_ns: u64, slat_ns: u64) -> Latency {
    Latency {
        ns,
        parts: Some(LatParts { clat_ns, slat_ns }),
    }
}

/// The directions a job does.
fn does(dirs: &[Dir]) -> PerDir<bool> {
    PerDir::new(|d| dirs.contains(&d))
}

/// The direction of a log line's ddir column.
fn ddir(col: &str) -> Dir {
    Dir::ALL[col.parse::<usize>().unwrap()]
}

const FIX: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/fio-3.33-logs/");

fn fixture(name: &str) -> String {
    std::fs::read_to_string(format!("{FIX}{name}")).unwrap()
}

fn rows(text: &str) -> Vec<Vec<String>> {
    text.lines()
        .map(|l| l.split(", ").map(str::to_string).collect())
        .collect()
}

fn num(s: &str) -> u64 {
    s.parse().unwrap()
}

#[test]
fn a_line_per_io_matches_fios_columns_and_values() {
    // fio's clat log gives each I/O's time, latency, direction, size and offset; fed the same
    // I/Os, fsbench writes fio's bandwidth, IOPS and latency lines byte for byte.
    let clat = fixture("each_clat.1.log");
    let spec = FioLogs {
        bw: Some(String::new()),
        lat: Some(String::new()),
        iops: Some(String::new()),
        offset: true,
        ..FioLogs::new()
    };
    let mut book = LogBook::new(&spec, does(&[Dir::Read, Dir::Write]), 0);
    for r in rows(&clat) {
        book.io(
            io(num(&r[0]), 0, ddir(&r[2]), num(&r[3]), num(&r[4])),
            Latency::whole(num(&r[1])),
        );
    }
    book.finish(10);
    assert_eq!(book.text.lat, clat);
    assert_eq!(book.text.bw, fixture("each_bw.1.log"));
    assert_eq!(book.text.iops, fixture("each_iops.1.log"));
    assert!(fixture("each_slat.1.log").is_empty(), "psync has no slat");
}

#[test]
fn windows_have_fios_columns_units_and_directions() {
    let spec = FioLogs {
        bw: Some(String::new()),
        lat: Some(String::new()),
        iops: Some(String::new()),
        hist: Some(String::new()),
        avg_msec: 250,
        hist_msec: 500,
        hist_coarseness: 4,
        ..FioLogs::new()
    };
    let mut book = LogBook::new(&spec, does(&[Dir::Read, Dir::Write]), 0);
    // 1 s of 4 KiB I/Os, alternately read (50 us) and written (4 us), every 50 us.
    for i in 0..20_000u64 {
        let d = Dir::ALL[i as usize % 2];
        let lat = if d == Dir::Write { 4_000 } else { 50_000 };
        book.io(io(i / 20, 0, d, 4096, 0), Latency::whole(lat));
    }
    book.finish(1000);
    for (ours, theirs) in [
        (&book.text.bw, "window_bw.2.log"),
        (&book.text.iops, "window_iops.2.log"),
        (&book.text.lat, "window_lat.2.log"),
        (&book.text.hist, "window_clat_hist.2.log"),
    ] {
        let (o, t) = (rows(ours), rows(&fixture(theirs)));
        assert!(!o.is_empty(), "{theirs}");
        assert_eq!(o[0].len(), t[0].len(), "{theirs}: the same columns");
        // Each window has a line per direction, reads first, as fio's.
        assert_eq!(
            (&o[0][1..].get(1), &o[1][1..].get(1)),
            (&t[0][1..].get(1), &t[1][1..].get(1)),
            "{theirs}"
        );
    }
    // Units: KiB/s, IOPS and ns, as fio's (10,000 reads a second of 4 KiB at 50 us).
    let bw = rows(&book.text.bw);
    assert_eq!(bw[0], ["250", "40000", "0", "0", "0"]);
    assert_eq!(rows(&book.text.iops)[1], ["250", "10000", "1", "0", "0"]);
    assert_eq!(rows(&book.text.lat)[0], ["250", "50000", "0", "0", "0"]);
    // fio's window (its bandwidth and IOPS near 40 MB/s and 10,000/s): the same scale.
    let theirs = rows(&fixture("window_iops.2.log"));
    assert!((5_000..20_000).contains(&num(&theirs[0][1])));
    // Histogram: 1856 bins / 2^4, the window's I/Os counted once.
    let h = rows(&book.text.hist);
    assert_eq!(h[0].len(), 3 + PLAT_NR / 16);
    let total: u64 = h.iter().flat_map(|r| r[3..].iter().map(|c| num(c))).sum();
    // Whole windows only, as fio's (the one at 500 ms; the job ended before the next closed).
    assert_eq!(total, 10_000);
    assert_eq!((h.len(), num(&h[0][0]), num(&h[1][1])), (2, 500, 1));
}

#[test]
fn max_both_prio_and_epoch_columns() {
    let spec = FioLogs {
        lat: Some(String::new()),
        avg_msec: 100,
        window: LogWindow::Both,
        prio: true,
        offset: true,
        ..FioLogs::new()
    };
    let mut book = LogBook::new(&spec, does(&[Dir::Read]), 1_000_000);
    book.io(io(10, 0, Dir::Read, 4096, 8192), Latency::whole(100));
    book.io(io(20, 0, Dir::Read, 4096, 0), Latency::whole(300));
    book.finish(150);
    assert_eq!(book.text.lat, "1000150, 200, 300, 0, 0, 0, 0x0000\n");
    let spec = FioLogs {
        lat: Some(String::new()),
        avg_msec: 100,
        window: LogWindow::Max,
        ..FioLogs::new()
    };
    let mut book = LogBook::new(&spec, does(&[Dir::Write]), 0);
    book.io(io(10, 0, Dir::Write, 4096, 0), Latency::whole(100));
    book.io(io(20, 0, Dir::Write, 4096, 0), Latency::whole(300));
    book.io(io(120, 0, Dir::Write, 4096, 0), Latency::whole(7));
    book.finish(130);
    assert_eq!(book.text.lat, "100, 300, 1, 0, 0\n130, 7, 1, 0, 0\n");
}

#[test]
fn fios_bins_are_exact_below_128_ns_then_64_per_power_of_two() {
    assert_eq!(plat_index(0), 0);
    assert_eq!(plat_index(127), 127);
    assert_eq!(plat_index(128), 128);
    assert_eq!(plat_index(129), 128);
    assert_eq!(plat_index(130), 129);
    assert_eq!(plat_index(256), 192);
    assert_eq!(plat_index(u64::MAX), PLAT_NR - 1);
    let mut last = 0;
    for ns in (0..10_000_000u64).step_by(997) {
        let i = plat_index(ns);
        assert!(i >= last);
        last = i;
    }
}

#[test]
fn submission_and_completion_latency_have_their_own_lines_when_timed_apart() {
    let spec = FioLogs {
        lat: Some(String::new()),
        ..FioLogs::new()
    };
    let mut book = LogBook::new(&spec, does(&[Dir::Read]), 0);
    book.io(io(5, 0, Dir::Read, 4096, 0), split(900, 700, 200));
    assert!(book.text.split);
    assert_eq!(book.text.lat, "5, 900, 0, 4096, 0\n");
    assert_eq!(book.text.clat, "5, 700, 0, 4096, 0\n");
    assert_eq!(book.text.slat, "5, 200, 0, 4096, 0\n");
    let windowed = FioLogs {
        lat: Some(String::new()),
        avg_msec: 100,
        ..FioLogs::new()
    };
    let mut book = LogBook::new(&windowed, does(&[Dir::Read]), 0);
    book.io(io(10, 0, Dir::Read, 4096, 0), split(900, 700, 200));
    book.io(io(20, 0, Dir::Read, 4096, 0), split(500, 300, 200));
    book.finish(100);
    assert_eq!(book.text.lat, "100, 700, 0, 0, 0\n");
    assert_eq!(book.text.clat, "100, 500, 0, 0, 0\n");
    assert_eq!(book.text.slat, "100, 200, 0, 0, 0\n");
}

#[test]
fn log_issue_time_adds_the_issue_time_to_the_latency_log_and_zero_elsewhere() {
    let spec = FioLogs {
        bw: Some(String::new()),
        lat: Some(String::new()),
        offset: true,
        issue_time: true,
        ..FioLogs::new()
    };
    let mut book = LogBook::new(&spec, does(&[Dir::Read]), 0);
    book.io(
        io(5, 4_900_000, Dir::Read, 4096, 8192),
        Latency::whole(100_000),
    );
    assert_eq!(book.text.lat, "5, 100000, 0, 4096, 8192, 0, 4900000\n");
    assert_eq!(book.text.bw, "5, 40960, 0, 4096, 8192, 0, 0\n");
    // Windowed lines: 0 in the issue time column too.
    let mut book = LogBook::new(
        &FioLogs {
            avg_msec: 10,
            ..spec
        },
        does(&[Dir::Read]),
        0,
    );
    book.io(
        io(5, 4_900_000, Dir::Read, 4096, 8192),
        Latency::whole(100_000),
    );
    book.finish(10);
    assert_eq!(book.text.lat, "10, 100000, 0, 0, 0, 0, 0\n");
}
