use super::*;

const MINIMAL: &str = r#"
targets = ["ext4", "xfs"]
workloads = ["cdm"]
"#;

fn parse_ok(text: &str) -> StudyFile {
    parse(text, "t.toml", None, &[]).unwrap().0
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
    let (f, s) = parse(&text, "t", None, &[]).unwrap();
    assert_eq!(
        (f.repeat, f.size.as_deref(), s.as_deref()),
        (Some(1), Some("1G"), Some("small"))
    );
    let (f, _) = parse(&text, "t", Some("full"), &[]).unwrap();
    assert_eq!((f.repeat, f.size.as_deref()), (Some(3), Some("64G")));
    let sets = [
        parse_set("repeat=5").unwrap(),
        parse_set("targets=[\"btrfs\"]").unwrap(),
    ];
    let (f, _) = parse(&text, "t", None, &sets).unwrap();
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
    assert_eq!(SHIPPED.len(), 5);
    for (name, text) in SHIPPED {
        for scale in [None, Some("small"), Some("full")] {
            let (f, s) =
                parse(text, name, scale, &[]).unwrap_or_else(|e| panic!("{name} {scale:?}: {e}"));
            assert!(f.title.is_some() && f.source.is_some(), "{name}");
            assert!(f.claims.len() >= 3, "{name}: {} claims", f.claims.len());
            assert_eq!(s.as_deref(), Some(scale.unwrap_or("small")), "{name}");
        }
        assert!(!text.to_ascii_lowercase().contains("seed 0"), "{name}");
    }
}
