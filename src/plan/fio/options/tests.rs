use super::*;
use crate::plan::job::ExitWhat;
use crate::plan::job::{
    BlockSize, ContinueOn, Distribution, EngineKind, Failing, LogWindow, OpenSync, Rw, SizeSpec,
};

fn job(opts: &[(&str, Option<&str>)]) -> Job {
    let mut j = Job::default();
    for (k, v) in opts {
        j.apply(k, *v).unwrap_or_else(|e| panic!("{k}={v:?}: {e}"));
    }
    j
}

fn err(k: &str, v: Option<&str>) -> String {
    Job::default().apply(k, v).unwrap_err().to_string()
}

/// Every row takes its own example value; its name is written once, in its row.
#[test]
fn every_option_takes_its_example_and_is_named_once() {
    let mut names = std::collections::HashSet::new();
    for o in all() {
        let mut j = Job::default();
        j.apply(o.name, Some(o.example))
            .unwrap_or_else(|e| panic!("{}={} is listed but refused: {e}", o.name, o.example));
        for n in std::iter::once(&o.name).chain(o.aliases) {
            assert!(names.insert(*n), "{n} is in the table twice");
            assert!(std::ptr::eq(find(n).unwrap(), o), "{n}");
        }
    }
    assert!(names.len() > 190, "{}", names.len());
    assert!(help_text().contains("random_distribution"));
    assert!(help_text().contains("fill_device (fill_fs)"));
}

/// An option given without a value it needs is refused with its row's example.
#[test]
fn a_missing_value_is_asked_for_with_an_example() {
    let e = err("bssplit", None);
    assert_eq!(
        e,
        "option 'bssplit' needs a value, e.g. bssplit=4k/50:64k/50"
    );
    let e = err("timeout", Some(" "));
    assert_eq!(
        e, "option 'timeout' needs a value, e.g. timeout=30s",
        "by the name written"
    );
}

#[test]
fn per_direction_block_sizes_ranges_and_splits() {
    let j = job(&[("bs", Some("4k,64k"))]);
    assert_eq!(j.bs, BlockSize::Fixed(4096));
    assert_eq!(j.wbs(), &BlockSize::Fixed(65536));
    let j = job(&[("bs", Some(",8k"))]);
    assert_eq!(
        (j.bs.clone(), j.wbs().clone()),
        (BlockSize::Fixed(4096), BlockSize::Fixed(8192))
    );
    let j = job(&[("bs", Some("8k,8k,8k"))]);
    assert_eq!((j.bs.clone(), j.write_bs), (BlockSize::Fixed(8192), None));
    let j = job(&[("bsrange", Some("1k:4k,2k-8k"))]);
    assert_eq!(j.bs, BlockSize::Range(1024, 4096));
    assert_eq!(j.wbs(), &BlockSize::Range(2048, 8192));
    let j = job(&[("bssplit", Some("4k/50:1k/:32k/"))]);
    assert_eq!(
        j.bs,
        BlockSize::Split(vec![(4096, 50), (1024, 25), (32768, 25)])
    );
    let j = job(&[("bssplit", Some("2k/50:4k/50,4k/90:8k/10"))]);
    assert_eq!(j.wbs(), &BlockSize::Split(vec![(4096, 90), (8192, 10)]));
    let j = job(&[("bssplit", Some("4k/:8k/:64k/"))]);
    assert_eq!(
        j.bs,
        BlockSize::Split(vec![(4096, 34), (8192, 33), (65536, 33)])
    );
    assert!(err("bssplit", Some("4k/60:8k/50")).contains("add up to 110"));
    assert!(err("bs", Some("8k-64k")).contains("bsrange=8k-64k"));
}

