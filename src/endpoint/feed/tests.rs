use super::render::{text, Format, FAMILIES};
use super::*;
use crate::metrics::progress::Count;

fn info() -> Info {
    Info {
        build: "0.1.0 (commit abc, features: none)".into(),
        command: "compare".into(),
        study: "/tmp/s\"1".into(),
        host: "h".into(),
        rank: 0,
    }
}

fn workers(n: usize) -> Arc<[Progress]> {
    (0..n).map(|_| Progress::new()).collect()
}

fn spec(test: &str) -> PhaseInfo<'_> {
    PhaseInfo {
        test,
        interval: Duration::from_secs(1),
        total_ops: None,
        total_secs: Some(10.0),
    }
}

#[test]
fn counters_carry_on_over_repeats_and_include_the_running_phase() {
    let f = Feed::new(info());
    let t0 = Instant::now();
    f.enter_workload("ext4", 0, "block");
    let w = workers(2);
    f.start_phase(spec("read"), w.clone(), t0);
    w[0].add_io(Dir::Read, 4096);
    w[1].add_io(Dir::Read, 4096);
    let v = f.view(t0);
    assert_eq!(v.counters.len(), 1);
    assert_eq!(v.counters[0].1[Some(Dir::Read)], Count::new(2, 8192));
    f.end_phase();
    // The next repeat of the same phase carries on from there.
    f.enter_workload("ext4", 1, "block");
    let w = workers(1);
    f.start_phase(spec("read"), w.clone(), t0);
    w[0].add_io(Dir::Read, 4096);
    w[0].add_io(Dir::Write, 512);
    let v = f.view(t0);
    assert_eq!(v.counters[0].1[Some(Dir::Read)], Count::new(3, 3 * 4096));
    assert_eq!(v.counters[0].1[Some(Dir::Write)], Count::new(1, 512));
    assert_eq!(v.phase.as_ref().unwrap().repeat, 2);
    f.end_phase();
    let v = f.view(t0);
    assert!(v.phase.is_none(), "the gauges go with the phase");
    assert_eq!(
        v.counters[0].1[Some(Dir::Read)],
        Count::new(3, 3 * 4096),
        "the counters stay"
    );
}

#[test]
fn rates_are_over_the_last_whole_interval() {
    let f = Feed::new(info());
    let t0 = Instant::now();
    let w = workers(1);
    f.start_phase(spec("write"), w.clone(), t0);
    for _ in 0..100 {
        w[0].add_io(Dir::Write, 4096);
    }
    f.tick(t0 + Duration::from_millis(500));
    assert!(
        f.view(t0).phase.unwrap().rates.is_none(),
        "not a whole interval yet"
    );
    f.tick(t0 + Duration::from_secs(2));
    let r = f.view(t0).phase.unwrap().rates.unwrap();
    assert_eq!(r[1], (50.0, 50.0 * 4096.0));
    assert_eq!(r[0], (0.0, 0.0));
}

#[test]
fn progress_and_eta_by_operations_or_by_runtime() {
    assert_eq!(
        progress_of(Some(100), None, 25, 10.0),
        (Some(0.25), Some(30.0))
    );
    assert_eq!(progress_of(Some(100), None, 0, 10.0), (Some(0.0), None));
    assert_eq!(
        progress_of(None, Some(8.0), 0, 2.0),
        (Some(0.25), Some(6.0))
    );
    assert_eq!(progress_of(None, Some(8.0), 0, 9.0), (Some(1.0), Some(0.0)));
    assert_eq!(progress_of(None, None, 5, 1.0), (None, None));
}

#[test]
fn latency_comes_from_the_workers_last_closed_intervals() {
    let w = workers(3);
    let t0 = Instant::now();
    // Worker 0: 99 fast and one slow I/O; worker 1 the same; worker 2 has closed nothing.
    for p in w.iter().take(2) {
        p.close_interval(Slice(vec![(1_000_000, 99), (50_000_000, 1)]));
    }
    let now = Instant::now();
    let l = latency_of(&w, t0, Duration::from_secs(1), now).unwrap();
    assert!((l[0] - 0.001).abs() < 0.0001, "{l:?}");
    assert!((l[2] - 0.05).abs() < 0.001, "{l:?}");
    // Intervals closed long ago (a stalled or ended worker) do not count.
    let later = now + Duration::from_secs(5);
    assert!(latency_of(&w, t0, Duration::from_secs(1), later).is_none());
}

