//! Helpers shared by the integration tests: run the binary, skip with a printed reason, and loop
//! devices owned by the test (detached by name, never "all").
#![allow(dead_code)]

pub mod fuzz;
pub mod graph;
pub mod http;
mod privileged;
#[allow(unused_imports)]
pub use privileged::*;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::{Mutex, MutexGuard};

/// The binary under test: cargo's, or the copy scripts/test names in `FSBENCH_TEST_BIN` (it
/// builds the MPI variant while the tests run, and cargo would put that one in cargo's place).
pub fn exe() -> PathBuf {
    std::env::var_os("FSBENCH_TEST_BIN")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from(env!("CARGO_BIN_EXE_fsbench")))
}

pub fn bin() -> Command {
    let mut c = Command::new(exe());
    c.env_remove("FSBENCH_WORKDIR");
    c.env("FSBENCH_HISTORY", history_path());
    // What a report says is read on a terminal wide enough that no line wraps; its layout at
    // 80 columns is report_studies' and report_golden's (they take COLUMNS away).
    c.env("COLUMNS", WIDE);
    c
}

/// A terminal no report line wraps in.
pub const WIDE: &str = "1000";

/// The history database of this test process (under cargo's directory for test files): tests
/// never write the user's or root's history. Every run of the binary gets it by FSBENCH_HISTORY.
pub fn history_path() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
        .join(format!("fsbench-history-{}.db", std::process::id()))
}

/// Writes `text` to `dir/name` (a job or study file) and returns its path.
pub fn write(dir: &Path, name: &str, text: &str) -> String {
    let p = dir.join(name);
    std::fs::write(&p, text).unwrap();
    p.display().to_string()
}

pub fn run(args: &[&str]) -> Output {
    bin().args(args).output().expect("run fsbench")
}

pub fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

pub fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// `fsbench run --check` of a job file holding `text` (written as b.fio in `dir`): asserts it is
/// refused with exit 2, and returns what it said.
pub fn refused_job(dir: &Path, text: &str) -> String {
    std::fs::write(dir.join("b.fio"), text).unwrap();
    let o = bin()
        .current_dir(dir)
        .args(["run", "--check", "b.fio"])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2), "{text}: {}", stderr(&o));
    stderr(&o)
}

/// The same for one job `[b]` of 1 MiB with these options (a line each).
pub fn refused_opts(dir: &Path, opts: &str) -> String {
    refused_job(dir, &format!("[b]\nsize=1m\n{opts}\n"))
}

pub fn sh(cmd: &str) -> (bool, String) {
    let o = Command::new("sh").arg("-c").arg(cmd).output().expect("sh");
    (
        o.status.success(),
        format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        ),
    )
}

pub fn is_root() -> bool {
    sh("test \"$(id -u)\" = 0").0
}

pub fn have(tool: &str) -> bool {
    sh(&format!(
        "command -v {tool} || test -x /usr/sbin/{tool} || test -x /sbin/{tool}"
    ))
    .0
}

pub fn kernel_has(fs: &str) -> bool {
    std::fs::read_to_string("/proc/filesystems")
        .unwrap_or_default()
        .lines()
        .any(|l| l.split_whitespace().last() == Some(fs))
}

/// Prints why a test is skipped and returns true, so a test reads `if skip(..) { return; }`.
pub fn skip(missing: bool, why: &str) -> bool {
    if missing {
        eprintln!("SKIPPED: {why}");
    }
    missing
}

/// The binary under `strace -f -qq -e trace=CALLS` in `dir`, its trace written to `dir/t` (or,
/// with `per_thread`, to `dir/t.TID`, one file per thread); None, said, when strace is missing.
pub fn straced(dir: &Path, calls: &str, per_thread: bool, args: &[&str]) -> Option<Output> {
    if skip(
        !have("strace"),
        "strace is not installed (scripts/setup installs it)",
    ) {
        return None;
    }
    let mut c = Command::new("strace");
    c.current_dir(dir)
        .env_remove("FSBENCH_WORKDIR")
        .env("FSBENCH_HISTORY", history_path())
        .args(["-qq", "-e", &format!("trace={calls}"), "-e", "signal=none"])
        .args([if per_thread { "-ff" } else { "-f" }, "-o", "t"])
        .arg(bin().get_program())
        .args(args);
    Some(c.output().unwrap())
}

/// A lock of the suite's, held for a test: the threads of one test binary and the test runs of
/// other clones on this machine (an flock on a file under /var/tmp/fsbench-tests) wait for each
/// other.
pub struct Held {
    _threads: MutexGuard<'static, ()>,
    _machine: std::fs::File,
    /// Since when the machine's lock (`serial`) was held, said when it is let go.
    since: Option<std::time::Instant>,
}

/// How long a test held the machine, in its output: scripts/test lists the longest holders, the
/// suite's critical path.
impl Drop for Held {
    fn drop(&mut self) {
        if let Some(since) = self.since {
            let test = std::thread::current().name().unwrap_or("?").to_string();
            eprintln!("HELD: {:.1} s {test}", since.elapsed().as_secs_f64());
        }
    }
}

