use super::*;

const MINIMAL: &str = r#"
targets = ["ext4", "xfs"]
workloads = ["cdm"]
"#;

fn parse_ok(text: &str) -> StudyFile {
    parse(text, "t.toml", None, &[]).unwrap().file
}

fn parse_err(text: &str) -> String {
    parse(text, "t.toml", None, &[]).unwrap_err().to_string()
}

#[test]
fn every_key_reads_as_compare_would_take_it() {
    let f = parse_ok(
        r#"
title = "T"
source = "S"
notes = "N"
targets = ["ext4:inodes=2000000", "xfs:maxpct=10"]
workloads = ["cdm", "files:count=1000"]
repeat = 3
size = "2G"
runtime = "2s"
file_size = "256M"
baseline = "xfs:maxpct=10"
seed = 42
fsbench_version = "0.1.0"
[[claim]]
says = "XFS writes faster"
quote = "q"
published = "2x"
target = "xfs:maxpct=10"
vs = "ext4:inodes=2000000"
workload = "files"
test = "write"
vs_test = "write"
metric = "files_per_sec"
expect = "> 1"
why = "w"
"#,
    );
    assert_eq!(f.title.as_deref(), Some("T"));
    assert_eq!(f.targets.len(), 2);
    assert_eq!(f.workloads, ["cdm", "files:count=1000"]);
    assert_eq!(f.repeat, Some(3));
    assert_eq!(f.size.as_deref(), Some("2G"));
    assert_eq!(f.runtime.as_deref(), Some("2s"));
    assert_eq!(f.file_size.as_deref(), Some("256M"));
    assert_eq!(f.baseline.as_deref(), Some("xfs:maxpct=10"));
    assert_eq!(f.seed, Some(42));
    assert_eq!(f.claims.len(), 1);
    assert_eq!(f.claims[0].expectation().unwrap(), Expect::Above(1.0));
    // Written back, it reads the same.
    assert_eq!(parse_ok(&to_toml(&f)), f);
}

#[test]
fn scales_and_sets_lie_over_the_top_level_keys() {
    let text = format!("{MINIMAL}repeat = 3\n[scale.small]\nrepeat = 1\nsize = \"1G\"\n[scale.full]\nsize = \"64G\"\n");
    let p = parse(&text, "t", None, &[]).unwrap();
    let (f, s) = (p.file, p.scale);
    assert_eq!(
        (f.repeat, f.size.as_deref(), s.as_deref()),
        (Some(1), Some("1G"), Some("small"))
    );
    let f = parse(&text, "t", Some("full"), &[]).unwrap().file;
    assert_eq!((f.repeat, f.size.as_deref()), (Some(3), Some("64G")));
    let sets = [
        parse_set("repeat=5").unwrap(),
        parse_set("targets=[\"btrfs\"]").unwrap(),
    ];
    let f = parse(&text, "t", None, &sets).unwrap().file;
    assert_eq!(
        (f.repeat, f.targets.clone()),
        (Some(5), vec!["btrfs".to_string()])
    );
    assert_eq!(
        parse_set("size=2G").unwrap().1,
        toml::Value::String("2G".into())
    );
    let e = parse(&text, "t", Some("huge"), &[])
        .unwrap_err()
        .to_string();
    assert!(e.contains("no [scale.huge]") && e.contains("small"), "{e}");
}

