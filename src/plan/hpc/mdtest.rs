//! mdtest's command line (mdtest 4, github.com/hpc/ior) as the `mdtest:` workload takes it: one
//! row per option of mdtest's own table, read into `MdPlan`, then checked and its tree worked
//! out as mdtest does (items per directory, the directories of a tree of depth -z and branching
//! -b, files only at the leaves with -L). mdtest is a reference for behaviour only.

use serde::{Deserialize, Serialize};

use super::Arg::{Flag, Value};
use super::{long, on, refused, set, short, Opt};
use crate::plan::PlanError;

/// What the test makes: mdtest runs its directory test, then its file test.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Items {
    Both,
    /// `-F`
    Files,
    /// `-D`
    Dirs,
}

/// A kind of phase an iteration runs (`-C`, `-T`, `-E`, `-r`, `-U`; none given: all of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    Create,
    Stat,
    Read,
    Remove,
    /// Directories renamed (`-U`).
    Rename,
}

/// How the summary shows the figures (`-P`: rates and times, `-Z`: times).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Print {
    Rate,
    Time,
    Both,
}

/// One mdtest run, as its command line says it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MdPlan {
    pub args: Vec<String>,
    /// `-n` as given (items per rank), and `-I` (items per directory).
    pub n: u64,
    pub per_dir_given: u64,
    /// `-z` depth and `-b` branching of each rank's (or the shared) tree.
    pub depth: u32,
    pub branch: u64,
    /// `-L`: items only in the leaf directories.
    pub leaf_only: bool,
    /// `-u`: a tree per rank; else one tree every rank works in.
    pub unique_dir: bool,
    pub items: Items,
    pub stages: Vec<Stage>,
    /// `-w` bytes written to each file when it is created, `-e` read from it.
    pub write_bytes: u64,
    pub read_bytes: u64,
    /// `-y`: fsync each file after its write; `-Y`: sync after each phase (timed).
    pub sync_file: bool,
    pub sync_phase: bool,
    /// `-N`: each phase works on the items of the rank this many ranks on.
    pub stride: u64,
    /// `-R`: stat and read in a random order (`--random-seed`).
    pub random: bool,
    pub random_seed: Option<i64>,
    pub iterations: u32,
    /// `-d`: the test's directory, relative to the target (mdtest's default ./out).
    pub dir: String,
    /// `-W`: seconds after which creating stops; every rank then goes on to as many items as
    /// the rank that made most.
    pub stonewall_s: u64,
    /// `-x`: the items a stonewalled create made, kept for later phases.
    pub status_file: Option<String>,
    /// `-t`: time the unique directory's overhead (fsbench's phases start at the start line
    /// either way).
    pub time_unique_dir: bool,
    pub print: Print,
    pub odirect: bool,
    pub seed: Option<i64>,
    pub verbose: u32,
    /// fsbench's own: drop the page cache before each stat and read phase (mdtest does not).
    pub drop_caches: bool,
    /// Worked out from the above: the directories of a tree, items per directory, items per
    /// rank.
    pub tree_dirs: u64,
    pub per_dir: u64,
    pub per_rank: u64,
}

impl Default for MdPlan {
    fn default() -> MdPlan {
        MdPlan {
            args: Vec::new(),
            n: 0,
            per_dir_given: 0,
            depth: 0,
            branch: 1,
            leaf_only: false,
            unique_dir: false,
            items: Items::Both,
            stages: Vec::new(),
            write_bytes: 0,
            read_bytes: 0,
            sync_file: false,
            sync_phase: false,
            stride: 0,
            random: false,
            random_seed: None,
            iterations: 1,
            dir: "out".into(),
            stonewall_s: 0,
            status_file: None,
            time_unique_dir: false,
            print: Print::Rate,
            odirect: false,
            seed: None,
            verbose: 0,
            drop_caches: false,
            tree_dirs: 1,
            per_dir: 0,
            per_rank: 0,
        }
    }
}

