//! `fsbench study io500` on one ext4 loop image at a scale smaller than the shipped small one:
//! io500's twelve phase records in io500's order, each with io500's figure in io500's units
//! (`io500_value`: GiB/s from IOR's bandwidth, kIOPS from mdtest's and find's rates), and the
//! score record io500's formula makes of them, marked not comparable with the io500 list.

use crate::common::*;

const PHASES: [(&str, &str); 12] = [
    ("ior-easy-write", "GiB/s"),
    ("mdtest-easy-write", "kIOPS"),
    ("ior-hard-write", "GiB/s"),
    ("mdtest-hard-write", "kIOPS"),
    ("find", "kIOPS"),
    ("ior-easy-read", "GiB/s"),
    ("mdtest-easy-stat", "kIOPS"),
    ("ior-hard-read", "GiB/s"),
    ("mdtest-hard-stat", "kIOPS"),
    ("mdtest-easy-delete", "kIOPS"),
    ("mdtest-hard-read", "kIOPS"),
    ("mdtest-hard-delete", "kIOPS"),
];

#[test]
fn the_io500_study_on_ext4_records_twelve_phases_and_io500s_score() {
    if needs("ext4", "mkfs.ext4") {
        return;
    }
    let (_g, wd) = (serial(), workdir());
    let out = wd.path().join("study");
    // One ext4 image, sizes below the small scale's: the same phases in seconds.
    let sets = [
        "targets=[\"ext4\"]",
        "size=1G",
        "workloads=[\"io500:stonewall=2,easy_block=64m,hard_segments=1000,easy_files=1000,hard_files=1000\"]",
    ];
    let mut args = vec!["study", "io500", "--scale", "small"];
    args.extend(["--out", out.to_str().unwrap()]);
    args.extend(["--workdir", wd.path().to_str().unwrap()]);
    args.extend(sets.iter().flat_map(|s| ["--set", *s]));
    let o = run(&args);
    assert!(o.status.success(), "{}", stderr(&o));
    let recs = records_of(&out);
    let tests: Vec<&str> = recs.iter().filter_map(|r| r["test"].as_str()).collect();
    let mut want: Vec<&str> = PHASES.iter().map(|p| p.0).collect();
    want.push("score");
    assert_eq!(tests, want, "records in io500's order, then the score");
    let mut values = Vec::new();
    for (r, (name, unit)) in recs.iter().zip(PHASES) {
        assert_eq!(r["outcome"], "ok", "{name}: {r}");
        let m = &r["metrics"];
        let v = m["io500_value"].as_f64().unwrap();
        let from = match unit {
            "GiB/s" => m["bytes_per_sec"].as_f64().unwrap() / 1073741824.0,
            _ => m["ops_per_sec"].as_f64().unwrap() / 1000.0,
        };
        assert!(
            v > 0.0 && (v - from).abs() <= 1e-9 * from,
            "{name}: {v} {from}"
        );
        assert_eq!(r["config"]["io500"]["unit"], unit, "{name}");
        values.push((name, v));
    }
    // find found mdtest-hard's files (file.mdtest.0.N, made after the timestamp) whose number
    // holds "01", and no other (mdtest-easy's are empty and older).
    let made = recs[3]["metrics"]["items"].as_f64().unwrap() as u64;
    let holds = (0..made).filter(|n| n.to_string().contains("01")).count();
    let find = &recs[4]["metrics"];
    assert_eq!(find["found"].as_f64().unwrap(), holds as f64, "{find}");
    assert!(find["items"].as_f64().unwrap() >= 2000.0, "{find}");
    // io500's score of the phases' own figures.
    let gm = |unit: &str| {
        let of: Vec<f64> = values
            .iter()
            .zip(PHASES)
            .filter(|(_, p)| p.1 == unit)
            .map(|((_, v), _)| v.ln())
            .collect();
        (of.iter().sum::<f64>() / of.len() as f64).exp()
    };
    let (bw, md) = (gm("GiB/s"), gm("kIOPS"));
    let s = &recs[12];
    let m = &s["metrics"];
    let close = |k: &str, want: f64| {
        let got = m[k].as_f64().unwrap();
        assert!(
            (got - want).abs() <= 1e-9 * want,
            "{k}: {got} against {want}"
        );
    };
    close("io500_bw", bw);
    close("io500_md", md);
    close("io500_score", (bw * md).sqrt());
    assert_eq!(s["config"]["io500"]["comparable"], false, "{s}");
    let notes = s["notes"].to_string();
    assert!(
        notes.contains("not comparable with the io500 list"),
        "{notes}"
    );
    // The report ranks by the score and says whose ranking it is.
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(text.contains("io500 score, targets ranked"), "{text}");
    assert!(
        text.contains("io500 measures one storage system at a time"),
        "{text}"
    );
    no_leftovers(wd.path());
}
