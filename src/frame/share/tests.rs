//! The reduction across ranks, on made-up shares: IOR's bandwidth (first start to last end),
//! counters and histograms added, first done <= last done, per-rank figures and their spread.

use super::*;
use crate::frame::Frame;

/// A rank that did `ops` 4 KiB operations from `start` to `end` after the barrier, with one
/// latency of `lat` ns per op, and `across` ops when the fastest worker of all finished.
fn share(rank: usize, host: &str, start: f64, end: f64, ops: u64, across: u64, lat: u64) -> Share {
    let mut h = hist::new();
    h.record_n(lat, ops).unwrap();
    let mut counters = BTreeMap::new();
    counters.insert("ios".to_string(), ops as f64);
    counters.insert("write_bytes".to_string(), (ops * 4096) as f64);
    Share {
        rank,
        host: host.into(),
        parts: vec![PartShare {
            hists: [("lat".to_string(), hist::encode(&h))].into(),
            counters,
            window_s: end - start,
            total: (ops, ops * 4096),
            across: (across, across * 4096),
            ..Default::default()
        }],
        start_s: start,
        first_s: end,
        end_s: end,
        wall_s: end,
        workers: 1,
        dropped: true,
        cpu: [("cpu_user_pct".to_string(), 10.0 * (rank + 1) as f64)].into(),
        device: Some((0, ops * 4096)),
        ..Default::default()
    }
}

fn mine() -> Merged {
    Merged {
        parts: Vec::new(),
        frame: Frame::default(),
        ranks: Vec::new(),
        nodes: Vec::new(),
    }
}

#[test]
fn bandwidth_is_all_bytes_over_first_start_to_last_end() {
    let shares = vec![
        share(0, "a", 0.0, 1.0, 1000, 1000, 1000),
        share(1, "a", 0.5, 3.0, 3000, 1500, 3000),
        share(2, "b", 0.2, 2.0, 2000, 1800, 2000),
    ];
    let m = combine(mine(), shares).unwrap();
    let p = &m.parts[0];
    assert_eq!(p.counter("ios"), 6000.0, "the sum of per-rank ops");
    assert_eq!(p.counter("write_bytes"), 6000.0 * 4096.0);
    assert!(
        (p.window.as_secs_f64() - 3.0).abs() < 1e-9,
        "{:?}",
        p.window
    );
    // The histograms add: 6000 values, the max is the slowest rank's.
    let h = &p.hists["lat"];
    assert_eq!(h.len(), 6000);
    assert!(h.max() >= 2990 && h.value_at_quantile(0.0) <= 1001);
    // First done: the fastest rank ended 1 s after the earliest start; all had done 4300 ops.
    let fd = m.frame.first_done[0];
    assert!((fd.secs - 1.0).abs() < 1e-9);
    assert_eq!(fd.ops, 4300);
    assert!(fd.secs <= m.frame.last_done_s);
    assert!((m.frame.last_done_s - 3.0).abs() < 1e-9);
    assert_eq!(m.frame.workers, 3);
    // Device bytes: one reading per host (ranks 0 and 1 share host a).
    assert_eq!(m.frame.device.unwrap().write_bytes, 3000 * 4096);
    assert!(
        (m.frame.cpu["cpu_user_pct"] - 20.0).abs() < 1e-9,
        "the mean"
    );
    // Each rank's own figures, in rank order.
    let r = &m.ranks[0];
    assert_eq!(r.iter().map(|x| x.rank).collect::<Vec<_>>(), [0, 1, 2]);
    assert_eq!(r[1].work.ops, 3000);
    assert!((r[1].work.ops_per_sec - 1200.0).abs() < 1e-6);
    assert_eq!(r[1].work.first_done_ops, 1500);
}