/// Every mdtest option fsbench knows, a row each: what it sets, or why it is refused.
#[rustfmt::skip]
pub static OPTIONS: &[Opt<MdPlan>] = &[
    short('a', Value, "API for I/O: POSIX", |_, g| {
        let api = g.text()?;
        match api.eq_ignore_ascii_case("posix") {
            true => Ok(()),
            false => Err(format!("-a {api}: fsbench runs mdtest's POSIX interface only (-a POSIX)")),
        }
    }),
    short('b', Value, "branching factor of the tree", |p, g| set(&mut p.branch, g.number()?)),
    short('C', Flag, "only create files/dirs", |p, g| p.stage(Stage::Create, on(g)?)),
    short('d', Value, "the test's directory, relative to the target (default out)", |p, g| {
        let d = g.text()?;
        if d.contains('@') {
            return Err(format!("-d {d}: fsbench runs each rank in one directory (no @ list)"));
        }
        set(&mut p.dir, super::inside("-d", &d)?)
    }),
    short('D', Flag, "directories only (no files)", |p, g| set(&mut p.items, if on(g)? { Items::Dirs } else { Items::Both })),
    short('e', Value, "bytes to read from each file", |p, g| set(&mut p.read_bytes, g.bytes()?)),
    short('E', Flag, "only read files/dirs", |p, g| p.stage(Stage::Read, on(g)?)),
    short('F', Flag, "files only (no directories)", |p, g| set(&mut p.items, if on(g)? { Items::Files } else { Items::Both })),
    short('G', Value, "seed of the data written", |p, g| set(&mut p.seed, Some(g.signed()?))),
    short('i', Value, "iterations", |p, g| set(&mut p.iterations, g.number()?.min(u32::MAX as u64) as u32)),
    short('I', Value, "items per directory of the tree", |p, g| set(&mut p.per_dir_given, g.number()?)),
    short('L', Flag, "files only at the leaves of the tree", |p, g| set(&mut p.leaf_only, on(g)?)),
    short('n', Value, "items (files and directories) per rank", |p, g| set(&mut p.n, g.number()?)),
    short('N', Value, "stride between the rank that makes an item and the one that stats, reads, removes it", |p, g| set(&mut p.stride, g.number()?)),
    short('P', Flag, "print rates and times", |p, _| set(&mut p.print, Print::Both)),
    short('r', Flag, "only remove files or directories", |p, g| p.stage(Stage::Remove, on(g)?)),
    short('R', Flag, "stat and read in a random order", |p, g| set(&mut p.random, on(g)?)),
    short('t', Flag, "time the unique directory's overhead", |p, g| set(&mut p.time_unique_dir, on(g)?)),
    short('T', Flag, "only stat files/dirs", |p, g| p.stage(Stage::Stat, on(g)?)),
    short('u', Flag, "a directory tree per rank", |p, g| set(&mut p.unique_dir, on(g)?)),
    short('U', Flag, "rename directories (a phase of its own)", |p, g| p.stage(Stage::Rename, on(g)?)),
    short('v', Flag, "verbosity (fsbench's records are the same)", |p, g| {
        let v = g.count(p.verbose)?;
        set(&mut p.verbose, v)
    }),
    short('V', Value, "verbosity value", |p, g| set(&mut p.verbose, g.number()? as u32)),
    short('w', Value, "bytes written to each file when it is created", |p, g| set(&mut p.write_bytes, g.bytes()?)),
    short('W', Value, "stonewall: seconds after which creating stops; every rank goes on to the most items any made", |p, g| set(&mut p.stonewall_s, g.number()?)),
    short('x', Value, "stonewall status file: the items a stonewalled create made, for later phases (relative to the target)", |p, g| set(&mut p.status_file, Some(super::inside("-x", &g.text()?)?))),
    short('y', Flag, "fsync each file after its write", |p, g| set(&mut p.sync_file, on(g)?)),
    short('Y', Flag, "sync after each phase (in its time)", |p, g| set(&mut p.sync_phase, on(g)?)),
    short('z', Value, "depth of the tree", |p, g| set(&mut p.depth, g.number()?.min(64) as u32)),
    short('Z', Flag, "print times instead of rates", |p, _| set(&mut p.print, Print::Time)),
    long("random-seed", Value, "the seed of -R's order", |p, g| set(&mut p.random_seed, Some(g.signed()?))),
    long("posix.odirect", Flag, "O_DIRECT on files", |p, g| set(&mut p.odirect, on(g)?)),
    long("drop-caches", Flag, "fsbench's own: drop the page cache before each stat and read phase (mdtest does not; said in the record)", |p, g| set(&mut p.drop_caches, on(g)?)),
    refused(Some('B'), None, "no barriers between phases", Flag, "fsbench's phases start together"),
    refused(Some('c'), None, "collective creates", Flag, "fsbench does not implement rank 0 creating for all"),
    refused(Some('f'), None, "first number of tasks", Value, "start as many ranks as you want measured (mpirun -np N)"),
    refused(Some('l'), None, "last number of tasks", Value, "start as many ranks as you want measured (mpirun -np N)"),
    refused(Some('s'), None, "stride between task counts", Value, "start as many ranks as you want measured (mpirun -np N)"),
    refused(Some('k'), None, "mknod", Flag, "fsbench creates files with open"),
    refused(Some('p'), None, "pre-iteration delay", Value, "fsbench does not implement it"),
    refused(Some('S'), None, "shared file access", Flag, "fsbench does not implement mdtest's shared file"),
    refused(Some('X'), Some("verify-read"), "verify the data read", Flag, "fsbench does not implement it"),
    refused(None, Some("verify-write"), "verify after a write", Flag, "fsbench does not implement it"),
    refused(Some('g'), None, "Lustre layout", Flag, "fsbench does not implement it"),
    refused(None, Some("dataPacketType"), "data packet type", Value, "fsbench writes incompressible data"),
    refused(None, Some("print-all-procs"), "every rank prints", Flag, "the record's ranks hold every rank's figures"),
    refused(None, Some("run-cmd-before-phase"), "a command before each phase", Value, "fsbench runs no command between phases"),
    refused(None, Some("run-cmd-after-phase"), "a command after each phase", Value, "fsbench runs no command between phases"),
    refused(None, Some("warningAsErrors"), "warnings are errors", Flag, "fsbench fails a phase on any failed call already"),
    refused(None, Some("saveRankPerformanceDetails"), "per-rank CSV", Value, "the record's ranks hold every rank's figures"),
    refused(None, Some("savePerOpDataCSV"), "per-operation CSV", Value, "the record's histograms hold every operation's latency"),
    refused(None, Some("showRankStatistics"), "per-rank statistics", Flag, "the record's ranks hold every rank's figures"),
];

