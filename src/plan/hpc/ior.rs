//! IOR's command line (IOR 4, github.com/hpc/ior) as the `ior:` workload takes it: one row per
//! option of IOR's own table (its letters, its `-O` directive names), read into `IorPlan`, then
//! checked as IOR checks a test (its ValidateTests). IOR is a reference for behaviour only.

use serde::{Deserialize, Serialize};

use super::Arg::{Flag, Value};
use super::{directive, long, named, on, refused, set, short, Opt};
use crate::plan::PlanError;

/// How the ranks share files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Access {
    /// One shared file: rank r's block of segment s at (s * ranks + r) * block (IOR's N-1).
    SharedFile,
    /// A file per rank (`-F`): `NAME.00000000`, ... (N-N).
    FilePerProcess,
}

/// The order of the transfers within a block.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Order {
    Sequential,
    /// `-z`: every transfer of the block once, shuffled (in a shared file, the segment's
    /// transfers dealt out to the ranks at random).
    Shuffled,
}

/// An access of an iteration (each iteration writes, then reads, as IOR).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Way {
    Write,
    Read,
}

/// One IOR test, as its command line says it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct IorPlan {
    /// The words as given.
    pub args: Vec<String>,
    pub api: String,
    /// `--posix.odirect`: O_DIRECT.
    pub odirect: bool,
    /// `-w`, `-r` (neither: both, as IOR), in IOR's order.
    pub ways: Vec<Way>,
    /// `-R`: every transfer read is checked against what was written.
    pub check_read: bool,
    pub access: Access,
    pub block: u64,
    pub transfer: u64,
    pub segments: u64,
    pub iterations: u32,
    /// `-e`: fsync before close, after the transfers of a write.
    pub fsync: bool,
    /// `-Y`: fsync after every write.
    pub fsync_per_write: bool,
    /// `-C`: each rank reads the data of the rank `task_offset` nodes on (`-Q`, 1 by default).
    pub reorder: bool,
    pub task_offset: u64,
    pub order: Order,
    /// `--random-offset-seed`.
    pub random_seed: Option<i64>,
    /// `-D`: a phase stops issuing after this many seconds.
    pub deadline_s: u64,
    /// `-O stoneWallingWearOut=1`: after the deadline, every rank goes on to as many transfers
    /// as the rank that did most.
    pub wear_out: bool,
    /// `-O stoneWallingWearOutIterations=N`: every rank does N transfers.
    pub wear_out_iterations: u64,
    /// `-O stoneWallingStatusFile=F`: a write's transfer count is kept in F for a later read.
    pub status_file: Option<String>,
    /// `-o`: the test file, relative to the target's directory.
    pub test_file: String,
    /// `-k`: the files stay after the test.
    pub keep: bool,
    /// `-E`: a write overwrites the file there (not removed first).
    pub use_existing: bool,
    /// `-u`: a directory per rank (file per process).
    pub unique_dir: bool,
    /// `-m`: a file of its own per iteration (`.N` appended).
    pub multi_file: bool,
    /// `-d`: seconds of delay before each write and read.
    pub inter_test_delay: u64,
    /// `-g`: barriers between the open, the transfers and the close.
    pub barriers: bool,
    /// `-G`: the data's seed.
    pub seed: Option<i64>,
    pub verbose: u32,
    /// `-A`: the user's reference number, printed in the summary.
    pub ref_num: i64,
    /// fsbench's own: drop the page cache before each read phase (IOR never does).
    pub drop_caches: bool,
}

impl Default for IorPlan {
    fn default() -> IorPlan {
        IorPlan {
            args: Vec::new(),
            api: "POSIX".into(),
            odirect: false,
            ways: Vec::new(),
            check_read: false,
            access: Access::SharedFile,
            block: 1 << 20,
            transfer: 256 << 10,
            segments: 1,
            iterations: 1,
            fsync: false,
            fsync_per_write: false,
            reorder: false,
            task_offset: 1,
            order: Order::Sequential,
            random_seed: None,
            deadline_s: 0,
            wear_out: false,
            wear_out_iterations: 0,
            status_file: None,
            test_file: "testFile".into(),
            keep: false,
            use_existing: false,
            unique_dir: false,
            multi_file: false,
            inter_test_delay: 0,
            barriers: false,
            seed: None,
            verbose: 0,
            ref_num: 0,
            drop_caches: false,
        }
    }
}

