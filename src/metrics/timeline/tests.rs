use super::*;

fn hist_of(values: &[u64]) -> Hist {
    let mut h = hist::new();
    for v in values {
        h.record(*v).unwrap();
    }
    h
}

#[test]
fn slices_add_bucket_by_bucket() {
    let mut a = Slice::of(&hist_of(&[100, 200, 200, 5000]));
    let b = Slice::of(&hist_of(&[50, 200, 9000]));
    a.add(&b);
    assert_eq!(a.count(), 7);
    let h = a.to_hist(3);
    assert_eq!(h.len(), 7);
    assert_eq!(h.count_at(200), 3);
    assert_eq!(h.min(), 50);
    assert!(h.max() >= 9000 && h.max() < 9010);
    // Values stay in increasing order.
    assert!(a.0.windows(2).all(|w| w[0].0 < w[1].0));
}

#[test]
fn a_worker_is_cut_into_intervals_by_the_clock_it_reads() {
    let origin = Instant::now();
    let mut s = Slicer::new(Duration::from_millis(100), origin);
    let mut cum = hist::new();
    let at = |ms: u64| origin + Duration::from_millis(ms);
    // Interval 0: two ops; interval 1: nothing; interval 2: one op (the cut at 250 ms closes 0
    // and skips 1).
    for (ms, v) in [(10, 1000), (90, 2000), (250, 3000), (420, 4000)] {
        let now = at(ms);
        if s.due(now) {
            s.cut_hist(now, &cum);
        }
        cum.record(v).unwrap();
    }
    let t = s.finish_hist(at(450), &cum);
    assert_eq!(t.width_s, 0.1);
    let counts: Vec<u64> = t.slices.iter().map(Slice::count).collect();
    assert_eq!(counts, vec![2, 0, 1, 0, 1]);
    assert!((t.end_s - 0.45).abs() < 1e-9);
    assert!((t.length_s(4) - 0.05).abs() < 1e-9);
    assert_eq!(t.total().count(), cum.len());
}

#[test]
fn timelines_of_workers_merge_interval_by_interval() {
    let mk = |start: f64, end: f64, parts: &[&[u64]]| Timeline {
        width_s: 1.0,
        start_epoch_s: start,
        end_s: end,
        slices: parts.iter().map(|v| Slice::of(&hist_of(v))).collect(),
    };
    let mut a = mk(100.5, 2.5, &[&[10, 20], &[30], &[40]]);
    let b = mk(100.2, 1.9, &[&[10], &[1_000_000]]);
    a.merge(&b);
    assert_eq!(a.start_epoch_s, 100.2);
    assert_eq!(a.end_s, 2.5);
    let counts: Vec<u64> = a.slices.iter().map(Slice::count).collect();
    assert_eq!(counts, vec![3, 2, 1]);
    assert_eq!(a.slices[1].to_hist(3).max(), b.slices[1].to_hist(3).max());
    // Merging into an empty timeline takes the other whole.
    let mut e = Timeline::default();
    e.merge(&b);
    assert_eq!(e, b);
}
