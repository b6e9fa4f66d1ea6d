use super::*;
use crate::metrics::hist;
use crate::metrics::timeline::{Slice, Timeline};
use crate::store::{Phase, RecordKey};

/// A record whose intervals each hold 100 ops at `lat[i]` ns.
fn record(target: &str, lat: &[u64]) -> Record {
    let slices = lat
        .iter()
        .map(|v| {
            let mut h = hist::new();
            h.record_n(*v, 100).unwrap();
            Slice::of(&h)
        })
        .collect();
    let t = Timeline {
        width_s: 1.0,
        start_epoch_s: 1_761_300_000.0,
        end_s: lat.len() as f64,
        slices,
    };
    let key = RecordKey {
        target,
        fs: "tmpfs",
        workload: "cdm",
        repeat: 0,
    };
    let mut r = Record::from_phase(
        &key,
        Phase {
            test: "RND4K_Q32T1_read".into(),
            latency: Some(t),
            ..Default::default()
        },
    );
    r.latency_log.as_mut().unwrap().tag = "r1".into();
    r
}

#[test]
fn a_p99_ten_times_the_median_intervals_is_a_spike_at_its_second() {
    let mut lat = vec![20_000; 30];
    lat[12] = 500_000;
    lat[27] = 2_000_000;
    lat[5] = 150_000; // 7.5x: not a spike
    let r = record("ext4", &lat);
    let (w, pts) = points(&r).unwrap();
    assert_eq!(pts.len(), 30);
    assert_eq!(spikes(w, &pts), vec![12.0, 27.0]);
    let warn = warning(std::slice::from_ref(&r)).expect("a warning");
    assert_eq!(
        warn.1,
        ["ext4 RND4K_Q32T1_read (repeat 1): latency spikes at 12 s, 27 s"]
    );
    // A steady phase, or one too short to have a median, has none.
    assert!(warning(&[record("xfs", &[20_000; 30])]).is_none());
    assert!(warning(&[record("xfs", &[20_000, 900_000])]).is_none());
}

#[test]
fn the_hlog_export_reads_back_with_every_records_counts_under_readable_tags() {
    let recs = vec![record("ext4", &[10_000, 20_000]), record("ext4", &[30_000])];
    let text = hlog_text(&recs);
    let back = crate::store::hlog::parse(&text);
    let tags: Vec<&String> = back.keys().collect();
    assert_eq!(
        tags,
        [
            "ext4/cdm/RND4K_Q32T1_read/r1",
            "ext4/cdm/RND4K_Q32T1_read/r1.2"
        ]
    );
    let n: Vec<u64> = back["ext4/cdm/RND4K_Q32T1_read/r1"]
        .iter()
        .map(|i| i.decode().unwrap().len())
        .collect();
    assert_eq!(n, [100, 100]);
    assert!(text.contains("#[BaseTime: 0.000"));
    // No latency log at all: a header and a word why.
    let empty = hlog_text(&[]);
    assert!(empty.contains("no record of this study has latency over time"));
}