/// Every IOR option fsbench knows, a row each: what it sets, or why it is refused.
#[rustfmt::skip]
pub static OPTIONS: &[Opt<IorPlan>] = &[
    named('a', "api", Value, "API for I/O: POSIX", |p, g| {
        let api = g.text()?;
        match api.eq_ignore_ascii_case("posix") {
            true => set(&mut p.api, "POSIX".into()),
            false => Err(format!("-a {api}: fsbench runs IOR's POSIX interface only (-a POSIX)")),
        }
    }),
    named('A', "refnum", Value, "refNum: a reference number printed in the summary", |p, g| set(&mut p.ref_num, g.signed()?)),
    named('b', "blockSize", Value, "blockSize: contiguous bytes per rank and segment (e.g. 256m)", |p, g| set(&mut p.block, g.bytes()?)),
    named('C', "reorderTasks", Flag, "reorderTasks: read another node's data (by -Q nodes)", |p, g| set(&mut p.reorder, on(g)?)),
    named('d', "interTestDelay", Value, "interTestDelay: seconds of delay before each write and read", |p, g| set(&mut p.inter_test_delay, g.number()?)),
    named('D', "deadlineForStonewalling", Value, "deadlineForStonewalling: seconds before a phase stops issuing", |p, g| set(&mut p.deadline_s, g.number()?)),
    named('e', "fsync", Flag, "fsync: fsync at the end of a write, before close", |p, g| set(&mut p.fsync, on(g)?)),
    named('E', "useExistingTestFile", Flag, "useExistingTestFile: a write does not remove the file first", |p, g| set(&mut p.use_existing, on(g)?)),
    named('F', "filePerProc", Flag, "filePerProc: a file per rank", |p, g| {
        set(&mut p.access, if on(g)? { Access::FilePerProcess } else { Access::SharedFile })
    }),
    named('g', "intraTestBarriers", Flag, "intraTestBarriers: barriers between open, transfers and close", |p, g| set(&mut p.barriers, on(g)?)),
    named('G', "setTimeStampSignature", Value, "setTimeStampSignature: the data's seed", |p, g| set(&mut p.seed, Some(g.signed()?))),
    named('i', "repetitions", Value, "repetitions: iterations of the test", |p, g| set(&mut p.iterations, g.number()?.min(u32::MAX as u64) as u32)),
    named('k', "keepFile", Flag, "keepFile: the files stay after the test", |p, g| set(&mut p.keep, on(g)?)),
    named('m', "multiFile", Flag, "multiFile: a file of its own per iteration", |p, g| set(&mut p.multi_file, on(g)?)),
    named('o', "testFile", Value, "testFile: the test file's name, relative to the target (default testFile)", |p, g| set(&mut p.test_file, super::inside("-o", &g.text()?)?)),
    short('O', Value, "IOR directives: -O name=value[,name=value], the names below", |_, _| Ok(())),
    named('Q', "taskPerNodeOffset", Value, "taskPerNodeOffset: nodes between a writer and its reader (-C)", |p, g| set(&mut p.task_offset, g.number()?)),
    named('r', "readFile", Flag, "readFile: read the file(s)", |p, g| p.way(Way::Read, on(g)?)),
    named('R', "checkRead", Flag, "checkRead: check every transfer read against what was written", |p, g| set(&mut p.check_read, on(g)?)),
    named('s', "segmentCount", Value, "segmentCount: segments (each a block per rank)", |p, g| set(&mut p.segments, g.number()?)),
    named('t', "transferSize", Value, "transferSize: bytes per write or read call (e.g. 4m)", |p, g| set(&mut p.transfer, g.bytes()?)),
    named('u', "uniqueDir", Flag, "uniqueDir: a directory per rank (with -F)", |p, g| set(&mut p.unique_dir, on(g)?)),
    named('v', "verbose", Flag, "verbose: more output (fsbench's records are the same)", |p, g| {
        let v = g.count(p.verbose)?;
        set(&mut p.verbose, v)
    }),
    named('w', "writeFile", Flag, "writeFile: write the file(s)", |p, g| p.way(Way::Write, on(g)?)),
    named('x', "singleXferAttempt", Flag, "singleXferAttempt: a short transfer fails at once (fsbench never retries one)", |_, g| g.count(0).map(|_| ())),
    named('Y', "fsyncPerWrite", Flag, "fsyncPerWrite: fsync after every write", |p, g| set(&mut p.fsync_per_write, on(g)?)),
    named('z', "randomOffset", Flag, "randomOffset: every transfer of a block once, in shuffled order", |p, g| {
        p.order = match g.count((p.order == Order::Shuffled) as u32)? {
            0 => Order::Sequential,
            1 => Order::Shuffled,
            _ => return Err("-z given twice (random offsets that may overlap): fsbench does not implement it; give -z once".into()),
        };
        Ok(())
    }),
    long("posix.odirect", Flag, "O_DIRECT: bypass the page cache", |p, g| set(&mut p.odirect, on(g)?)),
    long("random-offset-seed", Value, "the seed of -z's order", |p, g| set(&mut p.random_seed, Some(g.signed()?))),
    long("drop-caches", Flag, "fsbench's own: drop the page cache before each read (IOR does not; said in the record)", |p, g| set(&mut p.drop_caches, on(g)?)),
    directive("stoneWallingWearOut", "after -D's deadline every rank goes on to the most transfers any rank did", |p, g| set(&mut p.wear_out, g.number()? > 0)),
    directive("stoneWallingWearOutIterations", "every rank does this many transfers (reading back a stonewalled write)", |p, g| set(&mut p.wear_out_iterations, g.number()?)),
    directive("stoneWallingStatusFile", "a stonewalled write's transfer count, kept for a later read (relative to the target)", |p, g| {
        set(&mut p.status_file, Some(super::inside("stoneWallingStatusFile", &g.text()?)?))
    }),
    refused(Some('c'), Some("collective"), "collective I/O", Flag, "it is MPI-IO's, and fsbench runs IOR's POSIX interface only"),
    refused(Some('f'), None, "scriptFile", Value, "give one test's options on the command line"),
    refused(Some('j'), None, "outlierThreshold", Value, "fsbench keeps every rank's figures in the record's ranks instead"),
    refused(Some('K'), None, "keepFileWithError", Flag, "fsbench does not implement IOR's write check"),
    refused(Some('l'), Some("dataPacketType"), "dataPacketType", Value, "fsbench writes incompressible data, each 4 KiB stamped with its offset"),
    refused(Some('M'), None, "memoryPerNode", Value, "fsbench does not hog memory"),
    refused(Some('N'), None, "numTasks", Value, "every rank the launcher started takes part: start as many as you want (mpirun -np N)"),
    refused(Some('T'), None, "maxTimeDuration", Value, "use -D (a deadline per phase) or fewer iterations"),
    refused(Some('W'), None, "checkWrite", Flag, "fsbench does not implement IOR's read-back after a write; check the data with -r -R"),
    refused(Some('X'), None, "reorderTasksRandomSeed", Value, "fsbench does not implement random reordering (-Z)"),
    refused(Some('y'), None, "dualMount", Flag, "each fsbench target is one mount"),
    refused(Some('Z'), None, "reorderTasksRandom", Flag, "fsbench does not implement random reordering; use -C"),
    refused(None, Some("randomPrefill"), "randomPrefill", Value, "fsbench does not implement it"),
    refused(None, Some("dryRun"), "dryRun", Flag, "use fsbench's --check"),
    refused(None, Some("warningAsErrors"), "warningAsErrors", Flag, "fsbench fails a phase on any failed call already"),
    refused(None, Some("posix.rangelocks"), "range locks", Flag, "fsbench does not implement them"),
];

