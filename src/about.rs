//! What this binary is: its version, the git commit it was built from (when built from a
//! clone) and its cargo features. `fsbench --version` prints it; every manifest records it.

use std::sync::OnceLock;

/// The commit the build script read (`git rev-parse`), empty outside a clone.
const COMMIT: &str = env!("FSBENCH_COMMIT");

/// The cargo features that change what the binary can do.
pub fn features() -> Vec<&'static str> {
    let mut f = Vec::new();
    if cfg!(feature = "mpi") {
        f.push("mpi");
    }
    f
}

/// `0.1.0 (commit 1a2b3c4d5e6f, features: mpi)`.
pub fn version() -> &'static str {
    static V: OnceLock<String> = OnceLock::new();
    V.get_or_init(|| {
        let commit = match COMMIT {
            "" => "commit unknown".to_string(),
            c => format!("commit {c}"),
        };
        let features = features();
        format!(
            "{} ({commit}, features: {})",
            env!("CARGO_PKG_VERSION"),
            if features.is_empty() {
                "none".to_string()
            } else {
                features.join(", ")
            }
        )
    })
}
