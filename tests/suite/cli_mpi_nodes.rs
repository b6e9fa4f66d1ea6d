//! Each node formats its own target, under a real `mpirun` (OpenMPI) on this one host: every
//! rank runs under `unshare -u` with a host name of its own, so MPI's processor name tells the
//! "nodes" apart while they share one kernel (their loop devices, mount points and state files
//! must not collide). Four nodes format, measure and tear down their own ext4; ranks on one node
//! share its target; a node whose mkfs fails stops every node and leaves nothing on any; a node
//! killed mid-run leaves only its own target, which `fsbench cleanup` removes; with
//! `--device`, each node (its own mount namespace too) formats its own device, and a device in
//! use on one node stops every node before any is formatted.

#![cfg(feature = "mpi")]

use crate::cli_mpi::{manifest, ok, records};
use crate::common::*;

use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// Ranks become nodes: rank R is on node `fsbench-node(R / FSB_PER)`, its own host name in a UTS
/// namespace; its work directory is FSB_WD, or FSB_BAD_WD on node FSB_BAD.
const NODE: &str = r#"#!/bin/sh
r=${OMPI_COMM_WORLD_RANK:-$SLURM_PROCID}
node=fsbench-node$((r / ${FSB_PER:-1}))
FSBENCH_WORKDIR=$FSB_WD
[ "$node" = "$FSB_BAD" ] && FSBENCH_WORKDIR=$FSB_BAD_WD
export FSBENCH_WORKDIR
exec unshare -u sh -c "hostname $node && exec \"\$@\"" sh "$@"
"#;

/// A node with its own mount namespace too, where its own device is at FSB_T/disk (as
/// /dev/nvme0n1 is on every node); with FSB_T/mount.NODE, its device is also mounted there.
const NODE_DEVICE: &str = r#"#!/bin/sh
r=${OMPI_COMM_WORLD_RANK:-$SLURM_PROCID}
node=fsbench-node$r
t=$FSB_T
exec unshare -mu --propagation private sh -c "hostname $node && mount --bind \$(cat $t/dev.$node) $t/disk && { [ ! -f $t/mount.$node ] || mount \$(cat $t/dev.$node) $t/m; } && exec \"\$@\"" sh "$@"
"#;

/// Every node's ext4 on a loop image, and a short write on it.
const EXT4: &[&str] = &["compare", "ext4", "--size", "256M"];
const BLOCK: &[&str] = &["-w", "block:rw=write,bs=64k,size=16m,runtime=1"];

/// One test's places: its work directory (each node's run directory in it), the study, the node
/// scripts. Holds the test lock. (The state files are in the machine's state directory: there the
/// cleanup at each run's start sees every live run's claims, other test runs' too.)
struct Nodes {
    _lock: (Ranks, Serial),
    dir: tempfile::TempDir,
    wd: PathBuf,
    out: PathBuf,
}

fn nodes(why_device: bool) -> Option<Nodes> {
    let lock = (crate::common::ranks_lock(), serial());
    let missing = [
        (
            !have("mpirun"),
            "mpirun not found (apt-get install openmpi-bin)",
        ),
        (!is_root(), "needs root (loop devices, mkfs, mount)"),
        (!have("unshare"), "unshare not found (util-linux)"),
        (!have("mkfs.ext4"), "mkfs.ext4 not found (e2fsprogs)"),
        (
            why_device && !have("mkfs.xfs"),
            "mkfs.xfs not found (xfsprogs)",
        ),
    ];
    if let Some((_, why)) = missing.iter().find(|(m, _)| *m) {
        skip(true, why);
        return None;
    }
    let dir = workdir();
    let (wd, out) = (dir.path().join("wd"), dir.path().join("study"));
    std::fs::create_dir(&wd).unwrap();
    for (name, text) in [("node.sh", NODE), ("node-device.sh", NODE_DEVICE)] {
        let p = dir.path().join(name);
        std::fs::write(&p, text).unwrap();
        assert!(sh(&format!("chmod +x {}", p.display())).0);
    }
    Some(Nodes {
        _lock: lock,
        dir,
        wd,
        out,
    })
}