#[test]
fn the_spread_over_ranks_is_min_max_and_mean() {
    let m = combine(
        mine(),
        vec![
            share(1, "a", 0.0, 2.0, 2000, 0, 10),
            share(0, "a", 0.0, 1.0, 2000, 0, 10),
        ],
    )
    .unwrap();
    let mut out = BTreeMap::new();
    rank_metrics(&m.ranks[0], &mut out);
    assert_eq!(out["ranks"], 2.0);
    assert_eq!(out["rank_ops_per_sec_min"], 1000.0);
    assert_eq!(out["rank_ops_per_sec_max"], 2000.0);
    assert_eq!(out["rank_ops_per_sec_mean"], 1500.0);
    let spread = (2000.0 - 1000.0) / 1500.0 * 100.0;
    assert!((out["rank_spread_pct"] - spread).abs() < 1e-9);
    assert_eq!(out["rank_bytes_per_sec_max"], 2000.0 * 4096.0);
}

#[test]
fn a_share_travels_as_json_and_comes_back_the_same() {
    let s = share(3, "h", 0.1, 0.9, 10, 5, 123);
    let text = serde_json::to_string(&s).unwrap();
    let back: Share = serde_json::from_str(&text).unwrap();
    let m = combine(mine(), vec![back]).unwrap();
    assert_eq!(m.parts[0].hists["lat"].len(), 10);
    assert_eq!(m.parts[0].hists["lat"].max(), 123);
    assert_eq!(m.ranks[0][0].host, "h");
}

#[test]
fn a_histogram_that_does_not_decode_names_the_rank() {
    let mut s = share(2, "h", 0.0, 1.0, 1, 1, 1);
    s.parts[0].hists.insert("lat".into(), "not base64!".into());
    let e = combine(mine(), vec![s]).unwrap_err();
    assert!(e.contains("rank 2") && e.contains("lat"), "{e}");
}

#[test]
fn latency_over_time_adds_interval_by_interval_across_ranks() {
    use crate::metrics::timeline::{Slice, Timeline};
    let timeline = |lats: &[&[u64]]| Timeline {
        width_s: 1.0,
        start_epoch_s: 1000.0,
        end_s: lats.len() as f64,
        slices: lats
            .iter()
            .map(|l| {
                let mut h = hist::new();
                l.iter().for_each(|v| h.record(*v).unwrap());
                Slice::of(&h)
            })
            .collect(),
    };
    let mut a = share(0, "a", 0.0, 2.0, 3, 3, 1000);
    a.parts[0].timeline = Some(timeline(&[&[1000, 1000], &[1000]]));
    let mut b = share(1, "b", 0.0, 3.0, 4, 4, 1000);
    b.parts[0].timeline = Some(timeline(&[&[500], &[2000], &[9_000_000, 8_000]]));
    // As the transport carries them: JSON.
    let wire =
        |s: &Share| serde_json::from_str::<Share>(&serde_json::to_string(s).unwrap()).unwrap();
    let m = combine(mine(), vec![wire(&a), wire(&b)]).unwrap();
    let t = m.parts[0].timeline.as_ref().expect("a merged timeline");
    let counts: Vec<u64> = t.slices.iter().map(Slice::count).collect();
    assert_eq!(counts, vec![3, 2, 2]);
    assert_eq!(t.end_s, 3.0);
    assert!(t.slices[2].to_hist(3).max() >= 9_000_000);
    // The sum of the intervals is what every rank recorded.
    assert_eq!(t.total().count(), 7);
}

#[test]
fn spans_join_as_the_earliest_start_to_the_latest_end_on_the_barriers_clock() {
    // Rank 0's pool started 0.5 s after the barrier, rank 1's at 0.2 s; each span is in
    // seconds from its own pool's start.
    let mut a = share(0, "a", 0.5, 2.0, 10, 10, 1000);
    let mut b = share(1, "a", 0.2, 2.0, 10, 10, 1000);
    let span = |start, end| crate::frame::Span { start, end };
    a.parts[0].spans.insert("open".into(), span(0.1, 0.2));
    b.parts[0].spans.insert("open".into(), span(0.0, 0.6));
    let m = combine(mine(), vec![a, b]).unwrap();
    // From the earliest pool start (rank 1's, 0.2 s): rank 0's open is 0.4-0.5, rank 1's 0.0-0.6.
    let open = m.parts[0].spans["open"];
    assert!(
        (open.start - 0.0).abs() < 1e-9 && (open.end - 0.6).abs() < 1e-9,
        "{open:?}"
    );
    let mut a = share(0, "a", 0.5, 2.0, 10, 10, 1000);
    a.parts[0].spans.insert("open".into(), span(0.3, 0.4));
    let b = share(1, "a", 0.2, 2.0, 10, 10, 1000);
    let m = combine(mine(), vec![a, b]).unwrap();
    let open = m.parts[0].spans["open"];
    assert!(
        (open.start - 0.6).abs() < 1e-9 && (open.end - 0.7).abs() < 1e-9,
        "{open:?}"
    );
}