impl MdPlan {
    /// Reads mdtest's command line, checks it as mdtest does, and works out its tree.
    pub fn parse(text: &str) -> Result<MdPlan, PlanError> {
        let args = super::words(text).map_err(|e| PlanError(format!("mdtest: {e}")))?;
        let mut p = MdPlan {
            args: args.clone(),
            ..MdPlan::default()
        };
        super::parse("mdtest", &args, OPTIONS, &mut p)?;
        if p.stages.is_empty() {
            p.stages = vec![
                Stage::Create,
                Stage::Stat,
                Stage::Read,
                Stage::Remove,
                Stage::Rename,
            ];
        }
        p.check().map_err(|e| PlanError(format!("mdtest: {e}")))?;
        p.shape();
        Ok(p)
    }

    fn check(&self) -> Result<(), String> {
        if self.iterations == 0 {
            return Err("-i 0: give at least one iteration".into());
        }
        if self.stonewall_s > 0 && self.branch > 1 {
            return Err(format!(
                "-W works with a branching factor of 1 only (-b {}), as in mdtest",
                self.branch
            ));
        }
        if self.depth > 0 && self.branch == 0 {
            return Err("-b 0 with -z: give a branching factor of 1 or more".into());
        }
        if self.n > 0 && self.per_dir_given > 0 {
            return Err("give -n (items per rank) or -I (items per directory), not both (fsbench does not implement mdtest's directory loops)".into());
        }
        if self.runs(Stage::Create) && self.runs(Stage::Read) && self.read_bytes > self.write_bytes
        {
            return Err(format!(
                "-e {} reads more than -w {} writes",
                self.read_bytes, self.write_bytes
            ));
        }
        if self.odirect && (self.write_bytes % 512 != 0 || self.read_bytes % 512 != 0) {
            return Err(
                "--posix.odirect needs -w and -e in whole sectors (multiples of 512)".into(),
            );
        }
        Ok(())
    }

    /// The most files and directories one rank's test holds at once: its tree and, since the
    /// directories' phases end by removing them before the files are made, its directories or
    /// its files (both when nothing is removed); bytes, its files' `-w` in whole blocks.
    pub fn peak(&self) -> (u64, u64) {
        let removes = self.runs(Stage::Remove);
        let (dirs, files) = match self.items {
            Items::Both => (self.per_rank, self.per_rank),
            Items::Files => (0, self.per_rank),
            Items::Dirs => (self.per_rank, 0),
        };
        let items = match removes {
            true => dirs.max(files),
            false => dirs.saturating_add(files),
        };
        // The test directory and the directory above the tree, besides the tree.
        let inodes = self.tree_dirs.saturating_add(2).saturating_add(items);
        // Each file's -w in whole 4 KiB blocks.
        let each = self.write_bytes.div_ceil(4096).saturating_mul(4096);
        (inodes, files.saturating_mul(each))
    }