impl Nodes {
    /// `mpirun -np N SCRIPT fsbench ARGS...`.
    fn mpirun(&self, np: usize, script: &str, env: &[(&str, &str)], args: &[&str]) -> Output {
        self.command(np, script, env, args)
            .output()
            .expect("mpirun runs")
    }

    fn command(&self, np: usize, script: &str, env: &[(&str, &str)], args: &[&str]) -> Command {
        let mut c = Command::new("mpirun");
        c.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .env("FSBENCH_HISTORY", history_path())
            .env("FSB_WD", &self.wd)
            .env("FSB_T", self.dir.path())
            .envs(env.iter().copied())
            .args(["--oversubscribe", "-np", &np.to_string()])
            .arg(self.dir.path().join(script))
            .arg(crate::common::exe())
            .args(args)
            .args(["--out", self.out.to_str().unwrap()]);
        c
    }

    /// Nothing of the run on any node: no loop device, mount or image under `wd`, no run
    /// directory, no state file of the study's run.
    fn nothing_left(&self, wd: &Path) {
        no_leftovers(wd);
        let left: Vec<_> = std::fs::read_dir(wd)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .filter(|n| !n.starts_with('.'))
            .collect();
        assert!(left.is_empty(), "left in {}: {left:?}", wd.display());
        let Ok(m) = std::fs::read_to_string(self.out.join("manifest.json")) else {
            return;
        };
        let run: serde_json::Value = serde_json::from_str(&m).unwrap();
        let run = str_of(&run, "run_id");
        assert!(!run.is_empty());
        let states = std::env::var("FSBENCH_STATE_DIR").unwrap_or("/run/fsbench".into());
        let left: Vec<_> = std::fs::read_dir(Path::new(&states).join("targets"))
            .map(|d| d.flatten().map(|e| e.file_name()).collect())
            .unwrap_or_default();
        let left: Vec<_> = left
            .iter()
            .filter(|n| n.to_string_lossy().starts_with(run))
            .collect();
        assert!(left.is_empty(), "state files left: {left:?}");
    }
}

fn targets(m: &serde_json::Value) -> Vec<serde_json::Value> {
    m["targets"].as_array().cloned().unwrap_or_default()
}

fn str_of<'a>(v: &'a serde_json::Value, k: &str) -> &'a str {
    v[k].as_str().unwrap_or_default()
}

/// Each node's name of a node's figures or a rank's.
fn hosts(v: &serde_json::Value, k: &str) -> Vec<String> {
    v[k].as_array()
        .unwrap()
        .iter()
        .map(|x| str_of(x, "host").to_string())
        .collect()
}

