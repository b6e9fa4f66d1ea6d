//! Command-line definitions and their translation into plans. No side effects here.

use crate::plan::PlanError;
use std::path::PathBuf;

pub mod complete;
pub mod history;

pub use history::{CheckArgs, HistoryAction, HistoryArgs, HistoryCmd};

use clap::{Args, Parser, Subcommand};

use crate::plan::{units::parse_size, Plan};

pub const DEFAULT_WORKDIR: &str = "/var/tmp/fsbench";

#[derive(Parser, Debug)]
#[command(
    name = "fsbench",
    version = crate::about::version(),
    about = "Provision real filesystems (ext4, XFS, btrfs, ZFS, F2FS, tmpfs, any mounted directory) and benchmark them side by side",
    after_help = "Examples:\n  fsbench doctor                              what this host can test\n  fsbench compare ext4 xfs btrfs zfs --out study\n  fsbench compare ext4:inodes=2000000 'xfs:maxpct=10' btrfs:compress=zstd --size 2G\n  fsbench provision zfs:recordsize=4k         leaves it mounted; prints the mount point\n  fsbench teardown                            removes what provision left\n  fsbench cleanup --dry-run                   lists leftovers of killed runs\n\nTarget specs: FS[:KEY[=VALUE],...]. `fsbench list` shows every filesystem and key."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Args, Debug, Clone)]
pub struct Common {
    /// Print the mkfs/zpool/mount/losetup commands instead of running them; change nothing
    #[arg(long, global = true)]
    pub dry_run: bool,
    /// Where loop images and mount points go (marked as fsbench's own)
    #[arg(long, global = true, env = "FSBENCH_WORKDIR", default_value = DEFAULT_WORKDIR)]
    pub workdir: PathBuf,
    /// Less chatter on standard error
    #[arg(short, long, global = true)]
    pub quiet: bool,
    #[command(flatten)]
    pub history: HistoryArgs,
}

/// The backing size when none is given (`--size`).
pub const DEFAULT_SIZE: u64 = 4 << 30;

#[derive(Args, Debug, Clone)]
pub struct Backing {
    /// Loop image size (sparse) or tmpfs size, e.g. 512M, 4G [default: 4G]
    #[arg(long, value_parser = nonzero_size_arg, allow_hyphen_values = true)]
    pub size: Option<u64>,
    /// Format this whole block device instead of a loop image (guarded: never a mounted or busy device)
    #[arg(long)]
    pub device: Option<PathBuf>,
    /// Allow formatting a --device that carries a filesystem, partition table or pool label
    #[arg(long)]
    pub wipe: bool,
}

impl Backing {
    /// The size of each target's backing: `--size`, else 4 GiB.
    pub fn size(&self) -> u64 {
        self.size.unwrap_or(DEFAULT_SIZE)
    }
}

fn size_arg(s: &str) -> Result<u64, PlanError> {
    parse_size(s)
}

pub use crate::plan::flags::{interval as interval_arg, nonzero_size as nonzero_size_arg};
use crate::plan::flags::{repeat_arg, runtime as duration_arg};

/// `--retry-interfered=yes|no`.
pub fn yes_no(s: &str) -> Result<bool, String> {
    match s {
        "yes" | "true" | "1" | "on" => Ok(true),
        "no" | "false" | "0" | "off" => Ok(false),
        _ => Err(format!("{s}: say yes or no")),
    }
}

/// Under an MPI launcher (mpirun, srun): how the ranks share the target, and how long one waits
/// for the others.
#[derive(Args, Debug, Clone)]
pub struct RankArgs {
    /// Under mpirun: block jobs of all ranks use one file, each rank its own segment (IOR's
    /// N-1). Default: a file per rank (N-N)
    #[arg(long)]
    pub shared_file: bool,
    /// Under mpirun: the files workload's ranks write one tree, its subfolders dealt out by
    /// rank (mdtest's shared directory). Default: a subtree per rank (mdtest's unique
    /// directories)
    #[arg(long)]
    pub shared_tree: bool,
    /// Under mpirun: seconds a rank waits for the others at a barrier or a reduction before the
    /// run is abandoned (set it above the longest spread you expect between ranks)
    #[arg(long, value_name = "SECS", default_value_t = 600, value_parser = clap::value_parser!(u64).range(1..))]
    pub rank_timeout: u64,
}

impl RankArgs {
    pub fn plan(&self) -> crate::plan::RankPlan {
        crate::plan::RankPlan {
            shared_file: self.shared_file,
            shared_tree: self.shared_tree,
        }
    }
}