fn running_view() -> View {
    let f = Feed::new(info());
    let t0 = Instant::now();
    f.enter_workload("btrfs:compress=zstd", 0, "block");
    let w = workers(1);
    f.start_phase(spec("RND4K_Q32T1_write"), w.clone(), t0);
    w[0].add_io(Dir::Write, 4096);
    w[0].close_interval(Slice(vec![(2_000, 1)]));
    f.tick(t0 + Duration::from_secs(1));
    f.with(|s| s.limiter = Some((t0, Some(Limit::Device))));
    let mut v = view_of(&f.info, &f.state.lock().unwrap(), Instant::now());
    v.phase.as_mut().unwrap().limiter = Some(Limit::Device);
    v
}

#[test]
fn openmetrics_names_families_and_ends_with_eof() {
    let t = text(&running_view(), Format::OpenMetrics);
    assert!(t.ends_with("# EOF\n"), "{t}");
    assert!(t.contains("# TYPE fsbench_operations counter\n"), "{t}");
    assert!(
        t.contains("# TYPE fsbench_bytes counter\n# UNIT fsbench_bytes bytes\n"),
        "{t}"
    );
    assert!(t.contains("# TYPE fsbench info\n"), "{t}");
    assert!(
        t.contains("# UNIT fsbench_interval_latency_seconds seconds\n"),
        "{t}"
    );
    assert!(t.contains(
        "fsbench_operations_total{target=\"btrfs:compress=zstd\",workload=\"block\",test=\"RND4K_Q32T1_write\",direction=\"write\"} 1\n"
    ), "{t}");
    assert!(t.contains("limiter=\"device\"} 1\n"), "{t}");
    assert!(t.contains("limiter=\"waiting\"} 0\n"), "{t}");
    assert!(
        t.contains("study=\"/tmp/s\\\"1\""),
        "label values are escaped: {t}"
    );
    // Every family's samples are together, after its metadata.
    let names: Vec<&str> = t
        .lines()
        .filter(|l| l.starts_with("# TYPE "))
        .map(|l| l.split(' ').nth(2).unwrap())
        .collect();
    let mut unique = names.clone();
    unique.dedup();
    assert_eq!(names, unique);
}

#[test]
fn prometheus_text_has_no_openmetrics_only_lines() {
    let t = text(&running_view(), Format::Prometheus);
    assert!(!t.contains("# EOF") && !t.contains("# UNIT"), "{t}");
    assert!(
        t.contains("# TYPE fsbench_operations_total counter\n"),
        "{t}"
    );
    assert!(t.contains("# TYPE fsbench_info gauge\n"), "{t}");
    // A type line for every sample's family, before it.
    let mut typed = std::collections::HashSet::new();
    for l in t.lines() {
        if let Some(rest) = l.strip_prefix("# TYPE ") {
            typed.insert(rest.split(' ').next().unwrap().to_string());
        } else if !l.starts_with('#') {
            let name = l.split(['{', ' ']).next().unwrap();
            assert!(typed.contains(name), "{name} before its TYPE line");
        }
    }
}

#[test]
fn family_names_follow_the_conventions() {
    for f in FAMILIES {
        let name = f.name;
        assert!(name.starts_with("fsbench_"), "{name}");
        assert!(
            name.chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_'),
            "{name}"
        );
    }
    let t = text(&running_view(), Format::OpenMetrics);
    for l in t.lines().filter(|l| l.starts_with("# UNIT ")) {
        let parts: Vec<&str> = l.split(' ').collect();
        assert!(parts[2].ends_with(&format!("_{}", parts[3])), "{l}");
    }
}
