//! The io500 run on one target: each phase of the table its own IOR or mdtest session (opened as
//! `ior:` and `mdtest:` open, from io500's command line) or the find, run one after the other in
//! io500's order. The scored record of each is renamed to io500's phase and given io500's figure
//! (`io500_value`); the other records of a run (mdtest's tree made and removed) are kept only
//! when they failed.

use std::path::{Path, PathBuf};

use super::phases::{Row, Sizes, Unit, MIN_WRITE_S, PHASES};
use crate::frame::{Merged, Phase, PhaseSpec, RunError, Session, WorkerCtx, WorkerOut};
use crate::metrics::name as metric;

/// One phase of the run: which part (a row's session), and which of its phases.
struct Step {
    part: usize,
    sub: usize,
}

pub struct Io500Session {
    parts: Vec<Box<dyn Session>>,
    steps: Vec<Step>,
    specs: Vec<PhaseSpec>,
    dir: PathBuf,
    /// Every option of the run, for each record's config.
    sizes: Sizes,
    /// Rank 0 (or the one process) removes the run's directory at the end.
    lead: bool,
}

impl Io500Session {
    pub fn new(parts: Vec<Box<dyn Session>>, dir: &Path, sizes: Sizes, lead: bool) -> Self {
        let mut steps = Vec::new();
        let mut specs = Vec::new();
        for (part, s) in parts.iter().enumerate() {
            let row = &PHASES[part];
            for (sub, spec) in s.phases().iter().enumerate() {
                let mut spec = spec.clone();
                spec.name = match spec.name == row.scored {
                    true => row.name.to_string(),
                    false => format!("{}/{}", row.name, spec.name),
                };
                steps.push(Step { part, sub });
                specs.push(spec);
            }
        }
        Io500Session {
            parts,
            steps,
            specs,
            dir: dir.to_path_buf(),
            sizes,
            lead,
        }
    }

    /// The scored record as io500 names and prints it.
    fn scored(&self, row: &Row, mut p: Phase) -> Phase {
        let value = match row.unit {
            Unit::GiBps => p
                .metrics
                .get(metric::BYTES_PER_SEC)
                .map(|b| b / 1073741824.0),
            Unit::Kiops => p.metrics.get(metric::OPS_PER_SEC).map(|r| r / 1000.0),
        };
        if let Some(v) = value {
            p.metrics.insert(metric::IO500_VALUE.into(), v);
        }
        if row.writes && p.duration_s < MIN_WRITE_S {
            p.notes.push(format!(
                "io500: a write phase of {:.1} s, under io500's {MIN_WRITE_S} s: io500 marks such a run INVALID (not comparable with the io500 list)",
                p.duration_s
            ));
        }
        let io500 = serde_json::json!({
            "phase": row.name,
            "unit": row.unit.name(),
            "args": row.args(&self.sizes),
            "sizes": self.sizes,
        });
        p.config = Some(match p.config.take() {
            Some(serde_json::Value::Object(mut o)) => {
                o.insert("io500".into(), io500);
                serde_json::Value::Object(o)
            }
            _ => serde_json::json!({ "io500": io500 }),
        });
        p.test = row.name.into();
        p
    }
}

impl Session for Io500Session {
    fn phases(&self) -> &[PhaseSpec] {
        &self.specs
    }

    /// Untimed: io500's timestamp file before the phase that follows it, then the part's own.
    fn prepare(&mut self, phase: usize) -> Result<(), RunError> {
        let Step { part, sub } = self.steps[phase];
        if PHASES[part].stamp_before && sub == 0 {
            let stamp = self.dir.join(super::phases::TIMESTAMP);
            if let Some(d) = stamp.parent() {
                std::fs::create_dir_all(d).map_err(RunError::io(d.display()))?;
            }
            crate::sys::outfile::create(&stamp, crate::sys::outfile::Create::Replace)
                .map_err(RunError::io(stamp.display()))?;
        }
        self.parts[part].prepare(sub)
    }

    fn work(&self, phase: usize, ctx: &WorkerCtx) -> WorkerOut {
        let Step { part, sub } = self.steps[phase];
        self.parts[part].work(sub, ctx)
    }

    fn finish(&mut self, phase: usize, m: &Merged) -> Result<Vec<Phase>, RunError> {
        let Step { part, sub } = self.steps[phase];
        let row = &PHASES[part];
        let records = self.parts[part].finish(sub, m)?;
        Ok(records
            .into_iter()
            .filter_map(|p| match p.test == row.scored {
                true => Some(self.scored(row, p)),
                false => p.error.is_some().then(|| Phase {
                    test: format!("{}/{}", row.name, p.test),
                    ..p
                }),
            })
            .collect())
    }

    fn beside(
        &self,
        phase: usize,
        done: &std::sync::atomic::AtomicBool,
        workers: &[crate::metrics::progress::Progress],
    ) {
        let Step { part, sub } = self.steps[phase];
        self.parts[part].beside(sub, done, workers)
    }

    /// Each part's own, then the run's directory (io500 removes its files at the end).
    fn close(&mut self) -> Result<(), RunError> {
        for p in &mut self.parts {
            p.close()?;
        }
        let dir = self.dir.join(super::phases::DIR);
        if !self.lead {
            return Ok(());
        }
        match std::fs::remove_dir_all(&dir) {
            Err(e) if e.kind() != std::io::ErrorKind::NotFound => {
                Err(RunError::io(dir.display())(e))
            }
            _ => Ok(()),
        }
    }
}