/// `--metrics ADDR`: an IP address and a port, nothing to resolve.
fn metrics_addr(s: &str) -> Result<std::net::SocketAddr, String> {
    s.parse().map_err(|_| {
        format!("{s}: give an IP address and a port, e.g. 127.0.0.1:9464 or [::1]:9464 (a host name is not taken: the endpoint binds the address given and no other)")
    })
}

/// The live metrics endpoint.
#[derive(Args, Debug, Clone, Default)]
pub struct MetricsArgs {
    /// Serve live metrics (OpenMetrics / Prometheus text) at http://ADDR/metrics while it runs,
    /// e.g. 127.0.0.1:9464; only that address is bound. Under mpirun rank K serves its own on
    /// ADDR's port + K
    #[arg(long, value_name = "ADDR", value_parser = metrics_addr)]
    pub metrics: Option<std::net::SocketAddr>,
}

/// Global overrides for block jobs (quick runs).
#[derive(Args, Debug, Clone, Default)]
pub struct BlockArgs {
    /// Run every block job for this long (time based), e.g. 2s, 500ms, 1m
    #[arg(long, value_parser = duration_arg, allow_hyphen_values = true)]
    pub runtime: Option<std::time::Duration>,
    /// Test file size of every block job, e.g. 256M (default: each job's own, 1G for presets)
    #[arg(long, value_parser = nonzero_size_arg, allow_hyphen_values = true)]
    pub file_size: Option<u64>,
    /// The seed every workload without a seed of its own derives its data from (default: a fresh
    /// one, recorded in the study's study.toml)
    #[arg(long)]
    pub seed: Option<u64>,
    /// One latency histogram per interval of every phase, beside the whole-run one (the HTML's
    /// latency over time, `report --format hlog`), e.g. 1s (the default), 500ms, 10s
    #[arg(long, value_name = "DURATION", value_parser = interval_arg)]
    pub interval: Option<std::time::Duration>,
    /// Run every job of the presets until its steady state (fio's steadystate), at most `max`;
    /// the records report the steady window's figures and say so. Alone:
    /// iops_slope:0.5%,dur=10s,ramp=5s,max=120s
    #[arg(long, value_name = "CRITERION", require_equals = true, num_args = 0..=1,
          default_missing_value = crate::plan::workload::UNTIL_STEADY_DEFAULT,
          conflicts_with = "runtime")]
    pub until_steady: Option<crate::plan::workload::UntilSteady>,
    /// Record where each measured phase spent its time: call chains of its threads (and the
    /// filesystem's daemon's), sampled at each timer tick on the CPU (on-cpu), where they blocked and
    /// for how long (off-cpu), or both; folded stacks in OUT/profiles/, flame graphs in the
    /// report. Alone: on-cpu
    #[arg(long, value_name = "MODE", require_equals = true, num_args = 0..=1,
          default_missing_value = crate::plan::profile::PROFILE_DEFAULT)]
    pub profile: Option<crate::plan::profile::ProfileMode>,
}

impl BlockArgs {
    pub fn overrides(&self) -> crate::plan::Overrides {
        crate::plan::Overrides {
            runtime: self.runtime,
            file_size: self.file_size,
            seed: self.seed,
            interval: self.interval,
            until_steady: self.until_steady,
            profile: self.profile,
        }
    }
}