#[test]
fn four_ranks_as_four_nodes_each_format_measure_and_tear_down_their_own_ext4() {
    let Some(n) = nodes(false) else { return };
    let o = n.mpirun(4, "node.sh", &[], &[EXT4, BLOCK, &["-q"]].concat());
    ok(&o);
    let recs = records(&n.out);
    assert_eq!(recs.len(), 1, "{recs:?}");
    let r = &recs[0];
    assert_eq!(r["outcome"], "ok", "{r}");
    let names: Vec<String> = (0..4).map(|k| format!("fsbench-node{k}")).collect();
    assert_eq!(hosts(r, "nodes"), names, "a node each, by processor name");
    let nodes = r["nodes"].as_array().unwrap();
    let sum: f64 = nodes.iter().map(|x| x["bytes"].as_f64().unwrap()).sum();
    assert_eq!(
        r["metrics"]["bytes"].as_f64(),
        Some(sum),
        "the sum of the nodes"
    );
    for (k, x) in nodes.iter().enumerate() {
        assert_eq!(
            (x["node"].as_u64(), x["ranks"].as_u64()),
            (Some(k as u64), Some(1))
        );
        assert!(x["bytes_per_sec"].as_f64().unwrap() > 0.0, "{x}");
    }
    // Each node formatted and mounted its own: four targets, four loop devices, four run
    // directories named for their node.
    let m = manifest(&n.out);
    assert_eq!(m["status"], "complete", "{m}");
    let ts = targets(&m);
    assert_eq!(ts.len(), 4, "{m}");
    let mut devices: Vec<&str> = ts.iter().map(|t| str_of(t, "device")).collect();
    devices.sort();
    devices.dedup();
    assert_eq!(devices.len(), 4, "{devices:?}");
    for k in 0..4 {
        let t = ts
            .iter()
            .find(|t| str_of(t, "id").ends_with(&format!("-n{k}-0")))
            .unwrap_or_else(|| panic!("node {k}'s target: {m}"));
        assert!(
            str_of(t, "mountpoint").contains(&format!("-n{k}/mnt-0-ext4")),
            "{t}"
        );
        let mkfs = t["commands"]
            .as_array()
            .unwrap()
            .iter()
            .any(|c| c["argv"][0] == "mkfs.ext4" && c["exit_code"] == 0);
        assert!(mkfs, "node {k} formatted: {t}");
    }
    n.nothing_left(&n.wd);
}