/// Held while a test takes loop devices or pools, which are the machine's (as the zfs-fuse
/// daemon is): such tests must not run at the same time.
pub type Serial = Held;

pub fn serial() -> Serial {
    static LOCK: Mutex<()> = Mutex::new(());
    let mut held = locked(&LOCK, "serial.lock");
    held.since = Some(std::time::Instant::now());
    held
}

/// Held while a test runs ranks under mpirun: one such test at a time on this machine (each is
/// up to 4 ranks on its CPUs, and `cli_mpi::hit_rank` picks a rank by its environment). The
/// ranks on a `dir:` target take no loop device or pool, so they do not hold `serial()`; a test
/// whose ranks format a node's target holds both, this one first.
pub type Ranks = Held;

pub fn ranks_lock() -> Ranks {
    static LOCK: Mutex<()> = Mutex::new(());
    locked(&LOCK, "ranks.lock")
}

/// `lock` of this process, then an flock on `name` under /var/tmp/fsbench-tests (other test
/// runs on this machine).
fn locked(lock: &'static Mutex<()>, name: &str) -> Held {
    use std::os::fd::AsRawFd;
    let threads = lock.lock().unwrap_or_else(|e| e.into_inner());
    std::fs::create_dir_all("/var/tmp/fsbench-tests").unwrap();
    let machine = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(Path::new("/var/tmp/fsbench-tests").join(name))
        .unwrap();
    while unsafe { libc::flock(machine.as_raw_fd(), libc::LOCK_EX) } != 0 {
        assert_eq!(
            std::io::Error::last_os_error().kind(),
            std::io::ErrorKind::Interrupted
        );
    }
    Held {
        _threads: threads,
        _machine: machine,
        since: None,
    }
}