#[test]
fn shapes_rates_and_run_lengths() {
    let j = job(&[
        ("rw", Some("randread:8")),
        ("rw_sequencer", Some("identical")),
        ("random_distribution", Some("zipf:1.2")),
        ("rate", Some("1m,500k")),
        ("rate_iops", Some(",100")),
        ("rate_process", Some("poisson")),
        ("loops", Some("3")),
        ("number_ios", Some("1000")),
        ("timeout", Some("2m")),
        ("startdelay", Some("1s")),
        ("thinktime", Some("50")),
        ("thinktime_blocks", Some("4")),
        ("offset", Some("25%")),
        ("offset_increment", Some("1g")),
        ("sync", Some("1")),
        ("fsync_on_close", Some("1")),
        ("zero_buffers", None),
        ("percentage_random", Some("30")),
    ]);
    assert_eq!(
        (j.rw, j.rw_mod, j.rw_identical),
        (Rw::RandRead, Some(8), true)
    );
    assert_eq!(j.distribution, Distribution::Zipf(1.2));
    assert_eq!(j.rate, [Some(1 << 20), Some(500 << 10)]);
    assert_eq!(j.rate_iops, [None, Some(100)]);
    assert!(j.rate_poisson);
    assert_eq!((j.loops, j.number_ios), (3, Some(1000)));
    assert_eq!(j.runtime, Some(Duration::from_secs(120)));
    assert_eq!(j.startdelay, Some(Duration::from_secs(1)));
    assert_eq!(j.thinktime, Some(Duration::from_micros(50)));
    assert_eq!(j.thinktime_blocks, 4);
    assert_eq!(j.offset, Some(SizeSpec::Percent(25.0)));
    assert_eq!(j.offset_increment, 1 << 30);
    assert_eq!(j.open_sync, OpenSync::Sync);
    assert!(j.end_fsync);
    assert_eq!((j.compress_pct, j.random_pct), (100, 30));
    let j = job(&[("rw", Some("write:64k"))]);
    assert_eq!(j.rw_mod, Some(65536));
    let j = job(&[("random_distribution", Some("zoned:60/10:30/20:10/70"))]);
    assert_eq!(
        j.distribution,
        Distribution::Zoned(vec![(60.0, 10.0), (30.0, 20.0), (10.0, 70.0)])
    );
    let j = job(&[("random_distribution", Some("normal:10:0.25"))]);
    assert_eq!(
        (j.distribution.clone(), j.dist_center),
        (Distribution::Normal(10.0), Some(0.25))
    );
    assert!(err("random_distribution", Some("zipf:1")).contains("not 1"));
    assert!(err("random_distribution", Some("zoned:60/10:30/20")).contains("add up to 90"));
    for (v, rw) in [
        ("trim", Rw::Trim),
        ("randtrim", Rw::RandTrim),
        ("trimwrite", Rw::TrimWrite),
        ("randtrimwrite", Rw::RandTrimWrite),
    ] {
        let j = job(&[("rw", Some(v))]);
        assert_eq!(j.rw, rw);
        assert!(j.rw.trims() && j.rw.writes() && !j.rw.reads());
        assert_eq!(j.rw.random(), v.starts_with("rand"));
    }
}

#[test]
fn verification_options() {
    let j = job(&[
        ("verify", Some("md5")),
        ("verify_interval", Some("512")),
        ("verify_fatal", Some("1")),
        ("do_verify", Some("0")),
    ]);
    let v = j.verify.unwrap();
    assert_eq!(
        (v.kind.as_str(), v.interval, v.fatal, v.after_write),
        ("md5", 512, true, false)
    );
    let j = job(&[
        ("verify_pattern", Some("0xdeadbeef")),
        ("verify", Some("pattern")),
    ]);
    let v = j.verify.unwrap();
    assert_eq!(
        (v.kind.as_str(), v.pattern),
        ("pattern", vec![0xde, 0xad, 0xbe, 0xef])
    );
    assert_eq!(
        job(&[("verify_pattern", Some("255"))])
            .verify
            .unwrap()
            .pattern,
        vec![255]
    );
    assert_eq!(
        job(&[("verify_pattern", Some("\"ab\""))])
            .verify
            .unwrap()
            .pattern,
        b"ab"
    );
    assert!(job(&[("verify", Some("md5")), ("verify", Some("null"))])
        .verify
        .is_none());
    assert!(err("verify", Some("sha3-256")).contains("run this job with fio"));
}

