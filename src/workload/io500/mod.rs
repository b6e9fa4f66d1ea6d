//! `io500`: io500's twelve scored phases on each target, in io500's order, with io500's
//! parameters (`phases.rs`: ior-easy, ior-hard, mdtest-easy, mdtest-hard as the `ior:` and
//! `mdtest:` workloads run those command lines, and fsbench's own find in `find.rs`), each
//! phase's record named as io500 names it with io500's figure (`io500_value`, GiB/s or kIOPS),
//! and once the run ends a `score` record derived from them: io500's bandwidth and metadata
//! means and their geometric mean. Sizes smaller than io500's (`stonewall`, `easy_block`,
//! `hard_segments`, `easy_files`, `hard_files`) are allowed and marked: a write phase under
//! io500's 300 s makes the run one io500 would call INVALID, not comparable with its list.

mod find;
pub mod phases;
mod session;

use crate::metrics::name as metric;

use super::{Footprint, Opened, SpecError, Workload, WorkloadDef};
use crate::frame::{Phase, RunError, Session, TargetCtx};
use crate::metrics::catalog::{key, m, Better::*, MetricDef, Unit::*};
use crate::plan::{Overrides, WorkloadSpec};
use phases::{Sizes, Tool, MIN_WRITE_S, PHASES};

/// io500's figures and find's (the IOR and mdtest records carry their workloads' metrics).
pub static METRICS: &[MetricDef] = &[
    key(metric::IO500_SCORE, Count, Higher),
    key(metric::IO500_VALUE, Count, Higher),
    m("found", Count, Neither),
    m(metric::IO500_BW, Count, Higher),
    m(metric::IO500_MD, Count, Higher),
];

pub const DEF: WorkloadDef = WorkloadDef {
    name: "io500",
    summary: "io500's twelve scored phases (ior-easy/hard, mdtest-easy/hard, find) and its score, io500's parameters unless smaller sizes are given",
    params: &[
        ("stonewall", "seconds after which a write phase stops (IOR -D, mdtest -W; io500: 300)"),
        ("easy_block", "ior-easy's block per rank (-b; io500: 9920000m)"),
        ("hard_segments", "ior-hard's 47008-byte segments per rank (-s; io500: 10000000)"),
        ("easy_files", "mdtest-easy's files per rank (-n; io500: 1000000)"),
        ("hard_files", "mdtest-hard's files per rank (-n; io500: 1000000)"),
    ],
    takes: super::Takes::Listed,
    metrics: METRICS,
    build,
    ranks: true,
};

pub struct Io500 {
    sizes: Sizes,
    /// Each row's workload (`ior:` or `mdtest:` with io500's command line); None for find.
    runs: Vec<Option<Box<dyn Workload>>>,
}

fn build(spec: &WorkloadSpec, o: &Overrides) -> Result<Box<dyn Workload>, SpecError> {
    let mut s = Sizes::default();
    let number = |k: &str, v: &str| {
        v.parse::<u64>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| spec.bad(format!("{k}={v}: give a whole number above 0")))
    };
    // (A bare key never reaches here: workload::build refuses it.)
    for (k, v) in spec
        .params
        .iter()
        .filter_map(|(k, v)| Some((k, v.as_ref()?)))
    {
        match k.as_str() {
            "stonewall" => s.stonewall = number(k, v)?,
            "easy_block" => {
                crate::plan::units::parse_size(v)
                    .ok()
                    .filter(|b| *b > 0)
                    .ok_or_else(|| spec.bad(format!("easy_block={v}: give a size, e.g. 2g")))?;
                s.easy_block = v.clone();
            }
            "hard_segments" => s.hard_segments = number(k, v)?,
            "easy_files" => s.easy_files = number(k, v)?,
            "hard_files" => s.hard_files = number(k, v)?,
            _ => {}
        }
    }
    let mut runs = Vec::new();
    for r in PHASES {
        let tool = match r.tool {
            Tool::Ior => "ior",
            Tool::Mdtest => "mdtest",
            Tool::Find => {
                runs.push(None);
                continue;
            }
        };
        let sub = crate::plan::workload::parse_workload(&format!("{tool}:{}", r.args(&s)))
            .and_then(|w| super::build(&w, o))
            .map_err(|e| spec.bad(format!("{}: {e}", r.name)))?;
        runs.push(Some(sub));
    }
    Ok(Box::new(Io500 { sizes: s, runs }))
}

impl Workload for Io500 {
    fn open(&self, t: &TargetCtx) -> Result<Opened, RunError> {
        let Some(dir) = t.dir() else {
            return Ok(Opened::Skip {
                test: PHASES[0].name.into(),
                reason: "io500 works in a filesystem's directory; raw targets run block workloads"
                    .into(),
            });
        };
        let mut parts: Vec<Box<dyn Session>> = Vec::new();
        for run in &self.runs {
            parts.push(match run {
                None => Box::new(find::FindSession::new(t, dir)),
                Some(w) => match w.open(t)? {
                    Opened::Run(s) => s,
                    skip @ Opened::Skip { .. } => return Ok(skip),
                },
            });
        }
        let lead = t.ranks.rank.index == 0;
        Ok(Opened::Run(Box::new(session::Io500Session::new(
            parts,
            dir,
            self.sizes.clone(),
            lead,
        ))))
    }

    fn describe(&self) -> Vec<String> {
        PHASES
            .iter()
            .map(|r| {
                let tool = match r.tool {
                    Tool::Ior => "ior",
                    Tool::Mdtest => "mdtest",
                    Tool::Find => "find",
                };
                format!(
                    "{}: {tool} {} ({})",
                    r.name,
                    r.args(&self.sizes),
                    r.unit.name()
                )
            })
            .chain(std::iter::once(
                "score: sqrt(bw x md), bw the geometric mean of the ior phases, md of the others"
                    .into(),
            ))
            .collect()
    }