#[test]
fn every_error_names_the_input_and_the_fix() {
    let e = parse_err(&format!("{MINIMAL}colour = \"red\"\n"));
    assert!(
        e.contains("t.toml") && e.contains("colour") && e.contains("targets"),
        "{e}"
    );
    let e = parse_err("targets = [\"ext4\"\nworkloads = 3\n");
    assert!(e.contains("t.toml") && e.contains("line"), "{e}");
    assert!(parse_err("workloads = [\"cdm\"]\n").contains("no targets"));
    assert!(parse_err("targets = [\"ext4\"]\n").contains("no workloads"));
    let e = parse_err(&format!(
        "{MINIMAL}[[claim]]\nsays = \"s\"\ntarget = \"ext4\"\nmetric = \"iops\"\nexpect = \"bigger\"\n"
    ));
    assert!(e.contains("claim 1") && e.contains("< X"), "{e}");
    let e = parse_err(&format!(
        "{MINIMAL}[[claim]]\nsays = \"s\"\ntarget = \"ext4\"\nmetric = \"iops\"\nexpect = \"> 1\"\nunit = \"x\"\n"
    ));
    assert!(e.contains("unit"), "{e}");
    assert!(parse_set("colour=red")
        .unwrap_err()
        .to_string()
        .contains("valid keys"));
    let e = parse_err(&format!("{MINIMAL}[scale.small]\ncolour = 1\n"));
    assert!(e.contains("[scale.small]") && e.contains("colour"), "{e}");
}

#[test]
fn expectations_read_and_describe_themselves() {
    assert_eq!(Expect::parse("< 0.1").unwrap(), Expect::Below(0.1));
    assert_eq!(Expect::parse(">2").unwrap(), Expect::Above(2.0));
    assert_eq!(Expect::parse("0.5..2").unwrap(), Expect::Between(0.5, 2.0));
    assert!(Expect::parse("2..0.5").is_err());
    assert!(Expect::parse("> nan").is_err());
    assert_eq!(Expect::Between(0.5, 2.0).describe(), "0.5..2");
}

#[test]
fn the_shipped_studies_read() {
    assert_eq!(SHIPPED.len(), 6);
    for (name, text) in SHIPPED {
        for scale in [None, Some("small"), Some("full")] {
            let p =
                parse(text, name, scale, &[]).unwrap_or_else(|e| panic!("{name} {scale:?}: {e}"));
            let (f, s) = (p.file, p.scale);
            assert!(f.title.is_some() && f.source.is_some(), "{name}");
            // (io500 reproduces no publication: its figures are the io500's own phases.)
            let published = if *name == "io500" { 0 } else { 3 };
            assert!(
                f.claims.len() >= published,
                "{name}: {} claims",
                f.claims.len()
            );
            assert_eq!(s.as_deref(), Some(scale.unwrap_or("small")), "{name}");
        }
        assert!(!text.to_ascii_lowercase().contains("seed 0"), "{name}");
    }
}

#[test]
fn values_the_command_line_refuses_are_refused_with_their_line() {
    for (line, key) in [
        ("repeat = 0", "repeat"),
        ("repeat = 1000000000", "repeat"),
        ("repeat = -1", "repeat"),
        ("repeat = 99999999999", "repeat"),
        ("size = \"0\"", "size"),
        ("file_size = \"0k\"", "file_size"),
        ("runtime = \"0s\"", "runtime"),
        ("interval = \"1ms\"", "interval"),
        ("until_steady = \"faster\"", "until_steady"),
        ("seed = -3", "seed"),
        ("size = 4", "size"),
        ("targets = \"ext4\"", "targets"),
    ] {
        let e = parse_err(&format!(
            "workloads = [\"cdm\"]\n{line}\n{}",
            "targets = [\"ext4\"]\n".repeat(usize::from(key != "targets"))
        ));
        assert!(
            e.contains("t.toml: line 2:") && e.contains(&format!("{key} takes")),
            "{line}: {e}"
        );
    }
    let p = parse(MINIMAL, "t", None, &[]).unwrap();
    assert_eq!(p.values.repeat, 1);
    let p = parse(
        &format!("{MINIMAL}repeat = 1000\nsize = \"2G\"\nruntime = \"2s\"\ninterval = \"500ms\"\n"),
        "t",
        None,
        &[],
    )
    .unwrap();
    assert_eq!(
        (p.values.repeat, p.values.size, p.values.runtime),
        (1000, Some(2 << 30), Some(std::time::Duration::from_secs(2)))
    );
    // A scale's value and a --set say where they came from.
    let e = parse_err(&format!("{MINIMAL}[scale.small]\nsize = \"0\"\n"));
    assert!(e.contains("line 5 ([scale.small]): size takes"), "{e}");
    let e = parse(MINIMAL, "t", None, &[parse_set("repeat=0").unwrap()])
        .unwrap_err()
        .to_string();
    assert!(e.contains("--set: repeat takes"), "{e}");
}