/// A work directory for one test: on disk (not tmpfs), or under `FSBENCH_TEST_WORKDIR` where
/// scripts/test puts the tiers whose loop images need no disk under them in memory.
pub fn workdir() -> tempfile::TempDir {
    let base = std::env::var_os("FSBENCH_TEST_WORKDIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| PathBuf::from("/var/tmp/fsbench-tests"));
    std::fs::create_dir_all(&base).unwrap();
    tempfile::tempdir_in(base).unwrap()
}

pub fn mounts_text() -> String {
    std::fs::read_to_string("/proc/self/mountinfo").unwrap()
}

pub fn mountinfo_line(mountpoint: &str) -> Option<String> {
    mounts_text()
        .lines()
        .find(|l| l.split(' ').nth(4) == Some(mountpoint))
        .map(str::to_string)
}

pub fn loops_backed_by_dir(dir: &Path) -> Vec<String> {
    let (_, out) = sh("losetup -a -O NAME,BACK-FILE -n 2>/dev/null || true");
    out.lines()
        .filter(|l| l.contains(&*dir.to_string_lossy()))
        .map(str::to_string)
        .collect()
}

/// A loop device over an image in a test directory, detached (by name) when dropped.
pub struct TestLoop {
    pub dir: tempfile::TempDir,
    pub image: PathBuf,
    pub device: String,
}

impl TestLoop {
    pub fn new(size_mib: u64) -> TestLoop {
        let dir = workdir();
        let image = dir.path().join("test-owned.img");
        let f = std::fs::File::create(&image).unwrap();
        f.set_len(size_mib << 20).unwrap();
        let o = Command::new("losetup")
            .args(["--find", "--show"])
            .arg(&image)
            .output()
            .unwrap();
        assert!(
            o.status.success(),
            "losetup: {}",
            String::from_utf8_lossy(&o.stderr)
        );
        let device = String::from_utf8_lossy(&o.stdout).trim().to_string();
        TestLoop { dir, image, device }
    }
}

impl TestLoop {
    /// Formats the device with `mkfs` (a command its path follows, e.g. "mkfs.ext4 -q") and
    /// mounts it on a new directory `name` in the test's directory, which it returns.
    pub fn format_and_mount(&self, mkfs: &str, name: &str) -> PathBuf {
        assert!(sh(&format!("{mkfs} {}", self.device)).0, "{mkfs}");
        let mnt = self.dir.path().join(name);
        std::fs::create_dir(&mnt).unwrap();
        assert!(sh(&format!("mount {} {}", self.device, mnt.display())).0);
        mnt
    }
}

impl Drop for TestLoop {
    fn drop(&mut self) {
        // Unmount anything this test mounted from the device, then detach only this device.
        for l in mounts_text().lines().rev() {
            let f: Vec<&str> = l.split(' ').collect();
            if let Some(pos) = f.iter().position(|x| *x == "-") {
                if f.get(pos + 2) == Some(&self.device.as_str()) {
                    let _ = Command::new("umount").arg(f[4]).status();
                }
            }
        }
        let back = std::fs::read_to_string(format!(
            "/sys/block/{}/loop/backing_file",
            self.device.trim_start_matches("/dev/")
        ))
        .unwrap_or_default();
        if back.trim() == self.image.to_string_lossy() {
            let _ = Command::new("losetup")
                .arg("--detach")
                .arg(&self.device)
                .status();
        }
    }
}

/// blkid's TYPE of a device ("" when none).
pub fn fs_type(dev: &str) -> String {
    sh(&format!("blkid -p -o value -s TYPE {dev}"))
        .1
        .trim()
        .to_string()
}

/// Is a zfs-fuse daemon running (a zombie awaiting its reaper does not count)?
pub fn zfs_fuse_running() -> bool {
    std::fs::read_dir("/proc").unwrap().flatten().any(|e| {
        let stat = std::fs::read_to_string(e.path().join("stat")).unwrap_or_default();
        stat.contains("(zfs-fuse) ") && !stat.contains("(zfs-fuse) Z")
    })
}

/// A copy of the fixture study (tests/fixtures/study: 3 repeats of ext4 and xfs, block and files)
/// in `dir`/study; returns the study directory.
pub fn copy_fixture_study(dir: &Path) -> PathBuf {
    let study = dir.join("study");
    std::fs::create_dir(&study).unwrap();
    std::fs::copy(
        "tests/fixtures/study/results.jsonl",
        study.join("results.jsonl"),
    )
    .unwrap();
    study
}

/// `fsbench compare ...` as the tests write it: targets, then what differs, then where.
/// `Compare::new(&["ext4"]).workload("smoke:size=8M").size("512M").out(o).workdir(w).run()`.
#[derive(Default, Clone)]
pub struct Compare {
    args: Vec<String>,
}

impl Compare {
    pub fn new(targets: &[&str]) -> Compare {
        let mut args = vec!["compare".to_string()];
        args.extend(targets.iter().map(|t| t.to_string()));
        Compare { args }
    }

    fn pair(mut self, flag: &str, v: impl AsRef<str>) -> Compare {
        self.args.push(flag.to_string());
        self.args.push(v.as_ref().to_string());
        self
    }

    pub fn workload(self, w: impl AsRef<str>) -> Compare {
        self.pair("--workload", w)
    }

    pub fn size(self, s: &str) -> Compare {
        self.pair("--size", s)
    }

    pub fn out(self, p: impl AsRef<str>) -> Compare {
        self.pair("--out", p)
    }

    pub fn workdir(self, p: impl AsRef<str>) -> Compare {
        self.pair("--workdir", p)
    }

    /// Any other arguments, as given.
    pub fn args(mut self, more: &[&str]) -> Compare {
        self.args.extend(more.iter().map(|a| a.to_string()));
        self
    }

    pub fn argv(&self) -> Vec<&str> {
        self.args.iter().map(String::as_str).collect()
    }

    pub fn run(&self) -> Output {
        run(&self.argv())
    }

    /// Started in the background with its output discarded (to be killed or signalled), as from
    /// a terminal: SIGHUP at its default whatever the test runner has (`hangup`).
    pub fn spawn(&self) -> std::process::Child {
        self.spawn_with(Hangup::Default)
    }

    /// `spawn`, with SIGHUP as `h` says (`Hangup::Ignored`: as started by nohup).
    pub fn spawn_with(&self, h: Hangup) -> std::process::Child {
        let mut c = bin();
        hangup(&mut c, h);
        c.args(self.argv())
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .spawn()
            .expect("start fsbench")
    }
}

/// fsbench as an unprivileged user (nobody, through setpriv) when the tests run as root; as
/// itself otherwise; None where setpriv is missing (said: `SKIPPED: why`).
pub fn unprivileged() -> Option<std::process::Command> {
    if !is_root() {
        return Some(bin());
    }
    if skip(
        !have("setpriv"),
        "root without setpriv cannot drop privileges",
    ) {
        return None;
    }
    let mut c = std::process::Command::new("setpriv");
    c.args(["--reuid=65534", "--regid=65534", "--clear-groups"])
        .arg(exe())
        .env("COLUMNS", WIDE)
        .env_remove("FSBENCH_WORKDIR")
        .env_remove("FSBENCH_STATE_DIR")
        .env("FSBENCH_HISTORY", history_path());
    Some(c)
}

/// What a started process does with SIGHUP.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Hangup {
    /// As started from a terminal.
    Default,
    /// As started by nohup.
    Ignored,
}

/// Starts `c` with SIGHUP as `h` says, whatever this test process has (a test runner started
/// under nohup passes SIGHUP ignored to everything it starts).
pub fn hangup(c: &mut Command, h: Hangup) {
    use std::os::unix::process::CommandExt;
    let disposition = match h {
        Hangup::Default => libc::SIG_DFL,
        Hangup::Ignored => libc::SIG_IGN,
    };
    // SAFETY: signal(2) is async-signal-safe, as pre_exec's closure must be.
    unsafe {
        c.pre_exec(move || {
            libc::signal(libc::SIGHUP, disposition);
            Ok(())
        });
    }
}