#[derive(Subcommand, Debug)]
pub enum Command {
    /// What this host can test, and why not where it cannot
    #[command(
        after_help = "Examples:\n  fsbench doctor\n  fsbench doctor --json | jq '.filesystems[] | select(.available)'\n\nExit status is 0 even when some filesystems are unavailable."
    )]
    Doctor {
        /// Machine-readable output
        #[arg(long)]
        json: bool,
    },
    /// List filesystems with their option keys, workloads, block presets and I/O engines
    #[command(
        after_help = "Examples:\n  fsbench list\n  fsbench list --json\n  fsbench list --preset cdm > cdm.fio     the fio job file the preset equals"
    )]
    List {
        #[arg(long)]
        json: bool,
        /// Print the fio job file a block preset equals
        #[arg(long, value_name = "NAME")]
        preset: Option<String>,
    },
    /// Run a fio job file as fio would (its filename/directory decide where) and record the results
    #[command(
        after_help = run_help()
    )]
    Run(RunArgs),
    /// Create one target and leave it mounted; the last line of output is the mount point
    #[command(
        after_help = "Examples:\n  fsbench provision ext4:inodes=2000000 --size 2G\n  cd \"$(fsbench provision -q xfs:maxpct=10 | tail -n1)\"\n  fsbench provision btrfs:compress=zstd --device /dev/sdb --wipe\n\nRemove it with `fsbench teardown MOUNTPOINT` (or `fsbench teardown` for all)."
    )]
    Provision(ProvisionArgs),
    /// Remove a provisioned target (or all of them, and any leftovers)
    #[command(
        after_help = "Examples:\n  fsbench teardown /var/tmp/fsbench/fsbench-20261121T054512-4711/mnt-0-ext4\n  fsbench teardown            all provisioned targets and leftovers\n  fsbench teardown --dry-run"
    )]
    Teardown(TeardownArgs),
    /// Remove what killed runs left behind (mounts, loop devices, pools, a zfs-fuse fsbench started)
    #[command(
        after_help = "Examples:\n  fsbench cleanup --dry-run   list what would be removed\n  fsbench cleanup\n\nOnly what fsbench created and no running fsbench claims is touched. Targets left by\n`fsbench provision` stay: remove them with `fsbench teardown`."
    )]
    Cleanup {
        #[command(flatten)]
        common: Common,
    },
    /// A study's report: tables, ratios to a baseline with 95% intervals, warnings; several
    /// studies merge into one
    #[command(
        after_help = "Examples:\n  fsbench report study\n  fsbench report study --full                every table and the statistics\n  fsbench report before after --baseline before/ext4   two studies as one\n  fsbench report study --format md > report.md\n  fsbench report study --format csv --baseline xfs\n  fsbench report study --format html > report.html\n  fsbench report study --format iozone        iozone -R tables of the iozone workload\n\nNeeds no root: it only reads DIR/results.jsonl. Several DIRs merge into one report: a target\nlabel more than one study has is prefixed with its study's name (before/ext4). The terminal\nshows what a person decides from, the answer first, in a screen; --full and Markdown add every\ntable (iozone's matrices, each bonnie++ run) and the statistics of the\nkey metrics (iops, bytes_per_sec, lat_p99_ns, files_per_sec, space_overhead_pct); CSV and JSON\ncarry every metric of every test."
    )]
    Report(ReportArgs),
    /// Damage each target's disk image under known files and record what the filesystem does
    /// (detected, silent, repaired, lost) and what its checker says; fail its disk under an
    /// fsync and record what the retry and the data say
    #[command(
        after_help = "Examples:\n  fsbench audit ext4 xfs btrfs btrfs:nodatasum btrfs:data=dup zfs zfs:checksum=off zfs:copies=2\n  fsbench audit btrfs:raid1 zfs:mirror --out audit-study\n  fsbench audit ext4 xfs btrfs --case fsync   the fsync-failure table alone\n  fsbench audit ext4 xfs --repeat 3 --out audit-study\n  fsbench audit --resume audit-study  finish a killed audit\n  fsbench report audit-study          the table again\n\nOn each target (a loop image fsbench makes; never --device, a dir: target or tmpfs) it\nwrites files of known content (a checksummed trailer, as the files workload), unmounts (or\nexports the pool), flips 16 bytes of one copy of every other file's data in the image (found\nwith FIEMAP, btrfs-map-logical or zdb) and of a block of a directory's entries (ext4, xfs), mounts\nagain and reads everything back. Then e2fsck -fn, xfs_repair -n, btrfs scrub or zpool scrub.\n\nThe fsync case puts a fresh filesystem on fsbench's fault device (a FUSE file served by\nfsbench under the loop device), overwrites a fsynced file in the page cache, fails the disk,\ncalls fsync, heals the disk, calls fsync again, and reads the file through the cache and after\na remount (\"fsyncgate\"). --case fsync for it alone.\n\nRecords go to OUT/results.jsonl, one per case (data, directory, checker, fsync). The audit is\nthe workload `audit` (case=corruption|fsync) run by the same coordinator as compare, so it\nrepeats and resumes as a compare does."
    )]
    Audit(AuditArgs),
    /// Run a study written down (a TOML file, or one of the five published studies fsbench ships):
    /// its targets, workloads, sizes and repeats, then its published findings checked against
    /// this host ("Published vs this host")
    #[command(
        after_help = "Examples:\n  fsbench study --list                        the shipped studies, with their titles and sources\n  fsbench study billion-files --check          the resolved plan: targets, workloads, jobs, claims; runs nothing\n  fsbench study billion-files --out bf         the small scale (fits a 2-core VM in about 10 minutes)\n  fsbench study iozone-vs-xfs --scale full     the published sizes\n  fsbench study my.toml --set repeat=5 --set 'targets=[\"ext4\",\"xfs\"]'\n  fsbench study old-study/study.toml --out new-study   re-run a study's plan anywhere\n  fsbench study --resume bf                    finish a killed study\n\nA study file is compare's flags written down: targets, workloads, repeat, size, runtime,\nfile_size, baseline, seed, plus title, source, notes, [scale.small] / [scale.full] tables of\noverrides and [[claim]] entries (says, quote, published, target, vs, workload, test, vs_test,\nmetric, expect = \"< X\" | \"> X\" | \"A..B\", why). Every compare writes its plan as study.toml\ninto its study directory."
    )]
    Study(StudyArgs),
    /// Search filesystems and their options for a workload: candidates from specs with
    /// {alternatives} (or --axes), raced round by round on fresh targets, the clearly worse
    /// dropped, until one stands or the rest tie; the answer with its 95% interval
    #[command(
        after_help = "Examples:\n  fsbench tune 'zfs:recordsize={4k,16k,128k}' --workload rand-write\n  fsbench tune 'btrfs:{nodatacow,compress=zstd},space_cache=v2' btrfs --workload db-server\n  fsbench tune ext4 xfs btrfs zfs --axes --workload db-server --budget 30m\n  fsbench tune 'zfs:recordsize={4k,128k}' --workload rand-write --slo 'lat_p99<2ms'\n  fsbench tune ... --check                    the candidates and the race; runs nothing\n  fsbench tune --resume tune-study            finish a killed tune\n\nRound r runs every surviving candidate once more (repeat r, each on a freshly provisioned\ntarget, in rotating order). After each round the leader (best geometric mean of the\nobjective) is compared with every other survivor by a t-test on the logs (the variance\npooled over the round's survivors), with Holm's correction over the round's comparisons;\nthe significantly worse are dropped, and so is a candidate whose interval shows it misses\nan SLO. The race ends when one candidate stands, when the survivors are tied (every ratio\nto the leader within --tie), or when --max-repeat or --budget runs out. The report ranks\nevery candidate (objective with its interval, ratio to the winner, the round it was dropped\nin and why, trials), ends with the verdict and the winning spec, and lists the Pareto front\nof objective, p99 latency and space overhead."
    )]
    Tune(Box<TuneArgs>),
    /// Print a shell completion script (bash, zsh, fish, elvish, powershell)
    #[command(
        after_help = "Examples:\n  source <(fsbench completions bash)\n  fsbench completions bash > /usr/share/bash-completion/completions/fsbench\n  fsbench completions zsh > \"${fpath[1]}/_fsbench\"\n  fsbench completions fish > ~/.config/fish/completions/fsbench.fish\n\nTarget specs complete filesystem names and their option keys (ext4:inodes=), workloads\ntheir names and presets."
    )]
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Write the man pages (fsbench(1), one per subcommand, fsbench-targets(5)) into DIR
    #[command(
        after_help = "Examples:\n  fsbench man /usr/local/share/man/man1 && mandb\n  fsbench man target/man && man -l target/man/fsbench-compare.1"
    )]
    Man {
        /// Where the pages go (made when missing)
        dir: PathBuf,
    },
    /// Provision each target, run the workloads on it, record every phase, tear down
    #[command(
        after_help = "Examples:\n  fsbench compare ext4 xfs btrfs zfs --out study\n  fsbench compare ext4 'ext4:nojournal,label=ext4-nj' --workload smoke:size=256M\n  fsbench compare 'zfs:recordsize=128k,label=zfs-128k' 'zfs:recordsize=4k,label=zfs-4k'\n  fsbench compare xfs btrfs --device /dev/sdb --wipe\n  fsbench compare dir:/mnt/nfs tmpfs\n  fsbench compare ext4 xfs raw --workload cdm --runtime 2s --file-size 256M\n  fsbench compare ext4 btrfs --workload 'block:rw=randread,bs=4k,iodepth=32'\n  fsbench compare ext4 xfs --workload fio:db.fio\n  fsbench compare xfs btrfs --workload iozone:max_file=64m --size 2G   the iozone shoot-out's matrix\n  fsbench compare ext4 xfs --workload bonnie:size=4G,ram=2G --size 8G\n  fsbench compare btrfs btrfs:nodatacow zfs --workload aging --workload aging:snapshots=3/s   the Btrfs vs ZFS article\n  fsbench compare btrfs:raid1 zfs:mirror 'zfs:raidz,devices=3' --workload cdm\n  fsbench compare --resume study                 finish a killed study\n  mpirun -np 4 fsbench compare dir:/mnt/nfs -w hpc -w files   many ranks (the mpi feature)\n\nResults: OUT/results.jsonl (one JSON record per phase, written as it finishes) and\nOUT/manifest.json (plan, environment, commands as run). Schema: docs/results-schema.md."
    )]
    Compare(Box<CompareArgs>),
    /// Every study in one database: list them, a metric's trend across them, rebuild it
    #[command(after_help = history::HISTORY_HELP, args_conflicts_with_subcommands = false)]
    History(HistoryCmd),
    /// The regression gate: a study against an earlier one or the history, with 95% intervals
    #[command(after_help = history::CHECK_HELP)]
    Check(CheckArgs),
}