#[test]
fn ranks_on_one_node_share_its_target_and_read_each_others_files() {
    let Some(n) = nodes(false) else { return };
    // 4 ranks on 2 nodes: ranks 0 and 1 on fsbench-node0, ranks 2 and 3 on fsbench-node1.
    let o = n.mpirun(
        4,
        "node.sh",
        &[("FSB_PER", "2")],
        &[
            "compare",
            "ext4",
            "--size",
            "256M",
            "-w",
            "files:count=200,threads=1",
            "-q",
        ],
    );
    ok(&o);
    let recs = records(&n.out);
    let read = recs.iter().find(|r| r["test"] == "read").unwrap();
    assert_eq!(read["outcome"], "ok", "{read}");
    // Rank R read what the other rank of its node wrote, on the node's own filesystem.
    assert_eq!(
        read["metrics"]["integrity_ok"].as_f64(),
        Some(800.0),
        "{read}"
    );
    assert_eq!(read["metrics"]["wrong_identity"].as_f64(), Some(0.0));
    assert_eq!(hosts(read, "nodes"), ["fsbench-node0", "fsbench-node1"]);
    assert!(read["nodes"]
        .as_array()
        .unwrap()
        .iter()
        .all(|x| x["ranks"] == 2));
    let ranks: Vec<u64> = read["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|x| x["node"].as_u64().unwrap())
        .collect();
    assert_eq!(ranks, [0, 0, 1, 1]);
    assert_eq!(targets(&manifest(&n.out)).len(), 2, "a target per node");
    n.nothing_left(&n.wd);
}

#[test]
fn a_node_whose_mkfs_fails_stops_every_node_and_leaves_nothing_on_any() {
    let Some(n) = nodes(false) else { return };
    // Node 2's disk is full: its work directory is a 1 MiB tmpfs, so mkfs's writes to the image
    // fail there, after the other nodes have formatted and mounted theirs.
    let small = n.dir.path().join("small");
    std::fs::create_dir(&small).unwrap();
    assert!(
        sh(&format!(
            "mount -t tmpfs -o size=1m,mode=0755 tmpfs {}",
            small.display()
        ))
        .0
    );
    struct Unmount(PathBuf);
    impl Drop for Unmount {
        fn drop(&mut self) {
            let _ = Command::new("umount").arg(&self.0).status();
        }
    }
    let _small = Unmount(small.clone());
    let small_wd = small.join("wd");
    std::fs::create_dir(&small_wd).unwrap();
    let o = n.mpirun(
        4,
        "node.sh",
        &[
            ("FSB_BAD", "fsbench-node2"),
            ("FSB_BAD_WD", small_wd.to_str().unwrap()),
        ],
        &[EXT4, BLOCK].concat(),
    );
    assert_eq!(o.status.code(), Some(1), "{}", stderr(&o));
    let recs = records(&n.out);
    assert_eq!(recs.len(), 1, "no node measured: {recs:?}");
    let r = &recs[0];
    assert_eq!(
        (r["test"].as_str(), r["outcome"].as_str()),
        (Some("provision"), Some("failed"))
    );
    let e = str_of(r, "error");
    assert!(
        e.starts_with("node 2 (fsbench-node2): ") && e.contains("mkfs.ext4"),
        "{e}"
    );
    assert!(
        stderr(&o).contains("could not provision it: no node runs it"),
        "{}",
        stderr(&o)
    );
    assert!(targets(&manifest(&n.out)).is_empty());
    n.nothing_left(&n.wd);
    n.nothing_left(&small_wd);
}

#[test]
fn a_node_killed_mid_run_leaves_its_own_target_and_cleanup_there_removes_it() {
    let Some(n) = nodes(false) else { return };
    // (Open MPI sends SIGTERM this long after the death is seen, and SIGKILL as long after it:
    // the others tear down in between, unless a send to a rank that stopped holds them.)
    let mut c = n.command(
        4,
        "node.sh",
        &[("OMPI_MCA_odls_base_sigkill_timeout", "3")],
        &[
            EXT4,
            &["-w", "block:rw=write,bs=64k,size=16m,runtime=30", "-q"],
        ]
        .concat(),
    );
    let mut child = c
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let wd = n.wd.to_string_lossy().into_owned();
    let t0 = std::time::Instant::now();
    while mounts_text().matches(wd.as_str()).count() < 4 && t0.elapsed().as_secs() < 60 {
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
    // Node 2's rank, killed in the phase (its 16 MB laid out): no teardown there. The others'
    // figures (a message too large to go eagerly) then find rank 0 stopped.
    std::thread::sleep(std::time::Duration::from_millis(1500));
    crate::cli_mpi::signal_rank(&n.out, 2, "9");
    assert!(!child.wait().unwrap().success());
    // The other nodes tore theirs down; node 2's target is still there, in its own state file.
    let left: Vec<String> = mounts_text()
        .lines()
        .filter(|l| l.contains(wd.as_str()))
        .map(str::to_string)
        .collect();
    assert_eq!(left.len(), 1, "{left:?}");
    assert!(left[0].contains("-n2/mnt-0-ext4"), "{left:?}");
    let o = run(&["cleanup", "--dry-run"]);
    assert!(
        stdout(&o).contains("leftover target 'ext4'"),
        "{}",
        stdout(&o)
    );
    let o = run(&["cleanup"]);
    assert!(o.status.success(), "{}", stderr(&o));
    n.nothing_left(&n.wd);
}

/// Four loop devices, one per node, named in FSB_T/dev.NODE; FSB_T/disk is where each node sees
/// its own.
fn devices(n: &Nodes) -> Vec<TestLoop> {
    let t = n.dir.path();
    std::fs::write(t.join("disk"), "").unwrap();
    std::fs::create_dir(t.join("m")).unwrap();
    (0..4)
        .map(|k| {
            let l = TestLoop::new(512);
            std::fs::write(t.join(format!("dev.fsbench-node{k}")), &l.device).unwrap();
            l
        })
        .collect()
}

#[test]
fn with_device_each_node_formats_its_own_and_one_in_use_stops_every_node() {
    let Some(n) = nodes(true) else { return };
    let loops = devices(&n);
    let disk = n.dir.path().join("disk");
    // (--wipe: xfs goes where ext4 was.)
    let args = [
        "compare",
        "ext4",
        "xfs",
        "--device",
        disk.to_str().unwrap(),
        "--wipe",
        "-q",
    ];
    let args = [&args[..], BLOCK].concat();
    let o = n.mpirun(4, "node-device.sh", &[], &args);
    ok(&o);
    let m = manifest(&n.out);
    let ts = targets(&m);
    assert_eq!(ts.len(), 8, "ext4 then xfs on each node's own device: {m}");
    assert!(ts
        .iter()
        .all(|t| str_of(t, "device") == disk.to_str().unwrap()));
    let recs = records(&n.out);
    assert_eq!(recs.len(), 2);
    assert!(recs
        .iter()
        .all(|r| r["outcome"] == "ok" && hosts(r, "nodes").len() == 4));
    for l in &loops {
        assert_eq!(fs_type(&l.device), "xfs", "{} was formatted", l.device);
    }
    n.nothing_left(&n.wd);
    // Node 2's device is mounted (in node 2's namespace): every node stops before any formats.
    for l in &loops {
        assert!(sh(&format!("wipefs -aq {}", l.device)).0);
    }
    assert!(sh(&format!("mkfs.ext4 -q {}", loops[2].device)).0);
    std::fs::write(n.dir.path().join("mount.fsbench-node2"), "").unwrap();
    let _ = std::fs::remove_dir_all(&n.out);
    let o = n.mpirun(4, "node-device.sh", &[], &args);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    let e = stderr(&o);
    assert!(
        e.contains("rank 2 on fsbench-node2") && e.contains("it is mounted"),
        "{e}"
    );
    assert!(!n.out.exists(), "no study was made");
    for l in [&loops[0], &loops[1], &loops[3]] {
        assert_eq!(fs_type(&l.device), "", "{} was not formatted", l.device);
    }
    n.nothing_left(&n.wd);
}

/// The Slurm this test runs under: `SLURM_CONF`, or the one-node Slurm `scripts/slurm-localhost`
/// starts; None (said) where no Slurm answers.
fn slurm() -> Option<String> {
    let conf = std::env::var("SLURM_CONF")
        .ok()
        .or_else(|| {
            let p = "/var/tmp/fsbench-slurm/slurm.conf";
            Path::new(p).exists().then(|| p.to_string())
        })
        .unwrap_or_default();
    let (up, said) = sh(&format!("SLURM_CONF={conf} timeout 10 sinfo -h -o %T 2>&1"));
    let idle = said.lines().any(|l| matches!(l.trim(), "idle" | "mixed"));
    let why = format!(
        "no Slurm answers here ({}): scripts/slurm-localhost starts a one-node Slurm (apt-get install slurm-wlm munge)",
        if have("srun") { said.trim().lines().last().unwrap_or("no idle node").to_string() } else { "srun not found".into() }
    );
    (!skip(!(have("srun") && up && idle), &why)).then_some(conf)
}

#[test]
fn srun_launches_the_ranks_each_node_formatting_its_own() {
    let Some(n) = nodes(false) else { return };
    let Some(conf) = slurm() else { return };
    // srun's tasks find MPI through PMIx; -O: more tasks than the node's cores.
    let o = Command::new("srun")
        .env("SLURM_CONF", &conf)
        .env("FSBENCH_HISTORY", history_path())
        .env("FSB_WD", &n.wd)
        .args(["--mpi=pmix", "-O", "-n", "4"])
        .arg(n.dir.path().join("node.sh"))
        .arg(crate::common::exe())
        .args(EXT4)
        .args(BLOCK)
        .args(["-q", "--out"])
        .arg(&n.out)
        .output()
        .expect("srun runs");
    ok(&o);
    let recs = records(&n.out);
    assert_eq!(recs.len(), 1, "{recs:?}");
    let names: Vec<String> = (0..4).map(|k| format!("fsbench-node{k}")).collect();
    assert_eq!(hosts(&recs[0], "nodes"), names);
    assert_eq!(targets(&manifest(&n.out)).len(), 4);
    n.nothing_left(&n.wd);
}
