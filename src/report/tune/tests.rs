use super::*;

fn rec(target: &str, repeat: u32, metrics: &[(&str, f64)]) -> Record {
    let m: serde_json::Map<String, serde_json::Value> = metrics
        .iter()
        .map(|(k, v)| (k.to_string(), serde_json::json!(v)))
        .collect();
    serde_json::from_value(serde_json::json!({
        "schema": 1, "target": target, "fs": "x", "workload": "w", "test": "t",
        "repeat": repeat, "started_at": "", "duration_s": 1.0, "outcome": "ok", "metrics": m
    }))
    .unwrap()
}

fn meta(cands: &[&str]) -> TuneMeta {
    TuneMeta {
        metric: "iops".into(),
        higher_is_better: true,
        test: None,
        slos: Vec::new(),
        tie: 0.05,
        alpha: 0.05,
        candidates: cands.iter().map(|s| s.to_string()).collect(),
    }
}

/// `rounds` trials of each candidate around its mean, with a small deterministic wobble.
fn trials(means: &[(&str, f64)], rounds: u32) -> Vec<Record> {
    let wobble = [1.0, 1.02, 0.985, 1.01, 0.995, 1.005];
    let mut out = Vec::new();
    for r in 0..rounds {
        for (k, (c, m)) in means.iter().enumerate() {
            let w = wobble[(r as usize + k) % wobble.len()];
            out.push(rec(c, r, &[("iops", m * w), ("lat_p99_ns", 1e6 / m)]));
        }
    }
    out
}

#[test]
fn holm_steps_down_in_order() {
    // m = 4: thresholds 0.0125, 0.0167, 0.025, 0.05 in p order.
    let got = holm(&[(0, 0.04), (1, 0.001), (2, 0.012), (3, 0.03)], 0.05);
    assert_eq!(
        got,
        [1, 2],
        "0.001 <= 0.0125, 0.012 <= 0.0167, 0.03 > 0.025 stops"
    );
    assert!(holm(&[(0, 0.2)], 0.05).is_empty());
    assert_eq!(holm(&[(7, 0.04)], 0.05), [7]);
}

#[test]
fn the_clearly_worse_are_dropped_by_round_two_and_the_best_stands() {
    let means = [
        ("a", 1000.0),
        ("b", 980.0),
        ("c", 400.0),
        ("d", 300.0),
        ("e", 200.0),
        ("f", 1010.0),
    ];
    let cands: Vec<&str> = means.iter().map(|m| m.0).collect();
    let race = race(&meta(&cands), &trials(&means, 5), 5);
    for c in ["c", "d", "e"] {
        let s = race.candidates.iter().find(|s| s.label == c).unwrap();
        assert!(
            matches!(s.dropped_round, Some(1 | 2)),
            "{c} dropped in {:?}: {:?}",
            s.dropped_round,
            s.dropped_why
        );
        assert!(s.dropped_why.as_ref().unwrap().contains("slower"));
    }
    // a, b and f are within 3% of each other: a tie or f ahead, never a clearly worse one.
    let w = race.winner.unwrap();
    assert!(["a", "f", "b"].contains(&w.as_str()), "{w}");
    assert!(
        race.trials < 6 * 5,
        "racing spent {} of 30 trials",
        race.trials
    );
}

#[test]
fn survivors_within_the_margin_are_tied_and_the_race_says_by_how_much() {
    let means = [("x", 1000.0), ("y", 1000.0)];
    let mut m = meta(&["x", "y"]);
    m.tie = 0.10;
    let race = race(&m, &trials(&means, 6), 6);
    assert!(race.ended.contains("tied"), "{}", race.ended);
    assert_eq!(race.tied.len(), 1);
    assert!(race.tied_within.unwrap() < 0.10, "{:?}", race.tied_within);
}

#[test]
fn an_slo_drops_the_candidate_that_misses_it_and_a_skipped_one_is_dropped_with_its_reason() {
    let mut recs = trials(&[("fast", 2000.0), ("slow", 1000.0)], 3);
    // "fast" has a bad tail: p99 of 5 ms.
    for r in recs.iter_mut().filter(|r| r.target == "fast") {
        r.metrics.insert("lat_p99_ns".into(), 5e6);
    }
    let skipped: Record = serde_json::from_value(serde_json::json!({
        "schema": 1, "target": "lz4", "fs": "zfs", "workload": "provision", "test": "provision",
        "repeat": 0, "started_at": "", "duration_s": 0.0, "outcome": "skipped",
        "reason": "compression=lz4 is not supported by zfs-fuse", "metrics": {}
    }))
    .unwrap();
    recs.push(skipped);
    let mut m = meta(&["fast", "slow", "lz4"]);
    m.slos.push(Slo {
        metric: "lat_p99_ns".into(),
        below: true,
        value: 2e6,
        text: "lat_p99<2ms".into(),
    });
    let race = race(&m, &recs, 3);
    let fast = race.candidates.iter().find(|s| s.label == "fast").unwrap();
    assert!(fast
        .dropped_why
        .as_ref()
        .unwrap()
        .contains("SLO lat_p99<2ms missed"));
    let lz4 = race.candidates.iter().find(|s| s.label == "lz4").unwrap();
    assert!(
        lz4.dropped_why.as_ref().unwrap().contains("zfs-fuse"),
        "{lz4:?}"
    );
    assert_eq!(race.winner.as_deref(), Some("slow"));
}

#[test]
fn slos_parse_into_the_metrics_unit() {
    use crate::metrics::catalog::Unit;
    let known = |m: &str| match m {
        "lat_p99_ns" => Some(Unit::Nanoseconds),
        "space_overhead_pct" => Some(Unit::Percent),
        "iops" => Some(Unit::OpsPerSec),
        _ => None,
    };
    let s = parse_slo("lat_p99<2ms", &known).unwrap();
    assert_eq!(
        (s.metric.as_str(), s.below, s.value),
        ("lat_p99_ns", true, 2e6)
    );
    let s = parse_slo("space_overhead<40%", &known).unwrap();
    assert_eq!((s.metric.as_str(), s.value), ("space_overhead_pct", 40.0));
    assert!(!parse_slo("iops>1000", &known).unwrap().below);
    assert!(parse_slo("speed<1", &known)
        .unwrap_err()
        .contains("no workload"));
    assert!(parse_slo("lat_p99<2MB", &known)
        .unwrap_err()
        .contains("not a unit"));
    assert!(parse_slo("lat_p99=2ms", &known)
        .unwrap_err()
        .contains("METRIC<VALUE"));
}

#[test]
fn the_pareto_front_keeps_what_nothing_beats_on_every_axis() {
    let mut recs = trials(&[("hi", 2000.0), ("mid", 1000.0), ("lo", 500.0)], 2);
    for r in recs.iter_mut() {
        let p99 = match r.target.as_str() {
            "hi" => 9e6,
            "mid" => 1e6,
            _ => 2e6,
        };
        r.metrics.insert("lat_p99_ns".into(), p99);
    }
    let m = meta(&["hi", "mid", "lo"]);
    let race = race(&m, &recs, 2);
    let front: Vec<&str> = race
        .candidates
        .iter()
        .filter(|s| s.pareto)
        .map(|s| s.label.as_str())
        .collect();
    assert_eq!(
        front,
        ["hi", "mid"],
        "lo is slower and has a worse tail than mid"
    );
}