    fn tests(&self) -> Option<Vec<String>> {
        Some(
            PHASES
                .iter()
                .map(|r| r.name.to_string())
                .chain(std::iter::once("score".into()))
                .collect(),
        )
    }

    fn headline(&self) -> Option<&'static str> {
        Some(metric::IO500_SCORE)
    }

    fn footprint(&self) -> Option<Footprint> {
        // (A read phase's run counts the files its write made: the write's alone are counted;
        // mdtest's files by io500's sizes below.)
        let (kept, files) = PHASES
            .iter()
            .zip(&self.runs)
            .filter(|(r, _)| r.writes && r.tool == Tool::Ior)
            .filter_map(|(_, w)| w.as_ref()?.footprint())
            .fold((0u64, 0u64), |(b, n), f| {
                (b.saturating_add(f.kept), n.saturating_add(f.inodes))
            });
        let md = (self.sizes.hard_files.saturating_mul(3901 + 4096))
            .saturating_add(self.sizes.easy_files.saturating_mul(4096));
        let md_files = self.sizes.hard_files.saturating_add(self.sizes.easy_files);
        Some(Footprint::kept(
            kept.saturating_add(md),
            files.saturating_add(md_files),
        ))
    }

    fn derive(&self, records: &[Phase]) -> Vec<Phase> {
        vec![score(records, &self.sizes)]
    }
}

/// The `score` record: io500's formula over the phases' `io500_value`s, and whether io500 would
/// take the run for its list (every phase there, none failed, every write phase 300 s or more).
pub fn score(records: &[Phase], sizes: &Sizes) -> Phase {
    let of = |name: &str| records.iter().find(|p| p.test == name);
    let values: Vec<(&str, f64)> = PHASES
        .iter()
        .filter_map(|r| {
            let p = of(r.name).filter(|p| p.error.is_none())?;
            Some((r.name, *p.metrics.get(metric::IO500_VALUE)?))
        })
        .collect();
    let (bw, md, score) = phases::score(&values);
    let mut why: Vec<String> = Vec::new();
    for r in PHASES {
        match of(r.name) {
            None => why.push(format!("{} did not run", r.name)),
            Some(p) if p.error.is_some() => why.push(format!("{} failed", r.name)),
            Some(p) if r.writes && p.duration_s < MIN_WRITE_S => {
                why.push(format!("{} ran {:.1} s", r.name, p.duration_s))
            }
            _ => {}
        }
    }
    let valid = why.is_empty() && score > 0.0;
    let mut notes = vec![format!(
        "io500: score = sqrt(bw x md) = sqrt({bw:.4} GiB/s x {md:.4} kIOPS); io500 measures one system at a time: a ranking of filesystems by it is fsbench's"
    )];
    if !valid {
        notes.push(format!(
            "io500: not comparable with the io500 list: io500 marks a run INVALID when a write phase runs under {MIN_WRITE_S} s or a phase is missing ({})",
            why.join("; ")
        ));
    }
    let mut metrics = std::collections::BTreeMap::new();
    metrics.insert(metric::IO500_SCORE.to_string(), score);
    metrics.insert(metric::IO500_BW.to_string(), bw);
    metrics.insert(metric::IO500_MD.to_string(), md);
    Phase {
        test: "score".into(),
        duration_s: records.iter().map(|p| p.duration_s).sum(),
        error: (score <= 0.0).then(|| "io500: no score: a phase is missing or at 0".into()),
        metrics,
        notes,
        config: Some(serde_json::json!({
            "tool": "io500",
            "io500": {
                "phases": values.iter().map(|(n, v)| (n.to_string(), *v)).collect::<std::collections::BTreeMap<_, _>>(),
                "comparable": valid,
                "sizes": sizes,
            }
        })),
        ..Default::default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn phase(test: &str, value: f64, secs: f64) -> Phase {
        let mut p = Phase {
            test: test.into(),
            duration_s: secs,
            ..Default::default()
        };
        p.metrics.insert(metric::IO500_VALUE.into(), value);
        p
    }

    fn comparable(p: &Phase) -> Option<bool> {
        p.config.as_ref()?["io500"]["comparable"].as_bool()
    }

    #[test]
    fn the_score_record_applies_io500s_formula_to_its_phases() {
        let recs: Vec<Phase> = PHASES
            .iter()
            .enumerate()
            .map(|(i, r)| phase(r.name, 0.5 + i as f64, 400.0))
            .collect();
        let p = score(&recs, &Sizes::default());
        let v: Vec<(&str, f64)> = PHASES
            .iter()
            .enumerate()
            .map(|(i, r)| (r.name, 0.5 + i as f64))
            .collect();
        let (bw, md, s) = phases::score(&v);
        assert_eq!(p.metrics[metric::IO500_SCORE], s);
        assert_eq!(p.metrics[metric::IO500_BW], bw);
        assert_eq!(p.metrics[metric::IO500_MD], md);
        assert_eq!(comparable(&p), Some(true));
        // A write phase under 300 s: the same score, not comparable with the list.
        let mut short = recs.clone();
        short[0].duration_s = 12.0;
        let p = score(&short, &Sizes::default());
        assert_eq!(p.metrics[metric::IO500_SCORE], s);
        assert_eq!(comparable(&p), Some(false));
        assert!(p
            .notes
            .iter()
            .any(|n| n.contains("ior-easy-write ran 12.0 s")));
        // A failed phase: no score.
        short[3].error = Some("x".into());
        let p = score(&short, &Sizes::default());
        assert_eq!(p.metrics[metric::IO500_SCORE], 0.0);
        assert!(p.error.is_some());
    }
}