#[test]
fn engines_each_error_names_its_cause_once() {
    let mut j = Job::default();
    assert!(j
        .apply("ioengine", Some("posixaio"))
        .unwrap()
        .unwrap()
        .contains("io_uring"));
    assert_eq!(j.engine, EngineKind::IoUring);
    assert!(j
        .apply("ioengine", Some("vsync"))
        .unwrap()
        .unwrap()
        .contains("sync"));
    assert_eq!(j.engine, EngineKind::Sync);
    // The engines fsbench has run as themselves, without a note.
    for (name, kind) in [
        ("libaio", EngineKind::Libaio),
        ("pvsync", EngineKind::Pvsync),
        ("pvsync2", EngineKind::Pvsync2),
        ("io_uring", EngineKind::IoUring),
    ] {
        assert_eq!(j.apply("ioengine", Some(name)).unwrap(), None, "{name}");
        assert_eq!(j.engine, kind);
    }
    let e = err("ioengine", Some("rbd"));
    assert!(
        e.contains("engine rbd is not available in fsbench") && e.contains("run this job with fio"),
        "{e}"
    );
    let e = err("cpuload", Some("1"));
    assert!(
        e.contains("'cpuload' is not supported") && !e.contains("rwmixread"),
        "{e}"
    );
    assert!(j
        .apply("iodepth_batch_submit", Some("8"))
        .unwrap()
        .unwrap()
        .contains("no effect"));
}

#[test]
fn steadystate_takes_fios_criteria_window_and_ramp_in_any_order() {
    use crate::plan::job::{Steady, SteadyKind};
    let j = job(&[
        ("ss_dur", Some("30")),
        ("steadystate", Some("iops_slope:0.3%")),
        ("ss_ramp", Some("5s")),
    ]);
    let ss = j.steadystate.unwrap();
    assert_eq!(
        (ss.kind, ss.limit, ss.pct),
        (SteadyKind::IopsSlope, 0.3, true)
    );
    assert_eq!(
        (ss.dur, ss.ramp),
        (Duration::from_secs(30), Duration::from_secs(5))
    );
    assert_eq!(ss.criterion(), "iops_slope:0.3%");
    // A bandwidth limit is a size in bytes per second (fio's bw:10m).
    let ss = job(&[("ss", Some("bw:10m")), ("ss_dur", Some("10s"))])
        .steadystate
        .unwrap();
    assert_eq!(
        (ss.kind, ss.limit, ss.pct),
        (SteadyKind::Bw, 10485760.0, false)
    );
    // Only ss_dur: fio's default criterion, iops_slope:0.01%.
    let ss = job(&[("ss_dur", Some("10"))]).steadystate.unwrap();
    assert_eq!(ss.criterion(), Steady::default().criterion());
    assert!(job(&[("rw", Some("read"))]).steadystate.is_none());
    let e = err("steadystate", Some("clat:2%"));
    assert!(
        e.contains("unknown criterion 'clat'") && e.contains("iops|iops_slope|bw|bw_slope|lat"),
        "{e}"
    );
    assert!(err("steadystate", Some("iops")).contains("no limit"));
    assert!(err("steadystate", Some("iops:abc")).contains("not a limit"));
    assert!(err("steadystate", Some("iops_slope:-1")).contains("above 0"));
    assert!(err("ss_dur", Some("500ms")).contains("1s or more"));
}

#[test]
fn log_options_name_the_files_windows_and_columns() {
    let j = job(&[
        ("write_bw_log", None),
        ("write_lat_log", Some("lat")),
        ("log_avg_msec", Some("500")),
        ("log_max_value", Some("1")),
        ("log_offset", Some("1")),
        ("per_job_logs", Some("0")),
        ("log_hist_coarseness", Some("3")),
    ]);
    let l = j.logs.unwrap();
    assert_eq!((l.bw.as_deref(), l.lat.as_deref()), (Some(""), Some("lat")));
    assert_eq!(
        (l.avg_msec, l.window, l.offset, l.per_job),
        (500, LogWindow::Max, true, false)
    );
    assert_eq!(l.hist_coarseness, 3);
    assert!(job(&[("rw", Some("read"))]).logs.is_none());
    assert!(err("log_hist_coarseness", Some("7")).contains("0 to 6"));
    assert!(err("log_window_value", Some("min")).contains("avg, max or both"));
    assert!(err("log_compression", Some("1m")).contains("does not compress"));
    assert!(job(&[("log_compression", Some("0"))]).logs.is_some());
}

