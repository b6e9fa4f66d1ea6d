use super::*;
use crate::plan::job::{LogWindow, SizeSpec};

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

#[test]
fn every_listed_option_is_accepted_with_a_sensible_value() {
    for key in all_options() {
        let v = match key {
            "name" | "description" => "x",
            "filename" => "f",
            "directory" => "/tmp",
            "rw_sequencer" => "identical",
            "rate_process" => "poisson",
            "fallocate" => "none",
            "verify" => "md5",
            "verify_pattern" => "0xdeadbeef",
            "percentile_list" => "50:99.9",
            "clocksource" => "clock_gettime",
            "kb_base" => "1024",
            "unit_base" => "8",
            "sync" => "dsync",
            "nrfiles" => "4",
            "file_service_type" => "random:2",
            "blockalign" | "ba" | "verify_interval" => "4k",
            "iodepth_batch_complete_min" | "iodepth_low" => "1",
            "thinktime" | "thinktime_spin" => "100",
            "log_compression" | "log_store_compressed" => "0",
            "log_window_value" => "both",
            "replay_skip" => "trim,sync",
            "exit_what" => "group",
            "verify_state_load" => "0",
            "zonemode" => "none",
            "random_generator" => "lfsr",
            "cpus_allowed_policy" => "split",
            "continue_on_error" => "io",
            "io_submit_mode" => "offload",
            "replay_align" => "4k",
            "cmdprio_bssplit" => "4k/50",
            "dedupe_mode" => "working_set",
            "iomem" | "mem" => "malloc",
            _ => example(key),
        };
        let mut j = Job::default();
        j.apply(key, Some(v))
            .unwrap_or_else(|e| panic!("{key}={v} is listed but refused: {e}"));
    }
    assert!(help_text().contains("random_distribution"));
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
