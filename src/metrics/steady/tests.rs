use super::*;
use crate::plan::job::SteadyKind;
use std::time::Duration;

fn spec(kind: SteadyKind, limit: f64, pct: bool, dur: u64, ramp: u64) -> Steady {
    Steady {
        kind,
        limit,
        pct,
        dur: Duration::from_secs(dur),
        ramp: Duration::from_secs(ramp),
        headline: false,
        interval: Duration::ZERO,
    }
}

/// Feeds `iops` one sample a second (bandwidth 4 KiB per I/O); the second it was reached.
fn run(s: Steady, iops: &[f64]) -> (Option<f64>, Watch) {
    let mut w = Watch::new(s);
    for (i, v) in iops.iter().enumerate() {
        if w.push(i as f64 + 1.0, *v, v * 4096.0) {
            break;
        }
    }
    (w.at_s, w)
}

#[test]
fn the_deviation_and_slope_are_fios() {
    // fio 3.33 on the same samples: criterion 9.034894%, max_deviation 1378.333333.
    let s = spec(SteadyKind::Iops, 50.0, true, 3, 0);
    let v = judge(&s, &[14932.0, 16634.0, 14201.0]);
    assert!((v.max_deviation - 1378.333333).abs() < 1e-3, "{v:?}");
    assert!((v.criterion - 9.034894).abs() < 1e-4, "{v:?}");
    assert!(v.attained);
    // A line rising 10 per second from 1000: slope 10, 100 x 10 / mean 1020 = 0.98%.
    let line: Vec<f64> = (0..5).map(|i| 1000.0 + 10.0 * i as f64).collect();
    let v = judge(&spec(SteadyKind::IopsSlope, 1.0, true, 5, 0), &line);
    assert!((v.slope - 10.0).abs() < 1e-9);
    assert!((v.criterion - 100.0 * 10.0 / 1020.0).abs() < 1e-9 && v.attained);
    let v = judge(&spec(SteadyKind::IopsSlope, 10.0, false, 5, 0), &line);
    assert!(!v.attained, "|slope| 10 is not below 10");
}

#[test]
fn a_series_that_settles_is_steady_once_the_window_holds() {
    // A fresh device: fast, then falling, then flat.
    let iops = [
        9000.0, 7000.0, 5200.0, 5010.0, 5000.0, 4990.0, 5005.0, 4995.0, 5000.0,
    ];
    let (at, w) = run(spec(SteadyKind::Iops, 1.0, true, 4, 0), &iops);
    assert_eq!(at, Some(7.0), "samples 4..7 lie within 1% of their mean");
    let mut m = BTreeMap::new();
    w.metrics(&mut m);
    assert_eq!(m["steady_reached"], 1.0);
    assert_eq!(m["steady_at_s"], 7.0);
    assert!((m["steady_iops"] - 5001.25).abs() < 1e-9);
    assert!((m["steady_bytes_per_sec"] - 5001.25 * 4096.0).abs() < 1e-6);
    // The bandwidth criterion in bytes per second sees the same.
    let (at, _) = run(spec(SteadyKind::BwSlope, 0.5, true, 4, 0), &iops);
    assert_eq!(at, Some(7.0));
}

#[test]
fn a_series_that_keeps_falling_is_never_steady() {
    let iops: Vec<f64> = (0..30).map(|i| 10_000.0 - 200.0 * i as f64).collect();
    let (at, w) = run(spec(SteadyKind::IopsSlope, 1.0, true, 5, 0), &iops);
    assert_eq!(at, None);
    let mut m = BTreeMap::new();
    w.metrics(&mut m);
    assert_eq!(m["steady_reached"], 0.0);
    assert!(!m.contains_key("steady_at_s"));
    assert!(
        (m["steady_slope"] + 200.0).abs() < 1e-9,
        "the last window's slope"
    );
}

#[test]
fn samples_during_the_ramp_are_not_judged() {
    // Flat from the start: with no ramp steady at 3 s; with ss_ramp=4 the first sample kept is
    // the one that ends at 5 s, so the window of 3 holds at 7 s.
    let flat = [100.0; 12];
    assert_eq!(
        run(spec(SteadyKind::Iops, 5.0, true, 3, 0), &flat).0,
        Some(3.0)
    );
    let (at, w) = run(spec(SteadyKind::Iops, 5.0, true, 3, 4), &flat);
    assert_eq!(at, Some(7.0));
    assert_eq!(w.samples.first().map(|s| s.0), Some(5.0));
}

#[test]
fn latency_is_judged_on_its_own_samples_at_the_check_interval() {
    // fio's example_latency_steadystate: lat:5% over the window, a sample every 10 s.
    let mut s = spec(SteadyKind::Lat, 5.0, true, 30, 0);
    s.interval = Duration::from_secs(10);
    assert_eq!(s.samples(), 3);
    let mut w = Watch::new(s);
    // Before the first interval is over: not a sample.
    assert!(!w.push_lat(5.0, 100.0, 409600.0, 900.0));
    // IOPS vary widely, latency hardly: steady on latency at the third sample.
    assert!(!w.push_lat(10.0, 100.0, 409600.0, 1000.0));
    assert!(!w.push_lat(20.0, 300.0, 1228800.0, 1010.0));
    assert!(w.push_lat(30.0, 50.0, 204800.0, 1020.0));
    assert_eq!(w.at_s, Some(30.0));
    let v = w.last.unwrap();
    assert!((v.criterion - 10.0 / 1010.0 * 100.0).abs() < 1e-9, "{v:?}");
    let mut m = BTreeMap::new();
    w.metrics(&mut m);
    assert_eq!(m[metric::STEADY_LAT_NS], 1010.0);
    // lat_slope: a rising latency is not steady.
    let mut s = spec(SteadyKind::LatSlope, 1.0, true, 3, 0);
    s.interval = Duration::ZERO;
    let mut w = Watch::new(s);
    let rising = [1000.0, 1200.0, 1400.0, 1600.0];
    assert!(!rising
        .iter()
        .enumerate()
        .any(|(i, l)| w.push_lat(i as f64 + 1.0, 10.0, 10.0, *l)));
}