#[test]
fn replay_options_and_their_refusals() {
    let j = job(&[
        ("read_iolog", Some("trace.log")),
        ("replay_no_stall", None),
        ("replay_time_scale", Some("200")),
        ("replay_align", Some("4k")),
        ("replay_scale", Some("2")),
        ("replay_redirect", Some("/dev/sdz")),
        ("write_iolog", Some("out.log")),
    ]);
    let r = j.replay.unwrap();
    assert_eq!(
        (r.file.as_str(), r.no_stall, r.time_scale, r.align, r.scale),
        ("trace.log", true, 200, 4096, 2)
    );
    assert_eq!(j.filename.as_deref(), Some("/dev/sdz"));
    assert_eq!(j.write_iolog.as_deref(), Some("out.log"));
    assert!(err("replay_align", Some("3k")).contains("power of 2"));
    assert!(err("read_iolog", Some("a:b")).contains("one iolog"));
    assert!(err("replay_skip", Some("reads")).contains("'reads'"));
}

#[test]
fn verify_state_options_are_kept_and_make_no_verify() {
    let j = job(&[
        ("verify_state_save", Some("1")),
        ("verify_state_load", Some("1")),
    ]);
    assert!(j.verify_state_save && j.verify_state_load);
    assert!(j.verify.is_none());
    let j = job(&[
        ("flow", Some("8")),
        ("flow_id", Some("2")),
        ("flow_sleep", Some("100")),
    ]);
    assert_eq!(
        (j.flow, j.flow_id, j.flow_sleep),
        (8, 2, Some(Duration::from_micros(100)))
    );
}

#[test]
fn a_negative_hole_reads_backwards_and_only_sequentially() {
    let j = job(&[("rw", Some("read:-8k"))]);
    assert_eq!(
        (j.rw, j.rw_mod, j.rw_backwards),
        (Rw::Read, Some(8192), true)
    );
    assert!(!job(&[("rw", Some("read:8k"))]).rw_backwards);
    assert!(err("rw", Some("randread:-8")).contains("sequential"));
}

fn note(k: &str, v: &str) -> String {
    match Job::default().apply(k, Some(v)) {
        Ok(Some(n)) => n,
        o => panic!("{k}={v}: {o:?}"),
    }
}

#[test]
fn options_without_effect_are_accepted_with_a_note() {
    assert!(note("threads", "1").contains("tiobench"));
    assert!(Job::default().apply("threads", Some("x")).is_err());
    let j = {
        let mut j = Job::default();
        j.apply("verify_async", Some("6")).unwrap();
        j
    };
    assert_eq!(j, Job::default());
    assert!(note("verify_async_cpus", "0-3").contains("no effect"));
    assert!(note("experimental_verify", "1").contains("the same blocks"));
    let e = Job::default()
        .apply("verify_async_cpus", Some("3-1"))
        .unwrap_err();
    assert!(e.0.contains("verify_async_cpus=3-1"), "{e}");
}

#[test]
fn ignore_error_lists_per_direction() {
    let l = errors::parse_ignore_error(",ENOSPC").unwrap();
    assert_eq!(l, [vec![], vec![28], vec![]]);
    let mut j = Job::default();
    j.apply("ignore_error", Some(",ENOSPC")).unwrap();
    assert_eq!(j.continue_on_error, ContinueOn::of(&[Failing::Write]));
    assert_eq!(j.ignore_error[1], [28]);
    // fio's HOWTO example: EAGAIN for reads, ENOSPC and 122 (EDQUOT) for writes.
    let l = errors::parse_ignore_error("EAGAIN,ENOSPC:122").unwrap();
    assert_eq!(l, [vec![11], vec![28, 122], vec![]]);
    let l = errors::parse_ignore_error("EIO:0x1c,-5,EILSEQ").unwrap();
    assert_eq!(l, [vec![5, 28], vec![5], vec![84]]);
    for bad in ["ENOPE", "0", "x", "1,2,3,4"] {
        let e = Job::default().apply("ignore_error", Some(bad)).unwrap_err();
        assert!(e.0.starts_with(&format!("ignore_error={bad}")), "{e}");
    }
    assert!(note("error_dump", "1").contains("first"));
    assert!(Job::default()
        .apply("error_dump", Some("0"))
        .unwrap()
        .is_none());
}