    /// mdtest's tree: its directories, items per directory and items per rank.
    fn shape(&mut self) {
        let (b, z) = (self.branch.max(1), self.depth);
        let pow = |e: u32| b.saturating_pow(e);
        self.tree_dirs = match (z, b) {
            (0, _) => 1,
            (_, 1) => z as u64 + 1,
            _ => (pow(z + 1) - 1) / (b - 1),
        };
        let leaves = pow(z);
        if self.per_dir_given > 0 {
            self.per_dir = self.per_dir_given;
            self.per_rank = match self.leaf_only {
                true => self.per_dir * leaves,
                false => self.per_dir * self.tree_dirs,
            };
        } else if self.leaf_only {
            self.per_dir = self.n / leaves;
            self.per_rank = self.per_dir * leaves;
        } else {
            self.per_dir = self.n / self.tree_dirs;
            self.per_rank = self.per_dir * self.tree_dirs;
        }
    }

    /// Whether an iteration runs phases of kind `s`.
    pub fn runs(&self, s: Stage) -> bool {
        self.stages.contains(&s)
    }

    /// Adds or takes out a kind of phase.
    fn stage(&mut self, s: Stage, on: bool) -> Result<(), String> {
        self.stages.retain(|x| *x != s);
        if on {
            self.stages.push(s);
            self.stages.sort();
        }
        Ok(())
    }

    /// Whether the directory test runs (mdtest's -D or neither -F nor -D).
    pub fn dirs(&self) -> bool {
        self.items != Items::Files
    }

    pub fn files(&self) -> bool {
        self.items != Items::Dirs
    }

    /// The first directory (by mdtest's numbering: the root 0, the children of k b*k+1..b*k+b)
    /// that holds items.
    pub fn first_item_dir(&self) -> u64 {
        match self.leaf_only {
            true => self.tree_dirs - self.branch.max(1).saturating_pow(self.depth),
            false => 0,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_spelling_and_the_tree_read_as_mdtest_does() {
        let p = MdPlan::parse("-n 2000 -u -w 4096 -e 4096").unwrap();
        assert!(p.unique_dir && p.runs(Stage::Create) && p.runs(Stage::Rename));
        assert_eq!((p.per_rank, p.per_dir, p.tree_dirs), (2000, 2000, 1));
        assert_eq!((p.write_bytes, p.read_bytes), (4096, 4096));
        // A tree of depth 2, branching 3: 1 + 3 + 9 directories; items spread over all of them,
        // rounded down to whole directories; with -L only over the 9 leaves.
        let p = MdPlan::parse("-n 1000 -z 2 -b 3 -F -C").unwrap();
        assert_eq!((p.tree_dirs, p.per_dir, p.per_rank), (13, 76, 988));
        assert!(p.runs(Stage::Create) && !p.runs(Stage::Stat) && p.items == Items::Files);
        let p = MdPlan::parse("-n 1000 -z 2 -b 3 -L").unwrap();
        assert_eq!((p.per_dir, p.per_rank, p.first_item_dir()), (111, 999, 4));
        let p = MdPlan::parse("-I 10 -z 1 -b 2").unwrap();
        assert_eq!((p.per_dir, p.per_rank), (10, 30));
    }

    #[test]
    fn the_most_a_test_holds_at_once_counts_removes_between_dirs_and_files() {
        // Directories removed before the files are made: the larger of the two.
        let p = MdPlan::parse("-n 2000 -u -w 4096").unwrap();
        assert_eq!(p.peak(), (1 + 2 + 2000, 2000 * 4096));
        // Nothing removed: both stay.
        let p = MdPlan::parse("-n 100 -C -w 10").unwrap();
        assert_eq!(p.peak(), (1 + 2 + 200, 100 * 4096));
        let p = MdPlan::parse("-n 1000 -z 2 -b 3 -F -C").unwrap();
        assert_eq!(p.peak(), (13 + 2 + 988, 0));
        let p = MdPlan::parse("-n 50 -D -C").unwrap();
        assert_eq!(p.peak(), (1 + 2 + 50, 0));
    }

    #[test]
    fn what_fsbench_does_not_do_is_refused_by_name() {
        for (args, says) in [
            ("-n 10 -S", "-S (shared file access) is refused"),
            ("-n 10 -X -E", "-X (verify the data read) is refused"),
            ("-n 10 -W 5 -b 2", "branching factor of 1"),
            ("-n 10 -I 5", "not both"),
            ("-n 10 -w 10 -e 20", "reads more than"),
            ("-n 10 -d a@b", "no @ list"),
            ("-n 10 -d /tmp/x", "relative to the target"),
            ("-n 10 -q", "'-q' is not an option"),
        ] {
            let e = MdPlan::parse(args).unwrap_err().0;
            assert!(e.contains(says), "{args}: {e}");
        }
    }
}
