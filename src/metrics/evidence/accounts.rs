//! Whose the machine's time and storage I/O were over a phase: fsbench's, its other ranks', the
//! filesystem's processes and kernel threads', other kernel threads', other processes' (alive at
//! the phase's end, or come and gone within it), and interrupts'.

use std::collections::HashMap;

use super::super::procfs::{TaskIo, TICKS_PER_SEC};
use super::{Busy, Evidence, FsKind, MachineFigures, OthersIo, Owner, Snapshot, Watch};

/// The CPU (ticks) and storage I/O (bytes) each owner took between two scans.
pub(super) struct Accounts {
    /// The filesystem's daemons and kernel threads, by name.
    fs: Vec<(String, FsKind, u64)>,
    /// Other user processes by name (processes of one name add up: a build's compilers).
    others: Vec<(String, u64)>,
    /// Kernel threads that are not the filesystem's, and the run's other ranks.
    kernel: u64,
    ranks: u64,
    /// Other processes' storage I/O by name; the run's own (its ranks', the daemons').
    others_io: Vec<(String, u64)>,
    ours_io: u64,
}

fn add(list: &mut Vec<(String, u64)>, name: &str, n: u64) {
    match list.iter_mut().find(|(x, _)| x == name) {
        Some(e) => e.1 += n,
        None => list.push((name.to_string(), n)),
    }
}

fn io_bytes(io: Option<TaskIo>) -> u64 {
    io.map_or(0, |x| x.read + x.written)
}

impl Accounts {
    pub fn of(watch: &Watch, a: &Snapshot, b: &Snapshot) -> Accounts {
        let before: HashMap<u32, (u64, u64)> = a
            .processes
            .iter()
            .map(|t| (t.pid, (t.cpu.user + t.cpu.system, io_bytes(t.io))))
            .collect();
        let mut acc = Accounts {
            fs: Vec::new(),
            others: Vec::new(),
            kernel: 0,
            ranks: 0,
            others_io: Vec::new(),
            ours_io: 0,
        };
        for t in &b.processes {
            // A process that started during the phase counts from zero.
            let (ticks0, io0) = before.get(&t.pid).copied().unwrap_or((0, 0));
            let ticks = (t.cpu.user + t.cpu.system).saturating_sub(ticks0);
            let io = io_bytes(t.io).saturating_sub(io0);
            let kind = match watch.owner(t.pid, &t.comm, &t.cpu) {
                Owner::Fsbench => continue,
                Owner::Kernel => {
                    acc.kernel += ticks;
                    continue;
                }
                Owner::Rank => {
                    acc.ranks += ticks;
                    acc.ours_io += io;
                    continue;
                }
                Owner::Other => {
                    if ticks > 0 {
                        add(&mut acc.others, &t.comm, ticks);
                    }
                    if io > 0 {
                        add(&mut acc.others_io, &t.comm, io);
                    }
                    continue;
                }
                Owner::Daemon => FsKind::Daemon,
                Owner::FsKernel => FsKind::Kernel,
            };
            acc.ours_io += io;
            if ticks == 0 {
                continue;
            }
            // Kernel threads of one kind add up under their name without the device or number.
            let name = match kind {
                FsKind::Daemon => t.comm.clone(),
                FsKind::Kernel => kernel_family(&t.comm, watch.threads.kernel),
            };
            match acc.fs.iter_mut().find(|(n, k, _)| *n == name && *k == kind) {
                Some(e) => e.2 += ticks,
                None => acc.fs.push((name, kind, ticks)),
            }
        }
        acc
    }

    /// The filesystem's processes and kernel threads, busiest first, as cores.
    pub fn filesystem(&self, wall_s: f64) -> Vec<Busy> {
        let mut out: Vec<Busy> = self
            .fs
            .iter()
            .map(|(name, kind, t)| Busy {
                name: name.clone(),
                cores: *t as f64 / TICKS_PER_SEC / wall_s,
                kind: Some(*kind),
            })
            .collect();
        out.sort_by(|x, y| y.cores.total_cmp(&x.cores));
        out
    }

