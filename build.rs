//! Records which build a binary is: the git commit it was built from, when built from a clone
//! (`fsbench --version` and every study's manifest say it); with the `mpi` feature, compiles
//! src/sys/mpi.c against the system's MPI and links its library.

fn git(args: &[&str]) -> Option<String> {
    std::process::Command::new("git")
        .args(args)
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
}

/// The compiler's and linker's flags for the system's MPI: Open MPI's wrapper compiler tells them
/// (`mpicc --showme:compile`, `--showme:link`), MPICH's as a whole command line (`-compile_info`,
/// `-link_info`), else pkg-config. MPICC names another wrapper.
fn mpi_flags() -> Option<(Vec<String>, Vec<String>)> {
    let mpicc = std::env::var("MPICC").unwrap_or_else(|_| "mpicc".into());
    let words = |prog: &str, args: &[&str]| -> Option<Vec<String>> {
        let o = std::process::Command::new(prog).args(args).output().ok()?;
        let text = String::from_utf8_lossy(&o.stdout).to_string();
        (o.status.success() && !text.trim().is_empty())
            .then(|| text.split_whitespace().map(String::from).collect())
    };
    let wrapper = [
        (["--showme:compile"], ["--showme:link"]),
        (["-compile_info"], ["-link_info"]),
    ]
    .into_iter()
    .find_map(|(c, l)| Some((words(&mpicc, &c)?, words(&mpicc, &l)?)));
    wrapper.or_else(|| {
        ["ompi-c", "mpich", "mpi"].into_iter().find_map(|pkg| {
            Some((
                words("pkg-config", &["--cflags", pkg])?,
                words("pkg-config", &["--libs", pkg])?,
            ))
        })
    })
}

fn mpi() {
    println!("cargo:rerun-if-changed=src/sys/mpi.c");
    println!("cargo:rerun-if-env-changed=MPICC");
    let Some((compile, link)) = mpi_flags() else {
        panic!(
            "the mpi feature needs the system's MPI: mpicc or pkg-config's ompi-c or mpich \
             (Debian: apt-get install libopenmpi-dev)"
        );
    };
    let mut build = cc::Build::new();
    build.file("src/sys/mpi.c").warnings(true);
    for w in &compile {
        if let Some(dir) = w.strip_prefix("-I") {
            build.include(dir);
        } else if w.starts_with("-D") || w.starts_with("-pthread") {
            build.flag(w);
        }
    }
    build.compile("fsbmpi");
    for w in &link {
        if let Some(dir) = w.strip_prefix("-L") {
            println!("cargo:rustc-link-search=native={dir}");
        } else if let Some(lib) = w.strip_prefix("-l") {
            println!("cargo:rustc-link-lib={lib}");
        } else if w.starts_with("-Wl,") || w == "-pthread" {
            println!("cargo:rustc-link-arg={w}");
        }
    }
}

fn main() {
    if std::env::var_os("CARGO_FEATURE_MPI").is_some() {
        mpi();
    }
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