#[derive(Args, Debug)]
pub struct RunArgs {
    /// The fio job file (several with --check)
    #[arg(required = true, value_name = "JOBFILE")]
    pub jobfiles: Vec<PathBuf>,
    /// Parse and expand the job files and print the jobs as fsbench would run them (each option's
    /// value and the line it came from); run nothing, touch nothing. Exit 0, or 2 on an error
    #[arg(long, visible_alias = "dry-run")]
    pub check: bool,
    /// What standard output carries after the run: fsbench's tables (normal) or fio's JSON
    /// output shape (json), for tools that read fio's JSON
    #[arg(long, default_value = "normal", value_parser = ["normal", "json"])]
    pub output_format: String,
    /// Study directory for results.jsonl and manifest.json
    #[arg(short, long)]
    pub out: Option<PathBuf>,
    /// Allow writing to a block device that carries a filesystem, partition table or pool label
    #[arg(long)]
    pub wipe: bool,
    #[command(flatten)]
    pub ranks: RankArgs,
    #[command(flatten)]
    pub block: BlockArgs,
    #[command(flatten)]
    pub metrics: MetricsArgs,
    /// Less chatter on standard error
    #[arg(short, long)]
    pub quiet: bool,
    #[command(flatten)]
    pub history: HistoryArgs,
}