#[test]
fn a_set_is_one_value_and_takes_the_kind_of_its_key() {
    let e = parse_set("repeat=2\ntargets=[\"x\"]")
        .unwrap_err()
        .to_string();
    assert!(e.contains("more than one line or key"), "{e}");
    assert!(parse_set("repeat=2\nrepeat=3").is_err());
    assert!(parse_set("notes=two\nlines").is_err());
    assert_eq!(
        parse_set("targets=[\n\"ext4\",\n\"xfs\"]").unwrap().1,
        toml::Value::Array(vec!["ext4".into(), "xfs".into()])
    );
    assert_eq!(
        parse_set("targets=ext4").unwrap().1,
        toml::Value::Array(vec!["ext4".into()])
    );
    assert_eq!(parse_set("size=1000").unwrap().1, "1000".into());
    assert_eq!(parse_set("title=2024").unwrap().1, "2024".into());
    assert_eq!(parse_set("repeat=5").unwrap().1, toml::Value::Integer(5));
}

#[test]
fn no_error_quotes_the_file() {
    for text in [
        "root:$6$SECRET$hash:19000:0:99999:7:::\ndaemon:*:1:0:2:7:::\n",
        "password = SECRET\n",
        "targets = [\"ext4\"]\nworkloads = [\"cdm\"]\nrepeat = \"SECRET\"\n",
        "targets = [\"ext4\"]\nworkloads = [\"cdm\"]\n\"SECRET key\" = 1\n",
        "targets = [\"ext4\"]\nworkloads = [\"cdm\"]\nSECRETKEY = 1\nSECRETKEY = 2\n",
        "targets = [\"ext4\"]\nworkloads = [\"cdm\"]\nsize = \"SECRET\"\n",
        "targets = [\"ext4\"]\nworkloads = [\"cdm\"]\n[[claim]]\nsays = \"s\"\ntarget = \"ext4\"\nmetric = \"iops\"\nexpect = \"SECRET\"\n",
        "targets = [\"ext4\"]\nworkloads = [\"cdm\"]\n[[claim]]\nsays = \"s\"\ntarget = \"ext4\"\nmetric = \"iops\"\nexpect = \"> 1\"\n\"SECRET x\" = \"y\"\n",
        "targets = [\"ext4\"]\nworkloads = [\"cdm\"]\n[scale.small]\n\"SECRET x\" = 1\n",
    ] {
        let e = parse_err(text);
        assert!(!e.contains("SECRET"), "{text}: {e}");
        assert!(e.contains("t.toml") && e.contains("line"), "{text}: {e}");
    }
}

#[test]
fn an_edited_study_file_names_its_changed_keys() {
    let f = parse_ok(&format!("{MINIMAL}repeat = 3\nsize = \"1G\"\n"));
    let text = to_toml(&f);
    assert_eq!(changed_keys(&f, &text, "s").unwrap(), Some(vec![]));
    // fsbench_version is informational.
    let newer = format!("{text}fsbench_version = \"9.9\"\n");
    assert_eq!(changed_keys(&f, &newer, "s").unwrap(), Some(vec![]));
    let edited = text.replace("repeat = 3", "repeat = 5") + "seed = 4\n";
    assert_eq!(
        changed_keys(&f, &edited, "s").unwrap(),
        Some(vec![
            ("key 'repeat'".to_string(), "3".to_string()),
            ("key 'seed'".to_string(), "(none)".to_string())
        ])
    );
    let e = changed_keys(&f, "root:SECRET", "s")
        .unwrap_err()
        .to_string();
    assert!(e.contains("line 1") && !e.contains("SECRET"), "{e}");
}
