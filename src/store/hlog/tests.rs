use super::*;
use crate::metrics::timeline::Slice;

fn timeline() -> Timeline {
    let slices = [&[1_000u64, 2_000, 2_000][..], &[], &[50_000, 7_000_000]]
        .iter()
        .map(|v| {
            let mut h = hist::new();
            v.iter().for_each(|x| h.record(*x).unwrap());
            Slice::of(&h)
        })
        .collect();
    Timeline {
        width_s: 1.0,
        start_epoch_s: 1_761_300_000.25,
        end_s: 2.5,
        slices,
    }
}

#[test]
fn a_log_written_reads_back_with_the_same_counts_and_hdrhistograms_own_reader_agrees() {
    let t = timeline();
    let log = LatencyLog::of(&t);
    assert_eq!(log.intervals, 3);
    let text = header(t.start_epoch_s, "test") + &log.text("r7");
    // The hdrhistogram crate's reader takes the whole file: the header's times, then intervals.
    let mut starts = Vec::new();
    let mut intervals = 0;
    for e in IntervalLogIterator::new(text.as_bytes()) {
        match e.expect("every line reads") {
            LogEntry::StartTime(d) => starts.push(d.as_secs_f64()),
            LogEntry::BaseTime(d) => assert_eq!(d.as_secs_f64(), 0.0),
            LogEntry::Interval(h) => {
                assert_eq!(h.tag().unwrap().as_str(), "r7");
                intervals += 1;
            }
        }
    }
    assert_eq!(intervals, 3);
    assert!((starts[0] - t.start_epoch_s).abs() < 1e-3);
    let back = &parse(&text)["r7"];
    let counts: Vec<u64> = back.iter().map(|i| i.decode().unwrap().len()).collect();
    assert_eq!(counts, vec![3, 0, 2]);
    assert!((back[1].start_s - (t.start_epoch_s + 1.0)).abs() < 1e-3);
    assert!(
        (back[2].length_s - 0.5).abs() < 1e-3,
        "the last interval is short"
    );
    assert!((back[2].max_ms - 7.0).abs() < 0.1, "{}", back[2].max_ms);
    // Two significant digits: within 1%.
    let p99 = back[2].decode().unwrap().value_at_quantile(0.99) as f64;
    assert!((p99 / 7e6 - 1.0).abs() < 0.01, "{p99}");
}

#[test]
fn a_torn_line_is_skipped_and_tags_count_on() {
    let log = LatencyLog::of(&timeline());
    let whole = log.text("r1") + &log.text("r2");
    let torn = format!("{}\n{}", &whole[..whole.len() - 10], log.text("r3"));
    let by_tag = parse(&torn);
    assert_eq!(by_tag["r1"].len(), 3);
    assert_eq!(by_tag["r2"].len(), 2, "the torn line is dropped");
    assert_eq!(by_tag["r3"].len(), 3);
    assert_eq!(next_tag(&torn), 4);
    assert_eq!(next_tag(""), 1);
    assert_eq!(clean_tag("ext4:a=b, c"), "ext4:a=b__c");
}

#[test]
fn a_wide_interval_is_kept_within_its_budget() {
    let mut h = hist::new();
    let mut x = 1u64;
    for _ in 0..200_000 {
        x = x
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        h.record(1_000 + (x >> 40) % 50_000_000).unwrap();
    }
    let t = Timeline {
        width_s: 1.0,
        start_epoch_s: 1.0,
        end_s: 1.0,
        slices: vec![Slice::of(&h)],
    };
    let log = LatencyLog::of(&t);
    assert!(
        log.lines[0].hist.len() <= BUDGET,
        "{}",
        log.lines[0].hist.len()
    );
    assert_eq!(log.lines[0].decode().unwrap().len(), 200_000);
}
