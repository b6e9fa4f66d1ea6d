//! A record's profile (`profile` in results.jsonl, docs/results-schema.md): which profiles were
//! taken, where their folded stacks are in the study, and where the time went.

use serde::{Deserialize, Serialize};

use super::folded::{file_name, Folded, Kind};
use super::shares::{shares, Shares};
use crate::plan::profile::ProfileMode;

/// The folded stacks of one profile of a record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stacks {
    /// The file in the study directory (`profiles/TARGET.REPEAT.TEST.on-cpu.folded`).
    pub file: String,
    /// What its counts add up to: samples on the CPU, microseconds off it.
    pub total: u64,
    /// Distinct stacks.
    pub stacks: usize,
    /// Samples or switches the kernel could not hand over (a full ring buffer).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub lost: u64,
    pub shares: Shares,
    /// The stacks themselves: written to `file` with the record, read back for the report.
    #[serde(skip)]
    pub folded: Option<Folded>,
}

fn is_zero(x: &u64) -> bool {
    *x == 0
}

impl Stacks {
    /// `code`: how the filesystem's kernel functions are named (its `FsThreads::code`).
    pub fn of(folded: Folded, kind: Kind, lost: u64, code: &[&str]) -> Stacks {
        Stacks {
            file: String::new(),
            total: folded.total(),
            stacks: folded.len(),
            lost,
            shares: shares(&folded, kind, code),
            folded: Some(folded),
        }
    }
}

/// What the on-CPU samples were taken at.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Clock {
    /// The kernel's timer tick interrupting a profiled thread (the `irq_vectors:local_timer_entry`
    /// tracepoint, per thread): the kernel's own rate (CONFIG_HZ), and nothing to do when the
    /// thread switches, so it costs a switch-heavy job nothing measurable.
    Tick,
    /// A `cpu-clock` timer per thread at a chosen rate: the kernel stops and restarts it at every
    /// context switch (in a VM, a timer reprogrammed through the hypervisor each time). What
    /// records made before the tick say (their field is absent).
    #[default]
    CpuClock,
}

impl Clock {
    /// The clock and its rate in words (`hz` 0: the tick's rate is not known here).
    pub fn describe(self, hz: u64) -> String {
        match (self, hz) {
            (Clock::Tick, 0) => "the kernel's timer tick".into(),
            (Clock::Tick, hz) => format!("the kernel's timer tick, {hz} Hz"),
            (Clock::CpuClock, hz) => format!("cpu-clock at {hz} Hz"),
        }
    }
}

/// The profiles of one record.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RecordProfile {
    pub mode: ProfileMode,
    /// What the on-CPU samples were taken at.
    #[serde(default)]
    pub clock: Clock,
    /// The on-CPU sampling rate (per second of a thread on a CPU; 0: the tick's, not known).
    pub hz: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub on_cpu: Option<Stacks>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub off_cpu: Option<Stacks>,
}

/// The study directory's folder of profiles.
pub const DIR: &str = "profiles";

impl RecordProfile {
    pub fn get(&self, kind: Kind) -> Option<&Stacks> {
        match kind {
            Kind::OnCpu => self.on_cpu.as_ref(),
            Kind::OffCpu => self.off_cpu.as_ref(),
        }
    }

    pub fn get_mut(&mut self, kind: Kind) -> Option<&mut Stacks> {
        match kind {
            Kind::OnCpu => self.on_cpu.as_mut(),
            Kind::OffCpu => self.off_cpu.as_mut(),
        }
    }

    /// Its files' names, each made unique against those `taken` says are another record's (two
    /// labels that sanitise alike): `NAME-2.on-cpu.folded`, `NAME-3...`.
    pub fn avoid(&mut self, taken: impl Fn(&str) -> bool) {
        for kind in Kind::ALL {
            let Some(s) = self.get_mut(kind) else {
                continue;
            };
            let tail = format!(".{}.folded", kind.name());
            let Some(stem) = s.file.strip_suffix(&tail).map(str::to_string) else {
                continue;
            };
            let mut n = 2;
            while taken(&s.file) {
                s.file = format!("{stem}-{n}{tail}");
                n += 1;
            }
        }
    }

    /// The files it names.
    pub fn files(&self) -> impl Iterator<Item = &str> {
        Kind::ALL
            .into_iter()
            .filter_map(|k| self.get(k))
            .map(|s| s.file.as_str())
    }

    /// Names its files after the record they belong to.
    pub fn name_files(&mut self, target: &str, repeat: u32, test: &str) {
        for kind in Kind::ALL {
            if let Some(s) = self.get_mut(kind) {
                s.file = format!("{DIR}/{}", file_name(target, repeat, test, kind));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn files_are_named_after_their_record_and_never_clash() {
        let stacks = |kind| Stacks::of(Folded::default(), kind, 0, &[]);
        let mut p = RecordProfile {
            mode: ProfileMode::Both,
            clock: Clock::Tick,
            hz: 250,
            on_cpu: Some(stacks(Kind::OnCpu)),
            off_cpu: Some(stacks(Kind::OffCpu)),
        };
        p.name_files("zfs:recordsize=4k", 1, "randwrite");
        assert_eq!(
            p.files().collect::<Vec<_>>(),
            [
                "profiles/zfs_recordsize=4k.2.randwrite.on-cpu.folded",
                "profiles/zfs_recordsize=4k.2.randwrite.off-cpu.folded"
            ]
        );
        let taken = ["profiles/zfs_recordsize=4k.2.randwrite.on-cpu.folded".to_string()];
        p.avoid(|f| taken.iter().any(|t| t == f));
        assert_eq!(
            p.files().collect::<Vec<_>>(),
            [
                "profiles/zfs_recordsize=4k.2.randwrite-2.on-cpu.folded",
                "profiles/zfs_recordsize=4k.2.randwrite.off-cpu.folded"
            ]
        );
        let json = serde_json::to_string(&p).unwrap();
        assert!(
            json.contains("\"mode\":\"both\"") && !json.contains("folded\":"),
            "{json}"
        );
    }
}
