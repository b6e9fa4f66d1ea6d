//! Many ranks: fsbench started by an MPI launcher (`mpirun -np N`, Slurm's `srun`, the
//! Kubernetes MPI operator) runs the same plan on every rank at once. Rank 0 owns the study
//! directory and the manifest; every phase starts at a barrier and ends with rank 0 reducing
//! every rank's figures (`frame::share`). The transport is MPI (`mpi.rs`, the optional `mpi`
//! cargo feature over the system's OpenMPI); without it, one process is `frame::Local`, and a
//! launcher that started several ranks is refused (never N studies writing over each other).

#[cfg(feature = "mpi")]
mod collectives;
#[cfg(feature = "mpi")]
mod mpi;
mod nodes;

pub use nodes::Nodes;

use std::time::Duration;

use crate::frame::{Cluster, Local, RunError};

/// How a launcher started this process.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    pub rank: usize,
    pub size: usize,
    /// The variables that said so (for messages).
    pub by: &'static str,
}

/// The launcher's environment, if a launcher started this process: OpenMPI (`OMPI_COMM_WORLD_*`,
/// also under the Kubernetes MPI operator), MPICH and Slurm's PMI (`PMI_*`), Slurm's own step
/// variables (`SLURM_STEP_NUM_TASKS`/`SLURM_PROCID`, set per task by `srun`), MVAPICH.
pub fn launched_from(env: &dyn Fn(&str) -> Option<String>) -> Option<Launch> {
    let num = |k: &str| env(k).and_then(|v| v.trim().parse::<usize>().ok());
    for (size, rank, by) in [
        (
            "OMPI_COMM_WORLD_SIZE",
            "OMPI_COMM_WORLD_RANK",
            "OpenMPI (OMPI_COMM_WORLD_SIZE)",
        ),
        ("PMI_SIZE", "PMI_RANK", "PMI (PMI_SIZE)"),
        (
            "MV2_COMM_WORLD_SIZE",
            "MV2_COMM_WORLD_RANK",
            "MVAPICH (MV2_COMM_WORLD_SIZE)",
        ),
        (
            "SLURM_STEP_NUM_TASKS",
            "SLURM_PROCID",
            "Slurm (SLURM_STEP_NUM_TASKS)",
        ),
    ] {
        if let (Some(size), Some(rank)) = (num(size), num(rank)) {
            return Some(Launch { rank, size, by });
        }
    }
    None
}

/// The ranks on this node, when the launcher says (OpenMPI, MPICH's Hydra, MVAPICH).
pub fn per_node() -> Option<usize> {
    [
        "OMPI_COMM_WORLD_LOCAL_SIZE",
        "MPI_LOCALNRANKS",
        "MV2_COMM_WORLD_LOCAL_SIZE",
    ]
    .iter()
    .find_map(|k| std::env::var(k).ok()?.trim().parse().ok())
}

/// How the `per_node` ranks on this node share its CPUs: this process's CPUs against those
/// online (one process: 1, which always fits).
pub fn placement(per_node: usize) -> crate::frame::Placement {
    let online = crate::metrics::procfs::cpus();
    let allowed = crate::sys::host::affinity_cpus().unwrap_or(online);
    crate::frame::Placement::of(per_node, allowed, online)
}

pub fn launched() -> Option<Launch> {
    launched_from(&|k| std::env::var(k).ok())
}

/// What a binary without MPI says when a launcher started several ranks of it.
#[cfg(any(test, not(feature = "mpi")))]
pub fn refusal(l: &Launch) -> String {
    format!(
        "this fsbench was built without MPI, and the launcher started {} ranks ({}): each would run a study of its own over the others'. Build it with MPI (apt-get install libopenmpi-dev openmpi-bin; cargo build --release --features mpi), or start one rank (mpirun -np 1)",
        l.size, l.by
    )
}

/// The participants of a run: the frame's barrier and reduction, and what the coordinator needs
/// around them.
pub trait Team: Cluster {
    /// The frame's view of the team (its barrier and reduction).
    fn cluster(&self) -> &dyn Cluster;
    fn host(&self) -> &str;
    /// At start: every rank must run the same plan (`digest`: fsbench's version, the plan and the
    /// arguments). Rank 0's `offer` (the run id, the seed) comes back to every rank; a rank with
    /// another digest is named in the error, on every rank.
    fn agree(&self, digest: &str, offer: &str) -> Result<String, RunError>;
    /// Which node each rank is on (known once the ranks agreed: before, every rank on its own).
    fn nodes(&self) -> Nodes;
    /// Every rank's `text` (where the target it provisioned is, or why there is none; None from
    /// a rank with nothing to say), on every rank, in rank order.
    fn exchange(&self, what: &str, text: Option<String>) -> Result<Vec<Option<String>>, RunError>;
    /// The ranks are out of step (one is gone or did not answer): end every process of the run
    /// (MPI_Abort), so that none waits forever.
    fn abandon(&self, code: i32) -> !;
    /// What this rank does when it must end at once, in the middle of a phase (a worker waits
    /// in a collective for a rank that will not come): given the error, it records it and
    /// tears down what this process made. One process never ends so.
    fn last_word(&self, _word: LastWord) {}
}