#[derive(Args, Debug)]
pub struct ProvisionArgs {
    /// Target spec, e.g. zfs:recordsize=128k,primarycache=metadata
    #[arg(value_parser = complete::Spec::Target, hide_possible_values = true)]
    pub spec: String,
    #[command(flatten)]
    pub backing: Backing,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args, Debug)]
pub struct AuditArgs {
    /// Target specs: FS[:KEY[=VALUE],...] of filesystems fsbench provisions (ext4, xfs, btrfs, zfs, f2fs)
    #[arg(required_unless_present = "resume", value_parser = complete::Spec::Target, hide_possible_values = true)]
    pub targets: Vec<String>,
    /// Loop image size of each target, e.g. 512M
    #[arg(long, default_value = "512M", value_parser = size_arg)]
    pub size: u64,
    /// Data files written on each target (every other one is damaged)
    #[arg(long, default_value_t = 64, value_parser = clap::value_parser!(u64).range(2..=100_000))]
    pub files: u64,
    /// Size of each data file, e.g. 64K (at least 8K, so that no filesystem keeps it inline)
    #[arg(long, default_value = "64K", value_parser = size_arg)]
    pub file_size: u64,
    /// Which experiments: corruption (damaged data and directory in the image, then the
    /// checker), fsync (a flush fails on fsbench's fault device, is retried once the disk
    /// heals, and the file is read back), or all
    #[arg(long, value_enum, default_value = "all")]
    pub case: AuditCase,
    /// Study directory (default: fsbench-audit-<time>-<pid>)
    #[arg(long)]
    pub out: Option<PathBuf>,
    /// Run every case this many times, each on a freshly provisioned target
    #[arg(long, default_value_t = 1, value_parser = repeat_arg)]
    pub repeat: u32,
    /// Continue the audit in DIR (killed or interrupted): run only what is missing, then report
    #[arg(long, value_name = "DIR", conflicts_with_all = ["targets", "out"])]
    pub resume: Option<PathBuf>,
    #[command(flatten)]
    pub common: Common,
}

#[derive(clap::ValueEnum, Clone, Copy, Debug, PartialEq, Eq)]
pub enum AuditCase {
    Corruption,
    Fsync,
    All,
}