    /// The machine over the phase, `e` holding fsbench's CPU, the filesystem's and the devices;
    /// the processes' figures over `walk_s`, the window between their walks (none without).
    pub fn machine(
        &self,
        a: &Snapshot,
        b: &Snapshot,
        e: &Evidence,
        walk_s: Option<f64>,
    ) -> Option<MachineFigures> {
        let (x, y) = (a.machine?, b.machine?);
        let tick_cores = |t: u64| t as f64 / TICKS_PER_SEC / e.wall_s;
        let walk_cores = |t: u64| walk_s.map_or(0.0, |w| t as f64 / TICKS_PER_SEC / w);
        let total = y.total.saturating_sub(x.total).max(1) as f64;
        let idle = y.idle.saturating_sub(x.idle) + y.iowait.saturating_sub(x.iowait);
        let stolen = y.steal.saturating_sub(x.steal);
        let busy_ticks = (y.total.saturating_sub(x.total))
            .saturating_sub(idle)
            .saturating_sub(stolen);
        let busy = tick_cores(busy_ticks);
        let own = e.fsbench.user + e.fsbench.system + walk_cores(self.ranks);
        let fs: f64 = e.filesystem.iter().map(|b| b.cores).sum();
        let processes: f64 = self.others.iter().map(|(_, t)| walk_cores(*t)).sum();
        let accounted = own + fs + processes + walk_cores(self.kernel);
        let irq = tick_cores(y.irq.saturating_sub(x.irq));
        Some(MachineFigures {
            busy: busy_ticks as f64 / total,
            iowait: y.iowait.saturating_sub(x.iowait) as f64 / total,
            steal: stolen as f64 / total,
            others: (busy - own - fs).max(0.0),
            processes,
            other_top: top(&self.others, 3)
                .into_iter()
                .map(|(name, t)| Busy {
                    name,
                    cores: walk_cores(t),
                    kind: None,
                })
                .filter(|b| b.cores >= 0.01)
                .collect(),
            gone: walk_s.map_or(0.0, |_| (busy - irq - accounted).max(0.0)),
            io: walk_s.and_then(|_| self.io(a, b, e)),
            walk_s,
        })
    }

    /// Other processes' storage I/O, and what of it the target's device stack moved.
    fn io(&self, a: &Snapshot, b: &Snapshot, e: &Evidence) -> Option<OthersIo> {
        let bytes: u64 = self.others_io.iter().map(|(_, n)| n).sum();
        if bytes == 0 {
            return None;
        }
        let ours = io_bytes(b.own_io).saturating_sub(io_bytes(a.own_io)) + self.ours_io;
        let moved = |top: bool| -> u64 {
            e.devices
                .iter()
                .filter(|d| d.top() == top)
                .map(|d| d.read_bytes + d.write_bytes)
                .sum()
        };
        let (top_bytes, under) = (moved(true), moved(false));
        let beyond = top_bytes
            .saturating_sub(ours)
            .max(under.saturating_sub(top_bytes));
        Some(OthersIo {
            bytes,
            on_stack: beyond.min(bytes),
            top: top(&self.others_io, 3),
        })
    }
}

/// The `n` largest of a list, largest first.
fn top(list: &[(String, u64)], n: usize) -> Vec<(String, u64)> {
    let mut v = list.to_vec();
    v.sort_by(|x, y| y.1.cmp(&x.1).then_with(|| x.0.cmp(&y.0)));
    v.truncate(n);
    v
}

/// `jbd2/loop3-8` -> `jbd2`, `kworker/u4:2-btrfs-endio-write` -> `btrfs (kworker)`.
fn kernel_family(comm: &str, words: &[&str]) -> String {
    let word = words
        .iter()
        .find(|w| comm.contains(*w))
        .copied()
        .unwrap_or(comm);
    let word = word.trim_end_matches(['/', '-', '_']);
    if comm.starts_with("kworker") {
        format!("{word} (kworker)")
    } else {
        word.to_string()
    }
}