impl IorPlan {
    /// Reads IOR's command line and checks it as IOR checks a test.
    pub fn parse(text: &str) -> Result<IorPlan, PlanError> {
        let args = super::words(text).map_err(|e| PlanError(format!("ior: {e}")))?;
        let mut p = IorPlan {
            args: args.clone(),
            ..IorPlan::default()
        };
        super::parse("ior", &args, OPTIONS, &mut p)?;
        if p.check_read {
            p.way(Way::Read, true)?;
        }
        if p.ways.is_empty() {
            p.ways = vec![Way::Write, Way::Read];
        }
        p.check().map_err(|e| PlanError(format!("ior: {e}")))?;
        Ok(p)
    }

    fn check(&self) -> Result<(), String> {
        let (b, t) = (self.block, self.transfer);
        let no = |why: &str| Err(why.to_string());
        if self.iterations == 0 {
            return no("-i 0: give at least one repetition");
        }
        if t == 0 {
            return no("-t 0: the test cannot complete with no transfer size");
        }
        if b % 8 != 0 || t % 8 != 0 {
            return no("-b and -t must be multiples of 8 bytes (IOR's access size)");
        }
        if b < t || b % t != 0 {
            return Err(format!("-b {b} must be a multiple of -t {t}"));
        }
        if self.segments == 0 {
            return no("-s 0: give at least one segment");
        }
        if self.order == Order::Shuffled && b == t {
            return no("-z shuffles the transfers of a block: give -b larger than -t");
        }
        if self.order == Order::Shuffled && self.reorder && self.access == Access::SharedFile {
            return no("-z with -C on a shared file: choose one (IOR refuses both)");
        }
        if self.odirect && t % 512 != 0 {
            return Err(format!(
                "--posix.odirect needs transfers in whole sectors: -t {t} is not a multiple of 512"
            ));
        }
        if self.status_file.is_some() && !self.keep {
            return no(
                "-O stoneWallingStatusFile needs -k (it carries a write's count to a later read)",
            );
        }
        if self.status_file.is_some() && self.does(Way::Write) && !self.wear_out {
            return no("-O stoneWallingStatusFile with a write needs -O stoneWallingWearOut=1");
        }
        if self.wear_out && self.deadline_s == 0 {
            return no("-O stoneWallingWearOut needs a deadline (-D)");
        }
        if self.unique_dir && self.access == Access::SharedFile {
            return no("-u (a directory per rank) needs -F (a file per rank)");
        }
        Ok(())
    }

