//! A study's profiles as the report shows them: per test and target, the repeats' stacks added
//! up and their shares, and the flame graphs made of them (a graph per target and test, a
//! differential of each target against the baseline), each with the name of its file in the
//! study's `profiles/`. Pure.

use crate::profile::folded::{name_part, Folded, Kind};
use crate::profile::record::DIR;
use crate::profile::shares::{shares, FunctionShare, Shares};
use crate::report::records::{targets, test_name};
use crate::store::{Outcome, Record};

/// One profile of a target in a test, over its repeats.
pub(crate) struct Merged {
    /// The repeats' stacks added up; None when a repeat's stacks could not be read.
    pub(crate) folded: Option<Folded>,
    pub(crate) shares: Shares,
    /// Samples (on the CPU) or microseconds (off it), over every repeat.
    pub(crate) total: u64,
    pub(crate) repeats: usize,
    /// What the samples were taken at, in words (`Clock::describe`).
    pub(crate) rate: String,
}

/// A target's profiles in a test.
pub(crate) struct Side<'a> {
    pub(crate) target: &'a str,
    pub(crate) on: Option<Merged>,
    pub(crate) off: Option<Merged>,
}

impl Side<'_> {
    pub(crate) fn get(&self, kind: Kind) -> Option<&Merged> {
        match kind {
            Kind::OnCpu => self.on.as_ref(),
            Kind::OffCpu => self.off.as_ref(),
        }
    }
}

/// A test's profiles, target by target in the study's order.
pub(crate) struct Group<'a> {
    pub(crate) workload: &'a str,
    pub(crate) test: &'a str,
    pub(crate) sides: Vec<Side<'a>>,
}

impl Group<'_> {
    pub(crate) fn name(&self) -> String {
        test_name(self.workload, self.test)
    }

    pub(crate) fn has(&self, kind: Kind) -> bool {
        self.sides.iter().any(|s| s.get(kind).is_some())
    }
}

/// Shares averaged over repeats, each weighted by its total.
fn weighted(parts: &[(&Shares, u64)]) -> Shares {
    let sum: f64 = parts.iter().map(|(_, n)| *n as f64).sum::<f64>().max(1.0);
    let mut s = Shares::default();
    let mut funcs: Vec<FunctionShare> = Vec::new();
    for (x, n) in parts {
        let w = *n as f64 / sum;
        s.fsbench += x.fsbench * w;
        s.libraries += x.libraries * w;
        s.kernel += x.kernel * w;
        s.daemon += x.daemon * w;
        s.unknown += x.unknown * w;
        for f in &x.top_kernel {
            match funcs.iter_mut().find(|g| g.function == f.function) {
                Some(g) => g.share += f.share * w,
                None => funcs.push(FunctionShare {
                    function: f.function.clone(),
                    share: f.share * w,
                }),
            }
        }
    }
    funcs.sort_by(|a, b| b.share.total_cmp(&a.share));
    s.top_kernel = funcs;
    s
}

fn merged(recs: &[&Record], kind: Kind) -> Option<Merged> {
    let stacks: Vec<(&crate::profile::record::Stacks, String)> = recs
        .iter()
        .filter_map(|r| {
            let p = r.profile.as_ref()?;
            Some((p.get(kind)?, p.clock.describe(p.hz)))
        })
        .collect();
    if stacks.is_empty() {
        return None;
    }
    let folded = stacks
        .iter()
        .try_fold(Folded::default(), |mut acc, (s, _)| {
            acc.merge(s.folded.as_ref()?);
            Some(acc)
        });
    let shares = match &folded {
        // (The records keep their kernel split; the merged view shows none.)
        Some(f) => crate::profile::shares::Shares {
            split: None,
            ..shares(f, kind, &[])
        },
        None => weighted(
            &stacks
                .iter()
                .map(|(s, _)| (&s.shares, s.total))
                .collect::<Vec<_>>(),
        ),
    };
    Some(Merged {
        total: stacks.iter().map(|(s, _)| s.total).sum(),
        repeats: stacks.len(),
        rate: stacks[0].1.clone(),
        shares,
        folded,
    })
}

