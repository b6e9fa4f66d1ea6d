//! Records which build a binary is: the git commit it was built from, when built from a clone
//! (`fsbench --version` and every study's manifest say it).

fn main() {
    let commit = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default();
    println!("cargo:rustc-env=FSBENCH_COMMIT={commit}");
    println!("cargo:rerun-if-changed=build.rs");
    for p in [".git/HEAD", ".git/refs/heads"] {
        if std::path::Path::new(p).exists() {
            println!("cargo:rerun-if-changed={p}");
        }
    }
}