/// A rank's last word (`Team::last_word`): called with the error on the coordinator's thread.
pub type LastWord = Box<dyn Fn(&str)>;

impl Team for Local {
    fn cluster(&self) -> &dyn Cluster {
        self
    }
    fn host(&self) -> &str {
        "local"
    }
    fn agree(&self, _digest: &str, offer: &str) -> Result<String, RunError> {
        Ok(offer.to_string())
    }
    fn nodes(&self) -> Nodes {
        Nodes::one(self.host())
    }
    fn exchange(&self, _what: &str, text: Option<String>) -> Result<Vec<Option<String>>, RunError> {
        Ok(vec![text])
    }
    fn abandon(&self, code: i32) -> ! {
        std::process::exit(code)
    }
}

/// Joins the run: one process (no launcher), or every rank the launcher started. `timeout`
/// bounds every wait for another rank.
pub fn join(timeout: Duration) -> Result<Box<dyn Team>, String> {
    match launched() {
        None => Ok(Box::new(Local)),
        Some(l) => start(l, timeout),
    }
}

#[cfg(feature = "mpi")]
fn start(_l: Launch, timeout: Duration) -> Result<Box<dyn Team>, String> {
    Ok(Box::new(mpi::Mpi::init(timeout)?))
}

#[cfg(not(feature = "mpi"))]
fn start(l: Launch, _timeout: Duration) -> Result<Box<dyn Team>, String> {
    if l.size > 1 {
        Err(refusal(&l))
    } else {
        Ok(Box::new(Local))
    }
}

/// A digest of what must be the same on every rank: fsbench's version and the plan as run.
pub fn digest(plan_json: &str, args: &[String]) -> String {
    use sha2::Digest;
    let mut h = sha2::Sha256::new();
    h.update(env!("CARGO_PKG_VERSION").as_bytes());
    h.update([0]);
    h.update(plan_json.as_bytes());
    for a in args {
        h.update([0]);
        h.update(a.as_bytes());
    }
    h.finalize()
        .iter()
        .take(12)
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of<'a>(pairs: &'a [(&'a str, &'a str)]) -> impl Fn(&str) -> Option<String> + 'a {
        move |k| {
            pairs
                .iter()
                .find(|(n, _)| *n == k)
                .map(|(_, v)| v.to_string())
        }
    }

    #[test]
    fn launchers_are_read_from_their_variables() {
        let l = launched_from(&env_of(&[
            ("OMPI_COMM_WORLD_SIZE", "4"),
            ("OMPI_COMM_WORLD_RANK", "2"),
        ]))
        .unwrap();
        assert_eq!((l.rank, l.size), (2, 4));
        let l = launched_from(&env_of(&[
            ("SLURM_STEP_NUM_TASKS", "16"),
            ("SLURM_PROCID", "15"),
        ]))
        .unwrap();
        assert_eq!((l.rank, l.size), (15, 16));
        // An sbatch script's own shell has SLURM_NTASKS but is not a task of a step.
        assert!(launched_from(&env_of(&[("SLURM_NTASKS", "4")])).is_none());
        assert!(launched_from(&env_of(&[])).is_none());
    }

    #[test]
    fn the_refusal_says_how_to_build_with_mpi() {
        let r = refusal(&Launch {
            rank: 0,
            size: 4,
            by: "OpenMPI (OMPI_COMM_WORLD_SIZE)",
        });
        assert!(r.contains("4 ranks") && r.contains("--features mpi"), "{r}");
    }

    #[test]
    fn the_digest_changes_with_the_plan_and_the_arguments() {
        let a = digest("{}", &["compare".into()]);
        assert_eq!(a, digest("{}", &["compare".into()]));
        assert_ne!(a, digest("{\"x\":1}", &["compare".into()]));
        assert_ne!(a, digest("{}", &["compare".into(), "-q".into()]));
    }
}