/// The profiled tests of a study, in the order they first appear.
pub(crate) fn groups(records: &[Record]) -> Vec<Group<'_>> {
    let profiled: Vec<&Record> = records
        .iter()
        .filter(|r| r.outcome == Outcome::Ok && r.profile.is_some())
        .collect();
    let mut keys: Vec<(&str, &str)> = Vec::new();
    for r in &profiled {
        let k = (r.workload.as_str(), r.test.as_str());
        if !keys.contains(&k) {
            keys.push(k);
        }
    }
    keys.into_iter()
        .map(|(workload, test)| {
            let mine: Vec<&Record> = profiled
                .iter()
                .copied()
                .filter(|r| r.workload == workload && r.test == test)
                .collect();
            let sides = targets(mine.iter().map(|r| r.target.as_str()))
                .into_iter()
                .map(|target| {
                    let recs: Vec<&Record> = mine
                        .iter()
                        .copied()
                        .filter(|r| r.target == target)
                        .collect();
                    Side {
                        target,
                        on: merged(&recs, Kind::OnCpu),
                        off: merged(&recs, Kind::OffCpu),
                    }
                })
                .collect();
            Group {
                workload,
                test,
                sides,
            }
        })
        .collect()
}

/// A flame graph of the report, with the file it is written to in the study.
pub(crate) struct Graph {
    /// `profiles/TARGET.TEST.on-cpu.svg`, or `profiles/TARGET.vs.BASELINE.TEST.on-cpu.svg`.
    pub(crate) file: String,
    /// What it shows, in words (a link's text, the page's heading).
    pub(crate) label: String,
    pub(crate) svg: String,
}

fn subtitle(m: &Merged, kind: Kind) -> String {
    let repeats = match m.repeats {
        1 => String::new(),
        n => format!(" over {n} repeats"),
    };
    match kind {
        Kind::OnCpu => format!(
            "{} samples at {}{repeats}; kernel frames orange, Rust's yellow, C's and libraries' red",
            crate::plan::units::format_count(m.total as f64),
            m.rate
        ),
        Kind::OffCpu => format!(
            "{:.3} s blocked{repeats}, by where the threads waited; kernel frames orange",
            m.total as f64 / 1e6
        ),
    }
}

/// The flame graphs of one test: each target's, then each target's against the baseline.
pub(crate) fn graphs(g: &Group, kind: Kind, baseline: &str) -> Vec<Graph> {
    let test = g.name();
    let part = name_part(&test);
    let what = match kind {
        Kind::OnCpu => "on the CPU",
        Kind::OffCpu => "off the CPU",
    };
    let mut out = Vec::new();
    for s in &g.sides {
        let Some(m) = s.get(kind) else { continue };
        let Some(f) = &m.folded else { continue };
        let label = format!("{}, {test}, {what}", s.target);
        if let Some(svg) = super::flame::flame(f, kind, &label, &subtitle(m, kind)) {
            out.push(Graph {
                file: format!("{DIR}/{}.{part}.{}.svg", name_part(s.target), kind.name()),
                label,
                svg,
            });
        }
    }
    let base = g
        .sides
        .iter()
        .find(|s| s.target == baseline)
        .and_then(|s| s.get(kind)?.folded.as_ref());
    for s in g.sides.iter().filter(|s| s.target != baseline) {
        let (Some(before), Some(m)) = (base, s.get(kind)) else {
            continue;
        };
        let Some(after) = &m.folded else { continue };
        let label = format!("{} against {baseline}, {test}, {what}", s.target);
        let sub = format!(
            "{}'s stacks; red: a larger share than in {baseline}, blue: a smaller one (both scaled to the same total)",
            s.target
        );
        if let Some(svg) = super::flame::differential(before, after, kind, &label, &sub) {
            out.push(Graph {
                file: format!(
                    "{DIR}/{}.vs.{}.{part}.{}.svg",
                    name_part(s.target),
                    name_part(baseline),
                    kind.name()
                ),
                label,
                svg,
            });
        }
    }
    out
}

/// Every flame graph of the study (the files the study writes beside its report).
pub(crate) fn all_graphs(records: &[Record], baseline: &str) -> Vec<Graph> {
    let mut out = Vec::new();
    for g in groups(records) {
        for kind in Kind::ALL {
            out.extend(graphs(&g, kind, baseline));
        }
    }
    out
}
