//! Install-like-a-tool (issue 31): a man page for every subcommand that mentions every option
//! clap knows, fsbench-targets(5) from the FILESYSTEMS table, completions that load in bash and
//! complete target specs, and a version that says which build it is.

use crate::common::*;

use clap::CommandFactory;
use std::path::Path;

#[test]
fn every_subcommand_has_a_man_page_that_names_every_option() {
    let t = tempfile::tempdir().unwrap();
    let o = run(&["man", t.path().to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let cmd = fsbench::cli::Cli::command();
    let read = |name: &str| {
        std::fs::read_to_string(t.path().join(name))
            .unwrap_or_else(|e| panic!("{name}: {e}"))
            .replace("\\-", "-")
    };
    let root = read("fsbench.1");
    assert!(root.contains("EXIT STATUS") && root.contains("fsbench-targets(5)"));
    for sub in cmd.get_subcommands().filter(|s| !s.is_hide_set()) {
        let name = sub.get_name();
        if name == "help" {
            continue;
        }
        let page = read(&format!("fsbench-{name}.1"));
        assert!(root.contains(name), "fsbench(1) does not list {name}");
        for arg in sub.get_arguments() {
            if let Some(long) = arg.get_long() {
                assert!(
                    page.contains(&format!("--{long}")),
                    "fsbench-{name}(1) does not mention --{long}"
                );
            }
        }
        assert!(page.contains("EXIT STATUS"), "fsbench-{name}(1)");
        // The examples of --help are in the page.
        if sub.get_after_help().is_some() {
            assert!(
                page.contains("Examples"),
                "fsbench-{name}(1) has no examples"
            );
        }
    }
    let targets = read("fsbench-targets.5");
    for d in fsbench::provision::FILESYSTEMS {
        assert!(targets.contains(d.schema.name), "{}", d.schema.name);
        for k in d.schema.keys {
            assert!(targets.contains(k.name), "{}:{}", d.schema.name, k.name);
        }
    }
    for w in fsbench::workload::WORKLOADS {
        assert!(targets.contains(w.name), "{}", w.name);
    }
    if have("man") {
        let (ok, text) = sh(&format!(
            "MANWIDTH=100 man -l {}/fsbench-compare.1",
            t.path().display()
        ));
        assert!(ok && text.contains("--workload"), "{text}");
    } else {
        eprintln!("SKIPPED: man not installed (rendering the page is not checked)");
    }
}

#[test]
fn completions_load_in_bash_and_complete_target_specs() {
    let o = run(&["completions", "bash"]);
    assert!(o.status.success(), "{}", stderr(&o));
    let script = stdout(&o);
    assert!(script.contains("ext4:inodes=") && script.contains("zfs:recordsize="));
    assert!(
        script.contains("hpc-battery"),
        "workloads and presets complete"
    );
    let t = tempfile::tempdir().unwrap();
    let p = t.path().join("fsbench.bash");
    std::fs::write(&p, &script).unwrap();
    let (ok, out) = sh(&format!(
        "bash -c 'source {} && complete -p fsbench'",
        p.display()
    ));
    assert!(ok && out.contains("fsbench"), "{out}");
    for shell in ["zsh", "fish"] {
        let o = run(&["completions", shell]);
        assert!(o.status.success() && !stdout(&o).is_empty(), "{shell}");
    }
    // The values feed completion only: --help lists none of them.
    let o = run(&["compare", "--help"]);
    assert!(!stdout(&o).contains("possible values"), "{}", stdout(&o));
}

#[test]
fn the_version_says_which_build() {
    let o = run(&["--version"]);
    let v = stdout(&o);
    assert!(
        v.starts_with(&format!("fsbench {}", env!("CARGO_PKG_VERSION"))),
        "{v}"
    );
    assert!(v.contains("commit ") && v.contains("features: "), "{v}");
}

#[test]
fn man_refuses_a_file_and_the_kernels_directories_and_writes_through_no_link() {
    let t = tempfile::tempdir().unwrap();
    let file = t.path().join("afile");
    std::fs::write(&file, "keep").unwrap();
    let o = run(&["man", file.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("not a directory"), "{}", stderr(&o));
    assert!(!stderr(&o).contains("File exists"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep");
    for dir in ["/proc", "/dev/fsbench-man-test", "/sys/fsbench-man-test"] {
        let o = run(&["man", dir]);
        assert_eq!(o.status.code(), Some(2), "{dir}: {}", stderr(&o));
        assert!(!Path::new(dir).join("fsbench.1").exists(), "{dir}");
    }
    assert!(!Path::new("/dev/fsbench-man-test").exists());
    // A page that is a link is refused, and what it points to is left as it was.
    let man = t.path().join("man");
    std::fs::create_dir(&man).unwrap();
    std::os::unix::fs::symlink(&file, man.join("fsbench.1")).unwrap();
    let o = run(&["man", man.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("symbolic link"), "{}", stderr(&o));
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "keep");
}

#[test]
fn man_on_a_full_filesystem_leaves_no_partial_page() {
    if skip(!is_root(), "mounting a small tmpfs needs root") {
        return;
    }
    let t = tempfile::tempdir().unwrap();
    let whole = t.path().join("whole");
    let o = run(&["man", whole.to_str().unwrap()]);
    assert!(o.status.success(), "{}", stderr(&o));
    let small = t.path().join("small");
    std::fs::create_dir(&small).unwrap();
    assert!(
        sh(&format!(
            "mount -t tmpfs -o size=40k tmpfs {}",
            small.display()
        ))
        .0
    );
    let o = run(&["man", small.join("man").to_str().unwrap()]);
    let listing: Vec<(String, Vec<u8>)> = std::fs::read_dir(small.join("man"))
        .map(|d| {
            d.flatten()
                .map(|e| {
                    (
                        e.file_name().to_string_lossy().into_owned(),
                        std::fs::read(e.path()).unwrap(),
                    )
                })
                .collect()
        })
        .unwrap_or_default();
    let _ = sh(&format!("umount {}", small.display()));
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("No space left"), "{}", stderr(&o));
    assert!(!listing.is_empty(), "no page fit: make the tmpfs larger");
    for (name, bytes) in listing {
        let full = std::fs::read(whole.join(&name)).unwrap_or_default();
        assert_eq!(
            bytes, full,
            "{name} is partial (or a temporary file was left)"
        );
    }
}