#[test]
fn each_nodes_figures_are_its_ranks_work_over_its_own_window() {
    // Ranks 0 and 1 on node 0, rank 2 alone on node 1.
    let mut shares = vec![
        share(0, "a", 0.0, 1.0, 1000, 1000, 1000),
        share(1, "a", 0.5, 3.0, 3000, 1500, 3000),
        share(2, "b", 0.2, 2.0, 2000, 1800, 2000),
    ];
    shares[2].node = 1;
    let m = combine(mine(), shares).unwrap();
    let n = &m.nodes[0];
    assert_eq!(n.len(), 2);
    assert_eq!((n[0].node, n[0].host.as_str(), n[0].ranks), (0, "a", 2));
    assert_eq!((n[0].work.ops, n[0].work.bytes), (4000, 4000 * 4096));
    assert!(
        (n[0].work.start_s, n[0].work.end_s) == (0.0, 3.0),
        "{:?}",
        n[0]
    );
    assert!((n[0].work.ops_per_sec - 4000.0 / 3.0).abs() < 1e-9);
    assert_eq!((n[1].node, n[1].ranks, n[1].work.ops), (1, 1, 2000));
    assert!((n[1].work.bytes_per_sec - 2000.0 * 4096.0 / 1.8).abs() < 1e-6);
    assert_eq!(n[0].work.first_done_ops + n[1].work.first_done_ops, 4300);
    // The nodes add up to the sum; each rank says its node.
    assert_eq!(
        n[0].work.ops + n[1].work.ops,
        m.parts[0].counter("ios") as u64
    );
    assert_eq!(
        m.ranks[0].iter().map(|r| r.node).collect::<Vec<_>>(),
        [0, 0, 1]
    );
}

#[test]
fn ranks_of_one_host_are_placed_on_its_one_clock() {
    // Both pools started 0.1 s after their barrier, but rank 1 left it 0.5 s after rank 0 on
    // the same host: its work ran 0.5 s later. On another host, the barrier is the instant.
    let mut a = share(0, "a", 0.1, 1.0, 10, 10, 1000);
    let mut b = share(1, "a", 0.1, 1.0, 10, 10, 1000);
    let mut c = share(2, "b", 0.1, 1.0, 10, 10, 1000);
    (a.barrier_mono, b.barrier_mono, c.barrier_mono) = (100.0, 100.5, 7.0);
    let m = combine(mine(), vec![a, b, c]).unwrap();
    let starts: Vec<f64> = m.ranks[0].iter().map(|r| r.work.start_s).collect();
    assert!(
        (starts[1] - 0.6).abs() < 1e-9 && (starts[2] - 0.1).abs() < 1e-9,
        "{starts:?}"
    );
    assert!(
        (m.parts[0].window.as_secs_f64() - 1.4).abs() < 1e-9,
        "0.1 to rank 1's 1.5"
    );
}

#[test]
fn one_node_keeps_no_node_figures_beside_the_sum() {
    let shares = vec![
        share(0, "a", 0.0, 1.0, 1000, 1000, 1000),
        share(1, "a", 0.5, 3.0, 3000, 1500, 3000),
    ];
    let m = combine(mine(), shares).unwrap();
    assert!(m.nodes[0].is_empty());
}