#[derive(Args, Debug)]
pub struct TeardownArgs {
    /// Mount point printed by `fsbench provision`
    pub mountpoint: Option<PathBuf>,
    /// Keep the loop image file
    #[arg(long)]
    pub keep: bool,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args, Debug)]
pub struct ReportArgs {
    /// Study directories (each holds results.jsonl); several merge into one report
    #[arg(required = true, value_name = "DIR")]
    pub dirs: Vec<PathBuf>,
    /// In the terminal: also the latency percentiles, every files column and the statistics of
    /// every key metric
    #[arg(long)]
    pub full: bool,
    /// Report format (`fsbench list` describes each)
    #[arg(long, default_value = "term", value_parser = clap::builder::PossibleValuesParser::new(crate::report::formats::names()))]
    pub format: String,
    /// The target every other is compared with (default: the study's own, as it ended; else
    /// the first)
    #[arg(long)]
    pub baseline: Option<String>,
    /// Bring a fio JSON result (`fio --output-format=json`) into the (first) study as a target of
    /// its own, appended to its results.jsonl, before the report
    #[arg(long, value_name = "FIO_JSON", requires = "label")]
    pub import: Option<PathBuf>,
    /// The target label of the imported fio result
    #[arg(long)]
    pub label: Option<String>,
}

#[derive(Args, Debug)]
pub struct StudyArgs {
    /// A study file (TOML), or the name of a study fsbench ships (`--list` names them)
    #[arg(required_unless_present_any = ["list", "resume"], value_name = "FILE|NAME")]
    pub study: Option<String>,
    /// List the shipped studies with their titles and sources
    #[arg(long, conflicts_with_all = ["study", "resume"])]
    pub list: bool,
    /// Study directory for results, manifest, study.toml and the reports
    #[arg(short, long)]
    pub out: Option<PathBuf>,
    /// Which [scale.NAME] table of the file applies: small (the default when the file has it)
    /// or full (the published sizes)
    #[arg(long, value_name = "NAME")]
    pub scale: Option<String>,
    /// Override a key of the file, in TOML's syntax: --set repeat=5, --set 'targets=["ext4"]'
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub sets: Vec<String>,
    /// Print the resolved plan (every target, workload and job as it will run, and the claims)
    /// and touch nothing
    #[arg(long)]
    pub check: bool,
    /// Continue the study in DIR (killed or interrupted) as it was recorded: run only what is
    /// missing, then report (with --check: say what it would run)
    #[arg(long, value_name = "DIR", conflicts_with_all = ["study", "out", "list", "sets", "scale", "interval", "profile"])]
    pub resume: Option<PathBuf>,
    /// Measure a repeat once more when other processes or the hypervisor took a share of the
    /// machine during it (its records' interference note); the disturbed records go to
    /// results.partial.jsonl. Alone: yes. Default: no
    #[arg(long, value_name = "YES|NO", num_args = 0..=1, require_equals = true,
          default_missing_value = "yes", value_parser = yes_no)]
    pub retry_interfered: Option<bool>,
    /// When a target's image cannot hold what the workloads leave on it (judged before anything
    /// is provisioned): refuse (exit 2, naming the --size that fits) or warn and run anyway (to
    /// measure a filesystem filling up: ENOSPC is then recorded as the phase's failure).
    /// Default: refuse; a resume keeps the study's own choice
    #[arg(long, value_name = "refuse|warn")]
    pub room: Option<crate::plan::OnMisfit>,
    /// Keep the loop image files after teardown
    #[arg(long)]
    pub keep: bool,
    /// One latency histogram per interval of every phase (overrides the file's `interval`),
    /// e.g. 1s (the default), 500ms
    #[arg(long, value_name = "DURATION", value_parser = interval_arg)]
    pub interval: Option<std::time::Duration>,
    /// Record where each measured phase spent its time (on-cpu, off-cpu or both; alone:
    /// on-cpu): folded stacks in OUT/profiles/, flame graphs in the report
    #[arg(long, value_name = "MODE", require_equals = true, num_args = 0..=1,
          default_missing_value = crate::plan::profile::PROFILE_DEFAULT)]
    pub profile: Option<crate::plan::profile::ProfileMode>,
    #[command(flatten)]
    pub metrics: MetricsArgs,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args, Debug)]
