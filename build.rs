//! Records which build a binary is: the git commit it was built from, when built from a clone
//! (`fsbench --version` and every study's manifest say it).

fn git(args: &[&str]) -> Option<String> {
    std::process::Command::new("git")
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

fn main() {
    let commit = git(&["rev-parse", "--short=12", "HEAD"]).unwrap_or_default();
    println!("cargo:rustc-env=FSBENCH_COMMIT={commit}");
    println!("cargo:rerun-if-changed=build.rs");
    // What moves HEAD, where git keeps it: this checkout's HEAD (a worktree has its own, and its
    // .git is a file), the branch's ref and the packed refs (both in the common directory).
    let branch = git(&["rev-parse", "--symbolic-full-name", "HEAD"]);
    for name in ["HEAD".to_string(), "packed-refs".to_string()]
        .into_iter()
        .chain(branch)
    {
        if let Some(p) = git(&["rev-parse", "--git-path", &name]) {
            if std::path::Path::new(&p).exists() {
                println!("cargo:rerun-if-changed={p}");
            }
        }
    }
}