#[test]
fn steady_state_on_latency_with_a_check_interval() {
    use crate::plan::job::SteadyKind;
    let mut j = Job::default();
    j.apply("steadystate", Some("lat:5%")).unwrap();
    j.apply("steadystate_duration", Some("300")).unwrap();
    j.apply("steadystate_check_interval", Some("10")).unwrap();
    let s = j.steadystate.unwrap();
    assert_eq!((s.kind, s.limit, s.pct), (SteadyKind::Lat, 5.0, true));
    assert_eq!(s.samples(), 30);
    j.apply("ss", Some("lat_slope:500us")).unwrap();
    let s = j.steadystate.unwrap();
    assert_eq!(
        (s.kind, s.limit, s.pct),
        (SteadyKind::LatSlope, 500_000.0, false)
    );
    // A bare number is ns, as fio compares it.
    j.apply("ss", Some("lat:2000")).unwrap();
    assert_eq!(j.steadystate.unwrap().limit, 2000.0);
    let e = Job::default()
        .apply("ss_interval", Some("500ms"))
        .unwrap_err();
    assert!(e.0.contains("1s or more"), "{e}");
    let e = j.apply("ss_interval", Some("7")).unwrap_err();
    assert!(e.0.contains("multiple of ss_interval"), "{e}");
}

#[test]
fn a_sequence_distribution_and_its_stride_in_either_order() {
    use crate::plan::job::Distribution;
    let mut j = Job::default();
    j.apply("random_distribution", Some("sequence:2,0,1"))
        .unwrap();
    j.apply("random_sequence_stride", Some("1")).unwrap();
    let seq = |stride| Distribution::Sequence {
        blocks: vec![2, 0, 1],
        stride,
    };
    assert_eq!(j.distribution, seq(true));
    let mut j = Job::default();
    j.apply("random_sequence_stride", Some("1")).unwrap();
    j.apply("random_distribution", Some("sequence:2,0,1"))
        .unwrap();
    assert_eq!(j.distribution, seq(true));
    j.apply("random_sequence_stride", Some("0")).unwrap();
    assert_eq!(j.distribution, seq(false));
    for bad in ["sequence", "sequence:1,x", "sequence:"] {
        let e = Job::default()
            .apply("random_distribution", Some(bad))
            .unwrap_err();
        assert!(
            e.0.starts_with(&format!("random_distribution={bad}")),
            "{e}"
        );
    }
}

#[test]
fn dedupe_modes_are_kept() {
    let mut j = Job::default();
    j.apply("dedupe_mode", Some("working_set")).unwrap();
    j.apply("dedupe_working_set_percentage", Some("50"))
        .unwrap();
    j.apply("dedupe_global", Some("1")).unwrap();
    assert!(j.dedupe_working_set && j.dedupe_global);
    assert_eq!(j.dedupe_ws_pct, Some(50));
    j.apply("dedupe_mode", Some("repeat")).unwrap();
    assert!(!j.dedupe_working_set);
    let e = Job::default().apply("dedupe_mode", Some("x")).unwrap_err();
    assert!(e.0.contains("repeat or working_set"), "{e}");
}