pub struct TuneArgs {
    /// Candidate specs: FS[:KEY[=VALUE],...] with alternatives in braces, e.g.
    /// 'zfs:recordsize={4k,16k,128k}' (several braces give their product)
    #[arg(required_unless_present = "resume", value_parser = complete::Spec::Target, hide_possible_values = true)]
    pub specs: Vec<String>,
    /// Add each filesystem's catalogue of options that commonly matter (`fsbench list` shows
    /// it): ZFS recordsize and logbias, btrfs nodatacow and compress, XFS agcount and logbsize,
    /// ext4 data= and the journal
    #[arg(long)]
    pub axes: bool,
    /// The workload the candidates race on (repeatable: all run on each candidate)
    #[arg(short, long = "workload", required_unless_present = "resume", value_parser = complete::Spec::Workload, hide_possible_values = true)]
    pub workloads: Vec<String>,
    /// The objective, a catalogue metric (default: the workload's headline: IOPS for random
    /// block jobs, bytes/s for sequential ones, files/s for files), with its better direction
    #[arg(long)]
    pub metric: Option<String>,
    /// Only this test's records count (default: the geometric mean over the workload's tests)
    #[arg(long)]
    pub test: Option<String>,
    /// A constraint a candidate must meet, METRIC<VALUE or METRIC>VALUE, e.g. 'lat_p99<2ms',
    /// 'space_overhead<40%' (repeatable)
    #[arg(long = "slo", value_name = "SLO")]
    pub slos: Vec<String>,
    /// Stop starting rounds once this much time would be spent, e.g. 30m
    #[arg(long, value_parser = duration_arg)]
    pub budget: Option<std::time::Duration>,
    /// The most rounds (trials per candidate), 2 to 100 [default: 5]
    #[arg(long, value_parser = clap::value_parser!(u32).range(2..=100))]
    pub max_repeat: Option<u32>,
    /// Survivors whose ratio to the leader lies within this share are tied [default: 5%]
    #[arg(long)]
    pub tie: Option<String>,
    /// Race more than 64 candidates
    #[arg(long)]
    pub force: bool,
    /// Print the candidates and the race as it would run; run nothing
    #[arg(long)]
    pub check: bool,
    /// Study directory for the trials' records and the reports
    #[arg(short, long)]
    pub out: Option<PathBuf>,
    /// Continue the tune in DIR (killed or interrupted)
    #[arg(long, value_name = "DIR", conflicts_with_all = ["specs", "out"])]
    pub resume: Option<PathBuf>,
    /// Measure a repeat once more when other processes or the hypervisor took a share of the
    /// machine during it (its records' interference note); the disturbed records go to
    /// results.partial.jsonl. Alone: yes. Default: yes (a disturbed trial would decide the race)
    #[arg(long, value_name = "YES|NO", num_args = 0..=1, require_equals = true,
          default_missing_value = "yes", value_parser = yes_no)]
    pub retry_interfered: Option<bool>,
    /// Keep the loop image files after teardown
    #[arg(long)]
    pub keep: bool,
    #[command(flatten)]
    pub block: BlockArgs,
    #[command(flatten)]
    pub backing: Backing,
    #[command(flatten)]
    pub metrics: MetricsArgs,
    #[command(flatten)]
    pub common: Common,
}