    /// Whether each iteration makes access `w`.
    pub fn does(&self, w: Way) -> bool {
        self.ways.contains(&w)
    }

    /// Adds or takes out an access (kept in IOR's order).
    fn way(&mut self, w: Way, on: bool) -> Result<(), String> {
        self.ways.retain(|x| *x != w);
        if on {
            self.ways.push(w);
            self.ways.sort();
        }
        Ok(())
    }

    /// Bytes of the file (or of each rank's file) of one iteration.
    pub fn file_bytes(&self, ranks: usize) -> u64 {
        let per_rank = self.block.saturating_mul(self.segments);
        match self.access {
            Access::FilePerProcess => per_rank,
            Access::SharedFile => per_rank.saturating_mul(ranks as u64),
        }
    }

    /// Transfers per rank and block.
    pub fn per_block(&self) -> u64 {
        self.block / self.transfer
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_issue_spelling_reads_as_ior_does() {
        let p = IorPlan::parse("-w -r -F -t 4m -b 256m -e -C").unwrap();
        assert!(p.ways == [Way::Write, Way::Read] && p.fsync && p.reorder);
        assert_eq!(
            (p.transfer, p.block, p.access),
            (4 << 20, 256 << 20, Access::FilePerProcess)
        );
        // Grouped flags, attached values, `=`, directives and long options.
        let p = IorPlan::parse("-wrF -t4m -b=8m -s 3 -O stoneWallingWearOut=1,stonewallingstatusfile=sw -D 5 -k --posix.odirect -a posix").unwrap();
        assert!(p.ways == [Way::Write, Way::Read] && p.wear_out && p.keep && p.odirect);
        assert_eq!(
            (p.transfer, p.block, p.segments, p.deadline_s),
            (4 << 20, 8 << 20, 3, 5)
        );
        assert_eq!(p.status_file.as_deref(), Some("sw"));
        // Neither -w nor -r: both, as IOR.
        let p = IorPlan::parse("-t 1m -b 1m").unwrap();
        assert!(p.ways == [Way::Write, Way::Read] && p.access == Access::SharedFile);
    }

    #[test]
    fn what_fsbench_does_not_do_is_refused_by_name() {
        for (args, says) in [
            ("-W", "-W (checkWrite) is refused"),
            ("-a MPIIO", "POSIX interface only"),
            ("-z -z -b 2m -t 1m", "-z given twice"),
            ("-q", "'-q' is not an option"),
            ("-O foo=1", "-O foo: not a directive"),
            ("-t 1000 -b 2000 --posix.odirect", "multiple of 512"),
            ("-t 4m -b 6m", "multiple of -t"),
            ("-o /abs/file", "relative to the target"),
            ("-o ../up", "inside the target"),
            ("-t", "-t needs a value"),
            ("-t 4x", "is not a size"),
            ("-O stoneWallingWearOut=1", "needs a deadline"),
            ("-u", "needs -F"),
            ("-w", "-w"),
        ] {
            let r = IorPlan::parse(args);
            if args == "-w" {
                assert!(r.is_ok());
                continue;
            }
            let e = r.unwrap_err().0;
            assert!(e.contains(says), "{args}: {e}");
        }
    }
}