#[test]
fn wait_for_names_an_earlier_job_of_its_own_name() {
    let jobs = |spec: &[(&str, &[(&str, &str)])]| -> Vec<Job> {
        spec.iter()
            .map(|(n, o)| {
                let mut j = Job {
                    name: n.to_string(),
                    ..Job::default()
                };
                for (k, v) in o.iter() {
                    j.apply(k, Some(v)).unwrap();
                }
                j
            })
            .collect()
    };
    // fio's examples/waitfor.fio: a chain, each waiting for the one before; groups unchanged
    // (the waiting is done as the jobs run).
    let mut js = jobs(&[
        ("writers", &[]),
        ("readers", &[("new_group", "1"), ("wait_for", "writers")]),
        ("writers2", &[("wait_for", "readers")]),
    ]);
    run::wait_for(&mut js).unwrap();
    assert!(js.iter().all(|j| !j.stonewall));
    for (spec, says) in [
        (
            vec![("a", &[][..]), ("c", &[("wait_for", "x")][..])],
            "no job named 'x'",
        ),
        (
            vec![("c", &[("wait_for", "a")][..]), ("a", &[][..])],
            "defined earlier",
        ),
        (
            vec![
                ("a", &[][..]),
                ("a", &[][..]),
                ("c", &[("wait_for", "a")][..]),
            ],
            "several jobs",
        ),
    ] {
        let e = run::wait_for(&mut jobs(&spec)).unwrap_err();
        assert!(e.contains(says), "{e}");
    }
}

#[test]
fn verify_pattern_alone_verifies_the_pattern() {
    let mut j = Job::default();
    j.apply("verify_pattern", Some("0xaaa")).unwrap();
    let v = j.verify.clone().unwrap();
    assert_eq!((v.kind.as_str(), v.pattern), ("pattern", vec![0x0a, 0xaa]));
    // With verify= given (before or after), its kind stands.
    j.apply("verify", Some("meta")).unwrap();
    assert_eq!(j.verify.clone().unwrap().kind, "meta");
    let mut j = Job::default();
    j.apply("verify", Some("crc32c")).unwrap();
    j.apply("verify_pattern", Some("0xff")).unwrap();
    assert_eq!(j.verify.unwrap().kind, "crc32c");
}

#[test]
fn exit_what_and_new_group_are_kept() {
    let mut j = Job::default();
    j.apply("exit_what", Some("stonewall")).unwrap();
    j.apply("new_group", None).unwrap();
    assert_eq!(j.exit_what, ExitWhat::Stonewall);
    assert!(j.new_group);
    j.apply("exit_what", Some("all")).unwrap();
    assert_eq!(j.exit_what, ExitWhat::All);
    let e = Job::default().apply("exit_what", Some("some")).unwrap_err();
    assert!(e.0.contains("group, stonewall or all"), "{e}");
}

#[test]
fn the_settings_read_back_flat_with_the_jobs_own() {
    let mut j = Job::default();
    for (k, v) in [
        ("exit_what", "all"),
        ("ignore_error", ",ENOSPC"),
        ("dedupe_mode", "working_set"),
        ("wait_for", "a"),
    ] {
        j.apply(k, Some(v)).unwrap();
    }
    let v = serde_json::to_value(&j).unwrap();
    assert_eq!(v["exit_what"], "all");
    assert_eq!(v["wait_for"], "a");
    assert!(v.get("more").is_none() && v.get("new_group").is_none());
    assert_eq!(serde_json::from_value::<Job>(v).unwrap(), j);
}

/// Where fio's options depend on their order, a later one keeps what an earlier one set: a seed
/// given stays through randrepeat=0, a size given stays through fill_device, rwmixwrite and
/// rwmixread set one share (the last wins), and a later bs= without a third value keeps the
/// trims' size of an earlier one.
#[test]
fn order_matters_where_fio_says_so() {
    let j = job(&[("randseed", Some("5")), ("randrepeat", Some("0"))]);
    assert_eq!(j.randseed, Some(5));
    let j = job(&[("randrepeat", Some("0")), ("randseed", Some("5"))]);
    assert_eq!(j.randseed, Some(5));
    let j = job(&[("size", Some("1g")), ("fill_device", Some("1"))]);
    assert_eq!(j.size, Some(SizeSpec::Bytes(1 << 30)));
    let j = job(&[("fill_device", Some("1"))]);
    assert_eq!(j.size, Some(SizeSpec::Percent(100.0)));
    let j = job(&[("rwmixwrite", Some("30")), ("rwmixread", Some("50"))]);
    assert_eq!(j.rwmixread, 50);
    let j = job(&[("bs", Some("4k,4k,8k")), ("bs", Some("16k,16k,"))]);
    assert_eq!(j.trim_bs, Some(BlockSize::Fixed(8192)));
}