#[derive(Args, Debug)]
pub struct CompareArgs {
    /// Target specs: FS[:KEY[=VALUE],...] (see `fsbench list`)
    #[arg(required_unless_present = "resume", value_parser = complete::Spec::Target, hide_possible_values = true)]
    pub targets: Vec<String>,
    /// Workloads to run on each target (repeatable; `fsbench list` names them). Default: the
    /// quick suite: the CrystalDiskMark tests at 1 s each on a 256 MiB file, then 20,000 small
    /// files written and verified
    #[arg(short, long = "workload", default_values = crate::workload::QUICK_SUITE, value_parser = complete::Spec::Workload, hide_possible_values = true)]
    pub workloads: Vec<String>,
    /// Study directory for results and manifest
    #[arg(short, long)]
    pub out: Option<PathBuf>,
    /// Print the plan as it would run and whether it fits each target's room; touch nothing
    #[arg(long)]
    pub check: bool,
    /// Run everything this many times, each on a freshly provisioned target; the order of the
    /// targets rotates from one repeat to the next so that drift favours none
    #[arg(long, default_value_t = 1, value_parser = repeat_arg)]
    pub repeat: u32,
    /// The target every other is compared with in the report (default: the first)
    #[arg(long)]
    pub baseline: Option<String>,
    /// Continue the study in DIR (killed or interrupted): run only what is missing, then report
    #[arg(long, value_name = "DIR", conflicts_with_all = ["targets", "out"])]
    pub resume: Option<PathBuf>,
    /// Measure a repeat once more when other processes or the hypervisor took a share of the
    /// machine during it (its records' interference note); the disturbed records go to
    /// results.partial.jsonl. Alone: yes. Default: no
    #[arg(long, value_name = "YES|NO", num_args = 0..=1, require_equals = true,
          default_missing_value = "yes", value_parser = yes_no)]
    pub retry_interfered: Option<bool>,
    /// When a target's image cannot hold what the workloads leave on it (judged before anything
    /// is provisioned): refuse (exit 2, naming the --size that fits) or warn and run anyway (to
    /// measure a filesystem filling up: ENOSPC is then recorded as the phase's failure).
    /// Default: refuse; a resume keeps the study's own choice
    #[arg(long, value_name = "refuse|warn")]
    pub room: Option<crate::plan::OnMisfit>,
    /// Keep the loop image files after teardown
    #[arg(long)]
    pub keep: bool,
    #[command(flatten)]
    pub block: BlockArgs,
    #[command(flatten)]
    pub backing: Backing,
    #[command(flatten)]
    pub ranks: RankArgs,
    #[command(flatten)]
    pub metrics: MetricsArgs,
    #[command(flatten)]
    pub common: Common,
}

/// Parses targets and workloads into a plan (the workloads' parameters are checked when the plan
/// is resolved, before anything runs).
pub fn build_plan(
    targets: &[String],
    workloads: &[String],
    backing: &Backing,
    repeat: u32,
    block: &BlockArgs,
    baseline: Option<&str>,
) -> Result<Plan, PlanError> {
    let overrides = block.overrides();
    let mut specs = Vec::new();
    for t in targets {
        let spec = crate::provision::parse_target(t)?;
        if backing.device.is_none() {
            crate::provision::check_size(&spec, spec.size.unwrap_or(backing.size()))?;
        }
        if specs
            .iter()
            .any(|s: &crate::plan::TargetSpec| s.label == spec.label)
        {
            return Err(format!(
                "two targets are labelled '{}': give one a label, e.g. {},label={}-2",
                spec.label, spec.spec, spec.fs
            )
            .into());
        }
        specs.push(spec);
    }
    // (Each workload is built, and its parameters checked, once: by `runner::resolve`.)
    let mut wl = Vec::new();
    for w in workloads {
        wl.push(crate::plan::workload::parse_workload(w)?);
    }
    if let Some(b) = baseline {
        if !specs.iter().any(|s| s.label == b) {
            let labels: Vec<&str> = specs.iter().map(|s| s.label.as_str()).collect();
            return Err(format!(
                "--baseline {b} is not one of the targets: labels are {}",
                labels.join(", ")
            )
            .into());
        }
    }
    Ok(Plan {
        baseline: baseline.map(str::to_string),
        targets: specs,
        workloads: wl,
        size_bytes: backing.size(),
        device: backing
            .device
            .as_ref()
            .map(|d| d.to_string_lossy().into_owned()),
        wipe: backing.wipe,
        repeat,
        overrides,
        ranks: Default::default(),
        study: None,
        tune: None,
        on_interference: Default::default(),
        on_misfit: Default::default(),
    })
}

/// `fsbench run --help`'s closing text: examples and every accepted fio option.
fn run_help() -> String {
    format!(
        "Examples:\n  fsbench run randread.fio\n  fsbench run cdm.fio --runtime 2s --out study-cdm\n  fsbench run --check db.fio web.fio        print the jobs as they would run; run nothing\n  fsbench run db.fio --output-format=json > db.json   fio's JSON shape\n  fsbench list --preset cdm > cdm.fio && fsbench run cdm.fio\n\nJob files: [global] and job sections (a [global] anywhere sets what follows), ; and #\ncomments, include FILE, ${{VAR}} from the environment, $pagesize, $mb_memory, $ncpus and\narithmetic in values ((4+4)k, 8*$mb_memory). ioengine: sync, psync, pvsync, pvsync2, vsync,\nio_uring, libaio and posixaio (run on io_uring), null. Anything else is an error naming its\nline; a cause repeated on several lines is said once.\n{}\nWriting to a block device named by filename= passes the same guards as mkfs (--wipe to\noverwrite a device carrying a filesystem signature).",
        crate::plan::fio::options::help_text()
    )
}
